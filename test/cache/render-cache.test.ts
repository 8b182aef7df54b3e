import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { putProfile } from '../../src/domain/profiles.js';
import { FORMAT_WRITERS } from '../../src/formats/registry.js';
import { warmingOf } from '../../src/http/app.js';
import { cacheKey, renderCacheOf } from '../../src/http/export-cache.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

/** A list big enough to span many chunks and pages (and to make concurrent requests overlap a render). */
function items(count: number, priceShift = 0) {
  return Array.from({ length: count }, (_, i) => ({
    offer_id: `SKU-${i}`,
    name: i % 7 === 0 ? `Товар "${i}", чёрный` : `Item ${i}`,
    price: ((10_000 + i * 37 + priceShift) / 100).toFixed(2),
    ...(i % 3 === 0 ? { old_price: ((20_000 + i) / 100).toFixed(2) } : {}),
    ...(i % 2 === 0 ? { quantity: i % 5 } : {}),
    url: `https://shop.example/p/${i}`,
    attributes: { color: i % 2 ? 'red' : 'blue' },
  }));
}

const PROFILE = {
  name: 'Short',
  columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }, { field: 'attributes.color', title: 'Colour' }],
  delimiter: ';',
};

/** Every format the registry serves right now (the formats are landing one by one). */
const FORMATS = Object.keys(FORMAT_WRITERS);

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

