// The merchant event types (docs/api.md "Events and webhooks"): a stable list. The database trigger
// record_merchant_event (prisma/functions/events.sql) decides which change is which type.
export const EVENT_TYPES = [
  'registration.completed',
  'registration.failed',
  'registration.expired',
  'order.completed',
  'order.failed',
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
  'subscription.trial_will_end',
  'payment.succeeded',
  'payment.failed',
  'payment.unknown',
  'payment.canceled',
  'customer.erased',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
