// Consent before more money (docs/architecture.md, invariant 13) from the customer's own page: "변경 금액에 동의"
// records a PRICE_INCREASE consent, "동의하지 않음" drops the pending increase (the old amount goes on), "유료 전환에
// 동의" records a TRIAL_CONVERSION consent; through the portal-actions service (channel PORTAL, audited as the customer).
// A decision already taken is refused there (CONSENT_ALREADY_DECIDED), shown as a sentence.
import type { App } from '../../app-types.ts';
import type { PortalDeps } from './portal-deps.ts';
import { registerPortalAction } from './portal-page.ts';

export function consentActions(deps: PortalDeps) {
  const { actions } = deps;
  const actionDeps = { db: deps.service.db, idempotency: deps.idempotency };
  return async function consent(scope: App) {
    registerPortalAction(scope, actionDeps, {
      name: 'consent',
      act: (who, id) => actions.consent(who, id, 'PRICE_INCREASE'),
      done: () => '/portal?done=agreed',
    });
    registerPortalAction(scope, actionDeps, { name: 'decline', act: (who, id) => actions.decline(who, id), done: () => '/portal?done=declined' });
    registerPortalAction(scope, actionDeps, {
      name: 'trial-consent',
      act: (who, id) => actions.consent(who, id, 'TRIAL_CONVERSION'),
      done: () => '/portal?done=trialAgreed',
    });
  };
}
