import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileDefinition } from '../model/profile.js';
import { csvWriter, tsvWriter } from './delimited.js';
import { CHUNK_BYTES, MAX_CHUNK_BYTES } from './text-writer.js';
import { buildMeta, collectChunks, legacySample, normalizeItem, readFixture, renderToBuffer } from '../../test/support/format-items.js';

const profileSample = JSON.parse(readFixture('profile-sample.json').toString('utf8')) as ProfileDefinition;

/** Meta for a profile: its columns and tabular options. */
const profileMeta = (items: readonly PriceItem[], profile: ProfileDefinition) =>
  buildMeta(items, {
    columns: profileColumns(profile.columns),
    tabular: {
      delimiter: profile.delimiter,
      decimal_separator: profile.decimal_separator,
      header: profile.header,
      bom: profile.bom,
      encoding: profile.encoding,
    },
  });

/** Items for the profile tests: Cyrillic, an emoji, a `;`, quotes, a character windows-1251 lacks. */
const profileItems = [
  normalizeItem({ offer_id: 'A-100', name: 'Смартфон «Галактика» 128 ГБ', price: 19990, attributes: { color: 'чёрный' } }),
  normalizeItem({ offer_id: 'A-108', name: 'Fridge; 300 L', price: 1234567.89 }),
  normalizeItem({ offer_id: 'A-109', name: 'Чехол 📱 для телефона', price: 0.5, attributes: { color: 'Grün' } }),
  normalizeItem({ offer_id: 'B-1', name: 'Say "hi", €5', price: '10' }),
];

