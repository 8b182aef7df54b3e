import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEGACY_COLUMNS, profileColumns } from './columns.js';
import { FeedCheckTally, MAX_LISTED_OFFENDERS, warningsOf } from './feed-check.js';
import { feedRules, validGtin, XLSX_MAX_CELL_TEXT, XLSX_MAX_DATA_ROWS, type FeedCheckTarget } from './feed-rules.js';
import type { PriceItem } from './price-item.js';

const item = (overrides: Partial<PriceItem> = {}): PriceItem => ({
  offer_id: 'X-1', name: 'Item', price: 100, old_price: null, purchase_price: null, currency: 'RUB', available: true, quantity: null,
  url: 'https://s.example/x', picture: 'https://s.example/x.jpg', vendor: null, vendor_code: null, barcode: null, description: null,
  category: null, competitors: null, attributes: null, ...overrides,
});

/** The offending value of one rule for one item (null: it passes), through the tally as the check runs it. */
function verdict(target: FeedCheckTarget, rule: string, subject: PriceItem, store = { name: 'Shop' }, index = 0): string | null {
  const tally = new FeedCheckTally(feedRules(target, LEGACY_COLUMNS), store);
  for (let i = 0; i < index; i++) tally.add(item({ offer_id: `pad-${i}` }));
  tally.add(subject);
  const result = tally.result().rules.find((r) => r.rule === rule);
  assert.ok(result, `rule ${rule} exists for ${target}`);
  const mine = result.offenders.find((o) => o.offer_id === subject.offer_id || o.offer_id === null);
  return mine?.value ?? null;
}

