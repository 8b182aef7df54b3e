/**
 * The native item reader (native/item_rows.c) against the JavaScript it stands in for: every item
 * it takes must be one normalizeItem takes, with the very row copy-rows.ts makes of it and the same
 * feed-rule counts, currency and category; what it leaves is JavaScript's to answer. Generated
 * items near every rule's line, hostile texts, and the bench's catalogue items (which it must
 * all take, or the publication would not be faster).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { normalizeItem } from '../../domain/item-validation.js';
import { LEGACY_COLUMNS } from '../../model/columns.js';
import { FEED_CHECK_TARGETS, feedRules } from '../../model/feed-rules.js';
import type { PriceItem } from '../../model/price-item.js';
import { itemCopyRows } from './copy-rows.js';
import { ITEM_ROW_RULES, itemRowsModule } from './native-item-rows.js';
import { rawItem, richItem } from '../../../bench/bench-data.js';

const module = itemRowsModule();
const DRAFT = 7;

/** Every rule publishing counts, as `target/rule`, with its test. */
const RULES = FEED_CHECK_TARGETS.flatMap((target) => feedRules(target, LEGACY_COLUMNS).items.map((rule) => ({ id: `${target}/${rule.id}`, test: rule.test })));

interface Answer {
  row: string;
  ruleCounts: number[];
  available: number;
  currency: string;
  category: string;
}

/** JavaScript's answer for one item's text: null when it has a problem (or is no JSON). */
function javascript(text: string, seq: number, maxFieldChars: number): Answer | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const result = normalizeItem(raw, 'RUB', false, maxFieldChars);
  if (result.problems) return null;
  const item: PriceItem = result.item;
  return {
    row: itemCopyRows(DRAFT, [{ seq, item }]).toString(),
    ruleCounts: ITEM_ROW_RULES.map((id) => (RULES.find((rule) => rule.id === id)!.test(item, seq) === null ? 0 : 1)),
    available: item.available ? 1 : 0,
    currency: item.currency,
    category: item.category ?? '',
  };
}

/** The columns' kinds in a binary row: bytes of a big-endian integer, 'b' a boolean, 't' a text. */
const BINARY_COLUMNS = [8, 4, 't', 't', 8, 8, 't', 'b', 8, 't', 't', 8] as const;

/** A binary COPY row written as the text COPY row of the same values, so that the two formats compare. */
function binaryAsText(row: Buffer): string {
  assert.equal(row.readInt16BE(0), BINARY_COLUMNS.length);
  let at = 2;
  const fields = BINARY_COLUMNS.map((kind) => {
    const length = row.readInt32BE(at);
    at += 4;
    if (length === -1) return '\\N';
    const value = row.subarray(at, at + length);
    at += length;
    if (kind === 'b') return value[0] === 1 ? 't' : 'f';
    if (kind === 't') return value.toString().replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
    assert.equal(length, kind);
    return String(kind === 8 ? value.readBigInt64BE() : value.readInt32BE());
  });
  assert.equal(at, row.length, 'one row, nothing after it');
  return `${fields.join('\t')}\n`;
}

/** The module's answer: null when it leaves the item to JavaScript. Its binary row (PostgreSQL's) must hold the text row's values. */
function native(text: string, seq: number, maxFieldChars: number): Answer | null {
  const bytes = Buffer.from(text);
  const read = module!.read(bytes, Int32Array.of(0, bytes.length), DRAFT, seq, 'RUB', maxFieldChars, null, false, module!.seen());
  const binary = module!.read(bytes, Int32Array.of(0, bytes.length), DRAFT, seq, 'RUB', maxFieldChars, null, true, module!.seen());
  assert.equal(binary.accepted, read.accepted);
  if (read.left.length === 1) {
    assert.equal(read.accepted, 0);
    assert.equal(read.rows.length, 0);
    return null;
  }
  assert.equal(read.accepted, 1);
  assert.equal(binaryAsText(binary.rows), read.rows.toString());
  return {
    row: read.rows.toString(),
    ruleCounts: read.ruleCounts,
    available: read.available,
    currency: read.currencies.split('\0')[0],
    category: read.categories.split('\0')[0],
  };
}

/** Checks one text; answers whether the module took it. */
function same(text: string, seq = 0, maxFieldChars = 1_000_000): boolean {
  const ours = native(text, seq, maxFieldChars);
  if (ours === null) return false;
  assert.deepEqual(ours, javascript(text, seq, maxFieldChars), text);
  return true;
}

/** What one publication's reads share (the module's seen()). */
type Seen = ReturnType<NonNullable<typeof module>['seen']>;

