import { guardedIterable, rethrowStoreError } from '../driver-errors.js';
import type { SqlDialect } from './dialect.js';

/** The dialect with every database call's failures turned into store errors (driver-errors.ts). */
export function guardedDialect(d: SqlDialect): SqlDialect {
  const guarded = Object.create(d) as SqlDialect;
  return Object.assign(guarded, {
    query: (query) => d.query(query).catch(rethrowStoreError),
    transaction: (steps) => d.transaction(steps).catch(rethrowStoreError),
    background: d.background ? (query) => d.background!(query).catch(rethrowStoreError) : undefined,
    migrate: () => d.migrate().catch(rethrowStoreError),
    items: {
      recordFormats: d.items.recordFormats,
      append: (draftId, items, rows) => d.items.append(draftId, items, rows).catch(rethrowStoreError),
      rowReader: d.items.rowReader ? (draftId) => d.items.rowReader!(draftId) : undefined,
      settle: d.items.settle ? (draftId) => d.items.settle!(draftId).catch(rethrowStoreError) : undefined,
      read: (listId, options) => guardedIterable(d.items.read(listId, options)),
      render: (listId, spec, options) => guardedIterable(d.items.render(listId, spec, options)),
      changeRecords: d.items.changeRecords
        ? (changesOf, specs, onlyAvailable) => {
          const records = d.items.changeRecords!(changesOf, specs, onlyAvailable);
          return records && { changed: guardedIterable(records.changed), removed: guardedIterable(records.removed) };
        }
        : undefined,
    },
  } satisfies Partial<SqlDialect>);
}
