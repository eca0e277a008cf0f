// Shapes of the admin routes that belong to no domain module: the charging pass and the clock. The subscription and
// payment actions' shapes are in their modules' schemas.
import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Instant, optionalReasonBody, StringEnum } from '../shared/schemas.ts';

export const PassReport = named(
  'PassReport',
  Type.Object(
    {
      claimed: Type.Integer(),
      succeeded: Type.Integer(),
      declined: Type.Integer(),
      unknown: Type.Integer(),
      skipped: Type.Integer(),
    },
    { description: 'What one charging pass did: the due subscriptions it claimed and how their charges came out' },
  ),
);

export const InquiryReport = named(
  'InquiryReport',
  Type.Object(
    {
      asked: Type.Integer({ description: 'unknown outcomes looked up at their gateway' }),
      succeeded: Type.Integer({ description: 'finished SUCCEEDED: the gateway approved our orderId and amount' }),
      failed: Type.Integer({ description: 'finished FAILED as a decline: nothing was charged under the orderId, long after its call' }),
      alreadyFinished: Type.Integer({ description: 'finished first by an operator or a settlement file: nothing recorded but the lookup' }),
      leftForOperator: Type.Integer({ description: 'no lookups left (or an approval that does not match): waiting for an operator' }),
    },
    { description: 'What one inquiry pass did (docs/api.md "Gateways")' },
  ),
);

export const ClockResponse = named(
  'Clock',
  Type.Object(
    {
      now: Type.String({ format: 'date-time' }),
      kind: StringEnum(['system', 'simulated']),
      /** A set simulated clock stays where it was set. */
      frozen: Type.Boolean(),
    },
    { description: 'The service’s clock: what every rule takes as now' },
  ),
);

export const SetClockBody = Type.Object(
  {
    now: Type.String({ ...Instant, description: 'ISO-8601 instant the simulated clock is set to' }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false, examples: [{ now: '2026-12-28T15:00:00.000Z', reason: '다음 결제일로 이동' }] },
);

export const RunPassBody = optionalReasonBody('수동 결제 실행');
