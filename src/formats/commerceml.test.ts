import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { CommerceMlOffersParser } from 'commerceml-parser';
import { XMLValidator } from 'fast-xml-parser';
import { profileColumns } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME } from '../model/profile.js';
import { catalogId, commercemlWriter } from './commerceml.js';
import { buildMeta, fixturePath, legacySample, plainItem, renderToBuffer, textXmlParser } from '../../test/support/format-items.js';

const SCHEMA = fileURLToPath(fixturePath('commerceml-2.08.xsd'));

/** Validates against the CommerceML 2.08 schema with xmllint (Debian libxml2-utils); throws its complaints. */
function assertSchemaValid(text: string): void {
  try {
    execFileSync('xmllint', ['--noout', '--schema', SCHEMA, '-'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? error);
    assert.fail(`not valid against CommerceML 2.08:\n${stderr.slice(0, 2000)}`);
  }
}

const xml = textXmlParser('Предложение');

interface XmlOffer {
  Ид: string;
  Наименование: string;
  БазоваяЕдиница: Record<string, string>;
  Цены: { Цена: Record<string, string> };
  Количество?: string;
}

async function render(items: PriceItem[], meta = buildMeta(items)) {
  const text = (await renderToBuffer(commercemlWriter, items, meta)).toString('utf8');
  assert.equal(XMLValidator.validate(text), true, 'well-formed');
  assertSchemaValid(text);
  const doc = xml.parse(text) as { КоммерческаяИнформация: Record<string, any> };
  const info = doc.КоммерческаяИнформация;
  const pack = info.ПакетПредложений;
  return { text, info, pack, offers: pack.Предложения.Предложение as XmlOffer[] };
}

/** Reads the file the way Node 1C integrations do: the commerceml-parser package, streaming. */
async function readWithCommerceMlParser(text: string) {
  const parser = new CommerceMlOffersParser();
  const found: { info?: any; pack?: any; offers: any[] } = { offers: [] };
  parser.onCommercialInformation((info) => void (found.info = info));
  parser.onOffersPackage((pack) => void (found.pack = pack));
  parser.onOffer((offer) => void found.offers.push(offer));
  await parser.parse(Readable.from([Buffer.from(text, 'utf8')]));
  return found;
}

const AWKWARD: PriceItem[] = [
  plainItem({ offer_id: 'Q-1', name: 'Кабель "Pro" 2 м & <адаптер>', price: 199050, currency: 'RUB', quantity: 5 }),
  plainItem({ offer_id: 'E-2', name: 'Чайник 🫖 «Утро»', price: 100, currency: 'USD', quantity: null }),
  plainItem({ offer_id: 'A&B/3', name: "Tom's crème brûlée", price: 0, currency: 'EUR', quantity: 0, available: false }),
];

describe('commerceml writer', () => {
  it('writes a 2.08 offers package that validates against the schema and reads back in both parsers', async () => {
    const { items, store } = legacySample();
    const meta = buildMeta(items, { store });
    const { text, info, pack, offers } = await render(items, meta);
    assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<КоммерческаяИнформация xmlns="urn:1C.ru:commerceml_2" ВерсияСхемы="2.08"'));
    assert.equal(info['@ДатаФормирования'], '2026-11-22T07:00:00+00:00');
    assert.equal(pack.ИдКаталога, catalogId(store.id));
    assert.equal(offers.length, items.length);
    assert.deepEqual(offers.map((o) => o.Наименование), items.map((item) => item.name));

    const read = await readWithCommerceMlParser(text);
    assert.equal(read.info.schemaVersion, '2.08');
    assert.equal(read.info.creationTimestamp.toISOString(), '2026-11-22T07:00:00.000Z');
    assert.deepEqual(read.pack.priceTypes, [{ id: DEFAULT_PRICE_TYPE_ID, name: DEFAULT_PRICE_TYPE_NAME, currency: store.currency }]);
    assert.equal(read.offers.length, items.length);
    for (const [index, offer] of read.offers.entries()) {
      const item = items[index];
      assert.equal(offer.id, item.offer_id);
      // commerceml-parser trims text and turns CR into LF (it re-parses the text it collected,
      // after the &#13; reference was resolved); the XML itself keeps both, as fast-xml-parser shows above.
      assert.equal(offer.name, item.name.trim().replaceAll('\r', '\n'));
      assert.deepEqual(offer.baseMeasurementUnit, { code: '796', fullName: 'Штука', acronym: 'PCE' });
      assert.equal(offer.prices.length, 1);
      const [price] = offer.prices;
      // Every Цена names the one declared price type.
      assert.equal(price.priceTypeId, DEFAULT_PRICE_TYPE_ID);
      assert.match(String(price.pricePerUnit), /^\d+\.\d{2}$/);
      assert.equal(String(price.pricePerUnit), `${Math.floor(item.price / 100)}.${String(item.price % 100).padStart(2, '0')}`);
      assert.equal(price.currency, item.currency);
      assert.equal(price.coefficient, '1');
      assert.equal(offer.quantity, item.quantity === null ? undefined : String(item.quantity));
    }
  });

  it('keeps quotes, ampersands, Cyrillic and emoji, and gives each price its own ISO currency', async () => {
    const { offers, pack } = await render(AWKWARD);
    assert.deepEqual(offers.map((o) => o.Наименование), AWKWARD.map((item) => item.name));
    assert.deepEqual(offers.map((o) => o.Ид), ['Q-1', 'E-2', 'A&B/3']);
    assert.deepEqual(offers.map((o) => o.Цены.Цена.Валюта), ['RUB', 'USD', 'EUR']);
    assert.deepEqual(offers.map((o) => o.Цены.Цена.ЦенаЗаЕдиницу), ['1990.50', '1.00', '0.00']);
    assert.deepEqual(offers.map((o) => o.Цены.Цена.Представление), ['1990.50 RUB за шт', '1.00 USD за шт', '0.00 EUR за шт']);
    // Количество only when known: 5, absent, 0.
    assert.deepEqual(offers.map((o) => o.Количество), ['5', undefined, '0']);
    assert.equal(pack.ТипыЦен.ТипЦены.Ид, DEFAULT_PRICE_TYPE_ID);
    const read = await readWithCommerceMlParser((await renderToBuffer(commercemlWriter, AWKWARD)).toString('utf8'));
    assert.deepEqual(read.offers.map((o) => o.name), AWKWARD.map((item) => item.name));
  });

  it('takes the price type from the profile, and Количество only when the profile names quantity', async () => {
    const items = [plainItem({ offer_id: 'P-1', quantity: 3 })];
    const priceType = { id: 'bd72d8f9-55bc-11d9-848a-00112f43529a', name: 'Оптовая' };
    const withoutQuantity = buildMeta(items, { columns: profileColumns([{ field: 'offer_id', title: 'id' }, { field: 'price', title: 'price' }]), priceType });
    const { pack, offers } = await render(items, withoutQuantity);
    const declared = pack.ТипыЦен.ТипЦены;
    assert.deepEqual([declared.Ид, declared.Наименование, declared.Валюта], [priceType.id, 'Оптовая', 'RUB']);
    assert.equal(offers[0].Цены.Цена.ИдТипаЦены, priceType.id);
    assert.equal(offers[0].Количество, undefined);
    const withQuantity = buildMeta(items, { columns: profileColumns([{ field: 'quantity', title: 'qty' }]), priceType });
    assert.equal((await render(items, withQuantity)).offers[0].Количество, '3');
  });

  it('stays valid for a long store id and store name, and cuts an item name to the schema’s 255 characters', async () => {
    const store = { id: 'a'.repeat(64), name: 'Магазин '.repeat(40), currency: 'RUB', url: null, company: null };
    const long = plainItem({ name: 'Я'.repeat(300) });
    const { pack, offers } = await render([long], buildMeta([long], { store }));
    assert.equal(pack.ИдКаталога.length, 39);
    assert.equal(pack.ИдКаталога, catalogId(store.id));
    assert.equal(offers[0].Наименование, 'Я'.repeat(255));
  });

  it('is caught by the schema when it breaks it (the validation can fail)', () => {
    assert.throws(() => assertSchemaValid('<?xml version="1.0"?><КоммерческаяИнформация xmlns="urn:1C.ru:commerceml_2" ВерсияСхемы="2.08" ДатаФормирования="2026-11-22T07:00:00"><ПакетПредложений/></КоммерческаяИнформация>'));
  });
});
