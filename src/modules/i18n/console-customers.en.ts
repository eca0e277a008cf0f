// The console's customer pages in English (console.customers of catalog.en.ts): the same keys as console-customers.ko.ts.
import type { Catalog } from './catalog.ko.ts';

export const customersEn: Catalog['console']['customers'] = {
  nav: 'Customers',
  // customer.eta: a customer found by their exact userId (or an erased customer's pseudonym).
  search: {
    heading: 'Customer',
    title: 'Customer {userId}',
    label: 'Find a customer',
    userId: 'User ID',
    userIdHint: 'The merchant’s userId, exactly as it was sent; an erased customer’s pseudonym (erased_…) finds their records.',
    find: 'Find',
    nothing: 'No subscription, one-time order or payment carries the userId {userId}.',
    erasedHeading: 'Erased customer',
    erased: 'This customer was erased on {at}: their personal data was removed and their records carry this pseudonym instead of their userId.',
    sealedUntil: 'The identity the payment records still need is sealed until {date} (Korea date), then destroyed.',
    purged: 'The sealed identity was destroyed on {at}.',
    erasureLink: 'The erasure',
  },
  subscriptions: 'Subscriptions',
  noSubscription: 'No subscription.',
  moreSubscriptions: 'All subscriptions of this customer',
  orders: 'One-time orders',
  noOrder: 'No one-time order.',
  ordersShown: 'Only the latest {count} one-time orders are shown.',
  payments: 'Payments',
  noPayment: 'No payment.',
  morePayments: 'All payments of this customer',
  name: 'Name',
  status: 'Status',
  amount: 'Amount',
  orderId: 'Order id',
  payment: 'Payment',
  created: 'Created',
  kind: 'Kind',
  // The action box on the Subscription and Customer pages: a link to the confirmation page (nothing changes there).
  eraseBox: {
    heading: 'Erase customer',
    description:
      'Removes this customer’s personal data from every record at once and keeps the payment records the law requires under a pseudonym. The next page lists what is erased, what is kept and anything that blocks it, and asks for a reason.',
    link: 'Review the erasure',
  },
  // customer-erasure.eta: the confirmation page.
  erase: {
    heading: 'Erase customer',
    title: 'Erase customer {userId}',
    intro: 'The customer with the userId {userId}: {subscriptions} subscription(s), {orders} one-time order(s), {payments} payment(s).',
    erasedHeading: 'What is erased',
    erased: {
      userId: 'The userId, on every record: it is replaced by a pseudonym (erased_ and 20 random characters).',
      personal:
        'Names, phone numbers, emails, masked card numbers and consent references, also inside stored gateway answers, event snapshots, idempotency replies, audit entries, webhook delivery bodies and imported settlement lines.',
      billingKeys: 'Every billing key: revoked, its encrypted key destroyed, and deleted at the gateway where a deletion call is configured.',
    },
    keptHeading: 'What is kept, and why',
    kept: {
      ledger:
        'The payment records: amounts, ids, codes and times, for five years (Article 6 of the Act on the Consumer Protection in Electronic Commerce). Reports and reconciliation give the same figures as before.',
      vault:
        'The old userId, name and phone number, encrypted in a sealed vault under the pseudonym, read only with a reason, and destroyed {years} years after the customer’s latest payment or refund (Article 21 of the Personal Information Protection Act).',
    },
    blockersHeading: 'What blocks the erasure',
    noBlocker: 'Nothing blocks the erasure.',
    refused: 'The erasure was refused and nothing was changed: something below blocks it.',
    blockersNote: 'The erasure is refused while any of these remains. Settle each on its page, or let the erasure cancel the open subscriptions.',
    blocker: {
      subscription: 'An open subscription ({reason})',
      payment: 'A payment waiting for an outcome ({reason})',
      refund: 'A refund waiting for an outcome ({reason})',
      registration: 'A payment-method registration not finished ({reason})',
      order: 'A one-time order not finished ({reason})',
      withdrawal: 'A subscription whose refund after a withdrawal is still owed ({reason})',
      other: 'Something else that must be settled first ({reason})',
    },
    openSubscriptions: 'Open subscriptions',
    refuseOpen: 'Refuse while a subscription is open',
    cancelOpen: 'Cancel the open subscriptions now (cancel reason ERASED)',
    irreversible: 'This cannot be undone.',
    button: 'Erase customer',
    formLabel: 'Erase this customer',
    notFound: 'No record carries this userId, or the customer was already erased.',
  },
  // erasure.eta: one erasure and its audit entries.
  erasure: {
    title: 'Erasure {pseudonym}',
    heading: 'Erasure {pseudonym}',
  },
  // erasures.eta: the erasures, newest first.
  erasures: {
    heading: 'Erasures',
    caption: 'Erasures, newest first',
    empty: 'No customer has been erased.',
    erasedAt: 'Erased',
    pseudonym: 'Pseudonym',
    retainUntil: 'Identity kept until',
    identity: 'Sealed identity',
    sealedUntil: 'Sealed until {date}',
    purgedOn: 'Destroyed on {at}',
    nothingSealed: 'Nothing was sealed',
    filterLabel: 'Filter erasures',
    operator: 'Operator',
    reason: 'Reason',
    counts: 'Records',
    countsValue: '{subscriptions} subscription(s), {payments} payment(s), {orders} order(s), {registrations} registration(s), {billingKeys} billing key(s)',
    pages: 'Erasure pages',
    noMore: 'No more erasures',
  },
};
