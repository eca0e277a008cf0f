// pino with redaction at every depth (src/lib/redact.ts). pino applies formatters.log before serializers, so
// `req` and `res` (Fastify's request and reply, turned into method/url/status by the default serializers,
// which never include headers) are passed through untouched; everything else is redacted.
import pino, { type Logger, type DestinationStream } from 'pino';
import type { Redactor } from './redact.ts';

export interface LoggerOptions {
  level: string;
  redactor: Redactor;
  destination?: DestinationStream;
}

// Path segments that are personal data or secrets, logged as their route parameter: a customer's userId (the
// erasure's route: the request that asks to forget it must not write it down), a portal link's single-use token, and
// a registration's single-use state on the Toss window page (src/modules/registrations/toss-window.routes.ts).
const PRIVATE_SEGMENTS: ReadonlyArray<[RegExp, string]> = [
  [/^(\/admin\/customers\/)[^/]+/, '$1:userId'],
  [/^(\/portal\/session\/)[^/]+/, '$1:token'],
  [/^(\/billing\/toss-window\/)[^/]+/, '$1:state'],
];

/** What a request's URL is logged as: its path only (query strings carry state tokens, transaction ids, userIds and, on the sandbox window, names), private segments named by their parameter. */
export function loggedPath(url: string): string {
  const path = url.split('?')[0]!;
  return PRIVATE_SEGMENTS.reduce((logged, [pattern, name]) => logged.replace(pattern, name), path);
}

export function createLogger({ level, redactor, destination }: LoggerOptions): Logger {
  return pino(
    {
      level,
      base: { service: 'merchant-billing' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        log: (object) => {
          const { req, res, ...rest } = object;
          const out: Record<string, unknown> = redactor.redact(rest);
          if (req !== undefined) out.req = req;
          if (res !== undefined) out.res = res;
          return out;
        },
      },
      serializers: {
        req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: typeof req.url === 'string' ? loggedPath(req.url) : req.url,
          remoteAddress: req.ip,
        }),
      },
      hooks: {
        // Free-text messages are scrubbed too: a secret interpolated into a message must not escape.
        logMethod(args, method) {
          const scrubbed = args.map((arg: unknown) => (typeof arg === 'string' ? redactor.redact(arg) : arg));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}
