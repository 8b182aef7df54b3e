/**
 * #20 finding 22, decided: an imported predecessor key compares exactly, case included (README,
 * "Decisions where the contract is silent"). A GUID imported in upper case is refused in
 * lower case, on every address, like any other wrong key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { importKey } from '../../src/domain/keys.js';
import { createStore } from '../../src/domain/stores.js';
import { createTestApp, get, publishJson, type TestApp } from '../support/test-app.js';

const GUID = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';

describe('imported predecessor keys compare case-sensitively', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('sqlite');
    await createStore(t.db, { id: 'legacy-case', name: 'Legacy case' });
    await importKey(t.db, 'legacy-case', GUID, 'predecessor');
    await publishJson(t.db, 'legacy-case', [{ offer_id: 'A', name: 'a', price: 1 }]);
  });
  after(async () => {
    await t.close();
  });

  test('the exact spelling is served; lower case and mixed case are 401 invalid_key', async () => {
    assert.equal((await get(t.app, `/WebApi/CampaignDataLatestGet/${GUID}`)).statusCode, 200);
    for (const spelling of [GUID.toLowerCase(), GUID.slice(0, 8).toLowerCase() + GUID.slice(8)]) {
      for (const url of [`/WebApi/CampaignDataLatestGet/${spelling}`, `/api/export/latest?key=${spelling}`]) {
        const response = await get(t.app, url);
        assert.equal(response.statusCode, 401, url);
        assert.equal(response.json().code, 'invalid_key');
      }
    }
  });

  test('both spellings can be imported as two keys when the predecessor accepted both', async () => {
    await importKey(t.db, 'legacy-case', GUID.toLowerCase(), 'predecessor, lower case');
    assert.equal((await get(t.app, `/WebApi/CampaignDataLatestGet/${GUID.toLowerCase()}`)).statusCode, 200);
  });
});
