// Customer-portal sessions (docs/portal.md "Customer portal"). The merchant asks for one (POST
// /api/v1/portal-sessions) and sends the customer's browser to its link; the link's first GET starts the session and
// sets a cookie that carries a random secret. Stored: SHA-256 of the link's token and of the cookie's secret, never
// either. A link is used once and expires PORTAL_LINK_TTL after it was made; a session lasts PORTAL_SESSION_TTL from
// its link's use; both in real time (`now` is the system clock, never the simulated billing clock). A session sees
// one userId's subscriptions and payments, nothing else.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { defineError, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { CustomerNotFoundError, lockCustomer } from '../shared/customers.ts';
import { isLocale, type Locale } from '../i18n/messages.ts';

export const ReturnUrlNotAllowedError = defineError('RETURN_URL_NOT_ALLOWED', 'returnUrl’s origin is not one of PORTAL_RETURN_ORIGINS', 422);

export const FLOWS = ['cancel', 'payment_method', 'consent'] as const;
export type Flow = (typeof FLOWS)[number];

export interface CreatePortalSessionInput {
  userId: string;
  returnUrl?: string;
  locale?: Locale;
  flow?: Flow;
  subscriptionId?: string;
}

/** A live session, as the pages see it. */
export interface PortalSession {
  id: string;
  userId: string;
  locale: Locale;
  returnUrl: string | null;
  expiresAt: Date;
}

/** What the link's first GET answers: the cookie's secret and where the browser goes. */
export interface OpenedLink {
  secret: string;
  expiresAt: Date;
  flow: Flow | null;
  subscriptionId: string | null;
}

/** How often session creation prunes (pruneNowAndThen). */
const PRUNE_EVERY_MS = 60_000;

const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
/** 256 random bits, URL-safe: a link token or a cookie's secret. */
const randomToken = () => randomBytes(32).toString('base64url');

