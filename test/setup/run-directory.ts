// A test run's temporary folder, and the sweep of those that runs which are gone left behind.
//
// A run keeps everything it writes to the temporary directory in one folder, <tmpdir>/billing-test-XXXXXX: the
// embedded cluster's data (pg/) and, because the folder becomes TMPDIR for the test files and every process they start,
// each folder a test makes and each browser profile. `owner` in it holds the pid of the run's vitest process. The
// folder is removed by the global teardown; by an exit hook when the run ends without its teardown (vitest exits on
// SIGINT and SIGTERM without running it); and otherwise (SIGKILL, a machine stopped) by the next run's sweep.
//
// The sweep removes only the folders of runs whose process is gone, after stopping what those runs left running (a
// cluster, a server): two suites may run at once on one machine, and a live run's folder is never touched.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isProcessRunning } from '../../src/db/embedded-postgres.ts';
import { WAIT_SAFETY_NET_MS } from './safety-nets.ts';

const PREFIX = 'billing-test-';
const OWNER = 'owner';
/** A folder with no owner recorded yet is a run that is starting (initdb takes a while on a loaded machine). */
const STARTING_FOR_MS = 10 * 60_000;

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the run that made this folder is gone. Its owner is `owner`, or for a folder made before this file existed,
 * `pg.owner` (the embedded cluster's owner, which was the run's vitest process).
 */
function runIsGone(dir: string): boolean {
  const pid = readPid(path.join(dir, OWNER)) ?? readPid(path.join(dir, 'pg.owner'));
  if (pid !== undefined) return !isProcessRunning(pid);
  try {
    return Date.now() - statSync(dir).mtimeMs > STARTING_FOR_MS;
  } catch {
    return false; // removed meanwhile by its own run
  }
}

interface Leftover {
  pid: number;
  postmaster: boolean;
}

/**
 * Processes that belong to one of `gone` (folders of gone runs) or to a billing-test folder that no longer exists: a
 * postmaster whose data directory is in one, or any process whose TMPDIR is one (this suite's servers and their
 * clusters, browsers, workers). Linux only (/proc); elsewhere nothing is found.
 */
function leftovers(root: string, gone: Set<string>, ownChildren = false): Leftover[] {
  const runOf = (file: string | undefined) => {
    if (!file?.startsWith(path.join(root, PREFIX))) return undefined;
    return path.join(root, path.relative(root, file).split(path.sep)[0]!);
  };
  const belongsToGoneRun = (file: string | undefined) => {
    const run = runOf(file);
    if (!run) return false;
    if (gone.has(run)) return true;
    try {
      statSync(run);
      return false;
    } catch {
      return true; // its folder was removed while it ran on
    }
  };
  const found: Leftover[] = [];
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return found;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid || pid === process.ppid) continue;
    try {
      // This process's own children are vitest's workers, which vitest ends (unless this process is exiting).
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!ownChildren && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) continue;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const dataDir = argv[0]?.endsWith('/postgres') ? argv[argv.indexOf('-D') + 1] : undefined;
      if (dataDir && argv.includes('-D') && belongsToGoneRun(dataDir)) {
        found.push({ pid, postmaster: true });
        continue;
      }
      const tmp = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((entry) => entry.startsWith('TMPDIR='))
        ?.slice('TMPDIR='.length);
      if (tmp && belongsToGoneRun(tmp)) found.push({ pid, postmaster: false });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Blocks the thread for `ms` (the exit hook cannot await). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Ends the processes: servers and browsers at once, clusters by an immediate shutdown; waits until they are gone. */
function stop(processes: Leftover[]): void {
  for (const { pid, postmaster } of processes) {
    try {
      process.kill(pid, postmaster ? 'SIGQUIT' : 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + WAIT_SAFETY_NET_MS;
  while (processes.some(({ pid }) => isProcessRunning(pid)) && Date.now() < deadline) pause(50);
}

/** Stops what gone runs left running and removes their folders; returns the folders removed. */
export function sweepStaleRuns(root: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(root).filter((name) => name.startsWith(PREFIX));
  } catch {
    return [];
  }
  const gone = new Set(names.map((name) => path.join(root, name)).filter(runIsGone));
  stop(leftovers(root, gone));
  for (const dir of gone) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  return [...gone];
}

export interface RunDirectory {
  path: string;
  /** Removes the folder (after the cluster in it was stopped by its owner); also stops anything of this run still running. */
  remove(): void;
}

/**
 * Sweeps first, then makes this run's folder, records its owner, and makes it TMPDIR for this process and every
 * process started from now on. Until `remove()` runs, an exit hook removes it when the process ends.
 */
export function createRunDirectory(root: string): RunDirectory {
  sweepStaleRuns(root);
  const dir = mkdtempSync(path.join(root, PREFIX));
  writeFileSync(path.join(dir, OWNER), `${process.pid}\n`);
  const previousTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  let removed = false;
  const remove = (exiting: boolean) => {
    if (removed) return;
    removed = true;
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
    process.off('exit', onExit);
    // Whatever of this run still runs (a cluster the teardown could not stop, a server a killed worker left), as the
    // sweep would: its folder is about to go. When this process exits without its teardown, its workers too, which
    // would otherwise go on writing into the folder (vitest's watchdog kills them only once this process is gone).
    stop(leftovers(root, new Set([dir]), exiting));
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  const onExit = () => remove(true);
  process.on('exit', onExit);
  return { path: dir, remove: () => remove(false) };
}
