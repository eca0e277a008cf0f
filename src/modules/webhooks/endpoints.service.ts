// Webhook endpoints through the merchant API (docs/api.md "Events and webhooks"): create (the secret is shown once), read, change,
// delete, rotate the secret (both sign during the overlap), and recover (re-queue what an endpoint missed).
import { Prisma as P, type Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { isEventType } from '../events/event-types.ts';
import { generateSecret, liveSecrets, openSecret, sealSecret, type StoredSecret } from './secrets.ts';
import { endpointSubscribes, REQUEUE_DELIVERY } from '../events/delivery.state.ts';

type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

export interface EndpointInput {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  status?: 'ENABLED' | 'DISABLED';
}

export const DISABLED_BY_MERCHANT = 'DISABLED_BY_MERCHANT';

export function serializeEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description ?? undefined,
    status: row.status,
    disabledReason: row.disabledReason ?? undefined,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function createEndpointsService(deps: Pick<ServiceDeps, 'db' | 'config' | 'keyring'> & { wallClock?: () => Date }) {
  const { db, config, keyring } = deps;
  const wallClock = deps.wallClock ?? (() => new Date());

  /** https (or http where WEBHOOK_ALLOW_HTTP), no credentials in the URL. */
  function checkUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ValidationError('url is not a URL');
    }
    const schemes = config.webhooks.allowHttp ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) throw new ValidationError(`url must use ${config.webhooks.allowHttp ? 'http or https' : 'https'}`);
    if (url.username || url.password) throw new ValidationError('url must not carry credentials');
    return url.toString();
  }

  function checkTypes(types: string[]): string[] {
    if (types.length === 0) throw new ValidationError('eventTypes must not be empty (use ["*"] for every type)');
    const unknown = types.filter((t) => t !== '*' && !isEventType(t));
    if (unknown.length > 0) throw new ValidationError(`unknown event types: ${unknown.join(', ')}`);
    return [...new Set(types)];
  }

  async function load(id: string): Promise<EndpointRow> {
    const row = await db.webhookEndpoint.findUnique({ where: { id } });
    if (!row) throw new NotFoundError('Webhook endpoint');
    return row;
  }

  async function create(input: EndpointInput & { url: string }) {
    const url = checkUrl(input.url);
    const eventTypes = checkTypes(input.eventTypes ?? ['*']);
    const id = crypto.randomUUID();
    const secret = generateSecret();
    const row = await db.webhookEndpoint.create({
      data: { id, url, eventTypes, description: input.description ?? null, secrets: [sealSecret(keyring, id, secret)] as never },
    });
    return { ...serializeEndpoint(row), secret };
  }

  /** `from`: the client the list is read from (the route's, shared/read-db.ts); the primary by default. */
  async function list(query: { limit: number; cursor?: string }, from: Db = db) {
    const rows = await from.webhookEndpoint.findMany({ where: afterCursor(decodeCursor(query.cursor)), orderBy: PAGE_ORDER, take: query.limit + 1 });
    const page = toPage(rows, query.limit);
    return { items: page.items.map(serializeEndpoint), nextCursor: page.nextCursor };
  }

  async function update(id: string, input: EndpointInput) {
    await load(id);
    const data: Prisma.WebhookEndpointUpdateInput = {};
    if (input.url !== undefined) data.url = checkUrl(input.url);
    if (input.eventTypes !== undefined) data.eventTypes = checkTypes(input.eventTypes);
    if (input.description !== undefined) data.description = input.description;
    if (input.status === 'ENABLED') Object.assign(data, { status: 'ENABLED', disabledReason: null, failingSince: null });
    if (input.status === 'DISABLED') Object.assign(data, { status: 'DISABLED', disabledReason: DISABLED_BY_MERCHANT });
    return serializeEndpoint(await db.webhookEndpoint.update({ where: { id }, data }));
  }

  async function remove(id: string): Promise<void> {
    const deleted = await db.webhookEndpoint.deleteMany({ where: { id } });
    if (deleted.count === 0) throw new NotFoundError('Webhook endpoint');
  }

  /** A new secret signs from now on; the old ones keep signing for `expireOldAfterSeconds` (0: stop at once). */
  async function rotateSecret(id: string, expireOldAfterSeconds: number) {
    const now = wallClock();
    const expiresAt = new Date(now.getTime() + expireOldAfterSeconds * 1000);
    const secret = generateSecret();
    await db.$transaction(async (tx) => {
      // Under the row's lock, read after it (two rotations at once: the second sees the first's secrets). Not an
      // optimistic check on updatedAt: the service's clock dates it, and a frozen simulated clock leaves it equal.
      await tx.$queryRaw`SELECT 1 FROM "webhook_endpoints" WHERE "id" = ${id}::uuid FOR UPDATE`;
      const row = await tx.webhookEndpoint.findUnique({ where: { id } });
      if (!row) throw new NotFoundError('Webhook endpoint');
      const old = liveSecrets(row.secrets as unknown as StoredSecret[], now).map((s) => ({
        ...s,
        expiresAt: s.expiresAt && new Date(s.expiresAt) < expiresAt ? s.expiresAt : expiresAt.toISOString(),
      }));
      const secrets = [sealSecret(keyring, id, secret), ...old.filter((s) => new Date(s.expiresAt!) > now)];
      await tx.webhookEndpoint.update({ where: { id }, data: { secrets: secrets as never } });
    });
    return { secret };
  }

  /** The newest secret, for an idempotent replay of create or rotate-secret (the idempotency table never stores it). */
  async function currentSecret(id: string): Promise<string> {
    const row = await load(id);
    return openSecret(keyring, id, (row.secrets as unknown as StoredSecret[])[0]!);
  }

  /**
   * Re-queues every event created since `since` that the endpoint subscribes to and has not received with a 2xx:
   * missing deliveries are added, failed or pending ones start again with a fresh attempt budget, and one pending
   * because a copy is on its way is sent again whatever that copy's outcome (REQUEUE_DELIVERY).
   */
  async function recover(id: string, since: Date): Promise<{ queued: number }> {
    const row = await load(id);
    const queued = await db.$executeRaw`
      INSERT INTO "webhook_deliveries" ("eventId", "eventCreatedAt", "endpointId", "nextAttemptAt")
      SELECT e."id", e."createdAt", ${id}::uuid, clock_timestamp() FROM "events" e
       WHERE e."sequence" IS NOT NULL AND e."createdAt" >= ${since} AND ${endpointSubscribes(P.sql`${row.eventTypes}::text[]`, P.sql`e."type"`)}
      ON CONFLICT ("eventId", "endpointId", "eventCreatedAt") DO UPDATE SET ${REQUEUE_DELIVERY}
      WHERE "webhook_deliveries"."status" <> 'SUCCEEDED'`;
    return { queued };
  }

  return { create, list, get: async (id: string) => serializeEndpoint(await load(id)), update, remove, rotateSecret, currentSecret, recover };
}

