// Development defaults (docs/operating.md "Environment variables"): tokens and an encryption key generated once, kept in .data/ and printed
// once at first start. src/config.ts refuses all of this in production.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseConsoleSessionKeys, parseEncryptionKeys, type Config } from './config.ts';

interface DevSecrets {
  apiKey: string;
  adminToken: string;
  encryptionKeys: string;
  /** Added after the first release of this file: an older file gets it on the next start. */
  consoleSessionKeys?: string;
}

export const SANDBOX_SECRET_KEY = 'sandbox_sk_0123456789abcdef';
export const SANDBOX_MERCHANT_ID = 'SANDBOX_MERCHANT';
/** The Toss sandbox's keys (src/sandbox/toss/): test keys in Toss's format, good for the sandbox only. */
export const TOSS_SANDBOX_SECRET_KEY = 'test_sk_sandbox0123456789abcdef';
export const TOSS_SANDBOX_CLIENT_KEY = 'test_ck_sandbox0123456789abcdef';
export const TOSS_SANDBOX_MID = 'tsandbox';

function token(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

function loadOrCreate(file: string, print: (text: string) => void): DevSecrets {
  if (existsSync(file)) {
    const existing = JSON.parse(readFileSync(file, 'utf8')) as DevSecrets;
    if (existing.consoleSessionKeys) return existing;
    const completed = { ...existing, consoleSessionKeys: randomBytes(32).toString('base64') };
    writeFileSync(file, `${JSON.stringify(completed, null, 2)}\n`, { mode: 0o600 });
    return completed;
  }
  const secrets: DevSecrets = {
    apiKey: token('dev_api'),
    adminToken: token('dev_admin'),
    encryptionKeys: `dev1:${randomBytes(32).toString('base64')}`,
    consoleSessionKeys: randomBytes(32).toString('base64'),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  print(
    [
      '',
      `Development secrets were generated and saved in ${file} (printed this once):`,
      `  API key (merchant API):    ${secrets.apiKey}`,
      `  Admin token (admin routes and the console at /console): ${secrets.adminToken}`,
      'Set API_KEYS, ADMIN_TOKENS, BILLING_KEY_ENCRYPTION_KEYS and CONSOLE_SESSION_KEYS yourself for anything but development.',
      '',
    ].join('\n'),
  );
  return secrets;
}

/** Fills the development defaults that are unset. Never called in production. */
export function applyDevelopmentDefaults(config: Config, options: { dataDir: string; print?: (text: string) => void }): Config {
  if (config.env === 'production') throw new Error('development defaults are refused in production');
  const needsSecrets =
    config.apiKeys.length === 0 || config.adminTokens.length === 0 || config.encryptionKeys.length === 0 || config.console.sessionKeys.length === 0;
  const secrets = needsSecrets
    ? loadOrCreate(path.join(options.dataDir, 'dev-secrets.json'), options.print ?? ((text) => process.stdout.write(`${text}\n`)))
    : undefined;
  const sandbox = config.gateway.baseUrl === undefined;
  return {
    ...config,
    apiKeys: config.apiKeys.length > 0 ? config.apiKeys : [secrets!.apiKey],
    adminTokens: config.adminTokens.length > 0 ? config.adminTokens : [secrets!.adminToken],
    encryptionKeys: config.encryptionKeys.length > 0 ? config.encryptionKeys : parseEncryptionKeys(secrets!.encryptionKeys),
    console: {
      ...config.console,
      sessionKeys: config.console.sessionKeys.length > 0 ? config.console.sessionKeys : parseConsoleSessionKeys(secrets!.consoleSessionKeys),
    },
    gateway: {
      ...config.gateway,
      secretKey: config.gateway.secretKey ?? (sandbox ? SANDBOX_SECRET_KEY : undefined),
      merchantId: config.gateway.merchantId ?? (sandbox ? SANDBOX_MERCHANT_ID : undefined),
    },
  };
}
