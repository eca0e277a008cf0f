// The erasures' reading routes (docs/operating.md "A customer asks to be forgotten"), mounted by app.ts under /admin
// behind the admin token: GET /erasures and /erasures/:id (never the identity), and GET /erasures/:id/identity?reason=,
// which reveals it, audited with the operator and the reason (reveal-identity.ts). Every answer of these routes, an
// error included, carries Cache-Control: no-store: no proxy or browser keeps an identity, or a list of erasures.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Keyring } from '../../lib/crypto.ts';
import { codesByStatus } from '../../lib/errors.ts';
import { who } from '../shared/admin-actions.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams, pageOf } from '../shared/schemas.ts';
import { Erasure, ErasureQuery, getErasure, listErasures } from './erasure-reads.ts';
import { IdentityPurgedError, revealIdentity } from './reveal-identity.ts';

const ErasurePage = pageOf('ErasurePage', Erasure, 'A page of erasures, newest first');

const IdentityQuery = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      pattern: '\\S',
      description: 'why the identity is needed (a dispute, a tax inquiry, a court order): written to the audit trail',
    }),
  },
  { additionalProperties: false },
);

const Identity = named(
  'ErasedIdentity',
  Type.Object(
    {
      userId: Type.String(),
      names: Type.Array(Type.String()),
      phoneNumbers: Type.Array(Type.String()),
    },
    { description: 'The identity an erasure sealed in its vault: the old userId, and the names and phone numbers removed from the live tables' },
  ),
);

export interface ErasureReadsDeps {
  db: Db;
  keyring: Keyring;
  clock: Clock;
}

async function noStore(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('cache-control', 'no-store');
}

export function erasureReadsRoutes(deps: ErasureReadsDeps) {
  const { db } = deps;
  return async function registerErasureReads(app: App) {
    const tags = [TAGS.adminErasures.name];
    app.addHook('onRequest', noStore);

    app.get(
      '/erasures',
      {
        schema: {
          operationId: 'listErasures',
          summary: 'Erasures, newest first (never the identity)',
          tags,
          querystring: ErasureQuery,
          response: { 200: ErasurePage },
        },
      },
      async (request) => listErasures(await readDb(request), request.query),
    );

    app.get(
      '/erasures/:id',
      {
        schema: {
          operationId: 'getErasure',
          summary: 'One erasure (never the identity)',
          tags,
          params: IdParams,
          response: { 200: Erasure },
        },
      },
      async (request) => getErasure(db, request.params.id),
    );

    app.get(
      '/erasures/:id/identity',
      {
        schema: {
          operationId: 'revealErasedIdentity',
          summary: 'Reveal an erased customer’s identity from the vault, audited with the reason',
          tags,
          params: IdParams,
          querystring: IdentityQuery,
          response: { 200: Identity },
          responseDescriptions: { 200: 'The sealed identity; the reveal is in the audit trail (erasure.identity_revealed)' },
          errors: codesByStatus(IdentityPurgedError),
        },
      },
      async (request) => revealIdentity(deps, request.params.id, who(request, request.query.reason)),
    );
  };
}
