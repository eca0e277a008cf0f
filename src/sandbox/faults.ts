// Fault injection, shared by the sandboxes (docs/sandbox.md "The sandbox gateway"): a queue of faults per
// operation, calls held until a test releases them, what each kind of fault does to an HTTP answer, and the
// control routes that drive them. What a fault says (a decline's code and status, a malformed body) is the
// gateway's own and is passed in as `FaultAnswers`; everything else is the same for every gateway.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { isSimulated } from '../lib/clock.ts';
import { SandboxError } from './sandbox-error.ts';

export type FaultKind = 'latency' | 'decline' | 'timeout' | 'http_500' | 'malformed' | 'truncated' | 'reset' | 'mismatch';

export const FAULT_KINDS: FaultKind[] = ['latency', 'decline', 'timeout', 'http_500', 'malformed', 'truncated', 'reset', 'mismatch'];

export interface FaultSpec<Op extends string = string> {
  operation?: Op | 'ANY';
  kind: FaultKind;
  /** How many matching calls this fault applies to (default 1). */
  count?: number;
  latencyMs?: number;
  code?: string;
  message?: string;
  /** Whether the call is processed (and money booked) before the fault; defaults per kind. */
  booked?: boolean;
  /** timeout: how long the connection is held open without an answer (default 5 minutes). */
  holdMs?: number;
  /** mismatch: which field of an approval is answered differently from the request (default amount). */
  field?: 'orderId' | 'amount';
  /**
   * 'released': each matching call waits, where latencyMs would sleep, until POST /_control/release lets it go: a
   * condition a test sets, not a clock a loaded machine can outrun. Then the fault's kind applies as usual.
   */
  until?: 'released';
}

/** A call waiting on a fault with until 'released' (GET /_control/held). */
export interface HeldCall<Op extends string = string> {
  id: number;
  faultId: number;
  operation: Op;
  since: string;
}

export interface Fault<Op extends string = string> {
  id: number;
  operation: Op | 'ANY';
  kind: FaultKind;
  count: number;
  latencyMs: number;
  code?: string;
  message?: string;
  booked: boolean;
  holdMs: number;
  field: 'orderId' | 'amount';
  until?: 'released';
}

/** Faults that by default strike after the call was processed: the charge is booked, the answer is lost. */
const BOOKED_BY_DEFAULT: Record<FaultKind, boolean> = {
  latency: true,
  decline: false,
  timeout: true,
  http_500: false,
  malformed: true,
  truncated: true,
  reset: false,
  mismatch: true,
};

/** The queue's controls, as the control routes use them (a sandbox's state exposes them). */
export interface FaultControls<Op extends string = string> {
  addFault(spec: FaultSpec<Op>): Fault<Op>;
  faults(): Fault<Op>[];
  clearFaults(): number;
  held(): HeldCall<Op>[];
  /** Lets the held calls (of one fault, or all) go on; how many. */
  release(faultId?: number): number;
}

export interface FaultQueue<Op extends string = string> extends FaultControls<Op> {
  takeFault(operation: Op): Fault<Op> | undefined;
  /**
   * Parks a call taken by a fault with until 'released': true once released, false if aborted by a reset or by
   * `signal` (the server that took the call closing), so nothing stays parked across a reset or a close.
   */
  hold(fault: Fault<Op>, operation: Op, signal?: AbortSignal): Promise<boolean>;
  /** Forgets the queued faults and ends the held calls unanswered. */
  reset(): void;
}

