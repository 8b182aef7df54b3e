/*
 * The rows every figure of bench/run.ts uses: the same generated catalogue published into the
 * service's database and handed, already normalized, to the references (csv-stringify,
 * exceljs), so both sides write the same rows.
 */
import { issueKey } from '../src/domain/keys.js';
import { normalizeItem } from '../src/domain/item-validation.js';
import type { PriceItem } from '../src/model/price-item.js';
import type { SourceRow } from '../src/domain/publication-source.js';
import { publishPriceList } from '../src/domain/publishing.js';
import { createStore } from '../src/domain/stores.js';
import type { Database } from '../src/store/types.js';

const NAMES = ['Смартфон «Галактика» 128 ГБ', 'Case, black', 'Cable 2" USB-C', 'Холодильник; 300 л', 'Plain item', ' leading space'];
const CATEGORIES = Array.from({ length: 40 }, (_, i) => `Раздел ${i % 8} / Подраздел ${i}`);

/** `count` category paths of three levels: a large catalogue's tree (bench/figures/first-json-xml.ts --categories). */
export const categoryPaths = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `Каталог ${i % 12} / Раздел ${i % 97} / Группа ${i}`);

/** A catalogue-like row as the repricer publishes it: most fields filled some of the time; `categories` replaces the 40 default paths. */
export function rawItem(i: number, categories: readonly string[] = CATEGORIES): Record<string, unknown> {
  const price = 100 + ((i * 7919) % 9_999_900);
  const row: Record<string, unknown> = { offer_id: `SKU-${i}`, name: `${NAMES[i % NAMES.length]} ${i}`, price: (price / 100).toFixed(2) };
  if (i % 3 === 0) row.old_price = ((price + 1000) / 100).toFixed(2);
  if (i % 2 === 0) row.quantity = i % 50;
  if (i % 4 === 0) row.url = `https://demo-shop.example/p/${i}`;
  if (i % 2 === 1) row.category = categories[i % categories.length];
  if (i % 5 === 0) row.vendor = 'Vendor';
  if (i % 7 === 0) row.attributes = { цвет: 'чёрный', size: 'M' };
  return row;
}

const SHOPS = ['ozon.ru', 'wildberries.ru', 'market.yandex.ru', 'citilink.ru', 'dns-shop.ru', 'mvideo.ru'];
const ATTRIBUTES: [string, string[]][] = [
  ['Цвет', ['чёрный', 'белый', 'серебристый', 'синий']],
  ['Бренд', ['Галактика', 'Мороз', 'Северный ветер']],
  ['Гарантия', ['12 месяцев', '24 месяца']],
  ['Страна производства', ['Россия', 'Китай', 'Беларусь']],
  ['Материал', ['пластик', 'алюминий', 'сталь']],
  ['Вес, кг', ['0.2', '1.5', '12']],
];

/**
 * A full catalogue row (CONTRACT §2): a Cyrillic name and description, a three-level category,
 * 2–4 competitors and 4–6 attributes, ~900 bytes of JSON: the shape a repricer sends for a
 * marketplace catalogue, where rawItem is a lean one (~140 bytes).
 */
export function richItem(i: number): Record<string, unknown> {
  const row = rawItem(i);
  row.name = `${NAMES[i % NAMES.length]} «Модель ${i % 977}» ${i}`;
  row.category = `Электроника / ${CATEGORIES[i % CATEGORIES.length]} / Группа ${i % 13}`;
  row.vendor = ATTRIBUTES[1][1][i % 3];
  row.vendor_code = `ВК-${(i * 31) % 100_000}`;
  row.barcode = String(4_600_000_000_000 + i);
  row.url = `https://demo-shop.example/catalog/${i % 40}/p/${i}`;
  row.picture = `https://cdn.demo-shop.example/img/${i % 1000}/${i}.jpg`;
  if (i % 2 === 0) row.description = `Описание ${i}: доставка по России. "Кавычки", \\ и [скобки] {фигурные}.`;
  const price = Number(row.price);
  row.competitors = Array.from({ length: 2 + (i % 3) }, (_, k) => ({
    name: SHOPS[(i + k) % SHOPS.length],
    price: (price * (0.9 + k * 0.05)).toFixed(2),
    ...(k === 0 ? { url: `https://${SHOPS[i % SHOPS.length]}/product/${i * 7}` } : {}),
    available: (i + k) % 3 !== 0,
  }));
  row.attributes = Object.fromEntries(ATTRIBUTES.slice(0, 4 + (i % 3)).map(([name, values]) => [name, values[i % values.length]]));
  return row;
}

/** The same row as the store keeps it (what an export reads back). */
export function benchItem(i: number): PriceItem {
  const result = normalizeItem(rawItem(i), 'RUB');
  if (!result.item) throw new Error(`bench row ${i} is invalid: ${result.problems.join('; ')}`);
  return result.item;
}

/**
 * An item built directly, without validation: for the in-memory writer benchmarks
 * (bench/formats-csv.ts, bench/xlsx.ts), which generate millions as they go.
 */
export function syntheticItem(i: number): PriceItem {
  return {
    offer_id: `SKU-${i}`,
    name: `${NAMES[i % NAMES.length]} ${i}`,
    price: 100 + ((i * 7919) % 10_000_000),
    old_price: i % 3 === 0 ? 200 + ((i * 7919) % 10_000_000) : null,
    purchase_price: null,
    currency: 'RUB',
    available: i % 5 !== 0,
    quantity: i % 2 === 0 ? i % 100 : null,
    url: i % 4 === 0 ? `https://demo-shop.example/p/${i}` : null,
    picture: null,
    vendor: i % 2 ? 'Galaktika' : 'Frost',
    vendor_code: null,
    barcode: null,
    description: null,
    category: CATEGORIES[i % CATEGORIES.length],
    competitors: null,
    attributes: null,
  };
}

export function benchItems(count: number): PriceItem[] {
  return Array.from({ length: count }, (_, i) => benchItem(i));
}

async function* sourceRows(count: number, categories?: readonly string[]): AsyncGenerator<SourceRow> {
  for (let i = 0; i < count; i++) yield { position: `item ${i}`, raw: rawItem(i, categories), text: false };
}

/** Publishes the catalogue again as the store's new latest list (as the CLI would, from another process). */
export async function republish(db: Database, id: string, count: number): Promise<void> {
  await publishPriceList(db, id, sourceRows(count));
}

/** A store with a key and one published list of `count` items (their categories `categories`, or the default 40); returns the key. */
export async function benchStore(db: Database, id: string, count: number, categories?: readonly string[]): Promise<string> {
  await createStore(db, { id, name: `Bench ${id}`, url: `https://${id}.example` });
  const { value } = await issueKey(db, id, 'bench');
  await publishPriceList(db, id, sourceRows(count, categories));
  return value;
}