/** Texts as NDJSON lines: their bytes, and each one's [start, end) for read. */
function lines(texts: readonly string[]): { bytes: Buffer; bounds: Int32Array } {
  const bounds = new Int32Array(2 * texts.length);
  let at = 0;
  texts.forEach((text, k) => {
    [bounds[2 * k], bounds[2 * k + 1]] = [at, at + Buffer.byteLength(text)];
    at += Buffer.byteLength(text) + 1;
  });
  return { bytes: Buffer.from(texts.join('\n')), bounds };
}

const skip = module === null ? 'the native item reader was not built (node scripts/build-native.mjs)' : false;

describe('the native item reader', { skip }, () => {
  test('counts the very rules publishing counts, in its order', () => {
    assert.deepEqual([...ITEM_ROW_RULES].sort(), RULES.map((rule) => rule.id).sort());
  });

  test("takes every one of the bench's catalogue items, lean and rich, with JavaScript's rows", () => {
    for (let i = 0; i < 3000; i++) {
      assert.ok(same(JSON.stringify(rawItem(i)), i), `rawItem(${i}) left to JavaScript`);
      assert.ok(same(JSON.stringify(richItem(i)), i), `richItem(${i}) left to JavaScript`);
    }
  });

  test('reads several items at once, seq by seq, and names the ones it leaves', () => {
    const texts = [JSON.stringify(richItem(1)), '{"offer_id":"x"}', JSON.stringify(rawItem(2)), 'not json'];
    const { bytes, bounds } = lines(texts);
    const read = module!.read(bytes, bounds, DRAFT, 100, 'RUB', 1_000_000, null, false, module!.seen());
    assert.deepEqual([...read.left], [1, 3]);
    assert.equal(read.accepted, 2);
    const rows = read.rows.toString();
    assert.equal(rows, javascript(texts[0], 100, 1e6)!.row + javascript(texts[2], 102, 1e6)!.row);
  });

  test('hands over each currency and category path once a publication: what its earlier reads did not', () => {
    // 5,000 paths, so the table grows many times; each read repeats half of the one before.
    const item = (i: number) => JSON.stringify({ offer_id: `c-${i}`, name: 'Чайник', price: 10, currency: i % 3 === 0 ? 'USD' : 'RUB', ...(i % 7 === 0 ? {} : { category: `Дом / Группа ${i}` }) });
    const read = (seen: Seen, from: number, to: number) => {
      const { bytes, bounds } = lines(Array.from({ length: to - from }, (_, k) => item(from + k)));
      const answer = module!.read(bytes, bounds, DRAFT, from, 'RUB', 1_000_000, null, false, seen);
      assert.equal(answer.accepted, to - from);
      return { currencies: answer.currencies.split('\0').slice(0, -1), categories: answer.categories.split('\0').slice(0, -1) };
    };
    const seen = module!.seen();
    const handed = { currencies: [] as string[], categories: [] as string[] };
    for (let from = 0; from < 5000; from += 500) {
      const answer = read(seen, Math.max(0, from - 250), from + 500);
      handed.currencies.push(...answer.currencies);
      handed.categories.push(...answer.categories);
    }
    const paths = ['', ...Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 7 !== 0).map((i) => `Дом / Группа ${i}`)];
    assert.deepEqual([...handed.categories].sort(), paths.sort(), 'every path once');
    assert.deepEqual(handed.currencies, ['USD', 'RUB']);
    // Another publication's reads hand over everything again.
    assert.deepEqual(read(module!.seen(), 0, 3), { currencies: ['USD', 'RUB'], categories: ['', 'Дом / Группа 1', 'Дом / Группа 2'] });
    assert.throws(() => module!.read(Buffer.from('{}'), Int32Array.of(0, 2), DRAFT, 0, 'RUB', 1, null, false, {} as never), /seen: what seen\(\) gave/);
  });

  test('past its table of 196,608 texts it hands every later new one over, each time (the caller keeps a Set)', () => {
    const categories = (seen: Seen, from: number, to: number) => {
      const { bytes, bounds } = lines(Array.from({ length: to - from }, (_, k) => `{"offer_id":"b-${from + k}","name":"x","price":1,"category":"k${from + k}"}`));
      const answer = module!.read(bytes, bounds, DRAFT, from, 'RUB', 1_000_000, null, false, seen);
      assert.equal(answer.accepted, to - from);
      return answer.categories.split('\0').slice(0, -1);
    };
    const seen = module!.seen();
    let handed = 0;
    for (let from = 0; from < 200_000; from += 50_000) handed += categories(seen, from, from + 50_000).length;
    assert.equal(handed, 200_000);
    // Read again: the table's texts are not handed over, the rest are.
    const again = [0, 100_000].flatMap((from) => categories(seen, from, from + 100_000));
    assert.equal(again.length, 200_000 - 196_608);
    assert.deepEqual(new Set(again).size, again.length);
  });

  test('leaves what it does not read exactly as JavaScript does (hostile and unusual items)', () => {
    const base = { offer_id: 'A-1', name: 'Чайник', price: 1990.5 };
    const variants: Record<string, unknown>[] = [
      { price: 1e3 }, { price: '1990.500' }, { price: ' 19' }, { price: -1 }, { price: '-1' }, { price: null }, { price: 12345678901234 },
      { offer_id: 12345 }, { offer_id: 1.5 }, { offer_id: '   ' }, { offer_id: '\u00a0' }, { offer_id: 'x'.repeat(121) }, { offer_id: 'x'.repeat(120) },
      { offer_id: 'a\u0001b' }, { name: 'a\ud800b' }, { name: 'emoji 😀' }, { name: '' }, { name: '\ufffe' }, { name: 'tab\there' },
      { currency: 'usd' }, { currency: 'US' }, { currency: 'ЕВР' }, { currency: 123 },
      { quantity: 0 }, { quantity: 5 }, { quantity: 5.0 }, { quantity: '5' }, { quantity: -1 }, { quantity: 2 ** 53 },
      { available: 'yes' }, { available: 'YES' }, { available: ' no' }, { available: 1 }, { available: 2 }, { available: null }, { available: 'нет' },
      { url: 'https://shop.example/p/1?x=2#y' }, { url: 'HTTPS://shop.example' }, { url: 'https://xn--p1ai.example' }, { url: 'https://1.2.3.4/' },
      { url: 'https://shop.example:8080' }, { url: 'https://shop.example:80808' }, { url: 'https://shop.example/a b' }, { url: 'ftp://x' },
      { picture: 'https://cdn.example/i.jpg' }, { picture: 'http://localhost/x' }, { picture: 'https://cdn.example/я.jpg' },
      { category: 'A / B' }, { category: 'A/B' }, { category: ' A / B' }, { category: 'A / B\u00a0' }, { category: 'A /  B' }, { category: '' },
      { category: 'Электроника / Чайники' }, { category: '/' }, { category: 'A / B / ' }, { category: 'A\n / B' }, { category: 'A\u3000 / B' },
      { competitors: [] }, { competitors: [{ name: ' ozon ', price: '10' }] }, { competitors: [{ name: 'ozon', price: 10, url: null, available: null }] },
      { competitors: [{ name: 'ozon' }] }, { competitors: [{ name: '', price: 1 }] }, { competitors: [{ name: 'a', price: 1, url: 'nope' }] },
      { competitors: [{ name: 'a', price: 1, available: 'maybe' }] }, { competitors: [null] }, { competitors: {} }, { competitors: [{ name: '\u00a0a', price: 1 }] },
      { competitors: [{ name: 'a', price: 1, extra: { deep: [1, 2, { x: null }] } }] },
      { attributes: {} }, { attributes: { a: null } }, { attributes: { a: 'b', c: 5, d: true, e: null } }, { attributes: { 0: 'x', b: 'y' } },
      { attributes: { '': 'empty key' } }, { attributes: { a: 1.5 } }, { attributes: { a: [1] } }, { attributes: [] }, { attributes: { 'a<b': 'c&d' } },
      { attributes: { __proto__: 'x' } },
      { description: 'Кавычки "и" \\ обратная\r\nстрока <b>&amp;</b>' }, { description: 'x'.repeat(3001) }, { description: 'ё'.repeat(5001) },
      { barcode: '4600000000001' }, { barcode: 4600000000001 }, { barcode: '12345678' }, { barcode: 'ABC' }, { barcode: '46000000000017' },
      { old_price: 2000 }, { old_price: 1990.5 }, { old_price: 100000 }, { old_price: '2100.00' }, { purchase_price: 0 }, { purchase_price: '0.5' },
      { unknown: { nested: [1, 'two', { three: null }] } }, { unknown: 1e400 }, { name: 'x_x005F_y' }, { name: 'x_x00AF_' }, { offer_id: 'Артикул-1' },
      { vendor_code: 'a\tb', vendor: 'v;v' }, { offer_id: 'a,b;c|d' }, { name: ' leading space' }, { name: 'a'.repeat(151) }, { name: 'б'.repeat(256) },
    ];
    let taken = 0;
    for (const variant of variants) if (same(JSON.stringify({ ...base, ...variant }))) taken++;
    // Texts no generator writes: escapes, white space, duplicate keys, truncation, a BOM.
    const texts = [
      '{"offer_id":"A\\u0031","name":"\\u0427\\u0430\\u0439","price":1}', '{"offer_id":"A","name":"B","price":1,"name":"C"}',
      ' \t{"offer_id":"A","name":"B","price":1}\r\n', '{"offer_id":"A","name":"B","price":1', '\ufeff{"offer_id":"A","name":"B","price":1}',
      '{"offer_id":"A","name":"B","price":01}', '{"offer_id":"A","name":"B","price":1,}', '{"offer_id":"A","name":"\\ud83d\\ude00","price":1}',
      '{"offer_id":"A","name":"\\ud83d","price":1}', '{"offer_id":"A","name":"\\b","price":1}', '{"offer_id":"A","name":"a\\/b","price":1}',
      '{"offer_id":"A","name":"B","price":1}x', '{"offer_id":"A","name":"B","price":1.}', '{"offer_id":"A","name":"B","price":1e2}',
      `{"offer_id":"A","name":"B","price":1,"x":${'['.repeat(100)}${']'.repeat(100)}}`, '{"offer_id":"A","name":"B","price":1,"x":"\\q"}',
      '{"offer_id":"A","name":"B","price":"1\\u0030"}', '{"offer_\\u0069d":"A","name":"B","price":1}', '[]', 'null', '"A"', '',
      '{"offer_id":"A","name":"B","price":1,"attributes":{"k":"v","k":"w"}}', '{"offer_id":"A","name":"B","price":1,"x":tru}',
    ];
    for (const text of texts) if (same(text)) taken++;
    // Enough of them are taken that the comparison means something.
    assert.ok(taken > 50, `only ${taken} taken`);
  });

  test('MAX_FIELD_CHARS is measured as JavaScript measures it (UTF-16 units)', () => {
    for (const name of ['abcd', 'абвг', '😀😀', 'ab😀']) for (const max of [2, 3, 4, 5]) same(JSON.stringify({ offer_id: 'A', name, price: 1 }), 0, max);
  });

  test('generated items near every rule agree with JavaScript', () => {
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'Я', 'ё', ' ', '/', '_x0041_', '"', '\\', '\t', '\n', '\r', '<', '&', ',', ';', '|', '😀', '\u00a0', '\ufffe', '\u0001', '\ud800'), maxLength: 12 }),
      fc.constantFrom('SKU-1', 'Артикул', 'https://shop.example/p/1', 'A / B', 'RUB', 'usd', '4600000000017', '12345678'),
    );
    /** Mostly a value the rules take, sometimes anything: so that many whole items pass and each rule's line is crossed. */
    const mostly = <T,>(good: fc.Arbitrary<T>, other: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: other, weight: 1 });
    const plain = fc.string({ unit: fc.constantFrom('a', 'Я', 'ё', ' ', '-', '_x0041_', '"', '&', ',', '😀', '\ufffe'), minLength: 1, maxLength: 8 }).map((t) => `x${t}y`);
    const money = fc.oneof(fc.integer({ min: 0, max: 10 ** 9 }).map((c) => c / 100), fc.constantFrom('10', '10.5', '10.50', '10.505', '', 'x', -5, 0, null, true));
    const value = fc.oneof(text, money, fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 10 ** 6 }));
    const competitor = fc.record({ name: text, price: money, url: fc.oneof(text, fc.constant(null)), available: value }, { requiredKeys: ['name', 'price'] });
    const item = fc.record(
      {
        offer_id: mostly(plain, text), name: mostly(plain, text), price: mostly(fc.integer({ min: 0, max: 10 ** 9 }).map((c) => c / 100), money),
        old_price: money, purchase_price: money, currency: mostly(fc.constantFrom('RUB', 'usd', 'EUR', 'KZT'), text),
        available: value, quantity: value, url: mostly(fc.constantFrom('https://a.example/x', 'http://b.example:81/?q=1'), text),
        picture: mostly(fc.constant('https://cdn.example/i.png'), text), vendor: mostly(plain, text), vendor_code: text,
        barcode: mostly(fc.constantFrom('4600000000017', '46000000', '123456789012', '4600000000018'), text), description: mostly(plain, text),
        category: mostly(fc.constantFrom('A / B', 'Электроника', 'x / y / z'), text),
        competitors: mostly(fc.array(fc.record({ name: plain, price: money, available: fc.boolean() }), { maxLength: 3 }), fc.oneof(fc.array(competitor, { maxLength: 3 }), value)),
        attributes: mostly(fc.dictionary(plain, plain, { maxKeys: 4 }), fc.oneof(fc.dictionary(text, value, { maxKeys: 4 }), value)),
        other: value,
      },
      { requiredKeys: [] },
    );
    let taken = 0;
    fc.assert(
      fc.property(item, fc.integer({ min: 0, max: 2_000_000 }), (raw, seq) => {
        if (same(JSON.stringify(raw), seq)) taken++;
      }),
      { numRuns: 30_000 },
    );
    assert.ok(taken > 500, `only ${taken} of 30,000 taken`);
  });
});
