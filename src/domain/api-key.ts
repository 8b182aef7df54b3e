import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** CONTRACT §2: `pex_` + 30 random base62 chars + CRC32 of those 30 in base62, padded to 6. */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'pex_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const NEW_KEY = /^pex_[0-9A-Za-z]{36}$/;
/** Keys carried over from the predecessor: 1–256 chars of A-Z a-z 0-9 - _ . ~ */
const LEGACY_KEY = /^[A-Za-z0-9\-_.~]{1,256}$/;

function base62(value: number, width: number): string {
  let text = '';
  let rest = value;
  do {
    text = BASE62[rest % 62] + text;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return text.padStart(width, '0');
}

const checksum = (body: string): string => base62(crc32(body), CHECKSUM_LENGTH);

function randomBase62(length: number): string {
  let text = '';
  // randomInt is uniform (no modulo bias) and comes from the CSPRNG.
  for (let i = 0; i < length; i++) text += BASE62[randomInt(62)];
  return text;
}

export function generateApiKey(): string {
  const body = randomBase62(RANDOM_LENGTH);
  return PREFIX + body + checksum(body);
}

/** A short random id for a key record (shown in `key list`, used by `key revoke`). */
export const generateKeyId = (): string => `key_${randomBase62(12)}`;

export type KeyShape = 'new' | 'legacy' | 'malformed';

/**
 * Classifies a presented key without touching the database. Anything starting with `pex_`
 * must be a well-formed new key with a valid checksum; legacy values may not start with it.
 */
export function keyShape(value: string): KeyShape {
  if (value.startsWith(PREFIX)) {
    if (!NEW_KEY.test(value)) return 'malformed';
    const body = value.slice(PREFIX.length, PREFIX.length + RANDOM_LENGTH);
    return value.slice(PREFIX.length + RANDOM_LENGTH) === checksum(body) ? 'new' : 'malformed';
  }
  return LEGACY_KEY.test(value) ? 'legacy' : 'malformed';
}

export const isImportableLegacyKey = (value: string): boolean => !value.startsWith(PREFIX) && LEGACY_KEY.test(value);

// One-shot `hash` (Node ≥ 20.12): a third of createHash's cost, and every request hashes its key.
export const hashApiKey = (value: string): string => hash('sha256', value, 'hex');

/** What `key list` and /api/me show of a key: enough to tell keys apart, never enough to use one. */
export const displayPrefix = (value: string): string =>
  value.startsWith(PREFIX) ? value.slice(0, PREFIX.length + 4) : value.slice(0, Math.min(4, Math.floor(value.length / 2)));
