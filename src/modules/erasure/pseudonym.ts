// An erased customer's pseudonym (docs/operating.md "A customer asks to be forgotten"): `erased_` and 20 random base32
// characters (RFC 4648's alphabet, lower case: 100 random bits), the userId every row of the customer carries after
// the erasure. Random, never derived from the old userId: nothing leads back from it but the sealed vault.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
export const PSEUDONYM_PREFIX = 'erased_';
export const PSEUDONYM_PATTERN = /^erased_[a-z2-7]{20}$/;

export function newPseudonym(): string {
  // 256 is a multiple of 32: each byte's low five bits are uniform.
  const bytes = randomBytes(20);
  let out = PSEUDONYM_PREFIX;
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}
