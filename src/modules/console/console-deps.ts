// What the console's pages are given by src/app.ts (index.ts registers them with it): the services' own
// dependencies, the console's sessions, the idempotency store the admin routes use, and the services of the admin
// actions, so that a console action runs the very code its admin route runs.
import type { Erasure } from '../erasure/erase-customer.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import type { ChargeNow } from '../payments/charge-now.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import type { SettlementImports } from '../reconciliation/import-settlement.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { ConsoleSessions } from './console-sessions.ts';

export interface ConsoleDeps {
  service: ServiceDeps;
  sessions: ConsoleSessions;
  idempotency: Idempotency;
  /** The admin routes' payment actions (resolve, refund, settle a refund's outcome) and charge-now. */
  payments: PaymentActions;
  chargeNow: ChargeNow;
  /** The settlement import of POST /admin/settlement-imports (the Reconciliation page's upload). */
  settlementImports: SettlementImports;
  /** The erasure of POST /admin/customers/:userId/erasure (the Erase customer page). */
  erasure: Erasure;
}
