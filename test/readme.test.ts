// The documents' examples, run as a reader runs them: the service started the way the README says (its
// `… npm start` line, here src/server.ts on a free port, against this file's database, with the built-in sandbox
// and development tokens generated into a fresh directory's .data/), then every ```sh block between the
// "runnable examples" markers of README.md and of every docs/*.md (the README first, then docs/ by name) pasted, in
// order, into one shell, with bash, curl and jq.
// - Each block runs in a bash process of its own with `set -e -o pipefail`, so any failing command fails it (the
//   examples use `curl -f`: a wrong route, a refused body or a missing token is an error). The variables a block
//   sets are carried to the next, as the reader's shell would keep them. The first block sets BASE, API_KEY and
//   ADMIN_TOKEN from .data/dev-secrets.json; BASE is then pointed at this run's port.
// - A comment line in a block that is exactly an answer (a JSON object or array, a URL, or `HTTP <status>`) is the
//   output the document promises: some line of the block's output must match it, `…` standing for anything.
// - Missing bash, curl or jq fails this file: it is never skipped.
// It also holds what the repository cites to the repository: nothing tracked names a document outside it, and every
// citation of a document's section or of a money-safety invariant names one that exists.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { ROOT, run, waitUntilReady, type Running } from './helpers/process.ts';
import { freePort } from './setup/global-setup.ts';
import { WAIT_SAFETY_NET_MS } from './setup/safety-nets.ts';

/** The documents whose examples run, in reading order: the front page, then docs/ by name. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const TEXTS = new Map(DOCUMENTS.map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));
const README = TEXTS.get('README.md')!;
const BEGIN = '<!-- runnable examples:';
const END = '<!-- end of runnable examples -->';
/** The address the README's examples and outputs show; this run's replaces it. */
const README_BASE = 'http://localhost:3000';

interface Block {
  /** The document, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence in it. */
  line: number;
  code: string;
  runnable: boolean;
}

function shBlocks(file: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let inRegion = false;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (text.startsWith(BEGIN)) {
      if (inRegion) throw new Error(`${file}:${i + 1}: a runnable region opens inside another`);
      inRegion = true;
    } else if (text.startsWith(END)) {
      if (!inRegion) throw new Error(`${file}:${i + 1}: a runnable region closes but none is open`);
      inRegion = false;
    } else if (/^\s*```sh\s*$/.test(text)) {
      const start = i;
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trim().startsWith('```'); i++) code.push(lines[i]!);
      blocks.push({ file, line: start + 1, code: `${code.join('\n')}\n`, runnable: inRegion });
    }
  }
  if (inRegion) throw new Error(`${file}: a runnable region is not closed`);
  return blocks;
}

/** Every sh block of the documents, in reading order. */
const ALL_BLOCKS = DOCUMENTS.flatMap((file) => shBlocks(file, TEXTS.get(file)!));
const EXAMPLES = ALL_BLOCKS.filter((b) => b.runnable);