export function createFaultQueue<Op extends string>(): FaultQueue<Op> {
  let queue: Fault<Op>[] = [];
  let faultSeq = 0;
  const heldCalls = new Map<number, HeldCall<Op> & { resume: (released: boolean) => void }>();
  let heldSeq = 0;

  /** Resumes the held calls that `which` selects with `released`; how many. */
  function resumeHeld(which: (call: HeldCall<Op>) => boolean, released: boolean): number {
    let count = 0;
    for (const [id, call] of heldCalls) {
      if (!which(call)) continue;
      heldCalls.delete(id);
      call.resume(released);
      count += 1;
    }
    return count;
  }

  return {
    addFault(spec) {
      const fault: Fault<Op> = {
        id: ++faultSeq,
        operation: spec.operation ?? 'ANY',
        kind: spec.kind,
        count: spec.count ?? 1,
        latencyMs: spec.latencyMs ?? 0,
        code: spec.code,
        message: spec.message,
        booked: spec.kind === 'decline' ? false : (spec.booked ?? BOOKED_BY_DEFAULT[spec.kind]),
        holdMs: spec.holdMs ?? 5 * 60_000,
        field: spec.field ?? 'amount',
        ...(spec.until ? { until: spec.until } : {}),
      };
      queue.push(fault);
      return fault;
    },

    takeFault(operation) {
      const fault = queue.find((f) => f.count > 0 && (f.operation === 'ANY' || f.operation === operation));
      if (!fault) return undefined;
      fault.count -= 1;
      queue = queue.filter((f) => f.count > 0);
      return { ...fault };
    },

    faults: () => queue.map((f) => ({ ...f })),

    clearFaults() {
      const count = queue.length;
      queue = [];
      return count;
    },

    hold(fault, operation, signal) {
      if (signal?.aborted) return Promise.resolve(false);
      const id = ++heldSeq;
      // The wall clock, not the sandbox's (a simulated one may stand still): when the call arrived, for people reading.
      const since = new Date().toISOString();
      const onAbort = () => resumeHeld((call) => call.id === id, false);
      signal?.addEventListener('abort', onAbort, { once: true });
      return new Promise<boolean>((resolve) => {
        const resume = (released: boolean) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(released);
        };
        heldCalls.set(id, { id, faultId: fault.id, operation, since, resume });
      });
    },

    held: () => [...heldCalls.values()].map(({ id, faultId, operation, since }) => ({ id, faultId, operation, since })),

    release: (faultId) => resumeHeld((call) => faultId === undefined || call.faultId === faultId, true),

    reset() {
      resumeHeld(() => true, false);
      queue = [];
    },
  };
}

/** What a processed call answered, before a fault (if any) changes how it reaches the client. */
export interface Processed {
  status: number;
  body: unknown;
}

/** The gateway's own words for what a fault answers. */
export interface FaultAnswers {
  decline(fault: Fault): Processed;
  serverError: unknown;
  /** A 200 whose JSON body breaks off. */
  malformedBody: string;
  /** What a truncated answer sends half of, when nothing was processed. */
  approvedBody: unknown;
  /** An approval answering another orderId or amount than was asked. */
  mismatch(body: Record<string, unknown>, field: 'orderId' | 'amount'): Record<string, unknown>;
}

