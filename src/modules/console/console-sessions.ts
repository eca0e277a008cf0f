// Console sign-ins kept by the server (docs/console.md "Operator console"): the cookie carries only a random secret
// (signed by CONSOLE_SESSION_KEYS); the table holds its SHA-256, the operator's name and the admin token's
// fingerprint, never the token. A session is valid until `expiresAt` (CONSOLE_SESSION_TTL of real time: `now` is the
// system clock, never the simulated billing clock) and until sign-out sets `endedAt`; after either the cookie is
// refused, whatever its signature. The session also keeps the language the operator chose (`locale`; null speaks
// CONSOLE_LOCALE): every page of the session speaks it, whichever tab or page it was chosen on.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { AdminIdentity } from '../../plugins/auth.ts';
import { isLocale, type Locale } from '../i18n/messages.ts';

export interface ConsoleSession {
  id: string;
  operatorName: string | null;
  tokenFingerprint: string;
  expiresAt: Date;
  /** The language chosen in this session, or undefined for CONSOLE_LOCALE. */
  locale: Locale | undefined;
}

const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

export function createConsoleSessions(deps: { db: Db; now: () => Date; ttlMs: number }) {
  const { db, now, ttlMs } = deps;

  /** Starts a session for a signed-in operator (in the language of the sign-in page, when one was chosen there); answers the secret the cookie carries. */
  async function start(identity: AdminIdentity, locale?: Locale): Promise<{ secret: string; expiresAt: Date }> {
    await prune();
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now().getTime() + ttlMs);
    await db.consoleSession.create({
      data: { secretHash: hashOf(secret), operatorName: identity.name ?? null, tokenFingerprint: identity.fingerprint, expiresAt, locale: locale ?? null },
    });
    return { secret, expiresAt };
  }

  /** The live session of a cookie's secret: not ended, not expired (one indexed read). */
  async function find(secret: string): Promise<ConsoleSession | undefined> {
    const row = await db.consoleSession.findUnique({
      where: { secretHash: hashOf(secret) },
      select: { id: true, operatorName: true, tokenFingerprint: true, expiresAt: true, endedAt: true, locale: true },
    });
    if (!row || row.endedAt !== null || row.expiresAt <= now()) return undefined;
    const locale = isLocale(row.locale) ? row.locale : undefined;
    return { id: row.id, operatorName: row.operatorName, tokenFingerprint: row.tokenFingerprint, expiresAt: row.expiresAt, locale };
  }

  /** The operator's language from now on, on every page of this live session. */
  async function setLocale(id: string, locale: Locale): Promise<void> {
    await db.consoleSession.updateMany({ where: { id, endedAt: null }, data: { locale } });
  }

  /** Sign-out: the session ends now; its cookie is refused from then on. */
  async function end(secret: string): Promise<void> {
    await db.consoleSession.updateMany({ where: { secretHash: hashOf(secret), endedAt: null }, data: { endedAt: now() } });
  }

  /**
   * Forgets sessions expired more than a day ago (they can no longer be used; an ended one is gone a day after it
   * would have expired). Run at each sign-in, by the expiresAt index, so the table stays the size of a day's sign-ins.
   */
  async function prune(): Promise<number> {
    const { count } = await db.consoleSession.deleteMany({ where: { expiresAt: { lt: new Date(now().getTime() - 24 * 3600_000) } } });
    return count;
  }

  return { start, find, setLocale, end, prune };
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;
