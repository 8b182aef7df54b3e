/**
 * The C aggregates' own refusals (native/price_export_records.c, native/yml_offers.c): what the
 * contract tests' well-formed pages never reach. Their records themselves are held to the
 * writers' bytes by store/{delimited,json,xml,yml}-records.contract.test.ts. Skipped where the
 * extension was not built (npm test says so).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { RECORDS_EXTENSION_VERSION } from '../native-builds.js';
import { findRecordsExtension, loadRecordsExtension } from './records-extension.js';

const extension = findRecordsExtension();

describe('price_export_delimited(), price_export_json(), price_export_xml(), price_export_yml()', { skip: extension === null ? 'build/native/ was not built' : false }, () => {
  const db = new Database(':memory:');
  assert.equal(loadRecordsExtension(db, extension!), true);
  // INTEGER affinity, as price_items: a JavaScript number is bound as a REAL and stored as an integer.
  db.exec(`CREATE TABLE r (seq INTEGER, a INTEGER, b INTEGER)`);
  const page = (kinds: string, rows: [number, unknown, unknown][]) => {
    db.exec('DELETE FROM r');
    const insert = db.prepare('INSERT INTO r VALUES (?, ?, ?)');
    for (const row of rows) insert.run(row);
    // FROM a subquery in the rows' given order (a table scan could not show the order check).
    const value = db.prepare(`SELECT price_export_delimited(?, ',', '.', ';', seq, a, b) FROM (SELECT * FROM r ORDER BY rowid)`).pluck().get(kinds) as Buffer | null;
    return value === null ? null : value.toString('utf8');
  };

  it('builds each kind, NULL as an empty field', () => {
    assert.equal(page('tm', [[1, ' x', 199050], [2, null, 5], [3, 'a"b', null]]), '" x",1990.50;,0.05;"a""b",;');
    assert.equal(page('ib', [[1, -12, 2], [2, 0, 0], [3, null, null]]), '-12,1;0,0;,;');
    assert.equal(page('lt', [[1, '"k"', 'plain']]), '"k",plain;');
  });

  it('is not used when it is another version than this code calls (a build left from an older checkout)', () => {
    const other = new Database(':memory:');
    try {
      assert.equal(loadRecordsExtension(other, extension!, RECORDS_EXTENSION_VERSION + 1), false);
    } finally {
      other.close();
    }
  });

  it('answers NULL for no rows', () => {
    assert.equal(page('tt', []), null);
  });

  it('fails on rows out of publication order, never returning them reordered', () => {
    assert.throws(() => page('tt', [[1, 'a', 'b'], [3, 'c', 'd'], [2, 'e', 'f']]), /rows out of publication order/);
    assert.throws(() => page('tt', [[1, 'a', 'b'], [1, 'c', 'd']]), /rows out of publication order/);
  });

  it('fails on money that is not a non-negative integer, and on a malformed call', () => {
    assert.throws(() => page('mt', [[1, 1.5, 'x']]), /money must be a non-negative integer/);
    assert.throws(() => page('mt', [[1, -1, 'x']]), /money must be a non-negative integer/);
    assert.throws(() => page('t', [[1, 'a', 'b']]), /one kind per value/);
    assert.throws(() => page('tx', [[1, 'a', 'b']]), /a kind is one of/);
    assert.throws(() => db.prepare(`SELECT price_export_delimited('t', ',;', '.', ';', 1, 'a')`).pluck().get(), /one-byte delimiter/);
  });

  /** One JSON or XML aggregate over the rows in their given order. */
  const items = (call: string, rows: [number, unknown, unknown][]) => {
    db.exec('DELETE FROM r');
    const insert = db.prepare('INSERT INTO r VALUES (?, ?, ?)');
    for (const row of rows) insert.run(row);
    const value = db.prepare(`SELECT ${call} FROM (SELECT * FROM r ORDER BY rowid)`).pluck().get() as Buffer | null;
    return value === null ? null : value.toString('utf8');
  };

  it('JSON and XML: each kind, NULL as null or an empty element', () => {
    const text = 'x"\\\n\t\u0001€';
    assert.equal(items(`price_export_json('ltlm', seq, '{"a":', a, ',"b":', b)`, [[1, text, 199050], [2, null, null]]), `{"a":${JSON.stringify(text)},"b":1990.5{"a":null,"b":null`);
    assert.equal(items(`price_export_xml('tml', seq, 'a', a, 'b', b, ';')`, [[1, 'x&<\r', 5], [2, null, null]]), '<a>x&amp;&lt;&#13;</a><b>0.05</b>;<a/><b/>;');
  });

  it('JSON and XML: rows out of publication order, money not a non-negative integer, a malformed call', () => {
    assert.throws(() => items(`price_export_json('t', seq, a)`, [[2, 'a', null], [1, 'b', null]]), /price_export_json: rows out of publication order/);
    assert.throws(() => items(`price_export_xml('t', seq, 'e', a)`, [[2, 'a', null], [2, 'b', null]]), /price_export_xml: rows out of publication order/);
    assert.throws(() => items(`price_export_json('m', seq, b)`, [[1, null, 1.5]]), /price_export_json: money must be a non-negative integer/);
    assert.throws(() => items(`price_export_xml('m', seq, 'e', b)`, [[1, null, -3]]), /price_export_xml: money must be a non-negative integer/);
    assert.throws(() => items(`price_export_json('tt', seq, a)`, [[1, 'a', null]]), /one kind per value/);
    assert.throws(() => items(`price_export_xml('t', seq, a)`, [[1, 'a', null]]), /an element name and a value per field/);
  });

  it('YML: the parts read from extra, the categories, a param empty once escaped left out', () => {
    const extra = JSON.stringify({ vendor: 'A\u0001&\n', category: 'Я / "b"', attributes: { 'k"\t': 'v<', e: '\u0002' } });
    const call = `price_export_yml('xtxcxAxq', '{"":1,"Я / \\"b\\"":7}', seq, a, 'vendor', 'vendor', 'c', 'category', '9', 'attributes', 'n', 'attributes', 'e')`;
    assert.equal(
      items(call, [[1, extra, null], [2, null, null]]),
      '<vendor>A&amp;\n</vendor>\n<c>7</c>\n<param name="k&quot;&#9;">v&lt;</param>\n<param name="e"></param>\n<c>1</c>\n',
    );
  });

  it('YML: a column spelled as the spellings constant says, else escaped; a spelling with JSON escapes decoded', () => {
    const spellings = `'{"RUB":"RUR","a\\"b":"&quot;q&amp;","Я":"\\u044f"}'`;
    const rows: [number, unknown, unknown][] = [[1, 'RUB', null], [2, 'rub', null], [3, 'a"b', null], [4, 'Я', null], [5, '<&>', null], [6, null, null]];
    assert.equal(items(`price_export_yml('S', NULL, seq, NULL, ${spellings}, a)`, rows), 'RUR' + 'rub' + '&quot;q&amp;' + 'я' + '&lt;&amp;&gt;');
    assert.equal(items(`price_export_yml('s', NULL, seq, NULL, 'c', ${spellings}, a)`, rows.slice(0, 2)), '<c>RUR</c>\n<c>rub</c>\n');
    // No spellings (NULL): every value escaped.
    assert.equal(items(`price_export_yml('S', NULL, seq, NULL, NULL, a)`, [[1, 'RUB', null]]), 'RUB');
  });

  it('YML: rows out of publication order, extra, categories or spellings not JSON, money not a non-negative integer, a malformed call', () => {
    assert.throws(() => items(`price_export_yml('T', NULL, seq, NULL, a)`, [[2, 'a', null], [1, 'b', null]]), /price_export_yml: rows out of publication order/);
    assert.throws(() => items(`price_export_yml('xt', NULL, seq, a, 'e', 'vendor')`, [[1, '{"vendor":"x"', null]]), /extra, categories or spellings is not the JSON/);
    assert.throws(() => items(`price_export_yml('xt', NULL, seq, a, 'e', 'vendor')`, [[1, '{"vendor":"\\u12"}', null]]), /extra, categories or spellings is not the JSON/);
    assert.throws(() => items(`price_export_yml('xc', '{"a":"b"}', seq, NULL, 'c', 'category', '1')`, [[1, null, null]]), /extra, categories or spellings is not the JSON/);
    assert.throws(() => items(`price_export_yml('M', NULL, seq, NULL, b)`, [[1, null, 1.5]]), /price_export_yml: money must be a non-negative integer/);
    assert.throws(() => items(`price_export_yml('t', NULL, seq, NULL, a)`, [[1, 'a', null]]), /a known kind letter per part/);
    assert.throws(() => items(`price_export_yml('Tz', NULL, seq, NULL, a, a)`, [[1, 'a', null]]), /a known kind letter per part/);
    assert.throws(() => items(`price_export_yml('x', NULL, seq, NULL)`, [[1, 'a', null]]), /a known kind letter per part/);
    // S and s spell a column's text, never a key of extra.
    assert.throws(() => items(`price_export_yml('xS', NULL, seq, a, '{}', 'currency')`, [[1, '{}', null]]), /a known kind letter per part/);
    assert.throws(() => items(`price_export_yml('S', NULL, seq, NULL, '{"RUB":', a)`, [[1, 'RUB', null]]), /extra, categories or spellings is not the JSON/);
    assert.throws(() => items(`price_export_yml('S', NULL, seq, NULL, '{"RUB":1}', a)`, [[1, 'RUB', null]]), /extra, categories or spellings is not the JSON/);
  });

  it('YML: any extra text, cut or bent, gives offers or the JSON error, never a read past its end', () => {
    // What JSON.stringify writes for an item's extra, then cut short, a byte changed, or bytes inserted.
    const char = fc.constantFrom('a', 'Я', '😀', '"', '\\', '/', '\n', '\u0001', '{', '}', '[', ']', ':', ',', ' ');
    const text = fc.string({ unit: char, maxLength: 8 });
    const extraArb = fc.record(
      {
        vendor: text,
        category: text,
        purchase_price: fc.oneof(fc.nat(), fc.constant(1.5)),
        competitors: fc.array(fc.record({ name: text, price: fc.nat() }), { maxLength: 2 }),
        attributes: fc.dictionary(text, text, { maxKeys: 3 }),
      },
      { requiredKeys: [] },
    ).map((extra) => JSON.stringify(extra));
    const bent = fc.tuple(extraArb, fc.nat(), fc.constantFrom('cut', 'byte', 'insert', 'none'), fc.constantFrom('"', '\\', '{', '}', ',', ':', 'u', '1', '\u00ff'));
    const call = `price_export_yml('xtxcxAxqxP', '{"":1,"a":2}', seq, a, 'v', 'vendor', 'c', 'category', '9', 'attributes', 'n', 'attributes', 'a', 'p', 'purchase_price')`;
    fc.assert(
      fc.property(bent, ([extra, at, how, byte]) => {
        const cut = at % (extra.length + 1);
        const bad = how === 'cut' ? extra.slice(0, cut) : how === 'byte' ? extra.slice(0, cut) + byte + extra.slice(cut + 1) : how === 'insert' ? extra.slice(0, cut) + byte + extra.slice(cut) : extra;
        try {
          items(call, [[1, bad, null], [2, extra, null]]);
        } catch (error) {
          // Whole, the text is read: only a price that is no integer is refused.
          assert.match(String(error), how === 'none' ? /money must be a non-negative integer/ : /extra, categories or spellings is not the JSON|money must be a non-negative integer/);
          return;
        }
        if (how === 'none') assert.ok(!extra.includes('"purchase_price":1.5'));
      }),
      { numRuns: 2000 },
    );
  });
});
