// Admin routes of the charging engine (DESIGN.md §5): one charging pass now, and the simulated clock.
// ADMIN_TOKENS only; an API key is 401 here.
import type { App } from '../../app.ts';
import { isSimulated } from '../../lib/clock.ts';
import { defineError, ValidationError } from '../../lib/errors.ts';
import type { ChargeService } from '../payments/charge.service.ts';
import { ClockResponse, PassReport, SetClockBody } from './admin.schemas.ts';

export const ClockNotSimulatedError = defineError('CLOCK_NOT_SIMULATED', 'The clock can be set only with CLOCK=simulated', 409);

export function adminRoutes(charges: ChargeService) {
  return async (app: App) => {
    app.addHook('onRequest', app.requireAdminToken);
    const { clock } = app;

    // Works with SCHEDULER_ENABLED=false too: operators and tests drive passes by hand.
    app.post('/scheduler/run', { schema: { tags: ['admin'], response: { 200: PassReport } } }, async () => charges.runPass());

    const clockState = () => ({
      now: clock.now().toISOString(),
      kind: clock.kind,
      frozen: isSimulated(clock) ? clock.frozen : false,
    });

    app.get('/clock', { schema: { tags: ['admin'], response: { 200: ClockResponse } } }, async () => clockState());

    app.put('/clock', { schema: { tags: ['admin'], body: SetClockBody, response: { 200: ClockResponse } } }, async (request) => {
      if (!isSimulated(clock)) throw new ClockNotSimulatedError();
      const instant = new Date(request.body.now);
      if (Number.isNaN(instant.getTime())) throw new ValidationError(`now: "${request.body.now}" is not an instant`);
      clock.set(instant);
      request.log.info({ now: instant.toISOString() }, 'simulated clock set');
      return clockState();
    });
  };
}
