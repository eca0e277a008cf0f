// The Korean message catalog: every word the portal and the console show, in Korean (docs/console.md "Operator
// console"). Korean is the portal's first language. catalog.en.ts has the same keys (typed as this catalog's shape,
// and test/modules/i18n/catalog.test.ts fails when a key or a `{placeholder}` exists in one language and not the
// other). Sections: `common` (both surfaces), `words` (codes shown in words: statuses, reasons, intervals), `checkout`
// (the pages on the way to a gateway's window), `console`, `portal`. A value may hold `{name}` placeholders, filled
// by t(key, { name }). The console's frame (`console.frame`) is written in console-frame.ko.ts / console-frame.en.ts,
// for its size; it is part of this catalog all the same.

import { frameKo } from './console-frame.ko.ts';

import { recordsKo } from './console-records.ko.ts';

import { customersKo } from './console-customers.ko.ts';

export const ko = {
  common: {
    languageName: '한국어',
    switchLanguage: 'English',
    zoneNote: '시간은 한국 표준시(KST, Asia/Seoul) 기준입니다',
    kst: 'KST',
    none: '없음',
    back: '돌아가기',
    skipToContent: '본문으로 건너뛰기',
    somethingWentWrong: '서버에서 문제가 발생했습니다. 잠시 후 다시 시도해 주세요.',
    formExpired: '이 양식은 더 이상 유효하지 않습니다(만료되었거나 이 페이지에서 보낸 것이 아닙니다). 페이지를 새로 고친 뒤 다시 시도해 주세요.',
    notFound: '찾을 수 없습니다',
  },
  words: {
    subscriptionStatus: {
      ACTIVE: '이용 중',
      TRIALING: '무료 체험 중',
      PAST_DUE: '결제 실패(재시도 예정)',
      PAUSED: '일시 정지',
      CANCELED: '해지됨',
    },
    paymentStatus: {
      PENDING: '처리 중',
      SUCCEEDED: '결제 완료',
      FAILED: '결제 실패',
      UNKNOWN: '결과 확인 중',
      CANCELED: '환불됨',
    },
    refundStatus: {
      PENDING: '환불 처리 중',
      SUCCEEDED: '환불 완료',
      FAILED: '환불 실패',
      UNKNOWN: '환불 결과 확인 중',
    },
    method: {
      CARD: '카드',
      MOBILE: '휴대폰',
    },
    gateway: {
      DANAL: '다날',
      TOSS: '토스페이먼츠',
    },
    interval: {
      day: '{count}일마다',
      week: '{count}주마다',
      month: '{count}개월마다',
      year: '{count}년마다',
    },
    intervalOne: {
      day: '매일',
      week: '매주',
      month: '매월',
      year: '매년',
    },
    cancelReason: {
      REQUESTED: '고객 요청으로 해지',
      CANCELED_BY_CUSTOMER: '고객이 해지',
      CANCELED_BY_MERCHANT: '판매자가 해지',
      CANCELED_BY_OPERATOR: '운영자가 해지',
      RETRIES_EXHAUSTED: '결제가 계속 실패하여 해지',
      CONSENT_MISSING: '유료 전환 동의가 없어 해지',
      WITHDRAWN: '청약철회로 해지',
      ERASED: '고객 개인정보 삭제로 해지',
      UNSPECIFIED: '해지됨',
    },
    attentionReason: {
      PAYMENT_OUTCOME_UNKNOWN: '결제 결과를 확인하는 중입니다',
      LEASE_EXPIRED: '결제 처리가 중단되어 결과를 확인하는 중입니다',
      MOBILE_WINDOW_CLOSED: '휴대폰 결제 가능 기간이 지나 결제수단을 다시 등록해야 합니다',
      PAYMENT_METHOD_INVALID: '카드를 더 이상 쓸 수 없어(만료·정지 등) 결제수단을 다시 등록해야 합니다',
      WITHDRAWAL_REFUND_DUE: '청약철회 환불이 남아 있어 판매자가 결제대행사 밖에서 환불합니다',
      REFUND_OUTCOME_UNKNOWN: '환불 결과를 확인하는 중입니다',
      SETTLEMENT_MISMATCH: '정산 내역이 결제 기록과 다릅니다',
      SUBSCRIPTION_CANCELED: '구독 해지 후에 결제되었습니다',
      UNSPECIFIED: '확인이 필요합니다',
    },
    paymentKind: {
      INITIAL: '첫 결제',
      RECURRING: '정기 결제',
      MANUAL: '수동 결제',
      ONE_TIME: '단건 결제',
    },
    checkoutStatus: {
      PENDING: '진행 중',
      COMPLETED: '완료',
      FAILED: '실패',
      EXPIRED: '만료',
      NEEDS_ATTENTION: '확인 필요',
    },
    reconciliationStatus: {
      MATCHED: '일치',
      MISMATCHED: '불일치',
      UNMATCHED: '대응 결제 없음',
      MISSING: '정산 누락',
    },
    mismatchReason: {
      AMOUNT: '금액',
      DATE: '날짜',
      METHOD: '결제수단',
      STATUS: '상태',
    },
    settlementLineType: {
      APPROVAL: '승인',
      CANCEL: '취소',
    },
    endpointStatus: {
      ENABLED: '사용 중',
      DISABLED: '사용 중지',
    },
    endpointDisabledReason: {
      GONE: '엔드포인트가 410(없음)으로 응답',
      FAILING: '전송이 계속 실패',
      DISABLED_BY_MERCHANT: '판매자가 중지',
    },
  },
  checkout: {
    // The pages a customer passes through on the way to a gateway's window (src/modules/registrations).
    tossWindow: {
      title: '카드 등록',
      heading: '자동결제에 사용할 카드를 등록해 주세요',
      intro: '카드 정보는 토스페이먼츠의 카드 등록 창에 입력합니다. 카드 번호는 이 서비스에 전달되지 않습니다.',
      loading: '토스페이먼츠 카드 등록 창을 불러오는 중입니다…',
      opening: '토스페이먼츠 카드 등록 창을 여는 중입니다…',
      unavailable: '카드 등록 창을 불러오지 못했습니다. 인터넷 연결을 확인한 뒤 다시 시도해 주세요. 결제된 금액은 없습니다.',
      closed: '카드 등록 창이 닫혔습니다. 카드를 등록하려면 창을 다시 열어 주세요. 결제된 금액은 없습니다.',
      failed: '카드 등록 창을 열지 못했습니다. 다시 시도해 주세요. 결제된 금액은 없습니다.',
      retry: '다시 시도',
      open: '카드 등록 창 열기',
      noscript: '카드 등록 창은 JavaScript가 있어야 열립니다. 브라우저에서 JavaScript를 켠 뒤 이 페이지를 새로 고쳐 주세요.',
      notFoundHeading: '유효하지 않은 링크입니다',
      expiredHeading: '만료된 링크입니다',
      usedHeading: '이미 처리된 등록입니다',
      startAgain: '결제된 금액은 없습니다. 판매자의 사이트에서 다시 시작해 주세요.',
      seeMerchant: '이 링크로는 더 진행할 수 없습니다. 판매자의 사이트에서 결과를 확인해 주세요.',
    },
  },

  console: {
    // The console's frame: layout, language switch, sign-in, lists, needs attention, search, reports, error pages.
    frame: frameKo,

    // The record pages and what operators do on them: subscription, payment, reconciliation, audit, action forms
    // (their own file, console-records.<language>.ts).
    records: recordsKo,

    // The customer pages: a customer by userId or pseudonym, the erasure's confirmation page, the Erasures list
    // (their own file, console-customers.<language>.ts).
    customers: customersKo,
  },

  portal: {
    // The customer portal's pages (src/modules/portal).
    title: '구독 관리',
    frame: {
      backToShop: '이전 사이트로 돌아가기',
    },
    overview: {
      heading: '구독 관리',
      none: '구독이 없습니다.',
      status: '상태',
      amount: '금액',
      interval: '결제 주기',
      nextCharge: '다음 결제일',
      paymentMethod: '결제수단',
      card: '{name} {number}',
      phone: '{carrier} {number}',
      cancelsOn: '{date}에 해지됩니다. 그 전까지 계속 이용하실 수 있습니다.',
      canceledOn: '{date}에 해지되었습니다.',
      trialEnds: '무료 체험 종료일: {date}',
      priceIncrease: '요금이 {old}에서 {new}(으)로 바뀝니다. 동의하시면 {date} 결제부터 새 금액이 적용되고, 동의하지 않으시면 지금 금액으로 계속됩니다.',
      priceIncreaseNoDate: '요금이 {old}에서 {new}(으)로 바뀝니다. 동의하시면 다음 결제부터 새 금액이 적용되고, 동의하지 않으시면 지금 금액으로 계속됩니다.',
      priceIncreaseAgreed: '새 금액에 동의하셨습니다. 다음 결제부터 새 금액이 적용됩니다.',
      priceIncreaseLater: '동의는 결제 전 30일 이내에만 유효하므로 {from}부터 하실 수 있습니다. 동의하지 않는 것은 지금 하실 수 있습니다.',
      trialConsent:
        '무료 체험이 {date}에 끝납니다. 유료 전환에 동의하시면 그 뒤로 {amount}이 {interval} 결제됩니다. 동의하지 않으시면 체험이 끝날 때 요금 없이 해지됩니다.',
      attention: '안내: {reason}',
      refundDue: '청약철회 환불금 {amount}은(는) 판매자가 돌려드려야 할 금액입니다. 판매자가 직접 환불해 드립니다.',
      cancel: '구독 해지',
      keep: '해지 예약 취소',
      agree: '변경 금액에 동의',
      decline: '동의하지 않음',
      trialAgree: '유료 전환에 동의',
      changeMethod: '결제수단 변경',
      paymentsHeading: '최근 결제 내역',
      paymentsNone: '결제 내역이 없습니다.',
      paymentsCaption: '최근 24건의 결제와 환불',
      refunds: '환불',
      refundLine: '{date} {amount} ({status})',
      records: '결제 내역 다운로드 (CSV)',
    },
    done: {
      canceled: '해지 요청이 처리되었습니다.',
      kept: '해지 예약이 취소되었습니다. 구독이 계속됩니다.',
      withdrawn: '청약철회가 처리되었습니다. 구독이 해지되었고 결제 금액은 환불됩니다.',
      withdrawnRefundDue: '청약철회가 처리되었습니다. 구독이 해지되었고, 환불금은 판매자가 직접 돌려드립니다. 환불이 끝날 때까지 구독 정보에 표시됩니다.',
      agreed: '변경 금액에 동의하셨습니다.',
      declined: '요금 변경에 동의하지 않으셨습니다. 지금 금액으로 계속됩니다.',
      trialAgreed: '유료 전환에 동의하셨습니다.',
    },
    cancel: {
      heading: '구독 해지',
      active: '해지를 확인하시면 {date}까지 지금처럼 이용하실 수 있고, 그 뒤로는 결제되지 않습니다.',
      trialing: '해지를 확인하시면 무료 체험이 {date}에 끝나고, 요금은 청구되지 않습니다.',
      now: '해지를 확인하시면 지금 바로 해지되고, 이후 결제(재시도 포함)는 없습니다.',
      reason: '해지 사유 (선택)',
      reasonHint: '적지 않으셔도 해지됩니다.',
      confirm: '해지 확인',
      scheduled: '이 구독은 {date}에 해지될 예정입니다. 그 전까지 해지 예약을 취소할 수 있습니다.',
      canceled: '이 구독은 이미 해지되었습니다.',
      back: '구독 관리로 돌아가기',
      withdrawalHeading: '청약철회',
      withdrawalOffer: '{until}까지 청약철회를 하실 수 있습니다. 지금 바로 해지되고, 결제하신 {amount} 전액이 환불됩니다.',
      withdraw: '청약철회 (전액 환불)',
      withdrawalOFF: '이 서비스는 이 페이지에서 청약철회를 받지 않습니다. 청약철회는 판매자에게 문의해 주세요.',
      withdrawalWINDOW_PASSED: '첫 결제 후 청약철회 기간이 지나 청약철회(전액 환불)는 할 수 없습니다.',
      withdrawalUSED: '서비스 이용을 시작하셔서 청약철회(전액 환불)는 할 수 없습니다.',
      withdrawalCANCELED: '이미 해지된 구독이라 청약철회는 할 수 없습니다.',
      withdrawalNEEDS_ATTENTION: '지난 결제나 환불을 확인하는 중이라 지금은 청약철회를 할 수 없습니다. 잠시 후 다시 시도해 주세요.',
    },
    subscription: {
      heading: '구독 정보',
    },
    paymentMethod: {
      heading: '결제수단 변경',
      succeeded: '결제수단이 변경되었습니다.',
      failed: '결제수단을 변경하지 못했습니다. 기존 결제수단이 그대로 유지됩니다.',
      pending: '결제수단 변경을 확인하는 중입니다. 잠시 후 구독 관리에서 다시 확인해 주세요.',
    },
    records: {
      kind: '구분',
      payment: '결제',
      refund: '환불',
      time: '일시 (KST, 한국 표준시)',
      item: '상품',
      amount: '금액 (원)',
      status: '상태',
      instrument: '결제수단',
      gateway: '결제대행사',
      orderId: '주문번호 (orderId)',
      transactionId: '거래번호 (transactionId)',
      id: 'ID',
      paymentId: '결제 ID',
    },
    errors: {
      heading: '요청을 처리하지 못했습니다',
      notFoundHeading: '찾을 수 없습니다',
      NOT_FOUND: '찾을 수 없는 페이지이거나 구독입니다.',
      STATE_CONFLICT: '지금 상태에서는 할 수 없는 요청입니다. 구독 관리에서 현재 상태를 확인해 주세요.',
      NOT_DUE: '휴대폰 결제수단은 결제할 금액이 있을 때(다음 결제일 5일 전부터, 또는 결제가 실패한 뒤)에만 바꿀 수 있습니다.',
      PAYMENT_OUTCOME_UNKNOWN: '지난 결제의 결과를 확인하는 중이라 지금은 결제수단을 바꿀 수 없습니다. 잠시 후 다시 시도해 주세요.',
      PAYMENT_METHOD_CHANGE_NOT_OFFERED: '이 결제사에서는 이 페이지에서 결제수단을 변경할 수 없습니다. 구독하신 서비스의 사이트에서 변경해 주세요.',
      WITHDRAWAL_NOT_AVAILABLE: '이 구독은 청약철회(전액 환불)를 할 수 없습니다.',
      CONSENT_ALREADY_DECIDED: '이미 결정하신 내용입니다. 구독 관리에서 현재 상태를 확인해 주세요.',
      IDEMPOTENCY_IN_PROGRESS: '요청을 처리하는 중입니다. 잠시 후 구독 관리를 새로 고쳐 결과를 확인해 주세요.',
      RATE_LIMITED: '요청이 너무 많습니다. 잠시 후 다시 시도해 주세요.',
      VALIDATION_ERROR: '입력하신 내용을 처리할 수 없습니다. 확인 후 다시 시도해 주세요.',
      GATEWAY: '결제사와 통신하지 못해 처리하지 못했습니다. 잠시 후 다시 시도해 주세요.',
      other: '요청을 처리하지 못했습니다. 잠시 후 다시 시도해 주세요.',
      linkGoneHeading: '사용할 수 없는 링크입니다',
      linkGone: '이 링크는 이미 사용되었거나 유효 기간이 지났습니다. 이용하시던 서비스에서 새 링크를 요청해 주세요.',
      sessionEndedHeading: '구독 관리 시간이 끝났습니다',
      sessionEnded: '보안을 위해 구독 관리 페이지는 일정 시간만 열려 있습니다. 이용하시던 서비스에서 새 링크를 요청해 주세요.',
    },
  },
};

/** The catalog's shape: every language has exactly these sections and keys, each a string. */
type Shape<T> = { [K in keyof T]: T[K] extends string ? string : Shape<T[K]> };
export type Catalog = Shape<typeof ko>;
