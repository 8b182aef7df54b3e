import type { RecordSpec } from '../../model/record-spec.js';
import type { PriceItem } from '../../model/price-item.js';
import type { CategoryRecord, LatestPriceList, PriceListRecord, PriceListRepository, PublicationDraft, ReadItemsOptions } from '../types.js';
import { canBuildRecords } from '../stored-fields.js';
import type { SqlDialect } from './dialect.js';
import { beginPublication, sweepStaleDrafts } from './publication.js';
import { EVERY_LATEST_LIST_SQL, LATEST_LIST_SQL, type RowMappers } from './rows.js';

export class SqlPriceListRepository implements PriceListRepository {
  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {}

  beginPublication(storeId: string): Promise<PublicationDraft> {
    return beginPublication(this.d, this.map, storeId);
  }

  async latest(storeId: string): Promise<PriceListRecord | null> {
    const { rows } = await this.d.query({ sql: LATEST_LIST_SQL, params: [storeId], request: true });
    return rows[0] ? this.map.priceList(rows[0]) : null;
  }

  async listLatest(): Promise<LatestPriceList[]> {
    const { rows } = await this.d.query({ sql: EVERY_LATEST_LIST_SQL, params: [], request: true });
    return rows.map((r) => ({ store: this.map.storeOfList(r), list: this.map.priceList(r) }));
  }

  async categories(storeId: string, ids: readonly number[]): Promise<CategoryRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.d.query({
      sql: `SELECT id, store_id, path, parent_id FROM categories WHERE store_id = ? AND ${this.d.anyId('id')} ORDER BY id`,
      params: [storeId, this.d.ids(ids)],
      request: true,
    });
    return rows.map(this.map.category);
  }

  readItems(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]> {
    return this.d.items.read(priceListId, options);
  }

  async exists(priceListId: number): Promise<boolean> {
    const { rows } = await this.d.query({ sql: 'SELECT 1 AS x FROM price_lists WHERE id = ?', params: [priceListId], request: true });
    return rows.length > 0;
  }

  sweepStaleDrafts(): Promise<number> {
    return sweepStaleDrafts(this.d);
  }

  renderRecords(priceListId: number, spec: RecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> | null {
    return this.d.items.recordFormats.has(spec.format) && canBuildRecords(spec) ? this.d.items.render(priceListId, spec, options) : null;
  }
}