describe('feed check rules at their boundaries (CONTRACT §14)', () => {
  it('yml: shop name 20 vs 21 characters (an emoji counts once)', () => {
    assert.equal(verdict('yml', 'shop_name_length', item(), { name: 'Ш'.repeat(19) + '🛒' }), null);
    assert.match(verdict('yml', 'shop_name_length', item(), { name: 'Ш'.repeat(21) })!, /^21 characters/);
  });

  it('yml and google: offer name / title 150 vs 151 characters', () => {
    for (const [target, rule] of [['yml', 'offer_name_length'], ['google', 'title_length']] as const) {
      assert.equal(verdict(target, rule, item({ name: 'я'.repeat(149) + '😀' })), null);
      assert.match(verdict(target, rule, item({ name: 'я'.repeat(151) }))!, /^151 characters: я{151}$/);
    }
  });

  it('yml: description 3000 vs 3001; google: 5000 vs 5001', () => {
    assert.equal(verdict('yml', 'description_length', item({ description: 'd'.repeat(3000) })), null);
    assert.ok(verdict('yml', 'description_length', item({ description: 'd'.repeat(3001) })));
    assert.equal(verdict('google', 'description_length', item({ description: 'd'.repeat(5000) })), null);
    assert.ok(verdict('google', 'description_length', item({ description: 'd'.repeat(5001) })));
  });

  it('yml: barcode of 8, 12 or 13 digits; 11 digits, letters or spaces offend; absent passes', () => {
    for (const ok of ['12345678', '123456789012', '4601234567893', null]) assert.equal(verdict('yml', 'barcode_digits', item({ barcode: ok })), null, String(ok));
    for (const bad of ['12345678901', '1234567', '12345678901234', '46012345678a', '4601234 67893']) assert.equal(verdict('yml', 'barcode_digits', item({ barcode: bad })), bad);
  });

  it('yml: discount 4 % offends, 5 % and 95 % pass, 96 % offends; no discount without oldprice above price', () => {
    assert.equal(verdict('yml', 'discount_range', item({ price: 9600, old_price: 10000 })), '4.00 % (100.00 → 96.00)');
    assert.equal(verdict('yml', 'discount_range', item({ price: 9500, old_price: 10000 })), null);
    assert.equal(verdict('yml', 'discount_range', item({ price: 500, old_price: 10000 })), null);
    assert.equal(verdict('yml', 'discount_range', item({ price: 400, old_price: 10000 })), '96.00 % (100.00 → 4.00)');
    // 4.99 %: just under the line, exactly from minor units.
    assert.ok(verdict('yml', 'discount_range', item({ price: 9501, old_price: 10000 })));
    assert.equal(verdict('yml', 'discount_range', item({ price: 10000, old_price: 10000 })), null);
    assert.equal(verdict('yml', 'discount_range', item({ price: 100, old_price: null })), null);
  });

  it('yml: offer id 80 vs 81 characters, and only letters, digits and . , / \\ ( ) [ ] - = _', () => {
    assert.equal(verdict('yml', 'offer_id', item({ offer_id: 'A'.repeat(80) })), null);
    assert.ok(verdict('yml', 'offer_id', item({ offer_id: 'A'.repeat(81) })));
    assert.equal(verdict('yml', 'offer_id', item({ offer_id: 'Арт.1,2/3\\4(5)[6]-7=8_9' })), null);
    for (const bad of ['A B', 'A&B', 'A#1', 'A😀']) assert.equal(verdict('yml', 'offer_id', item({ offer_id: bad })), bad);
  });

  it('yml: currency from shops.dtd', () => {
    for (const ok of ['RUB', 'USD', 'EUR', 'KZT', 'BYN', 'UAH']) assert.equal(verdict('yml', 'currency', item({ currency: ok })), null);
    assert.equal(verdict('yml', 'currency', item({ currency: 'GBP' })), 'GBP');
  });

  it('google: id 50 vs 51; link and image_link present', () => {
    assert.equal(verdict('google', 'id_length', item({ offer_id: 'i'.repeat(50) })), null);
    assert.ok(verdict('google', 'id_length', item({ offer_id: 'i'.repeat(51) })));
    assert.equal(verdict('google', 'link_present', item()), null);
    assert.equal(verdict('google', 'link_present', item({ url: null })), '(missing)');
    assert.equal(verdict('google', 'image_link_present', item({ picture: null })), '(missing)');
  });

  it('google: gtin check digit (GTIN-8/12/13/14); a wrong digit or length offends', () => {
    for (const ok of ['4601234567893', '96385074', '036000291452', '10012345678902']) assert.ok(validGtin(ok), ok);
    assert.equal(verdict('google', 'gtin_check_digit', item({ barcode: '4601234567893' })), null);
    assert.equal(verdict('google', 'gtin_check_digit', item({ barcode: '4601234567894' })), '4601234567894');
    assert.equal(verdict('google', 'gtin_check_digit', item({ barcode: '03600029145' })), '03600029145');
  });

  it('commerceml: Ид 80 vs 81, Наименование 255 vs 256 (the 2.08 schema)', () => {
    assert.equal(verdict('commerceml', 'id_length', item({ offer_id: 'c'.repeat(80) })), null);
    assert.ok(verdict('commerceml', 'id_length', item({ offer_id: 'c'.repeat(81) })));
    assert.equal(verdict('commerceml', 'name_length', item({ name: 'н'.repeat(255) })), null);
    assert.ok(verdict('commerceml', 'name_length', item({ name: 'н'.repeat(256) })));
  });

  it('xlsx: cell text 32,767 vs 32,768 in any text column of the export; row 1,048,575 vs 1,048,576 of data', () => {
    assert.equal(verdict('xlsx', 'cell_text_length', item({ name: 'x'.repeat(XLSX_MAX_CELL_TEXT) })), null);
    assert.match(verdict('xlsx', 'cell_text_length', item({ name: 'x'.repeat(XLSX_MAX_CELL_TEXT + 1) }))!, /^name: 32768 characters/);
    // With a profile, its columns are what the workbook holds: a long description matters only when it is one.
    const columns = profileColumns([{ field: 'description', title: 'Описание' }]);
    const tally = new FeedCheckTally(feedRules('xlsx', columns), { name: 'Shop' });
    tally.add(item({ description: 'd'.repeat(XLSX_MAX_CELL_TEXT + 1) }));
    assert.match(tally.result().rules[0].offenders[0].value, /^Описание: 32768/);
    const rows = feedRules('xlsx', LEGACY_COLUMNS).items.find((rule) => rule.id === 'sheet_rows')!;
    assert.equal(rows.test(item(), XLSX_MAX_DATA_ROWS - 1), null);
    assert.equal(rows.test(item(), XLSX_MAX_DATA_ROWS), 'row 1048577');
  });

  it('counts every offender and lists the first 20; warnings keep only rules with offenders', () => {
    const tally = new FeedCheckTally(feedRules('google', LEGACY_COLUMNS), { name: 'Shop' });
    for (let i = 0; i < 25; i++) tally.add(item({ offer_id: `N-${i}`, url: null }));
    const link = tally.result().rules.find((rule) => rule.rule === 'link_present')!;
    assert.equal(link.count, 25);
    assert.equal(link.offenders.length, MAX_LISTED_OFFENDERS);
    assert.equal(link.offenders[19].offer_id, 'N-19');
    assert.deepEqual(warningsOf([tally.result()]), [{ format: 'google', rule: 'link_present', description: 'g:link (url) present', count: 25 }]);
  });
});
