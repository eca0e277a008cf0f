// The reports' query strings and answers (docs/reconciliation.md "Revenue reports").
import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { DAY_PATTERN, MONTH_PATTERN } from '../../lib/input.ts';
import { StringEnum } from '../shared/schemas.ts';

const Month = Type.String({ pattern: MONTH_PATTERN, description: 'a Korea calendar month, YYYY-MM' });
const Day = Type.String({ pattern: DAY_PATTERN, description: 'a Korea calendar date, YYYY-MM-DD' });
const Rate = Type.Union([Type.Number(), Type.Null()], { description: 'a decimal rounded to 4 places; null when its base is 0' });
const Count = Type.Integer();

export const MonthRangeQuery = Type.Object({ from: Month, to: Month }, { additionalProperties: false });
export const RevenueQuery = Type.Object(
  { from: Day, to: Day, granularity: Type.Optional(StringEnum(['day', 'month'], { default: 'day' })) },
  { additionalProperties: false },
);

export const MrrReport = named(
  'MrrReport',
  Type.Object(
    {
      timezone: Type.String(),
      currency: Type.Literal('KRW'),
      months: Type.Array(
        Type.Object({
          month: Type.String(),
          startingMrr: Count,
          new: Count,
          expansion: Count,
          reactivation: Count,
          contraction: Count,
          churn: Count,
          endingMrr: Count,
          startingSubscriptions: Count,
          endingSubscriptions: Count,
          newSubscriptions: Count,
          churnedSubscriptions: Count,
          logoChurnRate: Rate,
          grossMrrChurnRate: Rate,
          netMrrChurnRate: Rate,
        }),
      ),
    },
    { description: 'MRR movements per Korea calendar month, in KRW' },
  ),
);

const Money = Type.Object({ count: Count, amount: Count });
const Figures = Type.Object({ payments: Money, refunds: Money, net: Count });

export const RevenueReport = named(
  'RevenueReport',
  Type.Object(
    {
      timezone: Type.String(),
      currency: Type.Literal('KRW'),
      items: Type.Array(
        Type.Object({
          period: Type.String(),
          payments: Money,
          refunds: Money,
          net: Count,
          byMethod: Type.Object({ CARD: Figures, MOBILE: Figures }),
          byGateway: Type.Object(
            { DANAL: Figures, TOSS: Figures },
            { description: 'the same figures by the gateway each payment went through (a refund: its payment’s)' },
          ),
        }),
      ),
    },
    { description: 'Succeeded payments and refunds per Korea calendar day or month, in KRW' },
  ),
);

export const RecoveryReport = named(
  'RecoveryReport',
  Type.Object(
    {
      months: Type.Array(
        Type.Object({
          month: Type.String(),
          failedCycles: Count,
          recovered: Count,
          lost: Count,
          open: Count,
          recoveryRate: Rate,
          recoveredAmount: Count,
        }),
      ),
    },
    { description: 'Declined recurring cycles per Korea calendar month of their first decline, and what became of them' },
  ),
);
