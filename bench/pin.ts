// Pinning a benchmark's processes to CPUs (taskset, util-linux), so that parts which would run on machines of their own
// in production (a primary and its read replica, say) do not take each other's cores on the 2-core reference machine.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** Every process below `pid` (children, their children…), from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the 4th field after the command's closing parenthesis (the command may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process ended while we read
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const child of children.get(p) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Pins `pid`, its threads and its descendants to `cpus` (taskset's list, e.g. "0"); processes forked later inherit it. */
export function pin(pid: number, cpus: string): void {
  for (const p of [pid, ...descendants(pid)]) {
    try {
      execFileSync('taskset', ['-a', '-cp', cpus, String(p)], { stdio: 'ignore' });
    } catch {
      // the process ended meanwhile
    }
  }
}

/** The postmaster of the PostgreSQL server at `url`: the parent of the backend serving a connection. */
export async function postmasterOf(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const stat = readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } finally {
    await client.end();
  }
}
