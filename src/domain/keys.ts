import { AppError } from '../errors/app-error.js';
import type { ApiKeyRecord, Database, KeyLookup, NewApiKey } from '../store/types.js';
import { displayPrefix, generateApiKey, generateKeyId, hashApiKey, isImportableLegacyKey, keyShape } from './api-key.js';
import { textProblems } from '../model/text.js';
import { parseExpiry, parseOverlap, parseScopes, type ScopeInput } from './key-scopes.js';
import { getStoreOrFail } from './stores.js';

/** last_used_at is written at most this often per key, so polling does not turn reads into writes. */
const TOUCH_INTERVAL_MS = 60_000;

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The key itself: shown once, never stored. */
  value: string;
}

/** What a key may open and until when (CONTRACT §15), as the CLI and the admin API give it. */
export interface KeyAccessInput extends ScopeInput {
  /** RFC 3339 with an offset; absent or null: never expires. */
  expires?: string | null;
}

/** A new key record with a fresh value (the value goes back to the caller once, the record keeps its hash). */
function newKeyRecord(storeId: string, label: string | null, access: Pick<NewApiKey, 'scopes' | 'expires_at'>): { record: NewApiKey; value: string } {
  const value = generateApiKey();
  return { value, record: { id: generateKeyId(), store_id: storeId, label, prefix: displayPrefix(value), hash: hashApiKey(value), ...access } };
}

async function storeProfileIds(db: Database, storeId: string): Promise<number[]> {
  return (await db.profiles.list(storeId)).map((p) => p.id);
}

export async function issueKey(db: Database, storeId: string, label: string | null, access: KeyAccessInput = {}, now = new Date()): Promise<IssuedKey> {
  checkLabel(label);
  await getStoreOrFail(db, storeId);
  const scopes = parseScopes(access, await storeProfileIds(db, storeId));
  const expires_at = parseExpiry(access.expires, now);
  const fresh = newKeyRecord(storeId, label, { scopes, expires_at });
  return { record: await db.keys.insert(fresh.record), value: fresh.value };
}

/**
 * Changes what a key opens or until when (admin API, `key update`). An absent field stays;
 * `null` lifts the limit. Seen by the next request on every instance: the key look-up reads it.
 */
export async function updateKeyAccess(db: Database, keyId: string, access: KeyAccessInput, now = new Date()): Promise<ApiKeyRecord> {
  const key = await db.keys.get(keyId);
  if (!key) throw new AppError('key_not_found', `no key with id "${keyId}"`);
  const dimensions = ['addresses', 'formats', 'profiles'] as const;
  const touchesScopes = dimensions.some((d) => access[d] !== undefined);
  const scopes = touchesScopes
    ? parseScopes(Object.fromEntries(dimensions.map((d) => [d, access[d] === undefined ? key.scopes?.[d] : access[d]])), await storeProfileIds(db, key.store_id))
    : undefined;
  const expires_at = access.expires === undefined ? undefined : parseExpiry(access.expires, now);
  return (await db.keys.updateAccess(keyId, { scopes, expires_at }))!;
}

export interface RotatedKey extends IssuedKey {
  /** The key it replaces, with the expiry the rotation gave it. */
  old: ApiKeyRecord;
}

/**
 * `key rotate` (CONTRACT §15): a new key with the old one's store, label and scopes, and the old
 * one expiring after the overlap (or earlier, if it was due to expire sooner). The new key does
 * not inherit the old one's expiry: the overlap is an expiry too, and a rotated key rotated
 * again must not die with its predecessor. A revoked key cannot be rotated: revoking is final.
 */
export async function rotateKey(db: Database, keyId: string, overlap?: string | null, now = new Date()): Promise<RotatedKey> {
  const overlapMs = parseOverlap(overlap);
  const old = await db.keys.get(keyId);
  if (!old) throw new AppError('key_not_found', `no key with id "${keyId}"`);
  if (old.revoked_at) throw new AppError('invalid_input', `key "${keyId}" is revoked; issue a new key instead`);
  const fresh = newKeyRecord(old.store_id, old.label, { scopes: old.scopes, expires_at: null });
  const rotated = await db.keys.rotate(keyId, fresh.record, new Date(now.getTime() + overlapMs));
  if (!rotated) throw new AppError('key_not_found', `no key with id "${keyId}"`);
  return { record: rotated.replacement, value: fresh.value, old: rotated.old };
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
  // Compared, never written: the expiry passes on every instance at once, with no job to run.
  if (lookup.key.expires_at !== null && now.getTime() >= lookup.key.expires_at.getTime()) {
    throw new AppError('expired_key', 'the API key has expired; ask the store for a new one');
  }
  const last = lookup.key.last_used_at?.getTime() ?? 0;
  if (now.getTime() - last >= TOUCH_INTERVAL_MS) {
    // Not awaited: the request never waits on a write (a lost touch costs only an older last_used_at).
    db.keys.touch(lookup.key.id, now).catch(() => undefined);
    lookup.key.last_used_at = now;
  }
  return lookup;
}
