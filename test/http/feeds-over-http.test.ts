import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { putProfile } from '../../src/domain/profiles.js';
import { rollback } from '../../src/domain/versions.js';
import { DEFAULT_PRICE_TYPE_ID } from '../../src/model/profile.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const SCHEMA = fileURLToPath(new URL('../fixtures/commerceml-2.08.xsd', import.meta.url));
const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, htmlEntities: true, isArray: (name) => name === 'item' || name === 'Предложение' });

/** Awkward items; N-2 breaks several rules (long name, 11-digit barcode, 4 % discount, no picture). */
const ITEMS = [
  { offer_id: 'N-1', name: 'Смартфон "Nova" & чехол 📱', price: 1990, old_price: 2490, quantity: 3, url: 'https://s.example/p?a=1&b=2', picture: 'https://s.example/1.jpg', vendor: 'Nova', barcode: '4601234567893', category: 'Электроника / Телефоны', currency: 'RUB' },
  { offer_id: 'N-2', name: 'Д'.repeat(151), price: 96, old_price: 100, barcode: '12345678901', url: 'https://s.example/2', available: false, currency: 'USD' },
  { offer_id: 'N-3', name: "Tom's <tea>", price: 10, description: 'Ёлка', url: 'https://s.example/3', picture: 'https://s.example/3.jpg' },
];

