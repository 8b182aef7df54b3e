/**
 * #20 finding 16: profile_id keeps every digit. An id beyond Number.MAX_SAFE_INTEGER used to be
 * rounded (9007199254740993 → …992, 999999999999999999 → 1e18) and could fetch the profile
 * the rounding landed on; now such an id is unknown: the same 404 as any other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const ROUNDED_TO = '9007199254740992';

/** Gives the store's one profile an id beyond 2^53, as only a hand-edited database could. */
async function moveProfileId(t: TestApp, from: number): Promise<void> {
  if (t.testDb.dialect === 'sqlite') {
    const db = new Database(t.testDb.url.slice('sqlite:'.length));
    db.prepare(`UPDATE profiles SET id = ${ROUNDED_TO} WHERE id = ?`).run(from);
    db.close();
    return;
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: t.testDb.url });
  await client.connect();
  await client.query(`UPDATE profiles SET id = ${ROUNDED_TO} WHERE id = $1`, [from]);
  await client.end();
}

for (const dialect of DIALECTS) {
  describe(`profile_id beyond 2^53 is an unknown profile, never a neighbour (${dialect})`, () => {
    let t: TestApp;
    let key: string;

    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'digits');
      await publishJson(t.db, 'digits', [{ offer_id: 'A', name: 'a', price: 1 }]);
      const profile = await putProfile(t.db, 'digits', { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }] });
      await moveProfileId(t, profile.id);
    });
    after(async () => {
      await t.close();
    });

    for (const id of ['9007199254740993', ROUNDED_TO, '999999999999999999', '100000000000000000']) {
      test(`profile_id=${id}: 404 profile_not_found, no rounded number in the answer`, async () => {
        for (const url of [`/api/export/latest?key=${key}&profile_id=${id}`, `/WebApi/CampaignDataLatestGet/${key}?profile_id=${id}`]) {
          const response = await get(t.app, url);
          assert.equal(response.statusCode, 404, `${url}: ${response.body.slice(0, 200)}`);
          assert.equal(response.json().code, 'profile_not_found');
          assert.doesNotMatch(response.body, /1000000000000000000|1e\+18|9007199254740992/);
        }
      });
    }

    test('an 18-digit id within range is still an ordinary unknown id (404 naming it)', async () => {
      const response = await get(t.app, `/api/export/latest?key=${key}&profile_id=9007199254740991`);
      assert.equal(response.statusCode, 404);
      assert.match(response.json().detail, /9007199254740991/);
    });
  });
}
