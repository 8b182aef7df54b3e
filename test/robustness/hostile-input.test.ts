/**
 * Property-based tests (fast-check) over the four public addresses with hostile input: random
 * keys (long, Unicode, `%00`, `%zz`, `../`, a valid key with one character changed, empty),
 * random parameter names and values, random paths and methods. Whatever comes in:
 *   - never a 5xx;
 *   - every error is problem+json (a body when the method has one), with the §4 headers;
 *   - the key sent (6 characters or more) appears in no body, no header and no log line,
 *     raw, URL-encoded or base64.
 * And hostile publications (issue #20: invalid UTF-8, lone surrogates, control characters in
 * every text field and attribute name, a duplicated "items", over-long lines and fields,
 * built-in attribute names): each is published or refused as invalid_publication, never
 * another error, and whatever was published exports in every format without a 5xx.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { putProfile } from '../../src/domain/profiles.js';
import { readSource, type SourceFormat } from '../../src/domain/publication-source.js';
import { publishPriceList } from '../../src/domain/publishing.js';
import { isAppError } from '../../src/errors/app-error.js';
import { ALL_LOG_LINES, createTestApp, findKeyLeaks, ISSUED_KEYS, publishJson, SEEN_RESPONSES, storeWithKey, type TestApp } from '../support/test-app.js';
import { findKeyLeaksAnyEncoding, keyForms } from './child-service.js';

const RUNS = Number(process.env.PRICE_EXPORT_PROPERTY_RUNS ?? 250);
const ITEMS = [
  { offer_id: 'H-1', name: 'Plain', price: 10, quantity: 3 },
  { offer_id: 'H-2', name: 'Quoted "name", with comma', price: '20.50', quantity: 0, category: 'A / B', competitors: [{ name: 'rival', price: 19 }] },
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE', 'SEARCH'] as const;
type Method = (typeof METHODS)[number];
const ADDRESSES = ['me', 'campaign', 'summary', 'latest'] as const;
type Address = (typeof ADDRESSES)[number];

/** Percent-encodes the UTF-8 bytes of everything but RFC 3986 unreserved characters (lone surrogates become U+FFFD, as a client would send). */
const pct = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

/** What a header value looks like on the server when a client sends UTF-8 bytes (Node reads them as latin1); controls cannot be sent. */
const asHeaderValue = (text: string) => Buffer.from(text, 'utf8').toString('latin1').replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '').trim();

interface HostileRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** The key as sent, and as the server reads it. */
  secrets: string[];
}

const SPECIALS = ['%00', '%zz', '%', '%%41', '../', '..%2f', '%2e%2e%2f', '\u0000', '/', '?', '#', '&', '=', '+', ';', ' ', '\t', '\r\n', 'pex_', '"', "'", '<x>', '\\', '%u0041', '\uFEFF', '\uD800', 'ключ', '🔑', '\u202E'];

