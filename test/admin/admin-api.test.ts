import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../support/dialects.js';
import { ADMIN_TOKEN, startAdminHarness, type AdminHarness } from './admin-harness.js';

const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };
const PROFILE = { name: 'short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] };
const ROWS = 50_000;

type Answer = { status: number; headers: Record<string, unknown>; body: any; text: string };

for (const dialect of DIALECTS) {
  describe(`admin API (${dialect})`, () => {
    let h: AdminHarness;
    /** Every key value the admin API handed out: none may appear in a log line. */
    const issued: string[] = [];

    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = AUTH): Promise<Answer> => {
      const response = await h.admin.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
      const type = String(response.headers['content-type'] ?? '');
      return { status: response.statusCode, headers: response.headers, text: response.body, body: /json/.test(type) ? response.json() : null };
    };
    const assertProblem = (answer: Answer, status: number, code: string) => {
      assert.equal(answer.status, status, answer.text);
      assert.equal(answer.headers['content-type'], 'application/problem+json');
      assert.equal(answer.body.code, code);
      assert.equal(answer.body.status, status);
      return answer.body;
    };
    const issue = async (storeId: string, label?: string) => {
      const answer = await call('POST', `/admin/stores/${storeId}/keys`, label === undefined ? undefined : { label });
      assert.equal(answer.status, 201, answer.text);
      issued.push(answer.body.value);
      return answer;
    };
    const download = (key: string) => h.publicApp.inject({ method: 'GET', url: `/api/export/latest?key=${key}` });
    const publishNdjson = (storeId: string, text: string) =>
      call('POST', `/admin/stores/${storeId}/price-lists`, text, { ...AUTH, 'content-type': 'application/x-ndjson' });

    before(async () => {
      h = await startAdminHarness(dialect);
    });
    after(async () => {
      await h.close();
    });

    test('every address needs the bearer token: 401 without it, with a wrong one, with another scheme', async () => {
      const wrong: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: `Bearer ${ADMIN_TOKEN}x` }, { authorization: `Basic ${ADMIN_TOKEN}` }, { authorization: ADMIN_TOKEN }];
      for (const headers of wrong) {
        for (const [method, url] of [['GET', '/admin/stores'], ['POST', '/admin/stores'], ['GET', '/admin/no-such-address']] as const) {
          const answer = assertProblem(await call(method, url, undefined, headers), 401, 'unauthorized');
          assert.ok(!JSON.stringify(answer).includes(ADMIN_TOKEN));
        }
      }
      const refused = await call('GET', '/admin/stores', undefined, {});
      assert.match(String(refused.headers['www-authenticate']), /^Bearer /);
      assert.equal((await call('GET', '/admin/stores', undefined, { authorization: `bearer ${ADMIN_TOKEN}` })).status, 200);
    });

    test('stores: create, list, one; bad input names each problem; a second create 409; unknown 404', async () => {
      const created = await call('POST', '/admin/stores', { id: 'shop', name: 'Shop', url: 'https://shop.example' });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual({ ...created.body, created_at: 'T' }, { id: 'shop', name: 'Shop', currency: 'RUB', url: 'https://shop.example', company: null, created_at: 'T' });
      assertProblem(await call('POST', '/admin/stores', { id: 'shop', name: 'Again' }), 409, 'store_exists');

      const bad = assertProblem(await call('POST', '/admin/stores', { id: 'Bad Id', name: 'x', currency: 'rubles' }), 422, 'invalid_input');
      assert.match(bad.detail, /currency/);
      const domain = assertProblem(await call('POST', '/admin/stores', { id: 'Bad Id', name: 'x', currency: 'usd', url: 'ftp://x' }), 422, 'invalid_input');
      assert.match(domain.detail, /id must match/);
      assert.match(domain.detail, /url must be/);
      assertProblem(await call('POST', '/admin/stores', { id: 'x', name: 'x', extra: true }), 422, 'invalid_input');
      assertProblem(await call('POST', '/admin/stores', '{"id":', { ...AUTH, 'content-type': 'application/json' }), 422, 'invalid_input');

      const list = await call('GET', '/admin/stores');
      assert.deepEqual(list.body.stores.map((s: { id: string }) => s.id), ['shop']);
      const one = await call('GET', '/admin/stores/shop');
      assert.equal(one.body.price_list, null);
      assertProblem(await call('GET', '/admin/stores/nowhere'), 404, 'store_not_found');
    });

    test('keys: issued once with Cache-Control: no-store, listed without values, imported, revoked', async () => {
      await call('POST', '/admin/stores', { id: 'keys-shop', name: 'Keys' });
      const first = await issue('keys-shop', 'site');
      assert.equal(first.headers['cache-control'], 'no-store');
      assert.match(first.body.value, /^pex_[0-9A-Za-z]{36}$/);
      assert.ok(first.body.value.startsWith(first.body.prefix));
      assert.equal(first.body.label, 'site');
      const unlabelled = await issue('keys-shop');
      assert.equal(unlabelled.body.label, null);

      const legacy = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
      issued.push(legacy);
      const imported = await call('POST', '/admin/stores/keys-shop/keys/import', { value: legacy, label: 'old site' });
      assert.equal(imported.status, 201, imported.text);
      assert.equal(imported.body.value, undefined);
      assertProblem(await call('POST', '/admin/stores/keys-shop/keys/import', { value: legacy }), 409, 'key_exists');
      assertProblem(await call('POST', '/admin/stores/keys-shop/keys/import', { value: 'has space' }), 422, 'invalid_input');
      assertProblem(await call('POST', '/admin/stores/nowhere/keys'), 404, 'store_not_found');

      const listed = await call('GET', '/admin/stores/keys-shop/keys');
      assert.deepEqual(listed.body.keys.map((k: { id: string }) => k.id).sort(), [first.body.id, unlabelled.body.id, imported.body.id].sort());
      for (const value of [first.body.value, unlabelled.body.value, legacy]) assert.ok(!listed.text.includes(value));
      assert.ok(!/hash|value/.test(listed.text));

      assert.equal((await h.publicApp.inject({ url: '/api/me', headers: { 'x-api-key': first.body.value } })).statusCode, 200);
      const revoked = await call('POST', `/admin/keys/${first.body.id}/revoke`);
      assert.equal(revoked.status, 200, revoked.text);
      assert.ok(revoked.body.revoked_at);
      const again = await call('POST', `/admin/keys/${first.body.id}/revoke`);
      assert.equal(again.body.revoked_at, revoked.body.revoked_at);
      const refused = await h.publicApp.inject({ url: '/api/me', headers: { 'x-api-key': first.body.value } });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().code, 'revoked_key');
      assertProblem(await call('POST', '/admin/keys/key_nothing/revoke'), 404, 'key_not_found');
    });

    test('profiles: create (201), replace (revision 2), list; a foreign or malformed id is refused', async () => {
      await call('POST', '/admin/stores', { id: 'prof-a', name: 'A' });
      await call('POST', '/admin/stores', { id: 'prof-b', name: 'B' });
      const created = await call('PUT', '/admin/stores/prof-a/profiles', PROFILE);
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.revision, 1);
      assert.equal(created.body.delimiter, ',');
      const replaced = await call('PUT', `/admin/stores/prof-a/profiles/${created.body.id}`, { ...PROFILE, name: 'renamed', delimiter: ';' });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual([replaced.body.id, replaced.body.revision, replaced.body.name, replaced.body.delimiter], [created.body.id, 2, 'renamed', ';']);
      const listed = await call('GET', '/admin/stores/prof-a/profiles');
      assert.deepEqual(listed.body.profiles.map((p: { id: number; name: string }) => [p.id, p.name]), [[created.body.id, 'renamed']]);

      assertProblem(await call('PUT', `/admin/stores/prof-b/profiles/${created.body.id}`, PROFILE), 422, 'invalid_input');
      assertProblem(await call('PUT', '/admin/stores/prof-a/profiles/0', PROFILE), 400, 'invalid_parameter');
      assertProblem(await call('PUT', '/admin/stores/prof-a/profiles', { name: 'x', columns: [] }), 422, 'invalid_input');
      const domain = assertProblem(await call('PUT', '/admin/stores/prof-a/profiles', { name: 'x', columns: [{ field: 'nope', title: 'N' }], decimal_separator: ';' }), 422, 'invalid_input');
      assert.match(domain.detail, /columns\[0\]\.field/);
      assert.match(domain.detail, /decimal_separator/);
      assertProblem(await call('GET', '/admin/stores/nowhere/profiles'), 404, 'store_not_found');
    });

    test('publishing answers the feed check counts as warnings, and still publishes', async () => {
      assert.equal((await call('POST', '/admin/stores', { id: 'warned', name: 'Warned shop' }, AUTH)).status, 201);
      const rows = [
        { offer_id: 'W-1', name: 'W'.repeat(151), price: 96, old_price: 100, barcode: '12345678901' },
        { offer_id: 'W-2', name: 'Fine', price: 10, url: 'https://w.example/2', picture: 'https://w.example/2.jpg' },
      ];
      const answer = await publishNdjson('warned', rows.map((row) => JSON.stringify(row)).join('\n'));
      assert.equal(answer.status, 201, answer.text);
      const warnings = answer.body.warnings as { format: string; rule: string; count: number }[];
      const count = (format: string, rule: string) => warnings.find((w) => w.format === format && w.rule === rule)?.count;
      assert.equal(count('yml', 'offer_name_length'), 1);
      assert.equal(count('yml', 'barcode_digits'), 1);
      assert.equal(count('yml', 'discount_range'), 1);
      assert.equal(count('google', 'link_present'), 1);
      assert.equal(count('google', 'gtin_check_digit'), 1);
      assert.equal(count('yml', 'currency'), undefined);
      assert.equal(answer.body.version, 1);
    });

    test(`publishing ${ROWS.toLocaleString('en-US')} NDJSON rows streams over a real connection; the public app serves them`, async () => {
      await call('POST', '/admin/stores', { id: 'big', name: 'Big' });
      const key = (await issue('big')).body.value as string;
      const appendsBefore = h.appendCalls();
      let sent = 0;
      // The second half is held back until rows of the first half reached the database: were
      // the body buffered before publishing, no append could happen and this would time out.
      async function* body() {
        let chunk = '';
        for (let i = 1; i <= ROWS; i++) {
          if (i === ROWS / 2 + 1) await until(() => h.appendCalls() > appendsBefore, 20_000, 'no rows reached the store while the body was streaming');
          chunk += `${JSON.stringify({ offer_id: `SKU-${i}`, name: `Item ${i}`, price: (i % 1000) + 0.5, quantity: i % 3 })}\n`;
          sent++;
          // A few hundred rows a chunk, as a real uploader sends them (and the half-way mark falls between chunks).
          if (i % 500 === 0) { yield Buffer.from(chunk); chunk = ''; }
        }
        if (chunk) yield Buffer.from(chunk);
      }
      const response = await fetch(`${h.adminUrl}/admin/stores/big/price-lists`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/x-ndjson' },
        body: Readable.toWeb(Readable.from(body())) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      const text = await response.text();
      assert.equal(response.status, 201, text);
      assert.equal(sent, ROWS);
      const published = JSON.parse(text);
      assert.deepEqual(Object.keys(published).sort(), ['available_count', 'item_count', 'published_at', 'version', 'warnings']);
      assert.equal(published.version, 1);
      assert.equal(published.item_count, ROWS);
      assert.equal(published.available_count, ROWS - Math.floor(ROWS / 3));
      assert.ok(!Number.isNaN(Date.parse(published.published_at)));

      const csv = await download(key);
      assert.equal(csv.statusCode, 200);
      const lines = csv.body.split('\r\n');
      assert.equal(lines.length, ROWS + 2); // header, rows, and the empty tail after the last CRLF
      assert.equal(lines[1], 'SKU-1,Item 1,1.50,,RUB,1,1,');
      assert.equal(lines[ROWS], `SKU-${ROWS},Item ${ROWS},${(ROWS % 1000) + 0.5}0,,RUB,${ROWS % 3 > 0 ? 1 : 0},${ROWS % 3},`);
      assert.equal((await call('GET', '/admin/stores/big')).body.price_list.version, 1);
    });

    test('a bad publication answers 422 with every bad row and keeps the previous list', async () => {
      await call('POST', '/admin/stores', { id: 'steady', name: 'Steady' });
      const key = (await issue('steady')).body.value as string;
      const good = await publishNdjson('steady', '{"offer_id":"A","name":"Alpha","price":10}\n{"offer_id":"B","name":"Beta","price":"20.50"}\n');
      assert.equal(good.status, 201, good.text);
      const served = (await download(key)).body;

      const bad = assertProblem(
        await publishNdjson('steady', '{"offer_id":"A","name":"ok","price":1}\n{"offer_id":"B","name":"","price":-1}\n{"offer_id":"C","name":"ok","price":2}\nnot json\n{"offer_id":"A","name":"dup","price":3}\n'),
        422, 'invalid_publication',
      );
      assert.deepEqual(bad.problems.map((p: { position: string }) => p.position), ['line 2', 'line 4', 'line 5']);
      assert.equal(bad.problem_count, 3);
      assert.match(bad.problems[2].reason, /repeats/);

      const notJson = assertProblem(await call('POST', '/admin/stores/steady/price-lists', 'hello', { ...AUTH, 'content-type': 'application/json' }), 422, 'invalid_publication');
      assert.deepEqual(notJson.problems.map((p: { position: string }) => p.position), ['file']);
      const badCsv = assertProblem(await call('POST', '/admin/stores/steady/price-lists', 'offer_id,nom\nA,1\n', { ...AUTH, 'content-type': 'text/csv' }), 422, 'invalid_publication');
      assert.deepEqual(badCsv.problems.map((p: { position: string }) => p.position), ['line 1']);
      const empty = assertProblem(await publishNdjson('steady', '\n'), 422, 'invalid_publication');
      assert.deepEqual(empty.problems.map((p: { position: string }) => p.position), ['file']);

      assert.equal((await download(key)).body, served);
      assert.equal((await call('GET', '/admin/stores/steady')).body.price_list.version, 1);
    });

    test('an upload cut off half-way publishes nothing, drops its draft and leaves the store serving', async () => {
      await call('POST', '/admin/stores', { id: 'cut', name: 'Cut' });
      const key = (await issue('cut')).body.value as string;
      assert.equal((await publishNdjson('cut', '{"offer_id":"KEEP","name":"Kept","price":1}\n')).status, 201);
      const rows = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('');
      const partial: Record<string, string> = {
        'application/x-ndjson': rows(10, (i) => `{"offer_id":"N${i}","name":"n","price":1}\n`),
        'text/csv': `offer_id,name,price\n${rows(10, (i) => `C${i},c,1\n`)}`,
        'application/json': `[${rows(10, (i) => `{"offer_id":"J${i}","name":"j","price":1},`)}`,
      };
      for (const [type, text] of Object.entries(partial)) {
        const aborts = h.abortCalls();
        const { port } = new URL(h.adminUrl);
        const upload = request({ host: '127.0.0.1', port, method: 'POST', path: '/admin/stores/cut/price-lists', headers: { ...AUTH, 'content-type': type } });
        upload.on('error', () => {}); // the socket hang-up this test causes
        upload.write(text);
        await sleep(200);
        upload.destroy();
        await until(() => h.abortCalls() > aborts, 10_000, `${type}: the cut-off upload's draft was never dropped`);
      }
      assert.equal((await call('GET', '/admin/stores/cut')).body.price_list.version, 1);
      assert.match((await download(key)).body, /^KEEP,Kept,1\.00,/m);
      assert.ok(!h.logLines.some((line) => /"level":50/.test(line)), 'a client going away is not logged as an error');
    });

    test('publishing: JSON and CSV bodies, unsupported or missing body, unknown store', async () => {
      await call('POST', '/admin/stores', { id: 'formats', name: 'Formats' });
      const json = await call('POST', '/admin/stores/formats/price-lists', { items: [{ offer_id: 'J', name: 'Json', price: 1 }], note: 'ignored' });
      assert.equal(json.status, 201, json.text);
      const csv = await call('POST', '/admin/stores/formats/price-lists', 'offer_id,name,price\nC,Csv,2.5\n', { ...AUTH, 'content-type': 'text/csv; charset=utf-8' });
      assert.equal(csv.status, 201, csv.text);
      assert.deepEqual([json.body.version, csv.body.version], [1, 2]);
      assertProblem(await call('POST', '/admin/stores/formats/price-lists', 'x', { ...AUTH, 'content-type': 'text/plain' }), 400, 'invalid_parameter');
      assertProblem(await call('POST', '/admin/stores/formats/price-lists'), 400, 'invalid_parameter');
      assertProblem(await publishNdjson('nowhere', '{"offer_id":"A","name":"a","price":1}\n'), 404, 'store_not_found');
    });

    test('the admin API is absent from the public /openapi.json', async () => {
      const response = await h.publicApp.inject({ url: '/openapi.json' });
      assert.equal(response.statusCode, 200);
      const paths = Object.keys(response.json().paths);
      assert.ok(paths.length > 0);
      assert.deepEqual(paths.filter((path) => path.toLowerCase().includes('admin')), []);
      assert.equal((await h.publicApp.inject({ url: '/admin/stores', headers: AUTH })).statusCode, 404);
    });

    test('log lines name route patterns, never a key value or the admin token', async () => {
      const entries = h.logLines.map((line) => JSON.parse(line));
      const routes = new Set(entries.filter((e) => e.msg === 'admin request').map((e) => e.route));
      for (const route of ['/admin/stores/:id/keys', '/admin/stores/:id/keys/import', '/admin/keys/:id/revoke', '/admin/stores/:id/price-lists']) assert.ok(routes.has(route), route);
      assert.ok(entries.some((e) => e.msg === 'admin token missing or wrong'));
      // The framework's own request lines (which carry the raw address) stay off.
      assert.deepEqual(entries.filter((e) => e.msg === 'incoming request' || e.msg === 'request completed'), []);
      assert.ok(issued.length >= 5);
      for (const line of h.logLines) {
        assert.ok(!line.includes(ADMIN_TOKEN), line);
        for (const value of issued) assert.ok(!line.includes(value) && !line.includes(value.slice(4)), line);
      }
    });
  });
}

async function until(condition: () => boolean, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(message);
    await sleep(10);
  }
}
