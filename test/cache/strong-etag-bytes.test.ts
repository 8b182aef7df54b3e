import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { putProfile } from '../../src/domain/profiles.js';
import { FORMAT_WRITERS } from '../../src/formats/registry.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

/**
 * CONTRACT §4, issue #16 §1: a strong ETag names exactly one byte sequence per content coding.
 * The first answer of a variant is streamed as it renders (compressed on the fly when asked);
 * later answers come from the cache's finished file and its precompressed copies. Both must be
 * the same bytes, or a download resumed with Range + If-Range is corrupt.
 */
function items(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    offer_id: `SKU-${i}`,
    name: i % 7 === 0 ? `Товар "${i}", чёрный` : `Item ${i} of a list long enough to compress in many blocks`,
    price: ((10_000 + i * 37) / 100).toFixed(2),
    ...(i % 3 === 0 ? { old_price: ((20_000 + i) / 100).toFixed(2) } : {}),
    ...(i % 2 === 0 ? { quantity: i % 5 } : {}),
    url: `https://shop.example/p/${i}`,
    category: `Catalogue / Group ${i % 9}`,
    attributes: { color: i % 2 ? 'red' : 'blue' },
    competitors: [{ name: `Rival ${i % 4}`, price: ((9_000 + i * 41) / 100).toFixed(2) }],
  }));
}

const CODINGS = ['identity', 'gzip', 'br'] as const;
const DECODE = { identity: (bytes: Buffer) => bytes, gzip: gunzipSync, br: brotliDecompressSync };
const acceptEncoding = (coding: (typeof CODINGS)[number]): Record<string, string> => (coding === 'identity' ? {} : { 'accept-encoding': coding });

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

for (const dialect of DIALECTS) {
  describe(`one strong ETag, one byte sequence (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    /** Every address × format (the summary too), `only_available` so the warmer (legacy CSV) never renders first. */
    const addresses = (key: string, profileId: number) => [
      ...Object.keys(FORMAT_WRITERS).map((format) => `/api/export/latest?key=${key}&format=${format}&only_available=1`),
      `/api/export/latest?key=${key}&format=csv&only_available=1&profile_id=${profileId}`,
      `/WebApi/SummaryExportLatestGet/${key}?only_available=1`,
    ];

    for (const coding of CODINGS) {
      test(`${coding}: the first, streamed answer and the cached one are the same bytes, for every format`, async () => {
        // A store per coding: each coding's first request is the very first of its variant (rendered while it streams).
        const storeId = `etag-${coding}`;
        const key = await storeWithKey(t.db, storeId);
        await publishJson(t.db, storeId, items(1500));
        const profile = await putProfile(t.db, storeId, { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }], delimiter: ';' });
        for (const url of addresses(key, profile.id)) {
          const first = await get(t.app, url, acceptEncoding(coding));
          assert.equal(first.statusCode, 200, url);
          assert.equal(first.headers['content-length'], undefined, `${url}: the first answer streams the render`);
          assert.equal(first.headers['content-encoding'], coding === 'identity' ? undefined : coding, url);
          let cached = first;
          await until(`${url} cached in ${coding}`, async () => {
            cached = await get(t.app, url, acceptEncoding(coding));
            return cached.headers['content-length'] !== undefined;
          });
          assert.equal(cached.headers.etag, first.headers.etag, url);
          assert.ok(first.rawPayload.length > 0, url);
          assert.deepEqual(cached.rawPayload, first.rawPayload, `${url}: one ETag, one byte sequence (${coding})`);
          // Decodable, and the same file as the identity representation.
          const identity = await get(t.app, url);
          assert.deepEqual(DECODE[coding](cached.rawPayload), identity.rawPayload, url);
        }
      });
    }

    for (const coding of ['gzip', 'br'] as const) {
      test(`${coding}: a download cut at 3000 bytes and resumed with Range + If-Range decompresses to the whole file`, async () => {
        const storeId = `resume-${coding}`;
        const key = await storeWithKey(t.db, storeId);
        await publishJson(t.db, storeId, items(3000));
        const url = `/api/export/latest?key=${key}&format=yml&only_available=true`;
        const first = await get(t.app, url, { 'accept-encoding': coding });
        assert.equal(first.headers['content-length'], undefined, 'the first answer streams the render');
        assert.ok(first.rawPayload.length > 6000);
        const cut = first.rawPayload.subarray(0, 3000);
        const etag = String(first.headers.etag);

        let rest = first;
        await until(`the ${coding} copy`, async () => {
          rest = await get(t.app, url, { 'accept-encoding': coding, range: 'bytes=3000-', 'if-range': etag });
          return rest.statusCode === 206;
        });
        assert.equal(rest.headers.etag, etag);
        assert.equal(rest.headers['content-range'], `bytes 3000-${first.rawPayload.length - 1}/${first.rawPayload.length}`);
        const resumed = Buffer.concat([cut, rest.rawPayload]);
        const whole = await get(t.app, url);
        assert.deepEqual(DECODE[coding](resumed), whole.rawPayload);
      });
    }

    test('HEAD answers the headers GET does, before and after the file is rendered', async () => {
      const key = await storeWithKey(t.db, 'head-shop');
      await publishJson(t.db, 'head-shop', items(500));
      const comparable = (headers: Record<string, unknown>) => {
        // The rate-limit counter and the request id move with every request; the connection headers are the transport's.
        const { date, connection, ratelimit, 'x-request-id': _requestId, 'transfer-encoding': _chunked, 'keep-alive': _keepAlive, ...rest } = headers;
        return rest;
      };
      for (const [format, encoding] of [['json', {}], ['xml', { 'accept-encoding': 'gzip' }]] as const) {
        const url = `/api/export/latest?key=${key}&format=${format}&only_available=1`;
        const headBefore = await get(t.app, url, encoding, 'HEAD');
        const getFirst = await get(t.app, url, encoding);
        assert.equal(headBefore.statusCode, 200);
        assert.deepEqual(comparable(headBefore.headers), comparable(getFirst.headers), `${JSON.stringify(encoding)}: not rendered yet`);
        let getCached = getFirst;
        await until('the cached file', async () => {
          getCached = await get(t.app, url, encoding);
          return getCached.headers['content-length'] !== undefined;
        });
        const headAfter = await get(t.app, url, encoding, 'HEAD');
        assert.deepEqual(comparable(headAfter.headers), comparable(getCached.headers), `${JSON.stringify(encoding)}: cached`);
      }
    });
  });
}