export function createPortalSessions(deps: {
  db: Db;
  now: () => Date;
  publicBaseUrl: string;
  linkTtlMs: number;
  sessionTtlMs: number;
  returnOrigins: readonly string[];
}) {
  const { db, now } = deps;
  const urlOf = (token: string) => `${deps.publicBaseUrl}/portal/session/${token}`;

  /**
   * The session's terms, checked before anything is written: the customer, the returnUrl, the flow's subscription. Read
   * under the customer's lock (shared), in the transaction that writes the session: an erasure of the customer either
   * came first (then the userId is unknown: 404) or finds the session and ends it.
   */
  async function check(tx: Prisma.TransactionClient, input: CreatePortalSessionInput): Promise<void> {
    await lockCustomer(tx, input.userId, 'shared');
    const owned = await tx.subscription.findFirst({ where: { userId: input.userId }, select: { id: true } });
    if (!owned) throw new CustomerNotFoundError();
    if (input.returnUrl !== undefined && !deps.returnOrigins.includes(originOf(input.returnUrl))) throw new ReturnUrlNotAllowedError();
    if (input.flow !== undefined && input.subscriptionId === undefined) throw new ValidationError(`flow "${input.flow}" needs the subscriptionId it is for`);
    if (input.subscriptionId !== undefined) {
      // Another customer's subscription answers as one that does not exist.
      const sub = await tx.subscription.findUnique({ where: { id: input.subscriptionId }, select: { userId: true } });
      if (!sub || sub.userId !== input.userId) throw new NotFoundError('Subscription');
    }
  }

  /** A new session and its single-use link (the only time the token exists outside the customer's browser). */
  async function create(input: CreatePortalSessionInput) {
    await pruneNowAndThen();
    const token = randomToken();
    const row = await db.$transaction(async (tx) => {
      await check(tx, input);
      return tx.portalSession.create({ data: sessionRow(input, hashOf(token)) });
    });
    return { id: row.id, url: urlOf(token), expiresAt: row.linkExpiresAt.toISOString() };
  }

  const sessionRow = (input: CreatePortalSessionInput, linkHash: string) => ({
    linkHash,
    userId: input.userId,
    returnUrl: input.returnUrl ?? null,
    locale: input.locale ?? 'ko',
    flow: input.flow ?? null,
    subscriptionId: input.subscriptionId ?? null,
    linkExpiresAt: new Date(now().getTime() + deps.linkTtlMs),
  });

  /**
   * An idempotent replay of `create`: the token was never stored, so a link not used yet is given a new token (the
   * first link, which the caller may never have received, stops working); a used or expired one cannot be given again.
   */
  async function reissue(id: string) {
    const token = randomToken();
    const updated = await db.portalSession.updateMany({
      where: { id, usedAt: null, linkExpiresAt: { gt: now() } },
      data: { linkHash: hashOf(token) },
    });
    if (updated.count === 0) throw new StateConflictError('This portal session’s link was used or has expired: create a new session');
    const row = await db.portalSession.findUniqueOrThrow({ where: { id }, select: { linkExpiresAt: true } });
    return { id, url: urlOf(token), expiresAt: row.linkExpiresAt.toISOString() };
  }

  /**
   * The link's first GET, at most once (one conditional update: two GETs at once start one session): the session
   * starts now. Undefined when the link is unknown, used or expired; `locale` is the link's, for the page saying so.
   */
  async function open(token: string): Promise<{ opened?: OpenedLink; locale: Locale }> {
    const linkHash = hashOf(token);
    const secret = randomToken();
    const at = now();
    const expiresAt = new Date(at.getTime() + deps.sessionTtlMs);
    const taken = await db.portalSession.updateMany({
      where: { linkHash, usedAt: null, linkExpiresAt: { gt: at } },
      data: { usedAt: at, secretHash: hashOf(secret), expiresAt },
    });
    const row = await db.portalSession.findUnique({ where: { linkHash }, select: { locale: true, flow: true, subscriptionId: true } });
    const locale = isLocale(row?.locale) ? row.locale : 'ko';
    if (taken.count === 0 || !row) return { locale };
    return { opened: { secret, expiresAt, flow: (row.flow as Flow | null) ?? null, subscriptionId: row.subscriptionId }, locale };
  }

  /** The live session of a cookie's secret: opened, not ended, not expired (one indexed read). */
  async function find(secret: string): Promise<PortalSession | undefined> {
    const row = await db.portalSession.findUnique({ where: { secretHash: hashOf(secret) } });
    if (!row?.expiresAt || row.endedAt !== null || row.expiresAt <= now()) return undefined;
    return { id: row.id, userId: row.userId, locale: isLocale(row.locale) ? row.locale : 'ko', returnUrl: row.returnUrl, expiresAt: row.expiresAt };
  }

  /** The customer's language switch, kept for the rest of the session. */
  async function setLocale(id: string, locale: Locale): Promise<void> {
    await db.portalSession.update({ where: { id }, data: { locale } });
  }

  /**
   * Runs `prune` when a session is made, at most once a minute per process: what it forgets has been unusable for a
   * day, so a minute later changes nothing a customer sees, and a session's creation costs one statement less.
   */
  let prunedAt = Number.NEGATIVE_INFINITY;
  async function pruneNowAndThen(): Promise<void> {
    const at = now().getTime();
    if (at - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = at;
    await prune();
  }

  /** Forgets links and sessions that can no longer be used, a day after (run when a session is made). */
  async function prune(): Promise<number> {
    const before = new Date(now().getTime() - 24 * 3600_000);
    const { count } = await db.portalSession.deleteMany({
      where: { linkExpiresAt: { lt: before }, OR: [{ expiresAt: null }, { expiresAt: { lt: before } }] },
    });
    return count;
  }

  return { create, reissue, open, find, setLocale, prune };
}

export type PortalSessions = ReturnType<typeof createPortalSessions>;

/** The origin of an http(s) URL ("https://shop.example"), or "" for anything else. */
function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : '';
  } catch {
    return '';
  }
}