describe('legacy layout (CONTRACT §5)', () => {
  const { items } = legacySample();

  it('csv is byte for byte the predecessor file', async () => {
    assert.deepEqual(await renderToBuffer(csvWriter, items), readFixture('legacy-sample.csv'));
  });

  it('tsv is byte for byte the predecessor file', async () => {
    assert.deepEqual(await renderToBuffer(tsvWriter, items), readFixture('legacy-sample.tsv'));
  });

  it('only available items, byte for byte', async () => {
    const available = items.filter((item) => item.available);
    assert.deepEqual(await renderToBuffer(csvWriter, available), readFixture('legacy-sample.only-available.csv'));
  });

  it('the generic column path gives the same bytes as the hand-written legacy record', async () => {
    // A copy of the columns takes the generic path (the legacy record is chosen by identity).
    const meta = buildMeta(items, { columns: LEGACY_COLUMNS.map((column) => ({ ...column })) });
    assert.deepEqual(await renderToBuffer(csvWriter, items, meta), readFixture('legacy-sample.csv'));
    assert.deepEqual(await renderToBuffer(tsvWriter, items, meta), readFixture('legacy-sample.tsv'));
  });

  it('stays frozen whatever tabular options the meta carries', async () => {
    const meta = { ...buildMeta(items), tabular: { delimiter: ';', decimal_separator: ',', header: false, bom: true, encoding: 'windows-1251' } as const };
    assert.deepEqual(await renderToBuffer(csvWriter, items, meta), readFixture('legacy-sample.csv'));
    assert.equal(csvWriter.contentType(meta), 'text/csv; charset=utf-8');
    assert.equal(tsvWriter.contentType(meta), 'text/tab-separated-values; charset=utf-8');
  });

  it('an empty list is the header alone', async () => {
    assert.equal((await renderToBuffer(csvWriter, [])).toString(), 'offer_id,name,price,old_price,currency,available,quantity,url\r\n');
  });

  it('quotes exactly what the rule says, and csv-parse reads every value back', () => {
    const awkward = fc.string({ unit: fc.constantFrom('a', 'Ж', ' ', ',', '"', '\r', '\n', '\t', ';', '📱', '='), maxLength: 12 });
    return fc.assert(
      fc.asyncProperty(awkward, async (name) => {
        const item = normalizeItem({ offer_id: 'X', name, price: 1 });
        const text = (await renderToBuffer(csvWriter, [item])).toString('utf8');
        const [, record] = parse(text, { record_delimiter: '\r\n' }) as string[][];
        assert.equal(record[1], name);
        const mustQuote = /[,"\r\n]|^ | $/.test(name);
        assert.equal(text.split('\r\n')[1].startsWith(`X,${mustQuote ? '"' : ''}`), true);
        if (!mustQuote) assert.equal(text.endsWith(`X,${name},1.00,,RUB,1,,\r\n`), true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('with a profile (CONTRACT §6)', () => {
  it('csv in windows-1251 with `;` and a decimal comma, byte for byte', async () => {
    const meta = profileMeta(profileItems, profileSample);
    const expected = iconv.encode(
      'Артикул;Наименование;Цена;Цвет;Выгружать\r\n' +
        'A-100;Смартфон «Галактика» 128 ГБ;19990,00;чёрный;да\r\n' +
        'A-108;"Fridge; 300 L";1234567,89;;да\r\n' +
        'A-109;Чехол ? для телефона;0,50;Gr?n;да\r\n' +
        'B-1;"Say ""hi"", €5";10,00;;да\r\n',
      'windows-1251',
    );
    const output = await renderToBuffer(csvWriter, profileItems, meta);
    assert.deepEqual(output, expected);
    // The emoji (two UTF-16 units) is one `?`, and `€` is windows-1251's 0x88.
    assert.ok(output.includes(Buffer.from([0xd7, 0xe5, 0xf5, 0xee, 0xeb, 0x20, 0x3f, 0x20])));
    assert.ok(output.includes(Buffer.from([0x88, 0x35])));
    assert.equal(csvWriter.contentType(meta), 'text/csv; charset=windows-1251');
  });

  it('tsv always separates with a tab, keeping the other options', async () => {
    const meta = profileMeta(profileItems, profileSample);
    const expected = iconv.encode(
      'Артикул\tНаименование\tЦена\tЦвет\tВыгружать\r\n' +
        'A-100\tСмартфон «Галактика» 128 ГБ\t19990,00\tчёрный\tда\r\n' +
        'A-108\tFridge; 300 L\t1234567,89\t\tда\r\n' +
        'A-109\tЧехол ? для телефона\t0,50\tGr?n\tда\r\n' +
        'B-1\t"Say ""hi"", €5"\t10,00\t\tда\r\n',
      'windows-1251',
    );
    assert.deepEqual(await renderToBuffer(tsvWriter, profileItems, meta), expected);
    assert.equal(tsvWriter.contentType(meta), 'text/tab-separated-values; charset=windows-1251');
  });

  it('header off', async () => {
    const meta = profileMeta(profileItems.slice(0, 1), { ...profileSample, header: false, encoding: 'utf-8' });
    assert.equal((await renderToBuffer(csvWriter, profileItems.slice(0, 1), meta)).toString('utf8'), 'A-100;Смартфон «Галактика» 128 ГБ;19990,00;чёрный;да\r\n');
  });

  it('a UTF-8 BOM when asked, and none in windows-1251', async () => {
    const items = profileItems.slice(1, 2);
    const utf8 = await renderToBuffer(csvWriter, items, profileMeta(items, { ...profileSample, bom: true, encoding: 'utf-8' }));
    assert.deepEqual(utf8.subarray(0, 3), Buffer.from([0xef, 0xbb, 0xbf]));
    assert.equal(utf8.subarray(3).toString('utf8'), 'Артикул;Наименование;Цена;Цвет;Выгружать\r\nA-108;"Fridge; 300 L";1234567,89;;да\r\n');
    assert.equal(csvWriter.contentType(profileMeta(items, { ...profileSample, encoding: 'utf-8' })), 'text/csv; charset=utf-8');

    const cp1251 = await renderToBuffer(csvWriter, items, profileMeta(items, { ...profileSample, bom: true }));
    assert.deepEqual(cp1251.subarray(0, 7), iconv.encode('Артикул', 'windows-1251'));
  });

  it('a decimal comma in a comma-separated file is quoted', async () => {
    const profile: ProfileDefinition = {
      ...profileSample,
      columns: [{ field: 'offer_id', title: 'id' }, { field: 'price', title: 'price' }, { field: 'available', title: 'on' }, { field: 'quantity', title: 'qty' }],
      delimiter: ',',
      encoding: 'utf-8',
    };
    const items = [normalizeItem({ offer_id: 'a', name: 'n', price: 1.5, quantity: 3 }), normalizeItem({ offer_id: 'b', name: 'n', price: 2 })];
    const text = (await renderToBuffer(csvWriter, items, profileMeta(items, profile))).toString('utf8');
    assert.equal(text, 'id,price,on,qty\r\na,"1,50",1,3\r\nb,"2,00",1,\r\n');
  });
});

describe('streaming', () => {
  const ROWS = 100_000;
  const items = Array.from({ length: ROWS }, (_, i) => normalizeItem({ offer_id: `SKU-${i}`, name: `Товар №${i}`, price: i }));
  const expectedText = (delimiter: string, decimal: string) =>
    ['offer_id', 'name', 'price'].join(delimiter) +
    '\r\n' +
    items.map((item, i) => `SKU-${i}${delimiter}Товар №${i}${delimiter}${i}${decimal}00\r\n`).join('');

  /** Batches of 1000 that count how many were pulled. */
  function countingBatches() {
    const counter = { pulled: 0 };
    async function* batches() {
      for (let start = 0; start < items.length; start += 1000) {
        counter.pulled++;
        yield items.slice(start, start + 1000);
      }
    }
    return { counter, batches: batches() };
  }

  it('yields many bounded chunks, the first before the source is drained, and loses no byte at a boundary', async () => {
    const { counter, batches } = countingBatches();
    const meta = buildMeta(items, { columns: profileColumns([{ field: 'offer_id', title: 'offer_id' }, { field: 'name', title: 'name' }, { field: 'price', title: 'price' }]) });
    const chunks: Uint8Array[] = [];
    let pulledAtFirstChunk = -1;
    for await (const chunk of csvWriter.render(batches, meta)) {
      if (chunks.length === 0) pulledAtFirstChunk = counter.pulled;
      chunks.push(chunk);
    }
    assert.ok(pulledAtFirstChunk > 0 && pulledAtFirstChunk < counter.pulled, `first chunk after ${pulledAtFirstChunk} of ${counter.pulled} batches`);
    assert.ok(chunks.length > 20, `${chunks.length} chunks`);
    chunks.forEach((chunk, i) => {
      assert.ok(chunk.byteLength <= MAX_CHUNK_BYTES, `chunk ${i}: ${chunk.byteLength} bytes`);
      if (i < chunks.length - 1) assert.ok(chunk.byteLength >= CHUNK_BYTES, `chunk ${i}: ${chunk.byteLength} bytes`);
    });
    assert.equal(Buffer.concat(chunks).toString('utf8'), expectedText(',', '.'));
  });

  it('windows-1251 chunks the same way', async () => {
    const meta = buildMeta(items, {
      columns: profileColumns([{ field: 'offer_id', title: 'offer_id' }, { field: 'name', title: 'name' }, { field: 'price', title: 'price' }]),
      tabular: { delimiter: ';', decimal_separator: ',', encoding: 'windows-1251' },
    });
    const chunks = await collectChunks(csvWriter.render(countingBatches().batches, meta));
    assert.ok(chunks.length > 10);
    assert.ok(chunks.every((chunk) => chunk.byteLength <= MAX_CHUNK_BYTES));
    assert.deepEqual(Buffer.concat(chunks), iconv.encode(expectedText(';', ','), 'windows-1251'));
  });

  it('a row larger than a chunk is written whole, between bounded chunks', async () => {
    const huge = 'Ж'.repeat(3 * MAX_CHUNK_BYTES);
    const mixed = [...items.slice(0, 3000), normalizeItem({ offer_id: 'HUGE', name: huge, price: 1 }), ...items.slice(3000, 6000)];
    const chunks = await collectChunks(csvWriter.render((async function* () { yield mixed; })(), buildMeta(mixed)));
    const oversized = chunks.filter((chunk) => chunk.byteLength > MAX_CHUNK_BYTES);
    assert.equal(oversized.length, 1);
    const records = parse(Buffer.concat(chunks).toString('utf8'), { record_delimiter: '\r\n' }) as string[][];
    assert.equal(records.length, 1 + mixed.length);
    assert.equal(records[3001][1], huge);
    assert.equal(records[6001][0], 'SKU-5999');
  });
});
