// What src/app.ts hands every service (docs/architecture.md "House style": dependencies passed in, never imported). Services take the
// parts they use with Pick<ServiceDeps, ...>.
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/prisma.ts';
import type { GatewayAdapter } from '../../gateway/gateway.ts';
import type { Gateways } from '../../gateway/registry.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Keyring } from '../../lib/crypto.ts';

export interface ServiceDeps {
  db: Db;
  /** Danal's adapter (src/gateway/gateway.ts): one-time orders and a row written before gateways were named. */
  gateway: GatewayAdapter;
  /**
   * Every configured gateway's adapter (src/gateway/registry.ts). A charge, a refund or a key issuance takes the
   * adapter of its row's gateway through gatewayFor (gateway-for.ts), never by a name in a rule. Absent: Danal alone.
   */
  gateways?: Gateways;
  clock: Clock;
  config: Config;
  keyring: Keyring;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
}
