import { guardedIterable, rethrowStoreError } from '../driver-errors.js';
import type { SqlDialect } from './dialect.js';

/** The dialect with every database call's failures turned into store errors (driver-errors.ts). */
export function guardedDialect(d: SqlDialect): SqlDialect {
  const guarded = Object.create(d) as SqlDialect;
  return Object.assign(guarded, {
    query: (query) => d.query(query).catch(rethrowStoreError),
    transaction: (steps) => d.transaction(steps).catch(rethrowStoreError),
    migrate: () => d.migrate().catch(rethrowStoreError),
    appendItems: (draftId, items) => d.appendItems(draftId, items).catch(rethrowStoreError),
    readItems: (listId, options) => guardedIterable(d.readItems(listId, options)),
    renderRecords: (listId, spec, options) => guardedIterable(d.renderRecords(listId, spec, options)),
  } satisfies Partial<SqlDialect>);
}
