// The English message catalog: the same keys as catalog.ko.ts (its header says how they are checked).
import type { Catalog } from './catalog.ko.ts';
import { frameEn } from './console-frame.en.ts';
import { recordsEn } from './console-records.en.ts';

export const en: Catalog = {
  common: {
    languageName: 'English',
    switchLanguage: '한국어',
    zoneNote: 'Times in KST (Asia/Seoul)',
    kst: 'KST',
    none: 'None',
    back: 'Back',
    skipToContent: 'Skip to content',
    somethingWentWrong: 'Something went wrong on the server. Please try again in a moment.',
    formExpired: 'This form is no longer valid (it expired or did not come from this page). Reload the page and try again.',
    notFound: 'Not found',
  },
  words: {
    subscriptionStatus: {
      ACTIVE: 'Active',
      TRIALING: 'Free trial',
      PAST_DUE: 'Payment failed (will be retried)',
      PAUSED: 'Paused',
      CANCELED: 'Cancelled',
    },
    paymentStatus: {
      PENDING: 'Processing',
      SUCCEEDED: 'Paid',
      FAILED: 'Failed',
      UNKNOWN: 'Being checked',
      CANCELED: 'Refunded',
    },
    refundStatus: {
      PENDING: 'Refund processing',
      SUCCEEDED: 'Refunded',
      FAILED: 'Refund failed',
      UNKNOWN: 'Refund being checked',
    },
    method: {
      CARD: 'Card',
      MOBILE: 'Phone',
    },
    interval: {
      day: 'every {count} days',
      week: 'every {count} weeks',
      month: 'every {count} months',
      year: 'every {count} years',
    },
    intervalOne: {
      day: 'daily',
      week: 'weekly',
      month: 'monthly',
      year: 'yearly',
    },
    cancelReason: {
      REQUESTED: 'Cancelled at your request',
      CANCELED_BY_CUSTOMER: 'Cancelled by you',
      CANCELED_BY_MERCHANT: 'Cancelled by the merchant',
      CANCELED_BY_OPERATOR: 'Cancelled by the merchant’s staff',
      RETRIES_EXHAUSTED: 'Cancelled after repeated failed payments',
      CONSENT_MISSING: 'Cancelled: no consent to continue as a paid subscription',
      WITHDRAWN: 'Withdrawn (full refund)',
      UNSPECIFIED: 'Cancelled',
    },
    attentionReason: {
      PAYMENT_OUTCOME_UNKNOWN: 'A payment’s outcome is being checked',
      LEASE_EXPIRED: 'A payment was interrupted and its outcome is being checked',
      MOBILE_WINDOW_CLOSED: 'The phone payment window has passed: the payment method must be registered again',
      WITHDRAWAL_REFUND_DUE: 'The merchant is processing your withdrawal refund',
      REFUND_OUTCOME_UNKNOWN: 'A refund’s outcome is being checked',
      SETTLEMENT_MISMATCH: 'The settlement differs from the payment record',
      SUBSCRIPTION_CANCELED: 'Charged after the subscription was cancelled',
      UNSPECIFIED: 'Needs a check',
    },
    paymentKind: {
      INITIAL: 'First payment',
      RECURRING: 'Recurring payment',
      MANUAL: 'Manual payment',
      ONE_TIME: 'One-time payment',
    },
    checkoutStatus: {
      PENDING: 'In progress',
      COMPLETED: 'Completed',
      FAILED: 'Failed',
      EXPIRED: 'Expired',
      NEEDS_ATTENTION: 'Needs attention',
    },
    reconciliationStatus: {
      MATCHED: 'Matched',
      MISMATCHED: 'Mismatched',
      UNMATCHED: 'Unmatched',
      MISSING: 'Missing',
    },
    mismatchReason: {
      AMOUNT: 'Amount',
      DATE: 'Date',
      METHOD: 'Method',
      STATUS: 'Status',
    },
    settlementLineType: {
      APPROVAL: 'Approval',
      CANCEL: 'Cancel',
    },
    endpointStatus: {
      ENABLED: 'Enabled',
      DISABLED: 'Disabled',
    },
    endpointDisabledReason: {
      GONE: 'The endpoint answered 410 (gone)',
      FAILING: 'Every delivery failed',
      DISABLED_BY_MERCHANT: 'Disabled by the merchant',
    },
  },
  console: {
    // The console's frame: layout, language switch, sign-in, lists, needs attention, search, reports, error pages.
    frame: frameEn,

    // The record pages and what operators do on them: subscription, payment, reconciliation, audit, action forms
    // (their own file, console-records.<language>.ts).
    records: recordsEn,
  },

  portal: {
    // The customer portal's pages (src/modules/portal).
    title: 'Your subscriptions',
  },
};
