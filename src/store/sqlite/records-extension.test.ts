/**
 * The C aggregates' own refusals (native/price_export_records.c, native/yml_offers.c): what the
 * contract tests' well-formed pages never reach. Their records themselves are held to the
 * writers' bytes by store/{delimited,json,xml,yml}-records.contract.test.ts. And the table-valued
 * price_export_copy_rows() (native/copy_rows.c), whole: the COPY rows it reads and refuses.
 * Skipped where the extension was not built (npm test says so).
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

describe('a page thread\'s kept room (price_export_room_taken(), native/records_page.c)', { skip: extension === null ? 'build/native/ was not built' : false }, () => {
  /** A connection as a page thread has it: the room turned on by its first price_export_room_taken(). */
  const connection = (roomOn: boolean) => {
    const db = new Database(':memory:');
    assert.equal(loadRecordsExtension(db, extension!), true);
    db.exec(`CREATE TABLE r (seq INTEGER, g INTEGER, a TEXT)`);
    const taken = db.prepare('SELECT price_export_room_taken()');
    if (roomOn) taken.get();
    return { db, taken };
  };
  const fill = (db: Database.Database, rows: number, text: (i: number) => string, groups = 1) => {
    db.exec('DELETE FROM r');
    const insert = db.prepare('INSERT INTO r VALUES (?, ?, ?)');
    for (let i = 1; i <= rows; i++) insert.run(i, i % groups, text(i));
  };
  const JSON_PAGE = `SELECT price_export_json('lt', seq, '{"a":', a) FROM (SELECT * FROM r ORDER BY seq)`;
  const text = (size: number) => (i: number) => `${i}:${'Я'.repeat(size)}`;
  const expected = (rows: number, text: (i: number) => string) => Array.from({ length: rows }, (_, i) => `{"a":${JSON.stringify(text(i + 1))}`).join('');

  it('builds page after page in the room, each page its own bytes: smaller, larger (the room grown), none', () => {
    const { db, taken } = connection(true);
    try {
      const page = db.prepare(JSON_PAGE).pluck();
      for (const [rows, size] of [[300, 40], [10, 3], [2000, 200], [0, 0], [50, 1]]) {
        fill(db, rows, text(size));
        const value = page.get() as Buffer | null;
        taken.get();
        assert.equal(value === null ? null : value.toString('utf8'), rows === 0 ? null : expected(rows, text(size)));
      }
    } finally {
      db.close();
    }
  });

  it('lends the room to one page at a time: two pages of one statement, and pages of a grouped statement, keep their own bytes', () => {
    const { db, taken } = connection(true);
    try {
      // A page first, so the room holds memory when the next statement's two pages ask for it.
      fill(db, 900, text(60));
      assert.equal((db.prepare(JSON_PAGE).pluck().get() as Buffer).toString('utf8'), expected(900, text(60)));
      taken.get();
      fill(db, 400, text(30), 4);
      const [json, xml] = db.prepare(`SELECT price_export_json('lt', seq, '{"a":', a), price_export_xml('tl', seq, 'a', a, ';') FROM (SELECT * FROM r ORDER BY seq)`).raw(true).get() as [Buffer, Buffer];
      taken.get();
      assert.equal(json.toString('utf8'), expected(400, text(30)));
      assert.equal(xml.toString('utf8'), Array.from({ length: 400 }, (_, i) => `<a>${text(30)(i + 1)}</a>;`).join(''));
      // One row a group: the first group's page is in the room (not yet taken) while the next groups' pages are built.
      const groups = db.prepare(`SELECT g, price_export_json('lt', seq, '{"a":', a) FROM (SELECT * FROM r ORDER BY seq) GROUP BY g ORDER BY g`).raw(true).all() as [number, Buffer][];
      taken.get();
      assert.deepEqual(
        groups.map(([g, page]) => [g, page.toString('utf8')]),
        [0, 1, 2, 3].map((g) => [g, Array.from({ length: 100 }, (_, i) => i * 4 + (g === 0 ? 4 : g)).map((seq) => `{"a":${JSON.stringify(text(30)(seq))}`).join('')]),
      );
    } finally {
      db.close();
    }
  });

  it('builds the same bytes with the room off (a connection that never says a value was taken), and after a failed page builds the next one whole', () => {
    const off = connection(false);
    const on = connection(true);
    try {
      for (const { db } of [off, on]) fill(db, 700, text(12));
      const pages = [off, on].map(({ db }) => (db.prepare(JSON_PAGE).pluck().get() as Buffer).toString('utf8'));
      on.taken.get();
      assert.equal(pages[0], expected(700, text(12)));
      assert.equal(pages[1], pages[0]);
      on.db.exec(`INSERT INTO r VALUES (1, 0, 'again')`);
      assert.throws(() => on.db.prepare(JSON_PAGE).pluck().get(), /rows out of publication order/);
      on.db.exec('DELETE FROM r WHERE a = \'again\'');
      assert.equal((on.db.prepare(JSON_PAGE).pluck().get() as Buffer).toString('utf8'), pages[0]);
    } finally {
      off.db.close();
      on.db.close();
    }
  });
});

