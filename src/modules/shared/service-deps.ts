// What src/app.ts hands every service (docs/architecture.md "House style": dependencies passed in, never imported). Services take the
// parts they use with Pick<ServiceDeps, ...>.
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/prisma.ts';
import type { GatewayAdapter } from '../../gateway/gateway.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Keyring } from '../../lib/crypto.ts';

export interface ServiceDeps {
  db: Db;
  /** The gateway adapter (src/gateway/gateway.ts): rules read its capabilities, never its name. */
  gateway: GatewayAdapter;
  clock: Clock;
  config: Config;
  keyring: Keyring;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
}
