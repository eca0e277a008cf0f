// The admin routes that belong to no domain module (docs/operating.md "Admin routes"): a charging pass now, an inquiry
// pass now, and the clock. The subscriptions' and payments' admin routes are their modules' own (subscriptions.admin-routes.ts,
// payments.admin-routes.ts); app.ts mounts all of them under /admin behind the admin token (ADMIN_TOKENS only: an API
// key is 401 there). Every POST/PATCH honours Idempotency-Key; every action's reason goes to the audit trail.
import type { App } from '../../app-types.ts';
import { isSimulated } from '../../lib/clock.ts';
import { codesByStatus, defineError, ValidationError } from '../../lib/errors.ts';
import type { ChargeService } from '../payments/charge.service.ts';
import type { InquiryPass } from '../payments/inquire-unknowns.ts';
import { ClockResponse, InquiryReport, PassReport, RunPassBody, SetClockBody } from './admin.schemas.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { auditAlone } from '../audit/audit.ts';
import { passRun, who } from '../shared/admin-actions.ts';
import { TAGS } from '../../lib/api-document.ts';

export const ClockNotSimulatedError = defineError('CLOCK_NOT_SIMULATED', 'The clock can be set only with CLOCK=simulated', 409);

export interface AdminDeps {
  charges: ChargeService;
  inquiries: InquiryPass;
  idempotency: Idempotency;
}

export function adminRoutes(deps: AdminDeps) {
  const { charges, inquiries, idempotency } = deps;
  return async (app: App) => {
    const { clock } = app;
    const audit = auditAlone(app.db);
    const tags = [TAGS.adminCharging.name];

    // Both work with SCHEDULER_ENABLED=false too: operators and tests drive passes by hand.
    passRun(
      app,
      { idempotency, audit },
      {
        url: '/scheduler/run',
        operationId: 'runSchedulerPass',
        summary: 'Run one charging pass now',
        tags,
        body: RunPassBody,
        response: PassReport,
        answer: 'The pass ran: what it claimed and how each charge came out',
        action: 'scheduler.run',
        entityId: 'charging-pass',
        run: () => charges.runPass(),
      },
    );

    // The tick runs it after each charging pass; by hand too (SCHEDULER_ENABLED=false).
    passRun(
      app,
      { idempotency, audit },
      {
        url: '/inquiries/run',
        operationId: 'runInquiryPass',
        summary: 'Run one inquiry pass now: look up the unknown outcomes due at gateways that answer one',
        tags,
        body: RunPassBody,
        response: InquiryReport,
        answer: 'The pass ran: what it asked and what it finished',
        action: 'scheduler.inquiries_run',
        entityId: 'inquiry-pass',
        run: () => inquiries.runPass(),
      },
    );

    const clockState = () => ({ now: clock.now().toISOString(), kind: clock.kind, frozen: isSimulated(clock) ? clock.frozen : false });
    app.get(
      '/clock',
      {
        schema: {
          operationId: 'getClock',
          summary: 'Read the service clock',
          tags,
          response: { 200: ClockResponse },
          responseDescriptions: { 200: 'The clock as every rule reads it now' },
        },
      },
      async () => clockState(),
    );
    app.put(
      '/clock',
      {
        schema: {
          operationId: 'setClock',
          summary: 'Set the simulated clock (CLOCK=simulated only)',
          tags,
          body: SetClockBody,
          response: { 200: ClockResponse },
          responseDescriptions: { 200: 'The clock, set and frozen there' },
          errors: codesByStatus(ClockNotSimulatedError),
        },
      },
      async (request) => {
        if (!isSimulated(clock)) throw new ClockNotSimulatedError();
        const instant = new Date(request.body.now);
        if (Number.isNaN(instant.getTime())) throw new ValidationError(`now: "${request.body.now}" is not an instant`);
        const before = clockState();
        clock.set(instant);
        request.log.info({ now: instant.toISOString() }, 'simulated clock set');
        await audit({
          ...who(request, request.body.reason ?? '(none given)'),
          action: 'clock.set',
          entityType: 'clock',
          entityId: 'simulated',
          before,
          after: clockState(),
        });
        return clockState();
      },
    );
  };
}
