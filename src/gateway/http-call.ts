// The HTTP under every gateway's wire client (Danal's client.ts, Toss's toss.adapter.ts; docs/gateways.md "The
// gateway client"): sending one request and learning how far it got, reading the answer's JSON, and timing and
// logging the call. What an answer means is each gateway's own (its outcome table); how far a request got is the same
// for all of them, and rests on one fact: the request can only have reached the gateway if the TCP connection was
// established. Before that, a failure is NOT_SENT (safe to send again); after it, anything short of a complete answer
// is UNKNOWN (money may have moved). Written on node:http rather than fetch so that this moment is observable exactly.
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { withoutNul } from '../lib/input.ts';
import { redactorForCall, type Redactor } from '../lib/redact.ts';
import type { GatewayFields, GatewayOperationName, GatewayResult, OutcomeReason } from './gateway.ts';

/** How far a request got: a complete answer, provably never sent, or sent with no complete answer. */
export type Transport =
  | { kind: 'response'; status: number; text: string }
  | { kind: 'not_sent'; detail: string }
  | { kind: 'unknown'; reason: OutcomeReason; detail: string };

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** The path under the base URL, with its query string if any. */
  path: string;
  /** A JSON body (POST); none for GET. */
  body?: Record<string, unknown>;
  /** Headers beyond Authorization, Accept and the body's (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
}

export interface HttpTransport {
  send(request: HttpRequest): Promise<Transport>;
  close(): void;
}

/** Basic auth as both gateways take it: the secret key as the user, a colon, no password. */
export function basicAuthorization(secretKey: string): string {
  return `Basic ${Buffer.from(`${secretKey}:`, 'utf8').toString('base64')}`;
}

function describeError(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  return err?.code ? `${err.code}: ${err.message}` : String(err?.message ?? error);
}

/** Requests to one gateway: its base URL, its Authorization header, a timeout per call, kept-alive connections. */
export function createHttpTransport(options: { baseUrl: string; authorization: string; timeoutMs: number }): HttpTransport {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  function send(call: HttpRequest): Promise<Transport> {
    const url = new URL(baseUrl + call.path);
    const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body), 'utf8');
    const secure = url.protocol === 'https:';
    return new Promise((resolve) => {
      let connected = false;
      let settled = false;
      const settle = (result: Transport) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const headers: Record<string, string | number> = { Authorization: options.authorization, Accept: 'application/json', ...call.headers };
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = payload.length;
      }
      const request = (secure ? https : http).request(url, { method: call.method, agent: secure ? httpsAgent : httpAgent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (!response.complete) {
            settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: 'connection closed before the body was complete' });
            return;
          }
          settle({ kind: 'response', status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('aborted', () => settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: 'response aborted' }));
        response.on('error', (error) => settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: describeError(error) }));
      });
      request.on('socket', (socket) => {
        // A socket reused from the keep-alive pool is already connected.
        const connecting = (socket as { connecting?: boolean }).connecting;
        if (!connecting) connected = true;
        else socket.once(secure ? 'secureConnect' : 'connect', () => (connected = true));
      });
      request.on('error', (error) => {
        if (!connected) settle({ kind: 'not_sent', detail: describeError(error) });
        else settle({ kind: 'unknown', reason: 'CONNECTION_RESET', detail: describeError(error) });
      });
      const timer = setTimeout(() => {
        const wasConnected = connected;
        request.destroy();
        if (!wasConnected) settle({ kind: 'not_sent', detail: `could not connect within ${options.timeoutMs} ms` });
        else settle({ kind: 'unknown', reason: 'TIMEOUT', detail: `no complete answer within ${options.timeoutMs} ms` });
      }, options.timeoutMs);
      request.end(payload);
    });
  }

  return {
    send,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

const RAW_TEXT_LIMIT = 200;

/** A complete answer, read: its status, its JSON object if it is one, and what is stored and shown of it (redacted). */
export interface ReadAnswer {
  status: number;
  /** The parsed JSON, whatever it is (an array for a list); undefined when the body is not JSON. */
  body: unknown;
  json: Record<string, unknown> | undefined;
  raw: unknown;
  code: string | undefined;
  message: string | undefined;
}

/** A call's result without its duration (the caller times it). */
export type Classified = Omit<GatewayResult, 'durationMs'>;

/**
 * The transport's result as a gateway's classification starts from it: a final result when nothing complete came
 * back (NOT_SENT before the connection, UNKNOWN after it), else the answer read. PostgreSQL cannot store NUL
 * characters: an answer carrying them is read without them. `scrub` removes what the redactor does not know to
 * (a gateway's own personal fields) from the stored copy.
 */
export function readAnswer(
  operation: GatewayOperationName,
  transport: Transport,
  redactor: Redactor,
  scrub: (json: Record<string, unknown>) => Record<string, unknown> = (json) => json,
): { final: Classified } | { answer: ReadAnswer } {
  const empty: GatewayFields = { extra: {} };
  if (transport.kind === 'not_sent') return { final: { operation, outcome: 'NOT_SENT', reason: 'CONNECT_FAILED', detail: transport.detail, fields: empty } };
  if (transport.kind === 'unknown') return { final: { operation, outcome: 'UNKNOWN', reason: transport.reason, detail: transport.detail, fields: empty } };
  const text = withoutNul(transport.text);
  let body: unknown;
  try {
    // The text holds no NUL any more: only JSON's escape for it can put one in the parsed body. Without that escape
    // the body is kept as parsed, not copied whole a second time (a Toss Payment object is some fifty fields, and
    // this runs on every charge).
    body = JSON.parse(text) as unknown;
    if (text.includes('\\u0000')) body = withoutNul(body);
  } catch {
    body = undefined;
  }
  const json = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const raw = json ? redactor.redact(scrub(json)) : { text: redactor.redact(text.slice(0, RAW_TEXT_LIMIT)) };
  const code = json && typeof json.code === 'string' ? json.code : undefined;
  const message = json && typeof json.message === 'string' ? redactor.redact(json.message) : undefined;
  return { answer: { status: transport.status, body, json, raw, code, message } };
}

export interface CallLog {
  log: Pick<Logger, 'info' | 'warn'>;
  redactor: Redactor;
  /** Which gateway (for the log line; Danal's lines have always gone without it). */
  gateway?: string;
}

/**
 * Runs one call: `classify` gets a redactor that also scrubs `secrets` (the key sent, the secret key) from whatever
 * the gateway answers; a billing key the answer carries is scrubbed from the process's texts while it is recent
 * (Redactor.addIssuedSecret); the outcome is logged (warn when UNKNOWN) with the orderId, never a body.
 */
export async function timedCall(
  operation: GatewayOperationName,
  options: CallLog,
  context: { orderId?: string; secrets: Array<string | undefined> },
  classify: (redactor: Redactor) => Promise<Classified>,
): Promise<GatewayResult> {
  const started = performance.now();
  const result = await classify(redactorForCall(options.redactor, context.secrets));
  const durationMs = Math.round(performance.now() - started);
  if (result.fields.billingKey) options.redactor.addIssuedSecret(result.fields.billingKey);
  const level = result.outcome === 'UNKNOWN' ? 'warn' : 'info';
  options.log[level](
    {
      gateway: {
        ...(options.gateway ? { name: options.gateway } : {}),
        operation,
        outcome: result.outcome,
        reason: result.reason,
        detail: result.detail,
        httpStatus: result.httpStatus,
        code: result.code,
        orderId: context.orderId,
        durationMs,
      },
    },
    'gateway call',
  );
  return { ...result, durationMs };
}
