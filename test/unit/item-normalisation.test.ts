/** Item normalisation (src/domain/item-validation.ts, CONTRACT §2): defaults, text rows, every problem listed. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isHttpUrl, normalizeCategory, normalizeItem, parsesAsHttpUrl } from '../../src/domain/item-validation.js';

const minimal = { offer_id: 'A1', name: 'Kettle', price: 1990.5 };

function problems(raw: unknown, text = false): string[] {
  const result = normalizeItem(raw, 'RUB', text);
  assert.ok(result.problems, `accepted ${JSON.stringify(raw)}`);
  return result.problems;
}

describe('normalizeItem', () => {
  test('a minimal item gets the defaults of CONTRACT §2', () => {
    const { item } = normalizeItem(minimal, 'RUB');
    assert.deepEqual(item, {
      offer_id: 'A1', name: 'Kettle', price: 199050, old_price: null, purchase_price: null, currency: 'RUB',
      available: true, quantity: null, url: null, picture: null, vendor: null, vendor_code: null, barcode: null,
      description: null, category: null, competitors: null, attributes: null,
    });
  });

  test('availability follows quantity unless given; currency is upper-cased', () => {
    assert.equal(normalizeItem({ ...minimal, quantity: 0 }, 'RUB').item?.available, false);
    assert.equal(normalizeItem({ ...minimal, quantity: 3 }, 'RUB').item?.available, true);
    assert.equal(normalizeItem({ ...minimal, quantity: 0, available: true }, 'RUB').item?.available, true);
    assert.equal(normalizeItem({ ...minimal, currency: 'usd' }, 'RUB').item?.currency, 'USD');
  });

  test('a numeric offer_id is read as text; a category path gets one spelling', () => {
    assert.equal(normalizeItem({ ...minimal, offer_id: 17 }, 'RUB').item?.offer_id, '17');
    assert.equal(normalizeItem({ ...minimal, category: ' Electronics /Phones/ ' }, 'RUB').item?.category, 'Electronics / Phones');
    assert.equal(normalizeItem({ ...minimal, category: ' / ' }, 'RUB').item?.category, null);
  });

  test('CSV text rows: empty means absent, numbers and JSON come as text', () => {
    const { item } = normalizeItem({ offer_id: 'C1', name: 'Row', price: '10.50', quantity: '4', old_price: '', 'attributes.color': 'red' }, 'RUB', true);
    assert.equal(item?.price, 1050);
    assert.equal(item?.quantity, 4);
    assert.equal(item?.old_price, null);
    assert.deepEqual(item?.attributes, { color: 'red' });
  });

  test('every problem of a bad row is listed, not just the first', () => {
    const found = problems({ offer_id: '', price: 1.505, quantity: -1, currency: 'rubles', url: 'ftp://x', available: 'perhaps' });
    for (const expected of [/^offer_id must not be empty$/, /^name is required$/, /^price has more than two fractional digits$/, /^quantity must be an integer ≥ 0$/, /^currency must be an ISO 4217 code/, /^url must be an absolute http\(s\) URL$/, /^available must be true or false$/]) {
      assert.ok(found.some((problem) => expected.test(problem)), `${expected} in ${found.join(' | ')}`);
    }
  });

  test("competitors' and attributes' problems name the entry, in order", () => {
    const control = 'contains a control character (only tab, line feed and carriage return are allowed)';
    const found = problems({
      ...minimal,
      competitors: [{ name: 'a', price: 1 }, null, { price: 1 }, { name: 'b', price: 'x' }, { name: 'c', price: 1, url: 'ftp://x' }, { name: 'd\u0000', price: 1 }, { name: 'e', price: 1, available: 'maybe' }],
      attributes: { colour: 'red', bad: {}, 'x\u0007': 'v', k: 'v\u0001' },
    });
    assert.deepEqual(found, [
      'competitors[1] must be an object',
      'competitors[2].name is required',
      'competitors[3].price must be a decimal number like 1990.50',
      'competitors[4].url must be an absolute http(s) URL',
      `competitors[5].name ${control}`,
      'competitors[6].available must be true or false',
      'attributes.bad must be a string',
      `an attribute name ${control}`,
      `attributes.k ${control}`,
    ]);
  });

  test('control characters and over-long ids are refused; a row must be an object', () => {
    assert.ok(problems({ ...minimal, name: 'bad\u0000name' }).some((p) => /name contains a control character/.test(p)));
    assert.ok(problems({ ...minimal, offer_id: 'x'.repeat(121) }).some((p) => /offer_id must be at most 120 characters/.test(p)));
    assert.deepEqual(problems([minimal]), ['must be an object']);
    assert.deepEqual(problems(null), ['must be an object']);
  });
});

describe('normalizeCategory', () => {
  test('trims each level and drops empty ones', () => {
    assert.equal(normalizeCategory('a/b'), 'a / b');
    assert.equal(normalizeCategory('//a// b //'), 'a / b');
    assert.equal(normalizeCategory(''), '');
  });
});

describe('isHttpUrl', () => {
  /** Pieces near the fast path's edges: schemes, hosts (punycode, numbers, upper case, empty labels), ports, and what may follow. */
  const scheme = fc.constantFrom('http://', 'https://', 'HTTP://', 'Https://', 'http:/', 'http:\\\\', 'ftp://', ' http://', 'http://\t', 'file://', 'httpx://', '');
  const label = fc.oneof(
    fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
    fc.stringMatching(/^[a-z0-9-]{1,6}$/),
    fc.constantFrom('xn--', 'xn--p1ai', 'xn--zz', 'XN--p1ai', 'xn-', '0x10', '255', '256', '1e3', '', 'A', 'ex_ample', 'шоп', 'a%41', 'a b', 'a@b', 'localhost'),
  );
  const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
  const port = fc.constantFrom('', '', ':', ':0', ':80', ':8080', ':9999', ':65535', ':65536', ':99999', ':08', ':a', ':-1');
  const rest = fc.oneof(
    fc.constantFrom('', '/', '?', '#', '/p/1?x=2#y', '\\back', '/%zz', '/a b', '/я', '@evil', '/../..', '/\u0000', ':', '.', '/\u007f', '/[]{}|^`"<>'),
    fc.string({ unit: fc.constantFrom('/', '?', '#', 'a', '%', '\\', '@', ':', '.', ' ', '~', '\t', 'ё', '\u00a0', '\ud800') }),
  );
  const candidate = fc.tuple(scheme, host, port, rest).map((parts) => parts.join(''));

  test('gives the URL parser\'s answer for every text near the fast path\'s edges', () => {
    let plain = 0;
    fc.assert(
      fc.property(candidate, (value) => {
        const answer = isHttpUrl(value);
        assert.equal(answer, parsesAsHttpUrl(value), value);
        if (answer) plain++;
      }),
      { numRuns: 20_000 },
    );
    // The generator makes URLs as well as texts that are none (else the property would prove little).
    assert.ok(plain > 1_000, `only ${plain} of the texts were URLs`);
  });

  test('catalogue URLs, and texts the parser refuses', () => {
    for (const url of ['https://demo-shop.example/catalog/1/p/1', 'http://a.b/c?d=e#f', 'https://x.example:8080/', 'https://шоп.рф/товар', 'https://xn--p1ai/', 'https://1.2.3.4/']) assert.ok(isHttpUrl(url), url);
    for (const url of ['HTTP://a.b/', 'ftp://a.b/', 'https://1.2.3.999/', 'https://xn--zz/', 'https://a.b:65536/', 'demo-shop.example/p/1', 'https://', '']) assert.ok(!isHttpUrl(url), url);
  });
});

describe('normalizeCategory against its definition', () => {
  const byDefinition = (path: string) => path.split('/').map((level) => level.trim()).filter((level) => level !== '').join(' / ');
  test('spells every path as splitting, trimming and joining it would', () => {
    const unit = fc.constantFrom('a', 'Б', '/', ' ', '  ', '\t', '\n', '\u00a0', '\ufeff', '\u2003', '\u3000', '\u200b', 'x y', '-');
    fc.assert(fc.property(fc.string({ unit, maxLength: 16 }), (path) => assert.equal(normalizeCategory(path), byDefinition(path), JSON.stringify(path))), { numRuns: 20_000 });
    for (const path of ['Электроника / Смартфоны / Группа 1', 'a', 'a / b', 'a b / c d']) assert.equal(normalizeCategory(path), path);
  });
});
