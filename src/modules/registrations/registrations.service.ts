// Kept for importers outside this module (events/events.render.ts, test/modules/subscriptions): the registration's
// reads now live in registrations.read.ts, and each operation in its own file (create-registration.ts,
// replace-payment-method.ts, complete-registration.ts).
export { registrationByState, registrationEventObject } from './registrations.read.ts';
