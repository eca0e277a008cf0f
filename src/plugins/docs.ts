// OpenAPI 3 from the route schemas (@fastify/swagger), served at GET /docs (UI) and GET /docs/json. Registered
// before any route so every route is seen; the auth scheme of each route follows from its prefix: /api/v1 takes an
// API key, /admin an admin token, everything else (health, browser redirects) none. The development sandbox is not
// part of the service's contract and is left out.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { SANDBOX_PREFIX } from './gateway.ts';

function securityFor(url: string) {
  if (url.startsWith('/api/')) return [{ apiKey: [] }];
  if (url.startsWith('/admin/')) return [{ adminToken: [] }];
  return [];
}

async function docsPlugin(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Merchant billing service',
        version: '1.0.0',
        description: 'Recurring and one-time payments through the gateway. See README.md and DESIGN.md §5 for the contract.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'one of API_KEYS' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'one of ADMIN_TOKENS' },
        },
      },
    },
    transform: ({ schema, url }) => {
      const base = (schema ?? {}) as FastifySchema & { hide?: boolean; security?: unknown };
      if (url.startsWith(SANDBOX_PREFIX) || url.startsWith('/docs')) return { schema: { ...base, hide: true } as FastifySchema, url };
      return { schema: { ...base, security: securityFor(url) } as FastifySchema, url };
    },
  });
  // In production the document and its UI take a bearer token of the service (src/plugins/auth.ts).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiHooks: { onRequest: app.requireDocsReader } });
}

export default fp(docsPlugin, { name: 'docs', fastify: '5.x', dependencies: ['auth'] });