/** The env assignments of the start command (`CLOCK=simulated … npm start`): the sh block just before the first region. */
function startCommandEnv(): Record<string, string> {
  const first = ALL_BLOCKS.findIndex((b) => b.runnable);
  const before = first > 0 ? ALL_BLOCKS[first - 1] : undefined;
  const command = before?.code.trim() ?? '';
  const match = /^((?:[A-Z_]+=\S+\s+)*)npm start$/.exec(command);
  expect(match, `the walkthrough starts the service with "… npm start" (${before?.file}:${before?.line}), found: ${command}`).not.toBeNull();
  return Object.fromEntries(
    match![1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => pair.split('=') as [string, string]),
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The outputs a block's comments promise: comment lines that are exactly an answer. */
function promisedOutputs(code: string, base: string): Array<{ text: string; pattern: RegExp }> {
  const promised: Array<{ text: string; pattern: RegExp }> = [];
  for (const line of code.split('\n')) {
    const comment = /^\s*#\s?(.*)$/.exec(line)?.[1]?.trim();
    if (!comment || !/^(\{.*\}|\[.*\]|https?:\/\/\S+|HTTP \d{3})$/.test(comment)) continue;
    const expected = comment.split(README_BASE).join(base);
    promised.push({ text: comment, pattern: new RegExp(`^${expected.split('…').map(escapeRegExp).join('.*?')}$`) });
  }
  return promised;
}

interface BashResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** One block in a bash process of its own: the variables of the blocks before it in, its own variables out. */
function bash(code: string, cwd: string, stateFile: string): Promise<BashResult> {
  const script = `__before=" $(compgen -v | tr '\\n' ' ') "
__save() {
  local __v
  for __v in $(compgen -v); do
    case "$__before" in *" $__v "*) continue ;; esac
    case "$__v" in __*) continue ;; esac
    declare -p "$__v"
  done >"$README_STATE.next"
}
trap __save EXIT
if [ -f "$README_STATE" ]; then source "$README_STATE"; fi
set -e -o pipefail
${code}`;
  const file = `${stateFile}.block.sh`;
  writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', file], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', README_STATE: stateFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A block that hangs (a server that never answers) is killed by the safety net, and fails on its status.
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_SAFETY_NET_MS);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

const TOOLS = [
  ['bash', ['--version']],
  ['curl', ['--version']],
  ['jq', ['--version']],
] as const;

function missingTools(): string[] {
  return TOOLS.filter(([tool, args]) => spawnSync(tool, args, { stdio: 'ignore' }).status !== 0).map(([tool]) => tool);
}

// What the repository cites. A document outside it: the design notes and the shared folder beside the checkout (as
// regular expressions, whose escapes keep this file from citing them itself).
const OUTSIDE = /DESIGN\.md|\/work\/shared\b|\.\.\/shared\/(?:spec|DESIGN|hooks|tools|bench)\b/;
/** Migrations up to this one shipped before the documents moved: their checksums are recorded in databases. */
const LAST_SHIPPED_HISTORY = '20261124220000';
function shippedHistory(file: string): boolean {
  const name = /^prisma\/migrations\/(\d{14})_/.exec(file)?.[1];
  return name !== undefined && name <= LAST_SHIPPED_HISTORY;
}
const TRACKED = (() => {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout.split('\0').filter((file) => file && existsSync(path.join(ROOT, file)) && !file.endsWith('.png'));
})();
const trackedTexts = new Map<string, string>();
/** A tracked file's text (a binary file reads as empty). */
function tracked(file: string): string {
  let text = trackedTexts.get(file);
  if (text === undefined) {
    const bytes = readFileSync(path.join(ROOT, file));
    text = bytes.subarray(0, 8000).includes(0) ? '' : bytes.toString('utf8');
    trackedTexts.set(file, text);
  }
  return text;
}

/** A heading's text as a citation names it: without its #s and backticks. */
function headingsOf(markdown: string): Set<string> {
  return new Set(
    markdown
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => line.replace(/^#+ /, '').replaceAll('`', '').trim()),
  );
}
const DOCUMENT_HEADINGS = new Map([...TEXTS].map(([file, text]) => [file, headingsOf(text)]));
/** The invariants docs/architecture.md numbers in its "Money-safety invariants" section. */
const INVARIANTS = (() => {
  const text = TEXTS.get('docs/architecture.md') ?? '';
  const section = text.split(/^## /m).find((part) => part.startsWith('Money-safety invariants\n')) ?? '';
  return [...section.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1]));
})();

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;
/** A quoted heading, which a comment may wrap over lines: the comment leaders and the line break are one space. */
const unwrap = (quoted: string) => quoted.replace(/\s*\n\s*(?:\/\/|--|#|\*)?\s*/g, ' ').trim();
// Between a document's name and its quoted heading: a comma or colon, spaces, and a comment's line break.
const GAP = String.raw`[,:]?(?:\s|\/\/|--|#|\*)*?`;

/** `docs/<file>.md "<Heading>"` citations. */
function sectionCitations(text: string) {
  const found: Array<{ doc: string; heading: string; line: number }> = [];
  for (const m of text.matchAll(new RegExp(String.raw`\b(docs\/[\w-]+\.md)${GAP}\s"([^"]{1,120})"`, 'g'))) {
    found.push({ doc: m[1]!, heading: unwrap(m[2]!), line: lineAt(text, m.index) });
  }
  return found;
}
/** `invariant N` (and `invariants N and M`, `invariants N, M`) citations. */
function invariantCitations(text: string) {
  const found: Array<{ number: number; line: number }> = [];
  for (const m of text.matchAll(/\binvariants?\s+(\d+(?:\s*(?:,|and|or)\s*\d+)*)/gi)) {
    for (const n of m[1]!.match(/\d+/g)!) found.push({ number: Number(n), line: lineAt(text, m.index) });
  }
  return found;
}
/** Citations of a README section: README (or README's, README section) and the heading in double quotes. */
function readmeCitations(text: string) {
  const found: Array<{ heading: string; line: number }> = [];
  for (const m of text.matchAll(new RegExp(String.raw`\bREADME(?:\.md)?(?:'s)?${GAP}\s(?:section\s+)?"([^"]{1,120})"`, 'g'))) {
    found.push({ heading: unwrap(m[1]!), line: lineAt(text, m.index) });
  }
  return found;
}

let database: TestDatabase;
let server: Running | undefined;
let workDir: string;
let base: string;
let stateFile: string;
/** Set when a block failed: the blocks after it depend on it and are not run. */
let failedAt: number | undefined;

beforeAll(async () => {
  const missing = missingTools();
  if (missing.length > 0) {
    throw new Error(`the documents' examples need ${missing.join(', ')}: install them (Debian: apt-get install ${missing.join(' ')})`);
  }
  database = await createTestDatabase();
  workDir = mkdtempSync(path.join(tmpdir(), 'billing-readme-'));
  stateFile = path.join(workDir, 'shell-state.sh');
  const port = await freePort();
  base = `http://localhost:${port}`;
  // As the reader's `npm start` in a fresh checkout: no tokens set (generated into .data/), no gateway (the sandbox
  // is mounted), PUBLIC_BASE_URL by default; a database of this file's own instead of the embedded one.
  server = run('src/server.ts', { ...startCommandEnv(), PORT: String(port), DATABASE_URL: database.url, LOG_LEVEL: 'warn' }, workDir);
  await waitUntilReady(port, server);
  expect(existsSync(path.join(workDir, '.data', 'dev-secrets.json'))).toBe(true);
});

afterAll(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exit;
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true });
  await database?.drop();
});

describe('README and docs/', () => {
  it('has runnable examples, and every sh block that calls the service is one of them', () => {
    expect(EXAMPLES.length).toBeGreaterThan(10);
    const unrun = ALL_BLOCKS.filter((b) => !b.runnable && /\bcurl\b|\$BASE|\$API_KEY|\$ADMIN_TOKEN/.test(b.code)).map((b) => `${b.file}:${b.line}`);
    expect(unrun, 'outside the runnable regions').toEqual([]);
    // One set of names: the ones the first example defines.
    expect(EXAMPLES[0]!.code).toMatch(/^BASE=/m);
    expect(EXAMPLES[0]!.code).toMatch(/^API_KEY=/m);
    expect(EXAMPLES[0]!.code).toMatch(/^ADMIN_TOKEN=/m);
    for (const block of ALL_BLOCKS)
      expect(block.code, `${block.file}:${block.line}`).not.toMatch(/\$KEY\b|\$ADMIN\b|\$SUBSCRIPTION\b|localhost:3000\/(api|admin)/);
  });

  it('promises outputs that the examples check', () => {
    const promised = EXAMPLES.flatMap((b) => promisedOutputs(b.code, README_BASE));
    expect(promised.length).toBeGreaterThan(15);
  });

  it('the documents cite nothing outside the repository (no numbered sections or rules of another document)', () => {
    for (const [file, text] of TEXTS) expect(text, file).not.toMatch(OUTSIDE);
    for (const [file, text] of TEXTS) expect(text, file).not.toMatch(/§|\brule \d+/);
  });

  it('no tracked file cites a document outside the repository (migrations already shipped are history)', () => {
    const citing = TRACKED.filter((file) => !shippedHistory(file) && !file.startsWith('.ci/') && OUTSIDE.test(tracked(file)));
    expect(citing, 'cite docs/<file>.md "<Heading>" or docs/architecture.md, invariant N instead').toEqual([]);
  });

  it('every citation of a document section names a heading of that document, and every invariant is one of 1..15', () => {
    expect(INVARIANTS).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    const wrong: string[] = [];
    for (const file of TRACKED.filter((f) => !shippedHistory(f))) {
      for (const { doc, heading, line } of sectionCitations(tracked(file))) {
        const headings = DOCUMENT_HEADINGS.get(doc);
        if (!headings) wrong.push(`${file}:${line}: ${doc} is not a document of the repository`);
        else if (!headings.has(heading)) wrong.push(`${file}:${line}: ${doc} has no heading "${heading}"`);
      }
      for (const { number, line } of invariantCitations(tracked(file))) {
        if (!INVARIANTS.includes(number)) wrong.push(`${file}:${line}: invariant ${number} is not one of docs/architecture.md's`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("every citation of a README section names a heading the README has, or one of docs/ that the README's map names", () => {
    const wrong: string[] = [];
    for (const file of TRACKED.filter((f) => !shippedHistory(f))) {
      for (const { heading, line } of readmeCitations(tracked(file))) {
        if (DOCUMENT_HEADINGS.get('README.md')!.has(heading)) continue;
        const inDocs = [...DOCUMENT_HEADINGS].some(([doc, headings]) => doc !== 'README.md' && headings.has(heading));
        if (!inDocs || !README.includes(`"${heading}"`)) wrong.push(`${file}:${line}: the README names no section ${JSON.stringify(heading)}`);
      }
    }
    expect(wrong, 'cite the section where it is: docs/<file>.md "<Heading>"').toEqual([]);
  });

  it('the citation rules see what they look for', () => {
    const sample = [
      '// the charge (docs/architecture.md "Recurring charging", invariants 4 and 5; README "Setup")',
      '-- see docs/reconciliation.md',
      '-- "Revenue reports"; docs/architecture.md, invariant 15',
    ].join('\n');
    expect(sectionCitations(sample).map((c) => [c.doc, c.heading, c.line])).toEqual([
      ['docs/architecture.md', 'Recurring charging', 1],
      ['docs/reconciliation.md', 'Revenue reports', 2],
    ]);
    expect(invariantCitations(sample).map((c) => c.number)).toEqual([4, 5, 15]);
    expect(readmeCitations(sample).map((c) => c.heading)).toEqual(['Setup']);
    expect(OUTSIDE.test(['../', 'shared/', 'spec/gateway-interface.md'].join(''))).toBe(true);
    expect(OUTSIDE.test("import { schemas } from '../shared/schemas.ts';")).toBe(false);
  });

  describe('examples, in order, in one shell', () => {
    it.for(
      EXAMPLES.map((block, index) => ({
        index,
        block,
        first: block.code
          .split('\n')
          .find((l) => l.trim())!
          .trim(),
      })),
    )('example $index ($block.file line $block.line): $first', async ({ index, block }, { skip }) => {
      skip(failedAt !== undefined, `example ${failedAt} failed; the ones after it depend on it`);
      failedAt = index;
      const result = await bash(block.code, workDir, stateFile);
      const transcript = `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}\n--- service\n${server!.output().slice(-4000)}`;
      expect(result.status, transcript).toBe(0);
      for (const { text, pattern } of promisedOutputs(block.code, base)) {
        const lines = result.stdout.split('\n').map((l) => l.trim());
        expect(
          lines.some((l) => pattern.test(l)),
          `${block.file}:${block.line} promises the output\n  ${text}\n${transcript}`,
        ).toBe(true);
      }
      renameSync(`${stateFile}.next`, stateFile);
      if (index === 0) {
        // The tokens came from the development secrets the service generated; the address is this run's.
        const secrets = JSON.parse(readFileSync(path.join(workDir, '.data', 'dev-secrets.json'), 'utf8')) as { apiKey: string; adminToken: string };
        const state = readFileSync(stateFile, 'utf8');
        expect(state).toContain(`API_KEY="${secrets.apiKey}"`);
        expect(state).toContain(`ADMIN_TOKEN="${secrets.adminToken}"`);
        writeFileSync(stateFile, `${state}BASE=${base}\n`);
      }
      if (block.code.includes('dryRun=true')) {
        // The dry run names its rules in words and says what it compared.
        const answer = JSON.parse(result.stdout) as { allowed: boolean; rules: Array<{ rule: string; passed: boolean; code?: string; detail?: string }> };
        expect(answer.allowed).toBe(false);
        expect(answer.rules).toContainEqual({ rule: 'due or past due', passed: false, code: 'NOT_DUE', detail: expect.stringMatching(/^next charge \d{4}-/) });
        expect(result.stdout).not.toMatch(/\brule \d+/);
      }
      failedAt = undefined;
    });
  });

  it('a broken example fails: the registration example with a wrong route', async () => {
    const registration = EXAMPLES.find((b) => b.code.includes('/api/v1/registrations"'));
    expect(registration).toBeDefined();
    const broken = registration!.code.replace('/api/v1/registrations"', '/api/v1/registration"');
    expect(broken).not.toBe(registration!.code);
    const secrets = JSON.parse(readFileSync(path.join(workDir, '.data', 'dev-secrets.json'), 'utf8')) as { apiKey: string };
    const ownState = path.join(workDir, 'broken-state.sh');
    writeFileSync(ownState, `BASE=${base}\nAPI_KEY=${secrets.apiKey}\n`);
    const result = await bash(broken, workDir, ownState);
    expect(result.status).toBe(22); // curl -f: the server answered an error status
    expect(result.stderr).toContain('404');
  });
});
