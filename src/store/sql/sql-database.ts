import type { Database } from '../types.js';
import { csvRecordFramer, jsonItemFramer } from '../item-rows/native-item-rows.js';
import type { SqlDialect } from './dialect.js';
import { guardedDialect } from './guarded-dialect.js';
import { SqlKeyRepository } from './keys.js';
import { SqlPriceListRepository } from './price-lists.js';
import { SqlProfileRepository } from './profiles.js';
import { rowMappers } from './rows.js';
import { SqlStoreRepository } from './stores.js';
import { SqlVersionRepository } from './versions.js';
import { SqlChangesRepository } from './changes.js';
import { deliveryRepositories } from './delivery-repositories.js';
import { SqlVariantDemandRepository } from './variant-demand.js';

/** The one SQL implementation of the seam; a dialect supplies only what differs. */
export function sqlDatabase(dialect: SqlDialect): Database {
  const d = guardedDialect(dialect);
  const map = rowMappers(d);
  return {
    dialect: d.name,
    stores: new SqlStoreRepository(d, map),
    keys: new SqlKeyRepository(d, map),
    profiles: new SqlProfileRepository(d, map),
    priceLists: new SqlPriceListRepository(d, map),
    versions: new SqlVersionRepository(d, map),
    changes: new SqlChangesRepository(d),
    deliveries: deliveryRepositories(d),
    demand: new SqlVariantDemandRepository(d),
    publicationFeed: () => dialect.publicationFeed(),
    migrate: () => d.migrate(),
    ping: () => dialect.ping(),
    pendingMigrations: () => dialect.pendingMigrations(),
    journalMode: dialect.journalMode ? () => dialect.journalMode!() : undefined,
    nativeRecords: dialect.nativeRecords === undefined ? undefined : () => dialect.nativeRecords === true,
    nativeItemReader: () => (d.items.rowReader?.(0) ?? null) !== null,
    jsonItemFramer: () => jsonItemFramer(),
    csvRecordFramer: () => csvRecordFramer(),
    poolUse: dialect.poolUse ? () => dialect.poolUse!() : undefined,
    close: () => d.close(),
  };
}
