/**
 * What the render cache's warmer needs of the database (issue #16, part 3): which variants of a
 * store's exports were asked for lately, and a feed of publications committed by any process.
 * Kept apart from types.ts so the storage seam's other repositories do not depend on it.
 */

/** A content coding the render cache keeps a copy in. */
export type DemandCoding = 'identity' | 'gzip' | 'br';

/** One variant of a store's export that a client asked for, and when it last did. */
export interface VariantDemand {
  storeId: string;
  endpoint: 'prices' | 'summary';
  /** The writer's format (`csv` for the legacy CSV; `xlsx` for the summary). */
  format: string;
  profileId: number | null;
  onlyAvailable: boolean;
  coding: DemandCoding;
  lastAskedAt: Date;
}

/** The `variant_demand` table: one row per variant and coding, shared by every instance. */
export interface VariantDemandRepository {
  /** Upserts the rows in one transaction; a row's last_asked_at only ever moves forward. */
  record(demands: readonly VariantDemand[]): Promise<void>;
  /** The store's variants last asked for at or after `since`, newest demand first. */
  hot(storeId: string, since: Date): Promise<VariantDemand[]>;
  /** Deletes the rows last asked for before `before`; returns how many went. */
  expire(before: Date): Promise<number>;
}

/** A store's latest list changed: a publication, committed. */
export interface Publication {
  /** Position in the publication log; grows with every publication. */
  seq: number;
  storeId: string;
  version: number;
}

/**
 * Publications committed after `start`, by any process (this one, the CLI, another instance),
 * told at a cost per publication, not per store: PostgreSQL `LISTEN/NOTIFY`, on SQLite the
 * WAL-index change signal and one indexed query of the publication log.
 */
export interface PublicationFeed {
  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void;
  /** Stops listening; idempotent. */
  close(): Promise<void>;
}

/** Rows of `variant_demand` store "no profile" as 0: profile ids start at 1 in both dialects, and a key column cannot be NULL. */
export const NO_PROFILE = 0;
