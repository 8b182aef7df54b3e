/**
 * #20 finding 10: profile columns `attributes.constructor`, `attributes.toString`,
 * `attributes.__proto__` read the item's own attribute of that name, or nothing; never
 * Object's built-ins. Every format answers a complete file (XLSX used to be cut at 319 bytes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { putProfile } from '../../src/domain/profiles.js';
import { createTestApp, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const BUILT_INS = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

describe('profile columns named after Object built-ins', () => {
  let t: TestApp;
  let key: string;
  let profileId: number;

  before(async () => {
    t = await createTestApp('sqlite');
    key = await storeWithKey(t.db, 'builtins');
    // One item carries an attribute literally named "constructor"; the other has no attributes.
    await publishJson(t.db, 'builtins', '[{"offer_id":"B-1","name":"Own","price":1,"attributes":{"constructor":"own value","__proto__":"proto value"}},{"offer_id":"B-2","name":"Bare","price":2}]');
    const columns = [{ field: 'offer_id', title: 'SKU' }, ...BUILT_INS.map((name) => ({ field: `attributes.${name}`, title: name, key: `a_${name}` }))];
    profileId = (await putProfile(t.db, 'builtins', { name: 'built-ins', columns })).id;
  });
  after(async () => {
    await t.close();
  });

  for (const format of ['csv', 'tsv', 'json', 'xml', 'yml'] as const) {
    test(`${format}: no native code, only the item's own attributes`, async () => {
      const response = await get(t.app, `/api/export/latest?key=${key}&format=${format}&profile_id=${profileId}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.doesNotMatch(response.body, /native code|function |\[object Object\]/);
      if (format !== 'yml') {
        assert.match(response.body, /own value/);
        assert.match(response.body, /proto value/);
      }
    });
  }

  test('json: the own attributes by name, the rest null', async () => {
    const rows = JSON.parse((await get(t.app, `/api/export/latest?key=${key}&format=json&profile_id=${profileId}`)).body);
    const items = Array.isArray(rows) ? rows : rows.items;
    assert.equal(items[0].a_constructor, 'own value');
    assert.equal(items[0].a___proto__, 'proto value');
    assert.equal(items[0].a_toString, null);
    assert.equal(items[1].a_constructor, null);
  });

  test('xlsx: a complete workbook whose cells hold the own attributes or nothing', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/api/export/latest?key=${key}&format=xlsx&profile_id=${profileId}` });
    assert.equal(response.statusCode, 200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(response.rawPayload as unknown as ExcelJS.Buffer);
    const sheet = workbook.worksheets[0];
    assert.deepEqual(sheet.getRow(2).getCell(2).value, 'own value');
    assert.equal(sheet.getRow(3).getCell(2).value, null);
    assert.equal(sheet.getRow(3).getCell(3).value, null);
  });
});
