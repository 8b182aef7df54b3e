import type { SqlDialect } from './dialect.js';

export type { Query, QueryResult, Row, Steps } from './dialect.js';

/**
 * What the ledger, webhook and outbox repositories (ledger.ts, webhooks.ts, outbox.ts) need of
 * the dialect: statements, transactions as the statements they yield (so the outbox insert
 * runs inside the publication's own, publication.ts), background writes, time columns.
 */
export type DeliverySql = Pick<SqlDialect, 'name' | 'query' | 'transaction' | 'background' | 'time' | 'timeParam' | 'rowsQuery' | 'rowsParams' | 'rowsInStatement' | 'copyRows' | 'announce' | 'watchAnnouncements'>;

/** Booleans travel as 1/0: SQLite binds no booleans, and PostgreSQL reads '1'/'0' as a boolean. */
export const bit = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
