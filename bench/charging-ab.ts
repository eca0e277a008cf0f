// The charging benchmark of two checkouts, alternated A B A B in one run, each with its own database: each run is
// `node <checkout>/bench/charging.bench.ts` in that checkout (its own embedded cluster, migrations, database functions
// and triggers, service code), one round of BENCH_ONLY's drains. This is what measures a change of the schema or of a
// trigger (BENCH_BASELINE cannot: there both engines share one database, migrated by this checkout). Prints each
// run's figures and, pair by pair, B ÷ A.
//
//   node bench/charging-ab.ts <checkout A> <checkout B>
//   BENCH_AB_PAIRS (3)  BENCH_ONLY (L0; see bench/charging.bench.ts)  BENCH_SUBSCRIPTIONS, BENCH_CONCURRENCY: passed on
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { writeResults } from './charging.bench.ts';

const [treeA, treeB] = process.argv.slice(2).map((tree) => path.resolve(tree));
if (!treeA || !treeB) throw new Error('usage: node bench/charging-ab.ts <checkout A> <checkout B>');
const PAIRS = Number(process.env.BENCH_AB_PAIRS ?? 3);
const ONLY = process.env.BENCH_ONLY ?? 'L0';

interface Drain {
  name: string;
  perSecond: number;
  cpuMsPerCharge: number;
  statementsPerCharge: number;
  doubles: number;
}

/** One charging run of `tree`: the drains its output reports (the line each drain prints to stderr). */
function runCharging(tree: string): { drains: Drain[]; load: number[] } {
  const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const run = spawnSync(process.execPath, [path.join(tree, 'bench/charging.bench.ts')], {
    cwd: tree,
    env: { ...process.env, BENCH_ONLY: ONLY, BENCH_ROUNDS: '1', BENCH_BASELINE: '' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`${tree}: the charging benchmark exited with ${run.status}:\n${run.stdout}\n${run.stderr}`);
  const drains: Drain[] = [];
  for (const line of `${run.stderr}\n${run.stdout}`.split('\n')) {
    const match = /^\s+this\s+(.+?)\s+(\d+)\/s\s+CPU ([\d.]+) ms\/charge.*statements ([\d.]+)\/charge.*doubles (\d+)/.exec(line);
    if (match) {
      drains.push({
        name: match[1]!,
        perSecond: Number(match[2]),
        cpuMsPerCharge: Number(match[3]),
        statementsPerCharge: Number(match[4]),
        doubles: Number(match[5]),
      });
    }
  }
  if (drains.length === 0) throw new Error(`${tree}: no drain reported:\n${run.stderr}`);
  return { drains, load };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const results: Record<string, unknown>[] = [];
const ratios = new Map<string, { throughput: number[]; cpu: number[] }>();
console.log(`charging A ${treeA} against B ${treeB}, ${PAIRS} pairs A B, BENCH_ONLY=${ONLY}; ${os.cpus().length} × ${os.cpus()[0]?.model}`);
for (let pair = 0; pair < PAIRS; pair += 1) {
  const a = runCharging(treeA);
  const b = runCharging(treeB);
  for (const [label, run] of [
    ['A', a],
    ['B', b],
  ] as const) {
    results.push({ pair, checkout: label, tree: label === 'A' ? treeA : treeB, ...run });
    for (const d of run.drains) {
      console.log(
        `pair ${pair} ${label} ${d.name.padEnd(22)} ${String(d.perSecond).padStart(5)}/s  CPU ${d.cpuMsPerCharge.toFixed(2)} ms/charge  statements ${d.statementsPerCharge.toFixed(2)}/charge  doubles ${d.doubles}  (load ${run.load.join(' ')})`,
      );
    }
  }
  for (const d of b.drains) {
    const base = a.drains.find((x) => x.name === d.name);
    if (!base) continue;
    const kept = ratios.get(d.name) ?? { throughput: [], cpu: [] };
    kept.throughput.push(d.perSecond / base.perSecond);
    kept.cpu.push(d.cpuMsPerCharge / base.cpuMsPerCharge);
    ratios.set(d.name, kept);
  }
}
for (const [name, r] of ratios) {
  const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  console.log(
    `${name}: B ÷ A charges/s ${list(r.throughput)} (median ${median(r.throughput).toFixed(2)}); service CPU per charge ${list(r.cpu)} (median ${median(r.cpu).toFixed(2)})`,
  );
  results.push({ name, throughputRatios: r.throughput, cpuRatios: r.cpu });
}
writeResults('charging-ab', results);
