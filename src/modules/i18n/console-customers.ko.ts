// The console's customer pages in Korean (console.customers of catalog.ko.ts): the Customer page (a customer found by
// their userId or pseudonym), the erasure's confirmation page and the Erasures list. A section of its own file so the
// catalog stays readable; its keys are checked against console-customers.en.ts like every other key
// (test/modules/i18n/catalog.test.ts).

export const customersKo = {
  nav: '고객',
  // customer.eta: a customer found by their exact userId (or an erased customer's pseudonym).
  search: {
    heading: '고객',
    title: '고객 {userId}',
    label: '고객 찾기',
    userId: '사용자 ID',
    userIdHint: '판매자가 보낸 userId를 그대로 입력하세요. 삭제된 고객의 가명(erased_…)으로 그 고객의 기록을 찾을 수 있습니다.',
    find: '찾기',
    nothing: 'userId {userId}인 구독, 단건 주문, 결제가 없습니다.',
    erasedHeading: '개인정보가 삭제된 고객',
    erased: '이 고객의 개인정보는 {at}에 삭제되었습니다. 개인정보는 지워졌고, 기록에는 userId 대신 이 가명이 남아 있습니다.',
    sealedUntil: '결제 기록에 필요한 신원 정보는 {date}(한국 날짜)까지 봉인되어 보관된 뒤 파기됩니다.',
    purged: '봉인된 신원 정보는 {at}에 파기되었습니다.',
    erasureLink: '삭제 기록',
  },
  subscriptions: '구독',
  noSubscription: '구독이 없습니다.',
  moreSubscriptions: '이 고객의 모든 구독',
  orders: '단건 주문',
  noOrder: '단건 주문이 없습니다.',
  ordersShown: '최근 단건 주문 {count}건만 표시합니다.',
  payments: '결제',
  noPayment: '결제가 없습니다.',
  morePayments: '이 고객의 모든 결제',
  name: '이름',
  status: '상태',
  amount: '금액',
  orderId: '주문 ID',
  payment: '결제',
  created: '생성',
  kind: '종류',
  // The action box on the Subscription and Customer pages: a link to the confirmation page (nothing changes there).
  eraseBox: {
    heading: '고객 개인정보 삭제',
    description:
      '이 고객의 개인정보를 모든 기록에서 한 번에 지우고, 법이 보관을 요구하는 결제 기록은 가명으로 남깁니다. 다음 페이지에서 지워지는 것, 남는 것, 삭제를 막는 것을 확인하고 사유를 입력합니다.',
    link: '삭제 내용 확인',
  },
  // customer-erasure.eta: the confirmation page.
  erase: {
    heading: '고객 개인정보 삭제',
    title: '고객 개인정보 삭제 {userId}',
    intro: 'userId {userId}인 고객: 구독 {subscriptions}건, 단건 주문 {orders}건, 결제 {payments}건.',
    erasedHeading: '지워지는 것',
    erased: {
      userId: '모든 기록의 userId: 가명(erased_ 뒤에 임의의 문자 20자)으로 바뀝니다.',
      personal:
        '이름, 전화번호, 이메일, 가려진 카드 번호, 동의 참조 번호. 저장된 결제대행사 응답, 이벤트 스냅샷, 멱등성 응답, 감사 기록, 웹훅 전송 본문, 가져온 정산 파일 줄 안의 것까지 지웁니다.',
      billingKeys: '모든 빌링키: 폐기되고 암호화된 키가 파기되며, 삭제 호출이 설정된 결제대행사에서는 그곳에서도 삭제됩니다.',
    },
    keptHeading: '남는 것과 그 이유',
    kept: {
      ledger:
        '결제 기록(금액, ID, 코드, 시각): 5년간 보관합니다(전자상거래 등에서의 소비자보호에 관한 법률 제6조). 보고서와 정산 대사는 삭제 전과 같은 수치를 보여 줍니다.',
      vault:
        '이전 userId, 이름, 전화번호: 가명 아래 봉인된 보관함에 암호화되어 사유를 남겨야만 열람할 수 있고, 고객의 마지막 결제나 환불로부터 {years}년 뒤 파기됩니다(개인정보 보호법 제21조).',
    },
    blockersHeading: '삭제를 막는 것',
    noBlocker: '삭제를 막는 것이 없습니다.',
    refused: '삭제가 거절되었고 아무것도 바뀌지 않았습니다. 아래 항목이 삭제를 막고 있습니다.',
    blockersNote: '아래 항목이 하나라도 남아 있으면 삭제가 거절됩니다. 각 항목을 해당 페이지에서 처리하거나, 열린 구독은 삭제하면서 해지하도록 선택하세요.',
    blocker: {
      subscription: '해지되지 않은 구독 ({reason})',
      payment: '결과를 기다리는 결제 ({reason})',
      refund: '결과를 기다리는 환불 ({reason})',
      registration: '끝나지 않은 결제수단 등록 ({reason})',
      order: '끝나지 않은 단건 주문 ({reason})',
      withdrawal: '청약 철회 후 환불이 아직 남은 구독 ({reason})',
      other: '먼저 처리해야 할 다른 항목 ({reason})',
    },
    openSubscriptions: '열린 구독',
    refuseOpen: '열린 구독이 있으면 거절',
    cancelOpen: '열린 구독을 지금 해지 (해지 사유 ERASED)',
    irreversible: '되돌릴 수 없습니다.',
    button: '고객 개인정보 삭제',
    formLabel: '이 고객의 개인정보 삭제',
    notFound: '이 userId를 가진 기록이 없거나, 이미 삭제된 고객입니다.',
  },
  // erasure.eta: one erasure and its audit entries.
  erasure: {
    title: '개인정보 삭제 {pseudonym}',
    heading: '개인정보 삭제 {pseudonym}',
  },
  // erasures.eta: the erasures, newest first.
  erasures: {
    heading: '개인정보 삭제 기록',
    caption: '개인정보 삭제 기록, 최신 순',
    empty: '개인정보를 삭제한 고객이 없습니다.',
    erasedAt: '삭제 일시',
    pseudonym: '가명',
    retainUntil: '신원 정보 보관 기한',
    identity: '봉인된 신원 정보',
    sealedUntil: '{date}까지 봉인',
    purgedOn: '{at} 파기됨',
    nothingSealed: '봉인된 정보 없음',
    filterLabel: '삭제 기록 거르기',
    operator: '운영자',
    reason: '사유',
    counts: '기록',
    countsValue: '구독 {subscriptions}건, 결제 {payments}건, 주문 {orders}건, 결제수단 등록 {registrations}건, 빌링키 {billingKeys}개',
    pages: '삭제 기록 페이지',
    noMore: '더 이상 삭제 기록이 없습니다',
  },
};