describe('hostile input never breaks an address and never leaks a key', () => {
  let t: TestApp;
  let validKey: string;
  let profileId: number;
  let publicationKey = '';
  /** Text the service prints anyway (titles, headers, items): a random "key" that happens to be in it is no leak. */
  let corpus = '';

  before(async () => {
    t = await createTestApp('sqlite');
    validKey = await storeWithKey(t.db, 'hostile-shop');
    await publishJson(t.db, 'hostile-shop', ITEMS);
    profileId = (await putProfile(t.db, 'hostile-shop', { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] })).id;
    const samples = [
      `/api/export/latest?key=${validKey}`, `/api/export/latest?key=${validKey}&format=json`, `/api/export/latest?key=${validKey}&format=xml`,
      `/api/export/latest?key=${validKey}&format=yml`, `/api/export/latest?key=${validKey}&format=tsv`, '/api/export/latest?key=nope',
      '/api/export/latest?key=', '/api/export/latest?key=pex_x&format=bad', '/no/such', '/WebApi/CampaignDataLatestGet/%zz', '/api/me',
    ];
    for (const url of samples) {
      const response = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': validKey } });
      corpus += JSON.stringify(response.headers) + response.body;
    }
    corpus += t.logLines.join('');
  });

  after(async () => {
    await t.close();
    assert.deepEqual(findKeyLeaks(), []);
    assert.deepEqual(findKeyLeaksAnyEncoding(ISSUED_KEYS, [...ALL_LOG_LINES, ...SEEN_RESPONSES]), []);
  });

  /** Sends one request and checks every invariant; returns the response for extra checks. */
  async function send(request: HostileRequest) {
    const logStart = t.logLines.length;
    const response = await t.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
    SEEN_RESPONSES.push(JSON.stringify(response.headers) + response.body);
    const where = `${request.method} ${request.url.slice(0, 200)} → ${response.statusCode}`;

    assert.ok(response.statusCode < 500, `${where}: ${response.body.slice(0, 300)}`);
    assert.equal(response.headers['x-content-type-options'], 'nosniff', where);
    assert.equal(response.headers['referrer-policy'], 'no-referrer', where);
    if (response.statusCode >= 400) {
      assert.equal(response.headers['content-type'], 'application/problem+json', where);
      if (request.method !== 'HEAD') {
        const body = JSON.parse(response.body);
        assert.equal(body.status, response.statusCode, where);
        for (const field of ['type', 'title', 'detail', 'code']) assert.equal(typeof body[field], 'string', `${where}: ${field}`);
      }
      if (response.statusCode === 401) assert.equal(response.headers['www-authenticate'], 'ApiKey', where);
    }

    const headerValues = Object.values(response.headers).flat().map(String);
    const logs = t.logLines.slice(logStart);
    const logStrings = logs.flatMap((line) => [line, ...stringsIn(JSON.parse(line))]);
    for (const secret of request.secrets) {
      if (secret.length < 6) continue;
      for (const form of keyForms(secret)) {
        if (corpus.includes(form)) continue;
        assert.ok(!response.body.includes(form), `${where}: the body repeats the key`);
        assert.ok(!headerValues.some((value) => value.includes(form)), `${where}: a header repeats the key`);
        assert.ok(!logStrings.some((text) => text.includes(form)), `${where}: a log line repeats the key: ${logs.join('')}`);
      }
    }
    return response;
  }

  // ---- arbitraries -------------------------------------------------------------------------

  const special = fc.constantFrom(...SPECIALS);
  const mutatedKey = () =>
    fc.tuple(fc.nat(), fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_.~'))
      .map(([at, char]) => validKey.slice(0, at % validKey.length) + char + validKey.slice((at % validKey.length) + 1))
      .filter((key) => key !== validKey);
  const hostileKey = () =>
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 6, maxLength: 40 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 300, maxLength: 5000 }) },
      { weight: 3, arbitrary: fc.array(fc.oneof(special, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 8 }).map((parts) => parts.join('')) },
      { weight: 3, arbitrary: mutatedKey() },
      { weight: 1, arbitrary: fc.constantFrom('', validKey.slice(0, -1), `${validKey}x`, `${validKey}/`, `${validKey}%00`, ` ${validKey}`, validKey.toLowerCase()) },
    );
  const paramName = fc.oneof(fc.constantFrom('format', 'only_available', 'profile_id', 'key', 'FORMAT', 'utm_source', ''), fc.string({ unit: 'grapheme', maxLength: 20 }));
  const paramValue = () =>
    fc.oneof(
      fc.constantFrom('csv', 'TSV', 'xlsx', 'json', 'xml', 'Yml', 'pdf', 'true', '0', 'YES', 'maybe', String(profileId), '999999', '0', '-1', '1e3', '', '1'.repeat(19)),
      fc.string({ unit: 'binary', maxLength: 30 }),
      special,
    );
  const params = () => fc.array(fc.tuple(paramName, paramValue(), fc.boolean()), { maxLength: 5 });
  /** Encoded the way a careful client does, or raw the way a hand-written link does. */
  const encodeParams = (list: Array<[string, string, boolean]>) => list.map(([name, value, raw]) => (raw ? `${name}=${value}` : `${pct(name)}=${pct(value)}`));

  function addressed(address: Address, key: string, rawKey: boolean, query: string[], method: Method): HostileRequest {
    const inPath = rawKey ? key : pct(key);
    const secrets = [key, asHeaderValue(key)];
    const q = (parts: string[]) => (parts.length ? `?${parts.join('&')}` : '');
    switch (address) {
      case 'me':
        return { method, url: `/api/me${q(query)}`, headers: { 'x-api-key': asHeaderValue(key) }, secrets };
      case 'campaign':
        return { method, url: `/WebApi/CampaignDataLatestGet/${inPath}${q(query)}`, headers: {}, secrets };
      case 'summary':
        return { method, url: `/WebApi/SummaryExportLatestGet/${inPath}${q(query)}`, headers: {}, secrets };
      case 'latest':
        return { method, url: `/api/export/latest${q([`key=${inPath}`, ...query])}`, headers: {}, secrets };
    }
  }

  // ---- properties --------------------------------------------------------------------------

  test('random keys and parameters on every address: no 5xx, problem+json errors, no key echoed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ADDRESSES), hostileKey(), fc.boolean(), params(), fc.constantFrom<Method>('GET', 'HEAD'), async (address, key, rawKey, list, method) => {
        await send(addressed(address, key, rawKey, encodeParams(list), method));
      }),
      { numRuns: RUNS },
    );
  });

  test('a valid key with one character changed is refused 401 invalid_key on every address', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<Address>('me', 'campaign', 'latest'), mutatedKey(), async (address, key) => {
        const response = await send(addressed(address, key, false, [], 'GET'));
        assert.equal(response.statusCode, 401, `${address}: ${response.body}`);
        assert.equal(JSON.parse(response.body).code, 'invalid_key');
      }),
      { numRuns: RUNS },
    );
  });

  test('the valid key with random parameters: 200, 400 or 404, never the key in the file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ADDRESSES), params(), fc.constantFrom<Method>('GET', 'HEAD'), async (address, list, method) => {
        const response = await send(addressed(address, validKey, false, encodeParams(list), method));
        assert.ok([200, 400, 404].includes(response.statusCode), `${address} ${encodeParams(list).join('&')}: ${response.statusCode} ${response.body.slice(0, 200)}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('random paths, methods and bodies: no 5xx, problem+json errors, no key echoed', async () => {
    const segment = fc.oneof(
      fc.constantFrom('api', 'me', 'export', 'latest', 'WebApi', 'webapi', 'CampaignDataLatestGet', 'SummaryExportLatestGet', 'docs', 'static', 'openapi.json', 'json', '..', '.', '%2e%2e', '', '%zz', '%00', '%2F'),
      fc.string({ unit: 'grapheme', maxLength: 12 }).map(pct),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 6 }), hostileKey(), fc.nat(6), fc.constantFrom(...METHODS), params(),
        fc.option(fc.tuple(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'bogus'), fc.string({ maxLength: 200 }))),
        async (segments, key, keyAt, method, list, body) => {
          const parts = [...segments];
          parts.splice(keyAt % (parts.length + 1), 0, pct(key));
          const query = encodeParams(list);
          if (keyAt % 2) query.unshift(`key=${pct(key)}`);
          const headers: Record<string, string> = { 'x-api-key': asHeaderValue(key) };
          const withBody = body !== null && method !== 'GET' && method !== 'HEAD';
          if (withBody) headers['content-type'] = body[0];
          await send({ method, url: `/${parts.join('/')}${query.length ? `?${query.join('&')}` : ''}`, headers, payload: withBody ? body[1] : undefined, secrets: [key, asHeaderValue(key)] });
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('hostile publications: published, or refused as invalid_publication with the list kept; what is published exports in every format', async () => {
    await storeWithKey(t.db, 'hostile-pub').then((key) => (publicationKey = key));
    await publishJson(t.db, 'hostile-pub', ITEMS);
    const nasty = fc.constantFrom('\ud800', '\udfff', '\u0000', '\u0007', '\u001b[31m', '\uFEFF', '\uFFFE', 'я', '😀', ',', ';', '"', '\r\n', '<&>', 'constructor', '__proto__', 'toString');
    const text = fc.oneof(fc.string({ maxLength: 12 }), fc.array(nasty, { maxLength: 4 }).map((parts) => parts.join('')), fc.string({ unit: 'binary', maxLength: 12 }), fc.constant('x'.repeat(300)));
    const item = fc.record(
      { offer_id: text, name: text, price: fc.oneof(fc.nat(100000), text), category: text, vendor: text, attributes: fc.dictionary(text, text, { maxKeys: 3 }), competitors: fc.array(fc.record({ name: text, price: fc.nat(1000), url: fc.oneof(text, fc.constant('https://r.example/a')) }), { maxLength: 2 }) },
      { requiredKeys: ['offer_id', 'name', 'price'] },
    );
    const csvCell = (value: unknown) => `"${String(typeof value === 'object' ? JSON.stringify(value) : value).replaceAll('"', '""')}"`;
    const body = fc.oneof(
      fc.array(item, { minLength: 1, maxLength: 4 }).map((items): [SourceFormat, Buffer] => ['json', Buffer.from(JSON.stringify(items))]),
      fc.tuple(fc.array(item, { maxLength: 2 }), fc.array(item, { maxLength: 2 })).map(([a, b]): [SourceFormat, Buffer] => ['json', Buffer.from(`{"items":${JSON.stringify(a)},"items":${JSON.stringify(b)}}`)]),
      fc.array(item, { minLength: 1, maxLength: 4 }).map((items): [SourceFormat, Buffer] => ['ndjson', Buffer.from(items.map((i) => JSON.stringify(i)).join('\n'))]),
      fc.array(item, { minLength: 1, maxLength: 4 }).map((items): [SourceFormat, Buffer] => ['csv', Buffer.from(`offer_id,name,price,category,attributes.color\r\n${items.map((i) => [i.offer_id, i.name, i.price, i.category, i.vendor].map(csvCell).join(',')).join('\r\n')}`)]),
      fc.tuple(fc.constantFrom<SourceFormat>('json', 'ndjson', 'csv'), fc.uint8Array({ maxLength: 200 })).map(([format, bytes]): [SourceFormat, Buffer] => [format, Buffer.from(bytes)]),
    );
    await fc.assert(
      fc.asyncProperty(body, async ([format, bytes]) => {
        const before = await t.db.priceLists.latest('hostile-pub');
        try {
          await publishPriceList(t.db, 'hostile-pub', readSource(Readable.from([bytes]), format, { maxLineBytes: 2000 }), { maxFieldChars: 200 });
        } catch (error) {
          assert.ok(isAppError(error) && error.code === 'invalid_publication', `${format} ${bytes.toString('utf8').slice(0, 200)}: ${(error as Error).stack}`);
          assert.equal((await t.db.priceLists.latest('hostile-pub'))?.version, before?.version, 'a refusal keeps the previous list');
          return;
        }
        for (const exportFormat of ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml']) {
          const response = await t.app.inject({ method: 'GET', url: `/api/export/latest?key=${publicationKey}&format=${exportFormat}` });
          assert.equal(response.statusCode, 200, `${exportFormat} of ${bytes.toString('utf8').slice(0, 200)}: ${response.body.slice(0, 200)}`);
        }
      }),
      { numRuns: Math.max(20, Math.floor(RUNS / 5)) },
    );
  });

  test('every other method on a public address is 405 with Allow, before the key', async () => {
    for (const address of ADDRESSES) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE', 'SEARCH'] as const) {
        const response = await send(addressed(address, 'wrong-key-123456', false, [], method));
        assert.equal(response.statusCode, 405, `${method} ${address}`);
        assert.equal(response.headers.allow, 'GET, HEAD');
      }
    }
  });

  test('a request the HTTP parser itself refuses gets problem+json, and no log line holds its bytes (even at trace level)', async () => {
    const traced = await createTestApp('sqlite', { LOG_LEVEL: 'trace' });
    try {
      await traced.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = traced.app.server.address() as { port: number };
      const secret = 'pex_ThisIsAHostileKeyValue0123456789';
      const asByteList = [...Buffer.from(secret)].join(',');
      for (const raw of [
        `GET /api/export/latest?key=${secret} x HTTP/1.1\r\nHost: a\r\n\r\n`,
        `GET /api/me HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${secret}\x01\r\n\r\n`,
        `GET /api/me HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${secret}\r\nContent-Length: x\r\n\r\n`,
      ]) {
        const answer = await rawExchange(port, raw);
        assert.match(answer, /^HTTP\/1\.1 4\d\d /, answer);
        assert.match(answer, /content-type: application\/problem\+json/i, answer);
        assert.ok(!answer.includes(secret));
      }
      assert.ok(!traced.logLines.some((line) => line.includes(secret) || line.includes(asByteList)), 'the raw request (key included) is logged');
    } finally {
      await traced.close();
    }
  });
});

/** Every string inside a parsed log entry (JSON escaping could hide a key in the raw line). */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(3000, () => socket.destroy());
  });
}
