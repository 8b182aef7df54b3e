/**
 * Hostile publications through the internal API (issue #20: 1, 2, 3, 13, 14), on both
 * databases: each is refused 422 with its position, its draft is dropped, and the previous
 * list stays served. The limits are configured small, so a "too long" field or line is a few
 * hundred bytes here instead of the 537 M characters that used to take the process down.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import iconv from 'iconv-lite';
import { DIALECTS } from '../support/dialects.js';
import { ADMIN_TOKEN, startAdminHarness, type AdminHarness } from './admin-harness.js';

const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };
const LIMITS = { MAX_FIELD_CHARS: '100', MAX_LINE_BYTES: '300' };

for (const dialect of DIALECTS) {
  describe(`hostile publications are refused, the previous list kept (${dialect})`, () => {
    let h: AdminHarness;
    let key = '';

    // Forced: each good list here replaces the last one whole, which the publication guard (§10) would hold.
    const publish = async (body: string | Buffer, contentType: string) => {
      const response = await h.admin.inject({ method: 'POST', url: '/admin/stores/hostile/price-lists?force=true', headers: { ...AUTH, 'content-type': contentType }, payload: body });
      return { status: response.statusCode, body: response.json() };
    };
    const download = async () => (await h.publicApp.inject({ method: 'GET', url: `/api/export/latest?key=${key}` })).body;
    /** Publishes `body`, expects a 422 naming `position` and `reason`, and checks that nothing changed. */
    const assertRefused = async (body: string | Buffer, contentType: string, position: string, reason: RegExp, drafted = true) => {
      const before = await download();
      const aborts = h.abortCalls();
      const answer = await publish(body, contentType);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 'invalid_publication');
      assert.equal(answer.body.problems[0].position, position, JSON.stringify(answer.body));
      assert.match(answer.body.problems[0].reason, reason);
      assert.equal(h.abortCalls(), aborts + (drafted ? 1 : 0), 'the draft was dropped');
      assert.equal(await download(), before, 'the previous list is still served');
      return answer.body;
    };

    before(async () => {
      h = await startAdminHarness(dialect, LIMITS);
      await h.admin.inject({ method: 'POST', url: '/admin/stores', headers: AUTH, payload: { id: 'hostile', name: 'Hostile' } });
      key = (await h.admin.inject({ method: 'POST', url: '/admin/stores/hostile/keys', headers: AUTH })).json().value;
      assert.equal((await publish('offer_id,name,price\r\nGOOD,Good,1\r\n', 'text/csv')).status, 201);
    });
    after(async () => {
      await h.close();
    });

    test('#1 a CSV record, NDJSON line or JSON item over MAX_LINE_BYTES is a refusal naming the line, not a crash', async () => {
      await assertRefused(`offer_id,name,price\r\nA,${'x'.repeat(400)},1\r\n`, 'text/csv', 'line 2', /longer than 300 bytes/);
      await assertRefused(`offer_id,name,price\r\nA,"${'x'.repeat(400)}`, 'text/csv', 'line 2', /longer than 300 bytes/);
      await assertRefused(`{"offer_id":"A","name":"a","price":1}\n{"offer_id":"B","name":"${'x'.repeat(400)}","price":1}\n`, 'application/x-ndjson', 'line 2', /longer than 300 bytes/);
      await assertRefused(`{"offer_id":"A","name":"a","price":1}\n${'x'.repeat(400)}`, 'application/x-ndjson', 'line 2', /longer than 300 bytes/);
      await assertRefused(`[{"offer_id":"A","name":"a","price":1},\n{"offer_id":"B","name":"${'x'.repeat(400)}","price":1}]`, 'application/json', 'items[1]', /^items\[1\]: longer than 300 bytes/);
      await assertRefused(`{"note":"${'x'.repeat(400)}","items":[{"offer_id":"A","name":"a","price":1}]}`, 'application/json', 'file', /^the top-level key "note": longer than 300 bytes/);
    });

    test('#1 a field over MAX_FIELD_CHARS is a bad row: "line 2: name longer than N characters"', async () => {
      await assertRefused(`offer_id,name,price\r\nA,${'x'.repeat(101)},1\r\n`, 'text/csv', 'line 2', /^name longer than 100 characters/);
      await assertRefused(JSON.stringify([{ offer_id: 'A', name: 'a', price: 1, description: 'd'.repeat(101) }]), 'application/json', 'items[0]', /^description longer than 100/);
      await assertRefused(JSON.stringify([{ offer_id: 'A', name: 'a', price: 1, attributes: { color: 'c'.repeat(101) } }]), 'application/json', 'items[0]', /^attributes\.color longer than 100/);
      assert.equal((await publish(`offer_id,name,price\r\nA,${'x'.repeat(100)},1\r\n`, 'text/csv')).status, 201, 'exactly the limit is accepted');
      await publish('offer_id,name,price\r\nGOOD,Good,1\r\n', 'text/csv');
    });

    test('#2 windows-1251 bytes sent as UTF-8 are refused with the position; accepted with charset=windows-1251', async () => {
      const cp1251 = iconv.encode('offer_id,name,price\r\nA1,Ноутбук,1990.50\r\n', 'win1251');
      await assertRefused(cp1251, 'text/csv', 'line 2', /not valid UTF-8 \(byte 25\)/);
      await assertRefused(cp1251, 'text/csv; charset=utf-8', 'line 2', /not valid UTF-8/);
      await assertRefused(Buffer.concat([Buffer.from('[{"offer_id":"A","name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","price":1}]')]), 'application/json', 'line 1', /not valid UTF-8 \(byte 26\)/);
      await assertRefused(Buffer.concat([Buffer.from('{"offer_id":"A","name":"'), Buffer.from([0xd0])]), 'application/x-ndjson', 'line 1', /not valid UTF-8/);
      await assertRefused('offer_id,name,price\r\nA,a,1\r\n', 'text/csv; charset=koi8-r', 'file', /charset "koi8-r" is not supported/, false);

      const accepted = await publish(cp1251, 'text/csv; charset=windows-1251');
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.match(await download(), /^A1,Ноутбук,1990\.50,/m);
    });

    test('#3 a lone surrogate is refused at publication (JSON escape, in any text field or attribute name)', async () => {
      await assertRefused('[{"offer_id":"A","name":"bad \\ud800 name","price":1}]', 'application/json', 'items[0]', /^name contains an unpaired UTF-16 surrogate/);
      await assertRefused('{"offer_id":"A","name":"a","price":1,"category":"\\udc00"}\n', 'application/x-ndjson', 'line 1', /^category contains an unpaired/);
      await assertRefused('[{"offer_id":"A","name":"a","price":1,"attributes":{"\\ud800":"x"}}]', 'application/json', 'items[0]', /^an attribute name contains an unpaired/);
      assert.equal((await publish('[{"offer_id":"A","name":"pair \\ud83d\\udd11 ok","price":1}]', 'application/json')).status, 201, 'a surrogate pair is a character');
    });

    test('#13 a duplicated top-level "items" key is refused', async () => {
      await assertRefused('{"items":[{"offer_id":"A","name":"a","price":1}],"items":[{"offer_id":"B","name":"b","price":2}]}', 'application/json', 'file', /"items" appears twice/);
      assert.equal((await publish('{"meta":{"items":[]},"items":[{"offer_id":"A","name":"a","price":1}]}', 'application/json')).status, 201, 'a nested "items" is not the top-level key');
    });

    test('#14 control characters are refused in attribute names, attribute columns and competitor URLs', async () => {
      await assertRefused('[{"offer_id":"A","name":"a","price":1,"attributes":{"co\\u0000lor":"red"}}]', 'application/json', 'items[0]', /^an attribute name contains a control character/);
      await assertRefused('[{"offer_id":"A","name":"a","price":1,"competitors":[{"name":"r","price":1,"url":"https://r.example/\\u0007"}]}]', 'application/json', 'items[0]', /^competitors\[0\]\.url contains a control character/);
      await assertRefused('offer_id,name,price,attributes.color\r\nA,a,1,"re\u001bd"\r\n', 'text/csv', 'line 2', /^attributes\.color contains a control character/);
    });
  });
}
