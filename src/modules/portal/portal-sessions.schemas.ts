// The merchant API's shapes for the customer portal (docs/api.md "Customer portal").
import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { HttpUrl, StringEnum, TermText, Uuid } from '../shared/schemas.ts';
import { FLOWS } from './portal-sessions.ts';

export const CreatePortalSessionBody = Type.Object(
  {
    userId: TermText.userId,
    returnUrl: Type.Optional(
      Type.String({ ...HttpUrl, description: 'the "back to the shop" link of every portal page; its origin must be one of PORTAL_RETURN_ORIGINS' }),
    ),
    locale: Type.Optional(StringEnum(['ko', 'en'], { description: 'the pages’ language (default ko); the customer can switch on every page' })),
    flow: Type.Optional(
      StringEnum(FLOWS, {
        description: 'open one subscription’s page instead of the overview: its cancellation, its payment-method change or its consent; needs subscriptionId',
      }),
    ),
    subscriptionId: Type.Optional(Type.String({ ...Uuid, description: 'the subscription of `flow`; one of this userId’s' })),
  },
  {
    additionalProperties: false,
    description:
      'A portal session for one customer (userId), who must have at least one subscription. The link opens once and expires after ' +
      'PORTAL_LINK_TTL; the session it starts lasts PORTAL_SESSION_TTL.',
    examples: [
      { userId: 'u1', returnUrl: 'https://shop.example/account', locale: 'ko' },
      { userId: 'u1', flow: 'cancel', subscriptionId: '5b0c6a0e-2f4e-4d0a-9a51-3f2b8c1d7e90' },
    ],
  },
);

export const PortalSessionResponse = named(
  'PortalSession',
  Type.Object(
    {
      id: Type.String({ description: 'the session’s id (audit entries of the customer’s actions name it)' }),
      url: Type.String({ description: 'send the customer’s browser here (a redirect or a link): single use, not to be stored or logged' }),
      expiresAt: Type.String({ format: 'date-time', description: 'when the link stops opening if unused' }),
    },
    {
      description: 'A customer-portal session: redirect the customer’s browser to `url`.',
      examples: [{ id: '0f1e2d3c-4b5a-4987-8a6b-5c4d3e2f1a0b', url: 'https://billing.example/portal/session/…', expiresAt: '2027-03-28T05:00:00.000Z' }],
    },
  ),
);
