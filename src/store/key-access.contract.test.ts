/**
 * The storage contract for key scopes and expiry (CONTRACT §15), on every dialect: stored and
 * read back exactly, seen by the one-query look-up, changed in place, rotated in one
 * transaction, and still there after the database is opened again (a restart).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/dialects.js';
import type { KeyScopes } from '../model/key-scopes.js';
import { openDatabase } from './factory.js';
import type { NewApiKey } from './types.js';

const SCOPES: KeyScopes = { addresses: ['prices', 'me'], formats: ['yml'], profiles: [3, 7] };
const EXPIRES = new Date('2027-01-31T00:00:00.000Z');

let seq = 0;
const newKey = (extra: Partial<NewApiKey> = {}): NewApiKey => {
  seq++;
  return { id: `key_contract${seq}`, store_id: 'shop', label: 'market', prefix: `pex_${seq}`, hash: `${'0'.repeat(60)}${String(seq).padStart(4, '0')}`, ...extra };
};

for (const dialect of DIALECTS) {
  describe(`key scopes and expiry in storage (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
      await db.db.stores.create({ id: 'shop', name: 'Shop', currency: 'RUB', url: null, company: null });
    });
    after(async () => db.drop());

    it('stores scopes and expiry, reads them back from insert, getKey, listKeys and the look-up', async () => {
      const key = newKey({ scopes: SCOPES, expires_at: EXPIRES });
      const inserted = await db.db.keys.insert(key);
      assert.deepEqual(inserted.scopes, SCOPES);
      assert.equal(inserted.expires_at?.toISOString(), EXPIRES.toISOString());
      assert.deepEqual((await db.db.keys.get(key.id))?.scopes, SCOPES);
      assert.equal((await db.db.keys.list('shop')).find((k) => k.id === key.id)?.expires_at?.toISOString(), EXPIRES.toISOString());
      const lookup = await db.db.keys.findByHash(key.hash);
      assert.deepEqual(lookup?.key.scopes, SCOPES);
      assert.equal(lookup?.key.expires_at?.toISOString(), EXPIRES.toISOString());

      const plain = newKey();
      const open = await db.db.keys.insert(plain);
      assert.equal(open.scopes, null);
      assert.equal(open.expires_at, null);
      assert.equal((await db.db.keys.findByHash(plain.hash))?.key.scopes, null);
    });

    it('changes scopes and expiry in place; the next look-up sees the change; null lifts it', async () => {
      const key = newKey({ scopes: SCOPES });
      await db.db.keys.insert(key);
      assert.deepEqual((await db.db.keys.findByHash(key.hash))?.key.scopes, SCOPES);
      const narrowed: KeyScopes = { addresses: ['prices'], formats: null, profiles: null };
      await db.db.keys.updateAccess(key.id, { scopes: narrowed });
      assert.deepEqual((await db.db.keys.findByHash(key.hash))?.key.scopes, narrowed);
      await db.db.keys.updateAccess(key.id, { expires_at: EXPIRES });
      const both = await db.db.keys.findByHash(key.hash);
      assert.deepEqual(both?.key.scopes, narrowed, 'an absent field stays');
      assert.equal(both?.key.expires_at?.toISOString(), EXPIRES.toISOString());
      await db.db.keys.updateAccess(key.id, { scopes: null, expires_at: null });
      const lifted = await db.db.keys.findByHash(key.hash);
      assert.equal(lifted?.key.scopes, null);
      assert.equal(lifted?.key.expires_at, null);
      assert.equal(await db.db.keys.updateAccess('key_nosuch', { scopes: null }), null);
    });

    it('rotates in one step: the replacement inserted, the old key expiring, never later than it already did', async () => {
      const old = newKey({ scopes: SCOPES });
      await db.db.keys.insert(old);
      const at = new Date('2026-12-01T00:00:00.000Z');
      const rotated = await db.db.keys.rotate(old.id, newKey({ scopes: SCOPES }), at);
      assert.equal(rotated?.old.expires_at?.toISOString(), at.toISOString());
      assert.deepEqual(rotated?.replacement.scopes, SCOPES);
      assert.equal((await db.db.keys.findByHash(old.hash))?.key.expires_at?.toISOString(), at.toISOString());

      const later = await db.db.keys.rotate(old.id, newKey(), new Date('2027-06-01T00:00:00.000Z'));
      assert.equal(later?.old.expires_at?.toISOString(), at.toISOString(), 'an earlier expiry is kept');

      const orphan = newKey();
      assert.equal(await db.db.keys.rotate('key_nosuch', orphan, at), null);
      assert.equal(await db.db.keys.get(orphan.id), null, 'nothing is written for an unknown key');
      const clash = newKey({ hash: old.hash });
      await assert.rejects(db.db.keys.rotate(old.id, clash, new Date('2026-01-01T00:00:00.000Z')));
      assert.equal((await db.db.keys.get(old.id))?.expires_at?.toISOString(), at.toISOString(), 'a failed rotation changes nothing');
    });

    it('scopes and expiry survive opening the database again (a restart)', async () => {
      const key = newKey({ scopes: SCOPES, expires_at: EXPIRES });
      await db.db.keys.insert(key);
      const reopened = await openDatabase(db.url, { startThreads: false });
      try {
        const lookup = await reopened.keys.findByHash(key.hash);
        assert.deepEqual(lookup?.key.scopes, SCOPES);
        assert.equal(lookup?.key.expires_at?.toISOString(), EXPIRES.toISOString());
      } finally {
        await reopened.close();
      }
    });
  });
}
