// The English message catalog: the same keys as catalog.ko.ts (its header says how they are checked).
import type { Catalog } from './catalog.ko.ts';
import { frameEn } from './console-frame.en.ts';
import { recordsEn } from './console-records.en.ts';
import { customersEn } from './console-customers.en.ts';

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
      ERASED: 'Cancelled when the customer’s personal data was erased',
      UNSPECIFIED: 'Cancelled',
    },
    attentionReason: {
      PAYMENT_OUTCOME_UNKNOWN: 'A payment’s outcome is being checked',
      LEASE_EXPIRED: 'A payment was interrupted and its outcome is being checked',
      MOBILE_WINDOW_CLOSED: 'The phone payment window has passed: the payment method must be registered again',
      WITHDRAWAL_REFUND_DUE: 'A withdrawal refund is owed and is paid by the merchant outside the payment gateway',
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
  checkout: {
    // The pages a customer passes through on the way to a gateway's window (src/modules/registrations).
    tossWindow: {
      title: 'Register your card',
      heading: 'Register the card for automatic payments',
      intro: 'You enter your card in the Toss Payments card window. Your card number never reaches this service.',
      loading: 'Loading the Toss Payments card window…',
      opening: 'Opening the Toss Payments card window…',
      unavailable: 'The card window could not be loaded. Check your internet connection and try again. Nothing was charged.',
      closed: 'The card window was closed. Open it again to register your card. Nothing was charged.',
      failed: 'The card window could not be opened. Please try again. Nothing was charged.',
      retry: 'Try again',
      open: 'Open the card window',
      noscript: 'The card window needs JavaScript. Turn JavaScript on in your browser, then reload this page.',
      notFoundHeading: 'This link is not valid',
      expiredHeading: 'This link has expired',
      usedHeading: 'This registration is already finished',
      startAgain: 'Nothing was charged. Please start again from the merchant’s site.',
      seeMerchant: 'This link can no longer be used. Please check the result on the merchant’s site.',
    },
  },

  console: {
    // The console's frame: layout, language switch, sign-in, lists, needs attention, search, reports, error pages.
    frame: frameEn,

    // The record pages and what operators do on them: subscription, payment, reconciliation, audit, action forms
    // (their own file, console-records.<language>.ts).
    records: recordsEn,

    // The customer pages: a customer by userId or pseudonym, the erasure's confirmation page, the Erasures list
    // (their own file, console-customers.<language>.ts).
    customers: customersEn,
  },

  portal: {
    // The customer portal's pages (src/modules/portal).
    title: 'Your subscriptions',
    frame: {
      backToShop: 'Back to the previous site',
    },
    overview: {
      heading: 'Your subscriptions',
      none: 'You have no subscriptions.',
      status: 'Status',
      amount: 'Amount',
      interval: 'Billed',
      nextCharge: 'Next charge',
      paymentMethod: 'Payment method',
      card: '{name} {number}',
      phone: '{carrier} {number}',
      cancelsOn: 'Cancels on {date}. You can use it until then.',
      canceledOn: 'Cancelled on {date}.',
      trialEnds: 'Free trial ends on {date}',
      priceIncrease:
        'The price changes from {old} to {new}. If you agree, the new amount applies from the charge on {date}; if you do not, the current amount continues.',
      priceIncreaseNoDate:
        'The price changes from {old} to {new}. If you agree, the new amount applies from the next charge; if you do not, the current amount continues.',
      priceIncreaseAgreed: 'You agreed to the new price: it applies from the next charge.',
      priceIncreaseLater: 'An agreement counts only within the 30 days before the charge, so you can agree from {from}. You can decline now.',
      trialConsent:
        'Your free trial ends on {date}. If you agree to continue, {amount} is charged {interval} after it. If you do not, the subscription ends with the trial and nothing is charged.',
      attention: 'Note: {reason}',
      refundDue: 'The merchant owes you {amount} for your withdrawal and refunds it to you directly.',
      cancel: 'Cancel subscription',
      keep: 'Keep subscription',
      agree: 'Agree to the new price',
      decline: 'Decline',
      trialAgree: 'Agree to continue as a paid subscription',
      changeMethod: 'Change payment method',
      paymentsHeading: 'Recent payments',
      paymentsNone: 'No payments yet.',
      paymentsCaption: 'Your last 24 payments and their refunds',
      refunds: 'Refunds',
      refundLine: '{date} {amount} ({status})',
      records: 'Download records (CSV)',
    },
    done: {
      canceled: 'Your cancellation is done.',
      kept: 'The cancellation is undone: your subscription continues.',
      withdrawn: 'Your withdrawal is done: the subscription is cancelled and your payments are refunded.',
      withdrawnRefundDue:
        'Your withdrawal is done: the subscription is cancelled, and the merchant refunds you directly. Until it has, your subscription shows the amount owed.',
      agreed: 'You agreed to the new price.',
      declined: 'You declined the new price: the current amount continues.',
      trialAgreed: 'You agreed to continue as a paid subscription.',
    },
    cancel: {
      heading: 'Cancel subscription',
      active: 'If you confirm, you keep the subscription until {date} and are not charged after it.',
      trialing: 'If you confirm, your free trial ends on {date} and nothing is charged.',
      now: 'If you confirm, the subscription ends now and no further charge (no retry either) is made.',
      reason: 'Reason (optional)',
      reasonHint: 'You can leave this empty.',
      confirm: 'Confirm cancellation',
      scheduled: 'This subscription cancels on {date}. Until then you can keep it.',
      canceled: 'This subscription is already cancelled.',
      back: 'Back to your subscriptions',
      withdrawalHeading: 'Withdrawal',
      withdrawalOffer: 'You can withdraw until {until}: the subscription ends now and the {amount} you paid is refunded in full.',
      withdraw: 'Withdraw and refund in full',
      withdrawalOFF: 'This service does not take withdrawals on this page: please ask the merchant.',
      withdrawalWINDOW_PASSED: 'The withdrawal period after your first payment has passed, so a withdrawal with a full refund is no longer possible.',
      withdrawalUSED: 'You have started using the service, so a withdrawal with a full refund is no longer possible.',
      withdrawalCANCELED: 'This subscription is already cancelled, so it cannot be withdrawn.',
      withdrawalNEEDS_ATTENTION: 'A payment or refund of this subscription is being checked, so it cannot be withdrawn right now. Please try again later.',
    },
    subscription: {
      heading: 'Subscription',
    },
    paymentMethod: {
      heading: 'Change payment method',
      succeeded: 'Your payment method is changed.',
      failed: 'Your payment method could not be changed. The previous one stays.',
      pending: 'The change is being checked. Please look at your subscriptions again in a moment.',
    },
    records: {
      kind: 'Type',
      payment: 'Payment',
      refund: 'Refund',
      time: 'Time (KST, Korea Standard Time)',
      item: 'Item',
      amount: 'Amount (KRW)',
      status: 'Status',
      instrument: 'Payment method',
      orderId: 'orderId',
      transactionId: 'transactionId',
      id: 'ID',
      paymentId: 'Payment ID',
    },
    errors: {
      heading: 'This could not be done',
      notFoundHeading: 'Not found',
      NOT_FOUND: 'There is no such page or subscription.',
      STATE_CONFLICT: 'This cannot be done in the subscription’s current state. Please look at your subscriptions again.',
      NOT_DUE: 'A phone payment method can be changed only while a payment is due (from 5 days before the next charge, or after a failed one).',
      PAYMENT_OUTCOME_UNKNOWN: 'A previous payment’s outcome is being checked, so the payment method cannot be changed now. Please try again later.',
      PAYMENT_METHOD_CHANGE_NOT_OFFERED:
        'With this payment company the payment method cannot be changed on this page. Please change it on the site of the service you subscribed to.',
      WITHDRAWAL_NOT_AVAILABLE: 'This subscription cannot be withdrawn with a full refund.',
      CONSENT_ALREADY_DECIDED: 'You have already decided this. Please look at your subscriptions again.',
      IDEMPOTENCY_IN_PROGRESS: 'Your request is still being processed. Reload your subscriptions in a moment to see the result.',
      RATE_LIMITED: 'Too many requests. Please try again in a moment.',
      VALIDATION_ERROR: 'What was sent could not be processed. Please check it and try again.',
      GATEWAY: 'The payment company could not be reached, so nothing was done. Please try again in a moment.',
      other: 'This could not be done. Please try again in a moment.',
      linkGoneHeading: 'This link cannot be used',
      linkGone: 'This link was already used or has expired. Please ask the service you came from for a new link.',
      sessionEndedHeading: 'Your session has ended',
      sessionEnded: 'For your security, the subscription pages stay open only for a while. Please ask the service you came from for a new link.',
    },
  },
};
