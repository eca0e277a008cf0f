// What the charging engine's steps hand each other and answer (charge.prepare.ts, charge.call.ts, charge.record.ts,
// charge.pipeline.ts, charge.one.ts).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayName, GatewayResult } from '../../gateway/gateway.ts';
import type { ChargePlan, RefusalCode } from '../ledger/charge.rules.ts';
import type { ChargeableSubscription } from '../ledger/schedule.rules.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';

type Tx = Prisma.TransactionClient;
export type Trigger = 'SCHEDULER' | 'ADMIN';

/** How one claimed subscription ended. SKIPPED: a rule refused, the call was not sent, or the claim was lost. */
export type ChargeOutcome = 'SUCCEEDED' | 'DECLINED' | 'UNKNOWN' | 'SKIPPED';

export interface ChargeReport {
  subscriptionId: string;
  outcome: ChargeOutcome;
  paymentId?: string;
  /** Why nothing was sent: a rule's code, NOT_SENT, LEASE_LOST, CANCELED_AT_PERIOD_END, or GATEWAY_REFUSED (claimed after its gateway refused our configuration in the pass: given back unprepared). */
  code?:
    | RefusalCode
    | 'NOT_SENT'
    | 'LEASE_LOST'
    | 'CANCELED_AT_PERIOD_END'
    | 'CONSENT_MISSING'
    | 'BILLING_KEY_UNREADABLE'
    | 'ERROR'
    | 'RECORD_FAILED'
    | 'CHARGE_IN_PROGRESS'
    | 'GATEWAY_REFUSED';
  message?: string;
  gatewayCode?: string;
}

export interface PassReport {
  claimed: number;
  succeeded: number;
  declined: number;
  unknown: number;
  skipped: number;
}

export const emptyPassReport = (): PassReport => ({ claimed: 0, succeeded: 0, declined: 0, unknown: 0, skipped: 0 });

/**
 * What every step of the engine runs with: the app's dependencies, and whether new cycles take the one-statement
 * renderings of prepare and record (default; off, every charge takes the transactional steps, which
 * test/modules/payments/charge-paths.test.ts compares with them).
 */
export interface ChargeDeps extends ServiceDeps {
  oneStatement: boolean;
}

/** Deterministic charge orderId (invariant 2): subscription, cycle and attempt, at most 50 bytes. */
export function chargeOrderId(subscriptionId: string, cycle: number, attempt: number): string {
  const orderId = `S${subscriptionId.replace(/-/g, '')}-${cycle}-${attempt}`;
  if (Buffer.byteLength(orderId, 'utf8') > 50) throw new Error(`orderId for cycle ${cycle} attempt ${attempt} exceeds 50 bytes`);
  return orderId;
}

export interface Ready {
  kind: 'READY';
  leaseOwner: string;
  subscriptionId: string;
  method: 'CARD' | 'MOBILE';
  plan: Extract<ChargePlan, { action: 'CHARGE' }>;
  paymentId: string;
  attemptId: string;
  orderId: string;
  billingKey: string;
  /** The key's gateway (the payment's, from this attempt on) and the customerKey it is bound to (Toss's; null for Danal). */
  gateway: GatewayName;
  customerKey: string | null;
  userId: string;
  orderName: string;
  itemCode: string | null;
  /**
   * When the lease taken at preparation (on the subscription and on the attempt) runs out. A charge prepared ahead
   * of its call is sent only while this leaves room for the whole call (charge.call.ts, leaseHasRoom): past it a sweep may
   * already have made the attempt UNKNOWN, and a call sent then could charge twice (invariant 4).
   */
  leaseExpiresAt: Date;
  /** Prepared by prepareNewCycle: what its success needs, so that it is recorded in one statement (recordAtOnce). */
  newCycle?: Pick<ChargeableSubscription, 'method' | 'anchorAt' | 'intervalUnit' | 'intervalCount'>;
}

export type Prepared = Ready | { kind: 'DONE'; report: ChargeReport };

/** A prepared charge and the gateway's answer to it (or the NOT_SENT recorded for a charge never sent). */
export interface Answer {
  ready: Ready;
  result: GatewayResult;
}

/** Called in the transaction that commits a charge's payment and attempt, just before the call. */
export type OnPrepared = (tx: Tx, info: { paymentId: string; orderId: string; cycle: number; amount: number }) => Promise<void>;
