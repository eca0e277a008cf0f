// The shape of src/ (docs/architecture.md "House style", issue #12): no import cycles, lower layers import nothing from higher ones
// (dependency-cruiser over the TypeScript sources, type-only imports included), each entity's status is
// written by its state module alone (TypeScript's own parser over every Prisma write), and the modules' files and
// functions stay short enough to read top-down (issue #31: a function's own lines, by the same parser).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.ts';

const forbidden: IForbiddenRuleType[] = [
  { name: 'no-cycles', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
  {
    name: 'lib-is-the-bottom',
    severity: 'error',
    from: { path: '^src/lib/' },
    to: { path: '^src/(db|gateway|modules|plugins|sandbox|cli|app|server|config|dev-secrets)' },
  },
  { name: 'db-below-the-domain', severity: 'error', from: { path: '^src/db/' }, to: { path: '^src/(gateway|modules|plugins|sandbox|cli|app|server)' } },
  { name: 'gateway-below-the-domain', severity: 'error', from: { path: '^src/gateway/' }, to: { path: '^src/(db|modules|plugins|sandbox|cli|app|server)' } },
  { name: 'modules-never-import-the-app', severity: 'error', from: { path: '^src/modules/' }, to: { path: '^src/(app|server)\\.ts$' } },
  { name: 'plugins-never-import-the-app', severity: 'error', from: { path: '^src/plugins/' }, to: { path: '^src/(app|server)\\.ts$' } },
  // Infrastructure is passed what it needs from the domain (app.ts wires them); it never reaches into a module.
  { name: 'plugins-never-import-modules', severity: 'error', from: { path: '^src/plugins/' }, to: { path: '^src/modules/' } },
  // The engine holds gateways through their interface (docs/gateways.md "The gateway client"): a module imports
  // only the interface and the registry, never a gateway's client, wire fields or adapter.
  {
    name: 'modules-see-only-the-gateway-interface',
    severity: 'error',
    from: { path: '^src/modules/' },
    to: { path: '^src/gateway/', pathNot: '^src/gateway/(gateway|registry)\\.ts$' },
  },
];

describe('architecture', () => {
  it('src/ has no import cycle and no layer imports from one above it', async () => {
    const result = await cruise(['src'], {
      baseDir: ROOT,
      exclude: { path: '^src/generated/' },
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: true,
      ruleSet: { forbidden },
      validate: true,
    });
    const output = result.output as ICruiseResult;
    const violations = output.summary.violations.map(
      (v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`,
    );
    expect(violations).toEqual([]);
    expect(output.summary.totalCruised).toBeGreaterThan(50);
    // The gateway rule has something to hold: the modules do reach the interface.
    const fromModules = output.modules.filter((m) => m.source.startsWith('src/modules/')).flatMap((m) => m.dependencies.map((d) => d.resolved));
    expect(fromModules).toContain('src/gateway/gateway.ts');
    expect(moduleFolderCycles(output)).toEqual([]);
  });

  it('no file in src/modules is over 300 lines (a file answers one operation)', () => {
    const long = sourceFiles('src/modules')
      .map((file) => `${file} ${readFileSync(path.join(ROOT, file), 'utf8').split('\n').length}`)
      .filter((row) => Number(row.split(' ')[1]) > 300);
    expect(long).toEqual([]);
  });

  it('no function in src/modules has more than 80 own lines (a long one reads as named steps)', () => {
    expect(longFunctions('src/modules', 80)).toEqual([]);
  });
});

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);

/**
 * Functions whose own lines (their lines less those of the functions written inside them) are over `max`, as
 * `file:line name (N own lines)`. A factory returning its closures is measured apart from them: each closure is
 * measured on its own, as is a route's handler inside the function that registers it.
 */
function longFunctions(dir: string, max: number): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(dir)) {
    const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
    const linesOf = (node: ts.Node) => lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
    const nestedLines = (node: ts.Node): number => {
      let lines = 0;
      ts.forEachChild(node, (child) => {
        lines += isFunction(child) ? linesOf(child) : nestedLines(child);
      });
      return lines;
    };
    const visit = (node: ts.Node) => {
      if (isFunction(node)) {
        const own = linesOf(node) - nestedLines(node);
        if (own > max) found.push(`${file}:${lineOf(node.getStart(source)) + 1} ${functionName(node, source)} (${own} own lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** A function's name: its own, or that of the variable or property it is assigned to, else `(anonymous)`. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/**
 * Cycles between the folders of src/modules (a folder imports another that imports it back, through any files):
 * each strongly connected group of folders larger than one, as `a <-> b`. File-level cycles are the rule above.
 */
function moduleFolderCycles(output: ICruiseResult): string[] {
  const folderOf = (file: string) => /^src\/modules\/([^/]+)\//.exec(file)?.[1];
  const edges = new Map<string, Set<string>>();
  for (const module of output.modules) {
    const from = folderOf(module.source);
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (from && to && from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    for (const next of edges.get(from) ?? []) {
      if (next === to) return true;
      if (seen.has(next)) continue;
      seen.add(next);
      if (reaches(next, to, seen)) return true;
    }
    return false;
  };
  const cycles = new Set<string>();
  for (const [from, tos] of edges) for (const to of tos) if (reaches(to, from)) cycles.add([from, to].sort().join(' <-> '));
  return [...cycles].sort();
}

/** The one module allowed to write each entity's status column. */
const STATE_WRITERS: Record<string, string> = {
  payment: 'src/modules/ledger/payment.state.ts',
  subscription: 'src/modules/ledger/subscription.state.ts',
  registration: 'src/modules/ledger/checkout.state.ts',
  order: 'src/modules/ledger/checkout.state.ts',
  paymentAttempt: 'src/modules/ledger/attempt.state.ts',
  webhookDelivery: 'src/modules/events/delivery.state.ts',
};
const WRITES = new Set(['update', 'updateMany', 'updateManyAndReturn', 'upsert', 'create', 'createMany', 'createManyAndReturn']);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return relative === 'src/generated' ? [] : sourceFiles(relative);
    return relative.endsWith('.ts') ? [relative] : [];
  });
}

/**
 * Every Prisma write of a model in STATE_WRITERS, outside its writer, whose `data` sets `status`, spreads something
 * (which might), or is not written out at all: `file:line model.write reason`.
 */
function statusWritesOutsideWriters(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles('src')) {
    const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && WRITES.has(node.expression.name.text)) {
        const target = node.expression.expression;
        const model = ts.isPropertyAccessExpression(target) ? target.name.text : undefined;
        const args = node.arguments[0];
        if (model && STATE_WRITERS[model] && STATE_WRITERS[model] !== file && args && ts.isObjectLiteralExpression(args)) {
          for (const key of ['data', 'create', 'update']) {
            const property = args.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === key) as ts.PropertyAssignment | undefined;
            if (!property) continue;
            const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
            const where = `${file}:${line} ${model}.${node.expression.name.text}`;
            const data = property.initializer;
            if (!ts.isObjectLiteralExpression(data)) found.push(`${where} ${key} is not written out`);
            else if (data.properties.some((p) => ts.isSpreadAssignment(p))) found.push(`${where} ${key} spreads a value`);
            else if (data.properties.some((p) => p.name?.getText(source) === 'status')) found.push(`${where} sets status`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * Raw SQL that sets the status of a model in STATE_WRITERS (an UPDATE of its table whose SET names "status"), outside
 * its writer: `file table`. Such SQL must take its moves from the writer's transition table.
 */
function rawStatusWrites(): string[] {
  const tables: Record<string, string> = {
    payments: 'payment',
    subscriptions: 'subscription',
    registrations: 'registration',
    orders: 'order',
    payment_attempts: 'paymentAttempt',
    webhook_deliveries: 'webhookDelivery',
  };
  const found = new Set<string>();
  for (const file of sourceFiles('src')) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const TABLES = '(payments|subscriptions|registrations|orders|payment_attempts|webhook_deliveries)';
    const updates = new RegExp(`UPDATE "${TABLES}"[^;\`]*?SET([^;\`]*?)(WHERE|FROM|RETURNING|\`)`, 'g');
    const upserts = new RegExp(`INSERT INTO "${TABLES}"[^;\`]*?ON CONFLICT[^;\`]*?DO UPDATE SET([^;\`]*?)(WHERE|RETURNING|\`)`, 'g');
    for (const match of [...text.matchAll(updates), ...text.matchAll(upserts)]) {
      const [, table, assignments] = match;
      if (/(^|[\s,])"status"\s*=/.test(assignments!) && STATE_WRITERS[tables[table!]!] !== file) found.add(`${file} ${table}`);
    }
  }
  return [...found].sort();
}

/**
 * The one exception, and why: the charging engine records a new cycle's approval in one statement (performance).
 * It renders the ledger's success write (chargeSuccessWrite, subscriptionAfterSuccess, the transition tables), and
 * test/modules/payments/charge-paths.test.ts proves it writes the same rows and events as the transactional path.
 */
const RAW_STATUS_WRITERS = [
  'src/modules/payments/charge.record.ts payment_attempts',
  'src/modules/payments/charge.record.ts payments',
  'src/modules/payments/charge.record.ts subscriptions',
];

describe('state writers', () => {
  it('each entity’s status is written by its state module (its transition table) and nowhere else', () => {
    expect(statusWritesOutsideWriters()).toEqual([]);
  });

  it('raw SQL sets a status only where listed, with the transition tables', () => {
    expect(rawStatusWrites()).toEqual(RAW_STATUS_WRITERS);
  });
});

// The read replica (docs/production.md "Read replica"): a route reaches it only through src/modules/shared/read-db.ts,
// and only the read routes and pages listed here import that door. Nothing that decides money, takes a lease, writes
// or answers a write is among them; readDb itself refuses any request but a GET.
const REPLICA_READERS = [
  'src/modules/audit/audit.routes.ts',
  'src/modules/console/audit.page.ts',
  'src/modules/console/customer.page.ts',
  'src/modules/console/erasures.page.ts',
  'src/modules/console/lists.page.ts',
  'src/modules/console/needs-attention.page.ts',
  'src/modules/console/payment.page.ts',
  'src/modules/console/reconciliation.page.ts',
  'src/modules/console/reports.page.ts',
  'src/modules/console/search.page.ts',
  'src/modules/console/subscription.page.ts',
  'src/modules/erasure/erasure-reads.routes.ts',
  'src/modules/events/events.routes.ts',
  'src/modules/payments/payments.admin-routes.ts',
  'src/modules/payments/payments.routes.ts',
  'src/modules/reconciliation/reconciliation.routes.ts',
  'src/modules/reports/reports.routes.ts',
  'src/modules/subscriptions/subscriptions.admin-routes.ts',
  'src/modules/subscriptions/subscriptions.routes.ts',
  'src/modules/webhooks/endpoints.routes.ts',
];
// What decides money, takes a lease or writes: none of it may ever join the list above.
const NEVER_REPLICA =
  /^src\/modules\/(ledger|checkout|registrations|idempotency|orders|billing-keys|portal)\/|\/(charge[.-]|inquire-unknowns|refund-payment|record-external-refund|payment-actions|withdraw|dispatcher|claims|outcomes|erase-customer|purge-identities|import-settlement|finish-settlement|store-statement|sync-settlements|settlement-items)/;

describe('the read replica', () => {
  it('is reached through shared/read-db.ts by the listed read routes and pages only, and never by what decides money', () => {
    const src = sourceFiles('src');
    const importers = src.filter((file) => /from '[./]+(modules\/)?shared\/read-db\.ts'/.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(importers.sort()).toEqual(REPLICA_READERS);
    expect(REPLICA_READERS.filter((file) => NEVER_REPLICA.test(file))).toEqual([]);
    // The router itself (app.reads) is touched by the door, the plugin that makes it and the metrics alone.
    const routerUsers = src.filter((file) => /\.reads\.|\breads\.readDb\b/.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(routerUsers.sort()).toEqual(['src/modules/shared/read-db.ts', 'src/plugins/metrics.ts']);
  });

  it('is refused to a request that answers a write', async () => {
    const { readDb } = await import('../src/modules/shared/read-db.ts');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      await expect(readDb({ method } as never)).rejects.toThrow(`readDb: ${method} answers a write and reads the primary`);
    }
  });
});
