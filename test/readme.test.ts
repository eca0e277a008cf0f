// The README's examples, run as a reader runs them: the service started the way the README says (its
// `… npm start` line, here src/server.ts on a free port, against this file's database, with the built-in sandbox
// and development tokens generated into a fresh directory's .data/), then every ```sh block between the README's
// "runnable examples" markers pasted, in order, into one shell, with bash, curl and jq.
// - Each block runs in a bash process of its own with `set -e -o pipefail`, so any failing command fails it (the
//   examples use `curl -f`: a wrong route, a refused body or a missing token is an error). The variables a block
//   sets are carried to the next, as the reader's shell would keep them. The first block sets BASE, API_KEY and
//   ADMIN_TOKEN from .data/dev-secrets.json; BASE is then pointed at this run's port.
// - A comment line in a block that is exactly an answer (a JSON object, a URL, or `HTTP <status>`) is the output
//   the README promises: some line of the block's output must match it, `…` standing for anything.
// - Missing bash, curl or jq fails this file: it is never skipped.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { ROOT, run, waitUntilReady, type Running } from './helpers/process.ts';
import { freePort } from './setup/global-setup.ts';
import { WAIT_SAFETY_NET_MS } from './setup/safety-nets.ts';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const BEGIN = '<!-- runnable examples:';
const END = '<!-- end of runnable examples -->';
/** The address the README's examples and outputs show; this run's replaces it. */
const README_BASE = 'http://localhost:3000';

interface Block {
  /** 1-based line of the opening fence in README.md. */
  line: number;
  code: string;
  runnable: boolean;
}

function shBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let inRegion = false;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (text.startsWith(BEGIN)) {
      if (inRegion) throw new Error(`README.md:${i + 1}: a runnable region opens inside another`);
      inRegion = true;
    } else if (text.startsWith(END)) {
      if (!inRegion) throw new Error(`README.md:${i + 1}: a runnable region closes but none is open`);
      inRegion = false;
    } else if (/^```sh\s*$/.test(text)) {
      const start = i;
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) code.push(lines[i]!);
      blocks.push({ line: start + 1, code: `${code.join('\n')}\n`, runnable: inRegion });
    }
  }
  if (inRegion) throw new Error('README.md: a runnable region is not closed');
  return blocks;
}

const ALL_BLOCKS = shBlocks(README);
const EXAMPLES = ALL_BLOCKS.filter((b) => b.runnable);

/** The env assignments of the README's start command (`CLOCK=simulated … npm start`), the sh block just before the first region. */
function startCommandEnv(): Record<string, string> {
  const firstRegionLine = README.split('\n').findIndex((line) => line.startsWith(BEGIN)) + 1;
  const before = ALL_BLOCKS.filter((b) => b.line < firstRegionLine).at(-1);
  const command = before?.code.trim() ?? '';
  const match = /^((?:[A-Z_]+=\S+\s+)*)npm start$/.exec(command);
  expect(match, `the README's walkthrough starts the service with "… npm start", found: ${command}`).not.toBeNull();
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
    if (!comment || !/^(\{.*\}|https?:\/\/\S+|HTTP \d{3})$/.test(comment)) continue;
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
    throw new Error(`the README's examples need ${missing.join(', ')}: install them (Debian: apt-get install ${missing.join(' ')})`);
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

describe('README', () => {
  it('has runnable examples, and every sh block that calls the service is one of them', () => {
    expect(EXAMPLES.length).toBeGreaterThan(10);
    const unrun = ALL_BLOCKS.filter((b) => !b.runnable && /\bcurl\b|\$BASE|\$API_KEY|\$ADMIN_TOKEN/.test(b.code)).map((b) => `README.md:${b.line}`);
    expect(unrun, 'outside the runnable regions').toEqual([]);
    // One set of names: the ones the first example defines.
    expect(EXAMPLES[0]!.code).toMatch(/^BASE=/m);
    expect(EXAMPLES[0]!.code).toMatch(/^API_KEY=/m);
    expect(EXAMPLES[0]!.code).toMatch(/^ADMIN_TOKEN=/m);
    for (const block of ALL_BLOCKS) expect(block.code, `README.md:${block.line}`).not.toMatch(/\$KEY\b|\$ADMIN\b|\$SUBSCRIPTION\b|localhost:3000\/(api|admin)/);
  });

  it('promises outputs that the examples check', () => {
    const promised = EXAMPLES.flatMap((b) => promisedOutputs(b.code, README_BASE));
    expect(promised.length).toBeGreaterThan(15);
  });

  it('cites nothing outside the repository (no design paper beside it, no numbered sections or rules)', () => {
    expect(README).not.toMatch(/DESIGN\.md|§|\brule \d+/);
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
    )('example $index (README.md line $block.line): $first', async ({ index, block }, { skip }) => {
      skip(failedAt !== undefined, `example ${failedAt} failed; the ones after it depend on it`);
      failedAt = index;
      const result = await bash(block.code, workDir, stateFile);
      const transcript = `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}\n--- service\n${server!.output().slice(-4000)}`;
      expect(result.status, transcript).toBe(0);
      for (const { text, pattern } of promisedOutputs(block.code, base)) {
        const lines = result.stdout.split('\n').map((l) => l.trim());
        expect(
          lines.some((l) => pattern.test(l)),
          `README.md:${block.line} promises the output\n  ${text}\n${transcript}`,
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
