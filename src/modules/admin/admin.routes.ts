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
import { writeAudit, type AuditInput } from '../audit/audit.ts';
import { IDEMPOTENT, IdempotencyHeader, who } from '../shared/admin-actions.ts';
import { Type } from 'typebox';
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
    const audit = (input: AuditInput) => app.db.$transaction((tx) => writeAudit(tx, input));
    const tags = [TAGS.adminCharging.name];

    // Works with SCHEDULER_ENABLED=false too: operators and tests drive passes by hand.
    app.post(
      '/scheduler/run',
      {
        schema: {
          operationId: 'runSchedulerPass',
          summary: 'Run one charging pass now',
          tags,
          headers: IdempotencyHeader,
          body: Type.Optional(RunPassBody),
          response: { 200: PassReport },
          responseDescriptions: { 200: 'The pass ran: what it claimed and how each charge came out' },
          errors: codesByStatus(...IDEMPOTENT),
        },
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => {
          const report = await charges.runPass();
          await audit({
            ...who(request, request.body?.reason ?? '(none given)'),
            action: 'scheduler.run',
            entityType: 'scheduler',
            entityId: 'charging-pass',
            after: report,
          });
          return { statusCode: 200, body: report };
        }),
    );

    // The tick runs it after each charging pass; by hand too (SCHEDULER_ENABLED=false).
    app.post(
      '/inquiries/run',
      {
        schema: {
          operationId: 'runInquiryPass',
          summary: 'Run one inquiry pass now: look up the unknown outcomes due at gateways that answer one',
          tags,
          headers: IdempotencyHeader,
          body: Type.Optional(RunPassBody),
          response: { 200: InquiryReport },
          responseDescriptions: { 200: 'The pass ran: what it asked and what it finished' },
          errors: codesByStatus(...IDEMPOTENT),
        },
      },
      async function runInquiryPass(request, reply) {
        return idempotency.run(request, reply, async () => {
          const report = await inquiries.runPass();
          await audit({
            ...who(request, request.body?.reason ?? '(none given)'),
            action: 'scheduler.inquiries_run',
            entityType: 'scheduler',
            entityId: 'inquiry-pass',
            after: report,
          });
          return { statusCode: 200, body: report };
        });
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