describe('price_export_copy_rows()', { skip: extension === null ? 'build/native/ was not built' : false }, () => {
  const db = new Database(':memory:');
  assert.equal(loadRecordsExtension(db, extension!), true);
  const COLUMNS = 'price_list_id, seq, offer_id, name, price, old_price, currency, available, quantity, url, extra, quote_free';
  // As postgres/items.ts copyBytes writes a text: `\N` is NULL, backslash, tab, LF and CR escaped.
  const copyText = (text: string | null): string =>
    text === null ? '\\N' : text.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
  type Item = [number, number, string, string, number, number | null, string, boolean, number | null, string | null, string | null, number];
  const copyRow = ([id, seq, offer, name, price, old, currency, available, quantity, url, extra, quoteFree]: Item): string =>
    `${id}\t${seq}\t${copyText(offer)}\t${copyText(name)}\t${price}\t${old ?? '\\N'}\t${copyText(currency)}\t${available ? 't' : 'f'}\t`
    + `${quantity ?? '\\N'}\t${copyText(url)}\t${copyText(extra)}\t${quoteFree}\n`;
  const copy = (items: Item[]) => Buffer.from(items.map(copyRow).join(''));
  const read = (rows: Buffer | string) => db.prepare('SELECT * FROM price_export_copy_rows(?)').raw().all(rows) as unknown[][];
  const asRow = ([id, seq, offer, name, price, old, currency, available, quantity, url, extra, quoteFree]: Item) =>
    [id, seq, offer, name, price, old, currency, available ? 1 : 0, quantity, url, extra, quoteFree];

  it('yields each column: integers, texts with their escapes decoded, NULL, t as 1 and f as 0', () => {
    const items: Item[] = [
      [7, 1, 'A-1', 'tab\there, LF\nthere, CR\rthere, backslash\\there, \\N', 199050, null, 'RUB', true, null, null, null, 2 ** 53 - 1],
      [7, 2, 'Б-2', 'Яблоко «антоновка» 😀', 5, 10, '', false, 0, 'https://x.example/a?b=c', '{"k":"v\\\\u0001\\n"}', 0],
      [-3, 3, '', '', 0, -1, 'RUB', true, -12, '', '', 12],
    ];
    assert.deepEqual(read(copy(items)), items.map(asRow));
    // The SQLite types, as price_items' columns hold them: an empty text is '', never NULL.
    const types = db.prepare(`SELECT ${COLUMNS.split(', ').map((c) => `typeof(${c})`).join(', ')} FROM price_export_copy_rows(?)`).raw().all(copy(items));
    assert.deepEqual(types[0], ['integer', 'integer', 'text', 'text', 'integer', 'null', 'text', 'integer', 'null', 'null', 'null', 'integer']);
    assert.deepEqual(types[2], ['integer', 'integer', 'text', 'text', 'integer', 'integer', 'text', 'integer', 'integer', 'text', 'text', 'integer']);
    // PostgreSQL's other escapes, which the store's writer never makes.
    assert.deepEqual(read(Buffer.from('1\t1\to\t\\b\\f\\v\\\\\\t\t1\t\\N\tb\\\\\tt\t\\N\t\\N\t\\N\t0\n')).map((row) => row.slice(3, 7)), [['\b\f\v\\\t', 1, null, 'b\\']]);
  });

  it('reads a TEXT argument as a BLOB, and no rows from an empty one', () => {
    const items: Item[] = [[1, 1, 'o', 'Я\tя', 1, null, 'RUB', true, null, null, null, 0]];
    assert.deepEqual(read(copy(items).toString('utf8')), items.map(asRow));
    assert.deepEqual(read(Buffer.alloc(0)), []);
    assert.deepEqual(read(''), []);
  });

  it('reads back any text the writer escapes, wherever its escapes fall in the eight-byte scan', () => {
    const char = fc.constantFrom('a', 'N', 'Я', '😀', '\\', '\t', '\n', '\r', ' ', 'b', 't');
    const text = fc.string({ unit: char, maxLength: 20 });
    const texts = fc.tuple(text, text, fc.option(text), fc.option(text));
    fc.assert(
      fc.property(fc.array(texts, { maxLength: 5 }), (rows) => {
        const items = rows.map(([offer, name, url, extra], i): Item => [1, i + 1, offer, name, 1, null, 'RUB', true, null, url, extra, 0]);
        assert.deepEqual(read(copy(items)), items.map(asRow));
      }),
      { numRuns: 500 },
    );
  });

  it('stores rows with INSERT OR IGNORE … SELECT, a repeated offer_id ignored, changes the rows inserted', () => {
    db.exec(`CREATE TABLE price_items (price_list_id INTEGER NOT NULL, seq INTEGER NOT NULL, offer_id TEXT NOT NULL, name TEXT NOT NULL,
      price INTEGER NOT NULL, old_price INTEGER, currency TEXT NOT NULL, available INTEGER NOT NULL, quantity INTEGER, url TEXT, extra TEXT,
      quote_free INTEGER, PRIMARY KEY (price_list_id, seq), UNIQUE (price_list_id, offer_id)) WITHOUT ROWID`);
    const insert = db.prepare(`INSERT OR IGNORE INTO price_items (${COLUMNS}) SELECT ${COLUMNS} FROM price_export_copy_rows(?)`);
    const items: Item[] = [
      [9, 1, 'a', 'first a', 100, null, 'RUB', true, 3, null, null, 1],
      [9, 2, 'b', 'b\n', 200, 300, 'RUB', false, null, 'u', '{}', 2 ** 53 - 1],
      [9, 3, 'a', 'second a', 300, null, 'RUB', true, null, null, null, 0],
    ];
    assert.equal(insert.run(copy(items)).changes, 2);
    assert.deepEqual(db.prepare(`SELECT ${COLUMNS} FROM price_items ORDER BY seq`).raw().all(), [items[0], items[1]].map(asRow));
    // A bad row fails the statement: none of its rows stay.
    assert.throws(() => insert.run(Buffer.from(copyRow([10, 1, 'x', 'x', 1, null, 'RUB', true, null, null, null, 0]) + '10\t2\n')), /row 2: 2 fields, expected 12/);
    assert.equal(db.prepare('SELECT count(*) FROM price_items WHERE price_list_id = 10').pluck().get(), 0);
  });

  it('keeps each value when the function runs again for the next row of a join', () => {
    db.exec('CREATE TABLE batches (n INTEGER, rows BLOB)');
    const add = db.prepare('INSERT INTO batches VALUES (?, ?)');
    for (const [n, name] of [[1, 'zzz, the greatest'], [2, 'aaa'], [3, 'bbb']] as const) add.run(n, copy([[1, 1, 'o', name, 1, null, 'RUB', true, null, null, null, 0]]));
    // max() holds its best value while the next batch's rows are read.
    assert.equal(db.prepare('SELECT max((SELECT name FROM price_export_copy_rows(batches.rows))) FROM batches').pluck().get(), 'zzz, the greatest');
    assert.deepEqual(db.prepare('SELECT n, name FROM batches, price_export_copy_rows(batches.rows) ORDER BY n').raw().all(), [[1, 'zzz, the greatest'], [2, 'aaa'], [3, 'bbb']]);
  });

  it('is innocuous: a view over it is read with trusted_schema off', () => {
    const other = new Database(':memory:');
    try {
      assert.equal(loadRecordsExtension(other, extension!), true);
      other.exec(`PRAGMA trusted_schema = OFF; CREATE VIEW v AS SELECT name FROM price_export_copy_rows(x'${copy([[1, 1, 'o', 'n', 1, null, 'R', true, null, null, null, 0]]).toString('hex')}')`);
      assert.deepEqual(other.prepare('SELECT * FROM v').pluck().all(), ['n']);
    } finally {
      other.close();
    }
  });

  it('fails on a row that is not what the writer makes, naming the row', () => {
    const good = copyRow([1, 1, 'o', 'n', 1, null, 'RUB', true, null, null, null, 0]);
    const fields = good.slice(0, -1).split('\t');
    const withField = (i: number, value: string) => fields.map((field, at) => (at === i ? value : field)).join('\t') + '\n';
    const fails = (row: string, message: RegExp) => assert.throws(() => read(Buffer.from(good + good + row)), message);
    fails(fields.slice(0, 11).join('\t') + '\n', /^SqliteError: price_export_copy_rows: row 3: 11 fields, expected 12$/);
    fails(fields.join('\t') + '\t\n', /row 3: 13 fields, expected 12/);
    fails('\n', /row 3: 1 fields, expected 12/);
    fails(withField(3, 'a\\qb'), /row 3: name: \\q is no COPY escape/);
    fails(withField(3, 'a\\N'), /row 3: name: \\N is no COPY escape/);
    fails(withField(3, 'a\\\t'), /row 3: name: a backslash before byte 0x09 is no COPY escape/);
    fails(withField(3, '\\x41'), /row 3: name: \\x is no COPY escape/);
    fails(good.slice(0, -1), /row 3: no LF at its end/);
    fails(good.slice(0, -1) + '\\', /row 3: no LF at its end/);
    for (const bad of ['', '12a', '+1', '1.5', ' 1', '-', '9223372036854775808', '12345678901234567890']) fails(withField(4, bad), /row 3: price: not an integer/);
    const extremes = Buffer.from(withField(4, '-9223372036854775808') + withField(4, '9223372036854775807'));
    assert.deepEqual(db.prepare('SELECT price FROM price_export_copy_rows(?)').safeIntegers(true).pluck().all(extremes), [-(2n ** 63n), 2n ** 63n - 1n]);
    for (const bad of ['', '1', '0', 'true', 'T', 'tt', '\\N']) fails(withField(7, bad), /row 3: available(: not t or f| is \\N, and never NULL)/);
    fails(withField(2, '\\N'), /row 3: offer_id is \\N, and never NULL/);
    fails(withField(11, '\\N'), /row 3: quote_free is \\N, and never NULL/);
    assert.throws(() => read(null as unknown as Buffer), /rows is a BLOB or TEXT of COPY rows, not NULL/);
    assert.throws(() => db.prepare('SELECT * FROM price_export_copy_rows').all(), /no query solution/);
  });
});