export interface FaultServer {
  /**
   * Takes the call's fault, if one is queued, and waits as it says (latency, or held until released). Undefined:
   * no fault; 'aborted': the held call was ended by a reset or a close, and its connection is already dropped.
   */
  awaitFault<Op extends string>(queue: FaultQueue<Op>, operation: Op, reply: FastifyReply): Promise<Fault<Op> | undefined | 'aborted'>;
  /** Answers through the fault: `processed` is the call's own answer when it was processed (booked) first. */
  apply(fault: Fault, reply: FastifyReply, processed?: Processed): Promise<unknown> | FastifyReply | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The HTTP side of faults for one server (a Fastify scope). It ends the calls this server holds (until released, or
 * a timeout's open connection) when it closes, or they would keep it from closing. Only its own: the app's mounted
 * routes share a state with its private listener, which closes after the app has drained its gateway calls
 * (plugins/gateway.ts), so a call held there may still be released meanwhile.
 */
export function createFaultServer(app: FastifyInstance, answers: FaultAnswers): FaultServer {
  const held = new Set<Socket>();
  const closing = new AbortController();
  app.addHook('preClose', async () => {
    closing.abort();
    for (const socket of held) socket.destroy();
    held.clear();
  });

  return {
    async awaitFault(queue, operation, reply) {
      const fault = queue.takeFault(operation);
      if (fault?.until === 'released') {
        if (!(await queue.hold(fault, operation, closing.signal))) {
          // Aborted by a reset or a close: the connection drops, nothing is booked.
          reply.hijack();
          reply.raw.socket?.destroy();
          return 'aborted';
        }
      } else if (fault && fault.latencyMs > 0) await sleep(fault.latencyMs);
      return fault;
    },

    apply(fault, reply, processed) {
      const socket = reply.raw.socket;
      switch (fault.kind) {
        case 'latency':
          return reply.status(processed!.status).send(processed!.body);
        case 'mismatch':
          return reply.status(processed!.status).send(answers.mismatch({ ...(processed!.body as Record<string, unknown>) }, fault.field));
        case 'decline': {
          const declined = answers.decline(fault);
          return reply.status(declined.status).send(declined.body);
        }
        case 'http_500':
          return reply.status(500).send(answers.serverError);
        case 'malformed':
          return reply.status(200).type('application/json').send(answers.malformedBody);
        case 'truncated': {
          reply.hijack();
          const body = JSON.stringify(processed?.body ?? answers.approvedBody);
          reply.raw.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
          reply.raw.write(body.slice(0, Math.floor(body.length / 2)));
          setTimeout(() => socket?.destroy(), 20);
          return undefined;
        }
        case 'reset':
          reply.hijack();
          (socket as (Socket & { resetAndDestroy?: () => void }) | null)?.resetAndDestroy?.();
          socket?.destroy();
          return undefined;
        case 'timeout': {
          // The call was processed (and booked) but no answer ever comes: the client's timeout decides.
          reply.hijack();
          if (!socket) return undefined;
          held.add(socket);
          const timer = setTimeout(() => socket.destroy(), fault.holdMs);
          socket.once('close', () => {
            clearTimeout(timer);
            held.delete(socket);
          });
          return undefined;
        }
      }
    },
  };
}

/** A fault spec as POST /_control/faults takes it, refused 400 INVALID_REQUEST when it is not one. */
export function parseFaultSpec<Op extends string>(raw: unknown, operations: readonly (Op | 'ANY')[]): FaultSpec<Op> {
  const spec = (raw ?? {}) as Record<string, unknown>;
  if (!FAULT_KINDS.includes(spec.kind as FaultKind)) throw new SandboxError(400, 'INVALID_REQUEST', `kind must be one of ${FAULT_KINDS.join(', ')}`);
  if (spec.operation !== undefined && !operations.includes(spec.operation as Op)) {
    throw new SandboxError(400, 'INVALID_REQUEST', `operation must be one of ${operations.join(', ')}`);
  }
  if (spec.field !== undefined && spec.field !== 'orderId' && spec.field !== 'amount') {
    throw new SandboxError(400, 'INVALID_REQUEST', 'field must be orderId or amount');
  }
  if (spec.until !== undefined && spec.until !== 'released') throw new SandboxError(400, 'INVALID_REQUEST', "until must be 'released'");
  if (spec.until !== undefined && spec.latencyMs !== undefined) {
    throw new SandboxError(400, 'INVALID_REQUEST', 'latencyMs and until are alternatives: a call waits for one or the other');
  }
  for (const name of ['count', 'latencyMs', 'holdMs']) {
    const value = spec[name];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
      throw new SandboxError(400, 'INVALID_REQUEST', `${name} must be a whole number`);
    }
  }
  return spec as unknown as FaultSpec<Op>;
}

/**
 * The controls both sandboxes serve under /_control: the fault queue (GET, POST, DELETE /faults), the held calls
 * (GET /held, POST /release) and the clock (GET, PUT /clock: settable when it is simulated, standalone or shared
 * with an app running CLOCK=simulated).
 */
export function registerFaultControls<Op extends string>(
  app: FastifyInstance,
  options: { controls: FaultControls<Op>; operations: readonly (Op | 'ANY')[]; clock: Clock },
): void {
  const { controls, operations, clock } = options;
  app.get('/_control/faults', async function listFaults() {
    return { faults: controls.faults() };
  });

  app.post('/_control/faults', async function queueFault(request, reply) {
    return reply.status(201).send(controls.addFault(parseFaultSpec(request.body, operations)));
  });

  app.delete('/_control/faults', async function clearFaults() {
    return { cleared: controls.clearFaults() };
  });

  // Calls parked by a fault with until 'released': which have arrived, and letting them go on.
  app.get('/_control/held', async function listHeld() {
    return { held: controls.held() };
  });

  app.post('/_control/release', async function releaseHeld(request) {
    const { faultId } = (request.body ?? {}) as { faultId?: unknown };
    if (faultId !== undefined && !(Number.isInteger(faultId) && (faultId as number) > 0)) {
      throw new SandboxError(400, 'INVALID_REQUEST', 'faultId must be a fault id');
    }
    return { released: controls.release(faultId as number | undefined) };
  });

  app.get('/_control/clock', async function readClock() {
    return { now: clock.now().toISOString(), settable: isSimulated(clock) };
  });

  app.put('/_control/clock', async function setClock(request) {
    const { now } = (request.body ?? {}) as { now?: string };
    if (!isSimulated(clock)) throw new SandboxError(409, 'CLOCK_NOT_SIMULATED', 'this sandbox shares a system clock');
    const instant = new Date(String(now));
    if (Number.isNaN(instant.getTime())) throw new SandboxError(400, 'INVALID_REQUEST', 'now must be an ISO-8601 instant');
    clock.set(instant);
    return { now: clock.now().toISOString(), settable: true };
  });
}
