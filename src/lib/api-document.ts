// What the API document (src/plugins/docs.ts, GET /docs/json) needs from the route schemas, in one place for the
// modules and the plugin: the names it gives the service's shapes, and its groups (tags) in the order a merchant
// integrates (docs/api.md "Integration in four steps"), then the operators', then the browser's.
//
// A name is a mark on the TypeBox schema object that Ajv, the serializer and JSON never see (a non-enumerable symbol,
// kept by TypeBox's Optional): validation and answers are the same with or without it. The document writes each
// marked schema once, under its name in components.schemas, and a `$ref` wherever a route's schema holds it.
import type { TSchema } from 'typebox';

const NAME = Symbol('merchant-billing.schema-name');

/** The schema itself, marked with the name the API document gives it. */
export function named<T extends TSchema>(name: string, schema: T): T {
  Object.defineProperty(schema, NAME, { value: name, enumerable: false, configurable: true });
  return schema;
}

/** The document's name of a schema, when it has one. */
export function nameOf(schema: unknown): string | undefined {
  return typeof schema === 'object' && schema !== null ? (schema as Record<symbol, string | undefined>)[NAME] : undefined;
}

/** The document's groups, in its order. */
export const TAGS = {
  registrations: {
    name: 'Registrations',
    description:
      'Step 1 of a subscription: ask for a registration, send the customer to its `window.url` (the gateway’s window), ' +
      'and the success redirect issues the billing key and creates the subscription (`subscriptionId` on the registration).',
  },
  subscriptions: {
    name: 'Subscriptions',
    description:
      'Recurring charges on a billing key: read them, cancel, change the price (higher only with the customer’s recorded consent), ' +
      'and replace the card or phone through a new window.',
  },
  orders: {
    name: 'Orders',
    description: 'One-time payments: an order gives the gateway window’s parameters; the success redirect confirms the payment with the stored amount.',
  },
  payments: {
    name: 'Payments',
    description: 'Every charge (INITIAL, RECURRING, MANUAL, ONE_TIME) with its attempts and refunds. Read-only for merchants.',
  },
  events: {
    name: 'Events',
    description:
      'Every change a merchant cares about, in ascending `sequence`: read the feed with `after=<last sequence>`, or receive them ' +
      'as webhooks (see `webhooks`).',
  },
  webhookEndpoints: {
    name: 'Webhook endpoints',
    description: 'Where events are POSTed, signed per Standard Webhooks with the endpoint’s secret (shown on creation and rotation only).',
  },
  portal: {
    name: 'Customer portal',
    description:
      'Pages the service hosts where your customer manages their own subscriptions (cancel, consent, payment method, records): ' +
      'create a session, send the browser to its single-use `url`.',
  },
  adminSubscriptions: {
    name: 'Admin: subscriptions',
    description: 'Operators’ actions on subscriptions (admin token). Each says why: the reason goes to the audit trail.',
  },
  adminPayments: {
    name: 'Admin: payments',
    description:
      'Operators’ actions on payments (admin token): charge now, resolve an UNKNOWN outcome, refund. Routes that move money require an Idempotency-Key.',
  },
  adminCharging: { name: 'Admin: charging and clock', description: 'Run a charging pass now; read or set the simulated clock (CLOCK=simulated).' },
  adminReconciliation: {
    name: 'Admin: reconciliation',
    description: 'Import the gateways’ settlement statements (Danal’s files, Toss’s settlements API) and compare them with the ledger, by Korea trade date.',
  },
  adminReports: { name: 'Admin: reports', description: 'MRR movements, revenue and recovery of failed charges, by Korea calendar month or day (KRW).' },
  adminAudit: { name: 'Admin: audit', description: 'Who did what, when and why: every operator action and merchant change.' },
  adminErasures: {
    name: 'Admin: erasures and retention',
    description:
      'Erase a customer’s personal data on their request (the payment records stay under a pseudonym, the identity the law still needs is ' +
      'sealed until retainUntil); list and show erasures (never the identity), reveal an identity from its vault (audited with the reason; ' +
      '410 once its retention is over), and run the retention pass that destroys the vaults past their retainUntil.',
  },
  browser: {
    name: 'Browser routes',
    description:
      'Where the gateway sends the customer’s browser back (no token: the single-use `state` binds the redirect to its registration or order), ' +
      'and the built-in result page.',
  },
  operations: { name: 'Operations', description: 'Probes and metrics for the orchestrator and Prometheus.' },
} as const;

export type TagName = (typeof TAGS)[keyof typeof TAGS]['name'];

/** The groups of groups (Redocly's x-tagGroups): who calls them, with which token. */
export const TAG_GROUPS: ReadonlyArray<{ name: string; tags: readonly TagName[] }> = [
  {
    name: 'Merchant API (API key)',
    tags: [
      TAGS.registrations.name,
      TAGS.subscriptions.name,
      TAGS.orders.name,
      TAGS.payments.name,
      TAGS.events.name,
      TAGS.webhookEndpoints.name,
      TAGS.portal.name,
    ],
  },
  {
    name: 'Operators (admin token)',
    tags: [
      TAGS.adminSubscriptions.name,
      TAGS.adminPayments.name,
      TAGS.adminCharging.name,
      TAGS.adminReconciliation.name,
      TAGS.adminReports.name,
      TAGS.adminAudit.name,
      TAGS.adminErasures.name,
    ],
  },
  { name: 'The customer’s browser (no token)', tags: [TAGS.browser.name] },
  { name: 'Operations', tags: [TAGS.operations.name] },
];
