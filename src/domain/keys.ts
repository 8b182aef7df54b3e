import { AppError } from '../errors/app-error.js';
import type { ApiKeyRecord, KeyLookup, Database } from '../store/types.js';
import { displayPrefix, generateApiKey, generateKeyId, hashApiKey, isImportableLegacyKey, keyShape } from './api-key.js';
import { textProblems } from '../model/text.js';
import { getStoreOrFail } from './stores.js';

/** last_used_at is written at most this often per key, so polling does not turn reads into writes. */
const TOUCH_INTERVAL_MS = 60_000;

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The key itself: shown once, never stored. */
  value: string;
}

export async function issueKey(db: Database, storeId: string, label: string | null): Promise<IssuedKey> {
  checkLabel(label);
  await getStoreOrFail(db, storeId);
  const value = generateApiKey();
  const record = await db.keys.insert({ id: generateKeyId(), store_id: storeId, label, prefix: displayPrefix(value), hash: hashApiKey(value) });
  return { record, value };
}

/** A predecessor's key, imported by value and stored hashed like any other. */
export async function importKey(db: Database, storeId: string, value: string, label: string | null): Promise<ApiKeyRecord> {
  checkLabel(label);
  await getStoreOrFail(db, storeId);
  if (!isImportableLegacyKey(value)) {
    throw new AppError('invalid_input', 'a legacy key is 1–256 characters of A-Z a-z 0-9 - _ . ~ and does not start with "pex_"');
  }
  const hash = hashApiKey(value);
  if (await db.keys.findByHash(hash)) throw new AppError('key_exists', 'this key is already registered');
  return db.keys.insert({ id: generateKeyId(), store_id: storeId, label: label ?? 'imported', prefix: displayPrefix(value), hash });
}

/** A label is printed by `key list` to a terminal: no ESC sequences, no NUL (PostgreSQL refuses it). */
function checkLabel(label: string | null): void {
  const problems = textProblems({ label });
  if (problems.length > 0) throw new AppError('invalid_input', problems.join('; '));
}

export async function listKeys(db: Database, storeId: string): Promise<ApiKeyRecord[]> {
  await getStoreOrFail(db, storeId);
  return db.keys.list(storeId);
}

export async function revokeKey(db: Database, keyId: string): Promise<ApiKeyRecord> {
  const record = await db.keys.revoke(keyId, new Date());
  if (!record) throw new AppError('key_not_found', `no key with id "${keyId}"`);
  return record;
}

/**
 * Checks a presented key: malformed ones are refused without a database round trip, the
 * rest by hash. The error details never repeat the key.
 */
export async function authenticate(db: Database, presented: string | undefined, now = new Date()): Promise<KeyLookup> {
  if (presented === undefined || presented === '') throw new AppError('missing_key', 'no API key was given');
  if (keyShape(presented) === 'malformed') throw new AppError('invalid_key', 'the API key is not valid');
  const lookup = await db.keys.findByHash(hashApiKey(presented));
  if (!lookup) throw new AppError('invalid_key', 'the API key is not valid');
  if (lookup.key.revoked_at !== null) throw new AppError('revoked_key', 'the API key was revoked');
  const last = lookup.key.last_used_at?.getTime() ?? 0;
  if (now.getTime() - last >= TOUCH_INTERVAL_MS) {
    await db.keys.touch(lookup.key.id, now);
    lookup.key.last_used_at = now;
  }
  return lookup;
}
