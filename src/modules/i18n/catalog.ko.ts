// The Korean message catalog: every word the portal and the console show, in Korean (docs/operating.md "Operator
// console"). Korean is the portal's first language. catalog.en.ts has the same keys (typed as this catalog's shape,
// and test/modules/i18n/catalog.test.ts fails when a key or a `{placeholder}` exists in one language and not the
// other). Sections: `common` (both surfaces), `words` (codes shown in words: statuses, reasons, intervals), `console`,
// `portal`. A value may hold `{name}` placeholders, filled by t(key, { name }). The console's frame (`console.frame`)
// is written in console-frame.ko.ts / console-frame.en.ts, for its size; it is part of this catalog all the same.

import { frameKo } from './console-frame.ko.ts';

import { recordsKo } from './console-records.ko.ts';

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
      UNSPECIFIED: '해지됨',
    },
    attentionReason: {
      PAYMENT_OUTCOME_UNKNOWN: '결제 결과를 확인하는 중입니다',
      LEASE_EXPIRED: '결제 처리가 중단되어 결과를 확인하는 중입니다',
      MOBILE_WINDOW_CLOSED: '휴대폰 결제 가능 기간이 지나 결제수단을 다시 등록해야 합니다',
      WITHDRAWAL_REFUND_DUE: '청약철회 환불을 판매자가 처리하는 중입니다',
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
  console: {
    // The console's frame: layout, language switch, sign-in, lists, needs attention, search, reports, error pages.
    frame: frameKo,

    // The record pages and what operators do on them: subscription, payment, reconciliation, audit, action forms
    // (their own file, console-records.<language>.ts).
    records: recordsKo,
  },

  portal: {
    // The customer portal's pages (src/modules/portal).
    title: '구독 관리',
  },
};

/** The catalog's shape: every language has exactly these sections and keys, each a string. */
type Shape<T> = { [K in keyof T]: T[K] extends string ? string : Shape<T[K]> };
export type Catalog = Shape<typeof ko>;
