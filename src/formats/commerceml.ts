import { createHash } from 'node:crypto';
import { formatMoney } from '../model/money.js';
import type { PriceItem } from '../model/price-item.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME } from '../model/profile.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, ExportWriter } from '../model/export-writer.js';
import { escapeText, XML_DECLARATION } from './xml.js';

/*
 * CommerceML 2.08 offers package, CONTRACT §14: the file a 1C/Bitrix site exchange reads as
 * offers.xml. `КоммерческаяИнформация` › `ПакетПредложений` › `ТипыЦен` (one price type) ›
 * `Предложения` › one `Предложение` per item. Element order and lengths follow the 2.08 schema
 * (test/fixtures/commerceml-2.08.xsd; every test output is validated against it).
 */

const NAMESPACE = 'urn:1C.ru:commerceml_2';
const SCHEMA_VERSION = '2.08';

/** Pieces (`796`, `Штука`, `PCE`): OKEI's code for pieces; 1C importers require a base unit. */
const BASE_UNIT = '<БазоваяЕдиница Код="796" НаименованиеПолное="Штука" МеждународноеСокращение="PCE">шт</БазоваяЕдиница>\n';
/** `Единица` of a price is a 3–4 character unit code in the schema (`ЕдиницаТип`): the same OKEI code. */
const PRICE_UNIT = '<Единица>796</Единица>\n<Коэффициент>1</Коэффициент>\n';

/** `ИдентификаторГлобальныйТип` and `НаименованиеТип` of the schema: 40 and 255 characters. */
const GLOBAL_ID_LENGTH = 40;
const NAME_LENGTH = 255;

/** XML Schema dateTime in UTC: `2026-11-22T07:00:00+00:00`. */
const schemaDateTime = (date: Date): string => `${date.toISOString().slice(0, 19)}+00:00`;

/** Cuts to at most `length` code points, so a schema limit is never broken by a long store name. */
const fit = (text: string, length: number): string => {
  const points = [...text];
  return points.length <= length ? text : points.slice(0, length).join('');
};

/**
 * The catalogue id the package names (`ИдКаталога`, required, ≤ 40 characters): the store id,
 * stable across publications. A store id of 40 or more characters (slugs reach 64) becomes
 * its first 22 characters and a digest of the whole, 39 in all, so the package's `Ид` (the
 * catalogue id and `#`, Bitrix's mark for "offers of that catalogue") still fits.
 */
export function catalogId(storeId: string): string {
  return storeId.length < GLOBAL_ID_LENGTH ? storeId : `${storeId.slice(0, 22)}-${createHash('sha256').update(storeId).digest('hex').slice(0, 16)}`;
}

const element = (name: string, text: string): string => `<${name}>${text}</${name}>\n`;

function packageHeader(meta: ExportMeta): string {
  const { store, priceList } = meta;
  const priceType = meta.priceType ?? { id: DEFAULT_PRICE_TYPE_ID, name: DEFAULT_PRICE_TYPE_NAME };
  const owner = fit(store.company ?? store.name, NAME_LENGTH);
  return (
    XML_DECLARATION +
    `<КоммерческаяИнформация xmlns="${NAMESPACE}" ВерсияСхемы="${SCHEMA_VERSION}" ДатаФормирования="${schemaDateTime(priceList.publishedAt)}">\n` +
    '<ПакетПредложений>\n' +
    element('Ид', `${catalogId(store.id)}#`) +
    element('Наименование', escapeText(fit(`${store.name}: price list ${priceList.version}`, NAME_LENGTH))) +
    element('ИдКаталога', catalogId(store.id)) +
    // The owner: a legal entity with its official name (the schema's choice needs one of the two).
    `<Владелец>\n${element('Ид', catalogId(store.id))}${element('Наименование', escapeText(owner))}${element('ОфициальноеНаименование', escapeText(owner))}</Владелец>\n` +
    '<ТипыЦен>\n<ТипЦены>\n' +
    element('Ид', escapeText(priceType.id)) +
    element('Наименование', escapeText(priceType.name)) +
    element('Валюта', escapeText(store.currency)) +
    '</ТипЦены>\n</ТипыЦен>\n<Предложения>\n'
  );
}

function offerLayout(meta: ExportMeta): TextLayout {
  const priceTypeId = element('ИдТипаЦены', escapeText((meta.priceType ?? { id: DEFAULT_PRICE_TYPE_ID }).id));
  // With a profile, Количество appears when the profile names quantity; without one, whenever known.
  const withQuantity = meta.legacy || meta.columns.some((column) => column.field === 'quantity');
  return {
    header: packageHeader(meta),
    row(item: PriceItem) {
      const price = formatMoney(item.price);
      const currency = escapeText(item.currency);
      let text = '<Предложение>\n';
      text += element('Ид', escapeText(item.offer_id));
      // The schema's names end at 255 characters; the feed check warns about longer ones.
      text += element('Наименование', escapeText(fit(item.name, NAME_LENGTH)));
      text += BASE_UNIT;
      text += '<Цены>\n<Цена>\n';
      // Представление is what 1C shows for the price: `1990.50 RUB за шт`.
      text += element('Представление', `${price} ${currency} за шт`);
      text += priceTypeId;
      text += element('ЦенаЗаЕдиницу', price);
      text += element('Валюта', currency);
      text += PRICE_UNIT;
      text += '</Цена>\n</Цены>\n';
      if (withQuantity && item.quantity !== null) text += element('Количество', String(item.quantity));
      return text + '</Предложение>\n';
    },
    footer: '</Предложения>\n</ПакетПредложений>\n</КоммерческаяИнформация>\n',
  };
}

/** CommerceML 2.08 offers package (CONTRACT §14), UTF-8. */
export const commercemlWriter: ExportWriter = {
  format: 'commerceml',
  extension: 'xml',
  contentType: () => 'application/xml; charset=utf-8',
  needs: { fields: 'columns', categories: false },
  render: (batches, meta) => renderText(batches, offerLayout(meta), UTF8_NO_BOM),
};
