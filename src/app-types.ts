// The app as plugins and routes see it, apart from src/app.ts (which builds it from them): importing the type from
// there would make every routes file and app.ts import each other.
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { Clock } from './lib/clock.ts';
import type { Redactor } from './lib/redact.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    clock: Clock;
    redactor: Redactor;
  }
}

/** TypeBox schemas give typed requests. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
