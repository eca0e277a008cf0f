// The PostgreSQL majors the service runs on (docs/operating.md "Commands"): every one the PostgreSQL project still supports,
// 15 to 18 today. The SQL is written for all of them (nothing newer than 15: no SQL/JSON constructors, no
// RETURNING on MERGE, ...) and CI runs the suite on the oldest and the newest (.ci/run). An older server is refused
// before anything is written to it, by the migrator that `npm start`, `npm run db:migrate` and the tests all run
// first: one line and exit 1, instead of a 500 on the first request that uses newer SQL.
import type pg from 'pg';

/** The oldest PostgreSQL major the service supports. */
export const MINIMUM_MAJOR = 15;

export interface ServerVersion {
  /** server_version_num: 150018 for 15.18, 90624 for 9.6.24. */
  num: number;
  /** server_version as the server names itself, without a packager's suffix: "15.18", "18beta1". */
  name: string;
}

/** The server's major version: 15 for 150018, 9 for 90624 (before 10 the major had two parts; 9 < 15 all the same). */
export function majorOf(version: ServerVersion): number {
  return Math.floor(version.num / 10_000);
}

/** The refusal for a server older than MINIMUM_MAJOR, undefined for a supported one. */
export function unsupportedServerMessage(version: ServerVersion): string | undefined {
  if (majorOf(version) >= MINIMUM_MAJOR) return undefined;
  return `PostgreSQL ${version.name} is not supported; use ${MINIMUM_MAJOR} or later`;
}

/** A server older than MINIMUM_MAJOR; its message is the one line the commands print before exiting 1. */
export class UnsupportedServerError extends Error {
  override name = 'UnsupportedServerError';
}

/** The version of the server the client is connected to. */
export async function serverVersion(client: pg.ClientBase): Promise<ServerVersion> {
  const { rows } = await client.query<{ num: string; name: string }>(
    "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS name",
  );
  const row = rows[0];
  if (!row) throw new Error('the server did not report its version');
  // Debian's packages report e.g. "14.9 (Debian 14.9-1.pgdg120+1)".
  return { num: Number.parseInt(row.num, 10), name: row.name.split(' ')[0] ?? row.name };
}

/** Throws UnsupportedServerError when the connected server is older than MINIMUM_MAJOR. */
export async function assertSupportedServer(client: pg.ClientBase): Promise<ServerVersion> {
  const version = await serverVersion(client);
  const refusal = unsupportedServerMessage(version);
  if (refusal) throw new UnsupportedServerError(refusal);
  return version;
}
