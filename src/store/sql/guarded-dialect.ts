import { guardedIterable, rethrowStoreError } from '../driver-errors.js';
import type { SqlDialect } from './dialect.js';

/** The dialect with every database call's failures turned into store errors (driver-errors.ts). */
export function guardedDialect(d: SqlDialect): SqlDialect {
  const guarded = Object.create(d) as SqlDialect;
  return Object.assign(guarded, {
    query: (query) => d.query(query).catch(rethrowStoreError),
    transaction: (steps) => d.transaction(steps).catch(rethrowStoreError),
    migrate: () => d.migrate().catch(rethrowStoreError),
    items: {
      append: (draftId, items) => d.items.append(draftId, items).catch(rethrowStoreError),
      read: (listId, options) => guardedIterable(d.items.read(listId, options)),
      render: (listId, spec, options) => guardedIterable(d.items.render(listId, spec, options)),
    },
  } satisfies Partial<SqlDialect>);
}
