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