for (const dialect of DIALECTS) {
  describe(`commerceml, google and the feed check over HTTP (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let profileId: number;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'feeds', 'A store with a long name');
      await publishJson(t.db, 'feeds', ITEMS);
      profileId = (await putProfile(t.db, 'feeds', { name: '1c', columns: [{ field: 'offer_id', title: 'id' }, { field: 'name', title: 'name' }], price_type_id: 'site-retail', price_type_name: 'Сайт' })).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    for (const withProfile of [false, true]) {
      for (const onlyAvailable of [false, true]) {
        const query = `${withProfile ? '&profile_id=PID' : ''}${onlyAvailable ? '&only_available=true' : ''}`;
        const expectedIds = ITEMS.filter((item) => !onlyAvailable || item.available !== false).map((item) => item.offer_id);

        test(`commerceml${query}: both addresses, schema-valid, ETag and 304`, async () => {
          const q = query.replace('PID', String(profileId));
          const first = await get(t.app, `/api/export/latest?key=${key}&format=CommerceML${q}`);
          assert.equal(first.statusCode, 200, first.body);
          assert.equal(first.headers['content-type'], 'application/xml; charset=utf-8');
          assert.match(String(first.headers['content-disposition']), /filename="feeds-\d{8}T\d{6}Z\.xml"/);
          execFileSync('xmllint', ['--noout', '--schema', SCHEMA, '-'], { input: first.body, stdio: ['pipe', 'pipe', 'pipe'] });
          const pack = xml.parse(first.body).КоммерческаяИнформация.ПакетПредложений;
          const offers = pack.Предложения.Предложение;
          assert.deepEqual(offers.map((o: any) => o.Ид), expectedIds);
          const priceTypeId = withProfile ? 'site-retail' : DEFAULT_PRICE_TYPE_ID;
          assert.equal(pack.ТипыЦен.ТипЦены.Ид, priceTypeId);
          assert.ok(offers.every((o: any) => o.Цены.Цена.ИдТипаЦены === priceTypeId));
          const legacy = await get(t.app, `/WebApi/CampaignDataLatestGet/${key}?format=commerceml${q}`);
          assert.equal(legacy.body, first.body);
          const again = await get(t.app, `/api/export/latest?key=${key}&format=commerceml${q}`, { 'if-none-match': String(first.headers.etag) });
          assert.equal(again.statusCode, 304);
        });

        test(`google${query}: both addresses, RSS with g:, ETag`, async () => {
          const q = query.replace('PID', String(profileId));
          const first = await get(t.app, `/WebApi/CampaignDataLatestGet/${key}?format=google${q}`);
          assert.equal(first.statusCode, 200, first.body);
          const items = xml.parse(first.body).rss.channel.item;
          assert.deepEqual(items.map((i: any) => i['g:id']), expectedIds);
          const n1 = items.find((i: any) => i['g:id'] === 'N-1');
          if (withProfile) {
            // The profile names neither url nor old_price: no link, no sale.
            assert.equal(n1['g:link'], undefined);
            assert.equal(n1['g:price'], '1990.00 RUB');
          } else {
            assert.equal(n1['g:link'], 'https://s.example/p?a=1&b=2');
            assert.deepEqual([n1['g:price'], n1['g:sale_price']], ['2490.00 RUB', '1990.00 RUB']);
            assert.equal(n1['g:product_type'], 'Электроника > Телефоны');
          }
          const other = await get(t.app, `/api/export/latest?key=${key}&format=google${q}`);
          assert.equal(other.body, first.body);
          assert.notEqual(other.headers.etag, (await get(t.app, `/api/export/latest?key=${key}&format=commerceml${q}`)).headers.etag);
        });
      }
    }

    test('the check answers per rule with counts and offenders, for each target', async () => {
      const yml = await get(t.app, `/api/export/check?key=${key}&format=YML`);
      assert.equal(yml.statusCode, 200, yml.body);
      assert.equal(yml.headers['content-type'], 'application/json; charset=utf-8');
      const body = JSON.parse(yml.body);
      assert.equal(body.format, 'yml');
      assert.equal(body.checked, 3);
      const rule = (name: string) => body.rules.find((r: any) => r.rule === name);
      assert.deepEqual(rule('shop_name_length').offenders, [{ offer_id: null, value: '24 characters: A store with a long name' }]);
      assert.equal(rule('offer_name_length').count, 1);
      assert.equal(rule('offer_name_length').offenders[0].offer_id, 'N-2');
      assert.deepEqual(rule('barcode_digits').offenders, [{ offer_id: 'N-2', value: '12345678901' }]);
      assert.deepEqual(rule('discount_range').offenders, [{ offer_id: 'N-2', value: '4.00 % (100.00 → 96.00)' }]);
      assert.equal(rule('currency').count, 0);

      const google = JSON.parse((await get(t.app, `/api/export/check?key=${key}&format=google`)).body);
      assert.deepEqual(google.rules.find((r: any) => r.rule === 'image_link_present').offenders, [{ offer_id: 'N-2', value: '(missing)' }]);
      assert.deepEqual(google.rules.find((r: any) => r.rule === 'gtin_check_digit').offenders, [{ offer_id: 'N-2', value: '12345678901' }]);

      // The filter: N-2 is not available.
      const filtered = JSON.parse((await get(t.app, `/api/export/check?key=${key}&format=google&only_available=yes`)).body);
      assert.equal(filtered.checked, 2);
      assert.equal(filtered.rules.find((r: any) => r.rule === 'image_link_present').count, 0);

      for (const format of ['commerceml', 'xlsx']) {
        const answer = await get(t.app, `/api/export/check?key=${key}&format=${format}&profile_id=${profileId}`);
        assert.equal(answer.statusCode, 200);
        assert.ok(JSON.parse(answer.body).rules.every((r: any) => r.count === 0));
      }
    });

    test('after a rollback the check reads the rows the rolled-back version serves (its items_of list), as the export does', async () => {
      const storeId = `rolled-${dialect}`;
      const rolledKey = await storeWithKey(t.db, storeId);
      await publishJson(t.db, storeId, ITEMS);
      await publishJson(t.db, storeId, [{ offer_id: 'ONLY', name: 'Only one', price: 5 }], 'json', { force: true });
      await rollback(t.db, storeId, 1, 10);
      const checked = JSON.parse((await get(t.app, `/api/export/check?key=${rolledKey}&format=yml`)).body);
      assert.equal(checked.version, 3);
      assert.equal(checked.checked, ITEMS.length);
      const exported = JSON.parse((await get(t.app, `/api/export/latest?key=${rolledKey}&format=json`)).body);
      assert.equal(exported.items.length, ITEMS.length);
    });

    test('the check refuses like the exports: 400 without or with a bad format, 404 for a foreign profile, 401 first', async () => {
      for (const query of ['', '&format=csv', '&format=', '&only_available=maybe']) {
        const answer = await get(t.app, `/api/export/check?key=${key}${query}`);
        assert.equal(answer.statusCode, 400, query);
        assert.equal(JSON.parse(answer.body).code, 'invalid_parameter');
      }
      assert.equal((await get(t.app, `/api/export/check?key=${key}&format=yml&profile_id=999999`)).statusCode, 404);
      assert.equal((await get(t.app, '/api/export/check?key=nope&format=csv')).statusCode, 401);
      assert.equal((await get(t.app, `/api/export/check?key=${key}&format=yml`, {}, 'POST')).statusCode, 405);
    });

    test('the OpenAPI document lists the check and the new formats', async () => {
      const doc = JSON.parse((await get(t.app, '/openapi.json')).body);
      const check = doc.paths['/api/export/check'].get;
      assert.deepEqual(check.parameters.find((p: any) => p.name === 'format').schema.enum, ['yml', 'google', 'commerceml', 'xlsx']);
      const latest = doc.paths['/api/export/latest'].get.parameters.find((p: any) => p.name === 'format');
      assert.ok(latest.schema.enum.includes('commerceml') && latest.schema.enum.includes('google'));
    });
  });
}