for (const dialect of DIALECTS) {
  describe(`the render cache serves rendered exports (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    const address = (key: string, query = '') => `/api/export/latest?key=${key}${query ? `&${query}` : ''}`;
    const cache = () => renderCacheOf(t.app);

    test('a new publication changes the ETag and the bytes of every variant', async () => {
      const key = await storeWithKey(t.db, 'pub-shop');
      await publishJson(t.db, 'pub-shop', items(500));
      const profile = await putProfile(t.db, 'pub-shop', PROFILE);
      const variants = FORMATS.flatMap((format) => [
        `format=${format}`, `format=${format}&only_available=true`, `format=${format}&profile_id=${profile.id}`,
      ]);
      variants.push('');

      const before = new Map<string, { etag: string; body: Buffer }>();
      for (const query of variants) {
        const first = await get(t.app, address(key, query));
        assert.equal(first.statusCode, 200, query);
        const again = await get(t.app, address(key, query));
        assert.equal(again.headers.etag, first.headers.etag, query);
        assert.deepEqual(again.rawPayload, first.rawPayload, `${query}: the cached bytes are the rendered bytes`);
        before.set(query, { etag: String(first.headers.etag), body: first.rawPayload });
      }

      await publishJson(t.db, 'pub-shop', items(500, 1));
      for (const query of variants) {
        const response = await get(t.app, address(key, query));
        assert.equal(response.statusCode, 200, query);
        assert.notEqual(response.headers.etag, before.get(query)!.etag, `${query}: the ETag changes`);
        assert.notDeepEqual(response.rawPayload, before.get(query)!.body, `${query}: the bytes change`);
        const stale = await get(t.app, address(key, query), { 'if-none-match': before.get(query)!.etag });
        assert.equal(stale.statusCode, 200, `${query}: the old ETag no longer revalidates`);
      }
    });

    test("a profile edit changes that profile's variants only", async () => {
      const key = await storeWithKey(t.db, 'profile-shop');
      await publishJson(t.db, 'profile-shop', items(300));
      const edited = await putProfile(t.db, 'profile-shop', PROFILE);
      const other = await putProfile(t.db, 'profile-shop', { ...PROFILE, name: 'Other' });
      const editedVariants = FORMATS.map((format) => `format=${format}&profile_id=${edited.id}`);
      const untouched = [...FORMATS.map((format) => `format=${format}&profile_id=${other.id}`), '', 'format=tsv'];

      const seen = new Map<string, { etag: string; body: Buffer }>();
      for (const query of [...editedVariants, ...untouched]) {
        const response = await get(t.app, address(key, query));
        seen.set(query, { etag: String(response.headers.etag), body: response.rawPayload });
      }
      // The edit adds columns every format shows: a constant for the tabular ones, url (Google's g:link)
      // and quantity (CommerceML's Количество) for the feeds that carry only their target's elements.
      const added = [{ value: 'yes', title: 'Export' }, { field: 'url', title: 'Link' }, { field: 'quantity', title: 'Qty' }];
      await putProfile(t.db, 'profile-shop', { ...PROFILE, columns: [...PROFILE.columns, ...added] }, edited.id);

      const rendersBefore = cache().stats().renders;
      for (const query of editedVariants) {
        const response = await get(t.app, address(key, query));
        assert.notEqual(response.headers.etag, seen.get(query)!.etag, query);
        assert.notDeepEqual(response.rawPayload, seen.get(query)!.body, query);
      }
      for (const query of untouched) {
        const response = await get(t.app, address(key, query));
        assert.equal(response.headers.etag, seen.get(query)!.etag, query);
        assert.deepEqual(response.rawPayload, seen.get(query)!.body, query);
        assert.ok(response.headers['content-length'], `${query}: still served from the cache`);
      }
      assert.equal(cache().stats().renders - rendersBefore, editedVariants.length, 'only the edited profile’s variants render again');
    });

    test('100 concurrent first requests share one render and get identical bytes', async () => {
      const key = await storeWithKey(t.db, 'crowd-shop');
      await publishJson(t.db, 'crowd-shop', items(3000));
      // The warmer may pre-render the legacy CSV at any moment; once it is cached, it cannot add a render here.
      await get(t.app, address(key));
      const rendersBefore = cache().stats().renders;
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => t.app.inject({ url: address(key, 'format=tsv&only_available=1'), headers: i % 4 === 0 ? { 'accept-encoding': 'gzip' } : {} })),
      );
      assert.equal(cache().stats().renders - rendersBefore, 1);
      const identity = responses.find((r) => !r.headers['content-encoding'])!.rawPayload;
      assert.ok(identity.length > 100_000);
      for (const response of responses) {
        assert.equal(response.statusCode, 200);
        const body = response.headers['content-encoding'] === 'gzip' ? gunzipSync(response.rawPayload) : response.rawPayload;
        assert.deepEqual(body, identity);
      }
    });

    test('byte ranges of a cached file: 206 slices, 416, If-Range, and HEAD', async () => {
      const key = await storeWithKey(t.db, 'range-shop');
      await publishJson(t.db, 'range-shop', items(800));
      const url = address(key, 'format=tsv');
      const first = await get(t.app, url);
      assert.equal(first.headers['accept-ranges'], undefined, 'the first answer streams the render');
      const full = first.rawPayload;
      const size = full.length;
      const etag = String(first.headers.etag);
      await until('the file is cached', async () => (await get(t.app, url, {}, 'HEAD')).headers['content-length'] !== undefined);

      const head = await get(t.app, url, {}, 'HEAD');
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-length'], String(size));
      assert.equal(head.headers['accept-ranges'], 'bytes');
      assert.equal(head.headers.etag, etag);
      assert.equal(head.headers['content-type'], first.headers['content-type']);
      assert.equal(head.body, '');

      const whole = await get(t.app, url);
      assert.equal(whole.headers['content-length'], String(size));
      assert.deepEqual(whole.rawPayload, full);

      const cases: Array<[string, number, number]> = [['bytes=0-99', 0, 99], ['bytes=100-', 100, size - 1], ['bytes=-50', size - 50, size - 1], [`bytes=10-${size + 1000}`, 10, size - 1]];
      for (const [range, start, end] of cases) {
        const response = await get(t.app, url, { range });
        assert.equal(response.statusCode, 206, range);
        assert.equal(response.headers['content-range'], `bytes ${start}-${end}/${size}`, range);
        assert.equal(response.headers['content-length'], String(end - start + 1), range);
        assert.equal(response.headers.etag, etag);
        assert.deepEqual(response.rawPayload, full.subarray(start, end + 1), range);
      }

      // A download resumed piece by piece comes back whole.
      const pieces: Buffer[] = [];
      for (let start = 0; start < size; start += 7_000) {
        const response = await get(t.app, url, { range: `bytes=${start}-${start + 6_999}`, 'if-range': etag });
        assert.equal(response.statusCode, 206);
        pieces.push(response.rawPayload);
      }
      assert.deepEqual(Buffer.concat(pieces), full);

      for (const range of [`bytes=${size}-`, `bytes=${size + 5}-${size + 10}`, 'bytes=-0']) {
        const response = await get(t.app, url, { range });
        assert.equal(response.statusCode, 416, range);
        assert.equal(response.headers['content-range'], `bytes */${size}`, range);
        assert.equal(response.headers['content-type'], 'application/problem+json');
        assert.equal(JSON.parse(response.body).code, 'range_not_satisfiable');
      }
      // Ignored, whole file: a stale If-Range, a date If-Range, several ranges, another unit, nonsense.
      for (const headers of [
        { range: 'bytes=0-9', 'if-range': '"v0-stale"' } as Record<string, string>,
        { range: 'bytes=0-9', 'if-range': String(first.headers['last-modified']) },
        { range: 'bytes=0-9,20-29' },
        { range: 'items=0-9' },
        { range: 'bytes=9-0' },
      ]) {
        const response = await get(t.app, url, headers);
        assert.equal(response.statusCode, 200, JSON.stringify(headers));
        assert.deepEqual(response.rawPayload, full);
      }
      // A current If-None-Match still answers 304 before any range.
      assert.equal((await get(t.app, url, { range: 'bytes=0-9', 'if-none-match': etag })).statusCode, 304);
    });

    test('gzip and br come precompressed from the cache and decompress to the identity bytes', async () => {
      const key = await storeWithKey(t.db, 'zip-shop');
      await publishJson(t.db, 'zip-shop', items(2000));
      const url = address(key, 'format=csv&only_available=true');
      const identity = (await get(t.app, url)).rawPayload;
      for (const [coding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
        const streamed = await get(t.app, url, { 'accept-encoding': coding });
        assert.equal(streamed.headers['content-encoding'], coding);
        assert.deepEqual(decode(streamed.rawPayload), identity);
        let cached = streamed;
        await until(`the ${coding} copy`, async () => {
          cached = await get(t.app, url, { 'accept-encoding': coding });
          return cached.headers['content-length'] !== undefined;
        });
        assert.equal(cached.headers['content-encoding'], coding);
        assert.equal(cached.headers.etag, streamed.headers.etag);
        assert.equal(cached.headers['content-length'], String(cached.rawPayload.length));
        assert.deepEqual(decode(cached.rawPayload), identity);
        // Ranges address the compressed representation (it has its own ETag).
        const half = Math.floor(cached.rawPayload.length / 2);
        const a = await get(t.app, url, { 'accept-encoding': coding, range: `bytes=0-${half - 1}` });
        const b = await get(t.app, url, { 'accept-encoding': coding, range: `bytes=${half}-` });
        assert.equal(a.statusCode, 206);
        assert.deepEqual(Buffer.concat([a.rawPayload, b.rawPayload]), cached.rawPayload);
      }
    });

    test('a new publication is rendered in the variants asked for before anyone asks, and the superseded entries are dropped', async () => {
      const key = await storeWithKey(t.db, 'warm-shop');
      const first = await publishJson(t.db, 'warm-shop', items(400));
      await get(t.app, address(key, 'format=tsv'));
      const oldTsv = cacheKey({
        endpoint: 'prices', storeId: 'warm-shop', priceListId: first.id, version: first.version, format: 'tsv', profileId: null, profileRevision: null, onlyAvailable: false,
      });
      const cached = await cache().open(oldTsv, 'identity');
      assert.ok(cached, 'the first list’s TSV is cached');
      await cached.handle?.close();

      // The TSV was asked for, so it is hot: written to the database now rather than within a second.
      await warmingOf(t.app).demand.flush();
      await publishJson(t.db, 'warm-shop', items(400, 5));
      // HEAD never renders: a Content-Length on it means the warmer put the file there.
      await until('the warmer', async () => (await get(t.app, address(key, 'format=tsv'), {}, 'HEAD')).headers['content-length'] !== undefined);
      const response = await get(t.app, address(key, 'format=tsv'));
      assert.equal(response.headers['content-length'], String(response.rawPayload.length));
      assert.equal(await cache().open(oldTsv, 'identity'), null, 'the superseded list’s entries are gone');
    });
  });
}
