// Shapes of the admin routes that belong to no domain module: the charging pass and the clock. The subscription and
// payment actions' shapes are in their modules' schemas.
import { Type } from 'typebox';
import { Instant, Reason } from '../shared/schemas.ts';

export const PassReport = Type.Object({
  claimed: Type.Integer(),
  succeeded: Type.Integer(),
  declined: Type.Integer(),
  unknown: Type.Integer(),
  skipped: Type.Integer(),
});

export const ClockResponse = Type.Object({
  now: Type.String({ format: 'date-time' }),
  kind: Type.Union([Type.Literal('system'), Type.Literal('simulated')]),
  /** A set simulated clock stays where it was set. */
  frozen: Type.Boolean(),
});

export const SetClockBody = Type.Object(
  {
    now: Type.String({ ...Instant, description: 'ISO-8601 instant the simulated clock is set to' }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** A pass takes no arguments; a reason for the audit trail is welcome. */
export const RunPassBody = Type.Union([Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false }), Type.Null()]);
