// The service as separate processes (src/server.ts and the CLIs), as an operator runs them.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_SAFETY_NET_MS } from '../setup/safety-nets.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Node's on-disk compile cache, where `npm start` keeps it: a child process then starts in about half the time
// (most of a start is compiling src/ and node_modules). It holds compiled code only, checked against each source.
const COMPILE_CACHE = path.join(ROOT, 'node_modules', '.cache', 'node-compile-cache');

export interface Running {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

export function run(script: string, env: Record<string, string>, cwd = ROOT): Running {
  let output = '';
  const child = spawn(process.execPath, [path.join(ROOT, script)], {
    cwd,
    // TMPDIR: the run's folder (test/setup/run-directory.ts), so that a process the run leaves behind is known as its.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      LOG_LEVEL: 'info',
      NODE_COMPILE_CACHE: COMPILE_CACHE,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

/**
 * Waits for the process's readiness signal: GET /ready answering 200 (it does once the database is reachable and the
 * migrations are checked). Fails at once when the process exits first; only a process that neither gets ready nor
 * exits meets the safety net.
 */
export async function waitUntilReady(port: number, running: Running): Promise<void> {
  let exited = false;
  void running.exit.then(() => (exited = true));
  const deadline = Date.now() + WAIT_SAFETY_NET_MS;
  for (;;) {
    if (exited || running.child.exitCode !== null || running.child.signalCode !== null)
      throw new Error(`server exited before it was ready:\n${running.output()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/ready`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server not ready after the safety net of ${WAIT_SAFETY_NET_MS / 1000} s:\n${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
