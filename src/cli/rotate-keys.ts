// npm run keys:rotate: re-encrypts every billing key, every webhook signing secret and every erasure vault still
// sealed under the first key of BILLING_KEY_ENCRYPTION_KEYS.
// Safe while the service runs (see rotateBillingKeys).
import { ConfigError, loadConfig } from '../config.ts';
import { DATA_DIR, openDatabase } from '../db/database.ts';
import { createPrismaClient } from '../db/prisma.ts';
import { createKeyring } from '../lib/crypto.ts';
import { applyDevelopmentDefaults } from '../dev-secrets.ts';
import { createLogger } from '../lib/logger.ts';
import { createRedactor } from '../lib/redact.ts';
import { rotateBillingKeys } from '../modules/billing-keys/billing-keys.service.ts';
import { reencryptEndpointSecrets } from '../modules/webhooks/endpoints.service.ts';
import { resealIdentityVaults } from '../modules/erasure/reseal-identities.ts';

try {
  let config = await loadConfig();
  if (config.env !== 'production') config = applyDevelopmentDefaults(config, { dataDir: DATA_DIR });
  const logger = createLogger({ level: config.logLevel, redactor: createRedactor([config.gateway.secretKey]) });
  const database = await openDatabase(config, logger);
  const db = createPrismaClient(database.url, { poolSize: 2 });
  try {
    const keyring = createKeyring(config.encryptionKeys);
    const result = await rotateBillingKeys(db, keyring);
    logger.info({ ...result, keyId: config.encryptionKeys[0]!.id }, 'billing keys rotated');
    const secrets = await reencryptEndpointSecrets(db, keyring);
    logger.info({ ...secrets, keyId: config.encryptionKeys[0]!.id }, 'webhook signing secrets re-encrypted');
    const vaults = await resealIdentityVaults(db, keyring);
    logger.info({ ...vaults, keyId: config.encryptionKeys[0]!.id }, 'erasure vaults re-sealed');
    if (result.remaining > 0 || secrets.remaining > 0 || vaults.remaining > 0) process.exitCode = 2;
  } finally {
    await db.$disconnect();
    await database.stop();
  }
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? 'Configuration error' : 'Key rotation failed'}: ${(error as Error).message}\n`);
  process.exit(1);
}