export type EndpointsService = ReturnType<typeof createEndpointsService>;

/**
 * Re-encrypts every webhook signing secret not under the keyring's current key (npm run keys:rotate, with the
 * billing keys). Each endpoint is rewritten only if it did not change since it was read (a concurrent rotation of
 * its secret is never overwritten; it is counted as skipped and found again by the next run).
 */
export async function reencryptEndpointSecrets(db: ServiceDeps['db'], keyring: ServiceDeps['keyring']) {
  let rotated = 0;
  let skipped = 0;
  const stale = (secrets: StoredSecret[]) => secrets.some((s) => s.keyId !== keyring.currentKeyId);
  const rows = await db.webhookEndpoint.findMany({ select: { id: true, secrets: true, updatedAt: true } });
  for (const row of rows) {
    const secrets = row.secrets as unknown as StoredSecret[];
    if (!stale(secrets)) continue;
    const resealed = secrets.map((s) => sealSecret(keyring, row.id, openSecret(keyring, row.id, s), s.expiresAt ? new Date(s.expiresAt) : null));
    const updated = await db.webhookEndpoint.updateMany({ where: { id: row.id, updatedAt: row.updatedAt }, data: { secrets: resealed as never } });
    if (updated.count === 1) rotated += 1;
    else skipped += 1;
  }
  const remaining = (await db.webhookEndpoint.findMany({ select: { secrets: true } })).filter((r) => stale(r.secrets as unknown as StoredSecret[])).length;
  return { rotated, skipped, remaining };
}
