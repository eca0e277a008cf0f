// Admin route shapes (DESIGN.md §5 "Admin routes").
import { Type } from 'typebox';

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
  { now: Type.String({ format: 'date-time', description: 'ISO-8601 instant the simulated clock is set to' }) },
  { additionalProperties: false },
);
