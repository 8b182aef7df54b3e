import type { Database, DemandCoding, PublicationFeed, VariantDemand, VariantDemandRepository } from '../store/types.js';
import type { ExportService, ExportVariant, ResolvedExport } from './exports.js';

/*
 * Which variants of a store's exports are hot (asked for in the last 7 days, on any instance), so
 * that a new publication can be rendered in each of them before a fetcher asks (issue #16, part 3).
 * A request costs a Map look-up: each instance remembers what it served and writes it to the
 * database in a batch, off the request path, at most once per variant every few minutes.
 */

/** A variant asked for within this is hot; rows older than it are deleted. */
export const HOT_FOR_MS = 7 * 24 * 60 * 60_000;
/** An instance writes a variant's last_asked_at at most once per this (the 7-day window does not need better). */
export const DEMAND_REFRESH_MS = 5 * 60_000;
/** Asks noted within this go to the database in one batch. */
export const DEMAND_FLUSH_DELAY_MS = 1_000;
/** How often an instance deletes the rows that have cooled (a store that stopped being fetched). */
export const DEMAND_EXPIRE_EVERY_MS = 60 * 60_000;
/** Variants remembered per instance; past it the memory starts again (the cost: a few early rewrites). */
const MAX_REMEMBERED = 100_000;

/** One hot variant of a store's latest list, resolved, and the codings it was asked in. */
export interface WarmPlan {
  resolved: ResolvedExport;
  /** `identity` first when asked for; gzip and br are copies the cache makes from it. */
  codings: DemandCoding[];
}

/** What a publication of one store is to be rendered in. */
export interface HotExports {
  /** The latest list's publication time (null: no list); the warmer's lag is measured from it. */
  publishedAt: Date | null;
  plans: WarmPlan[];
}

/** The demand side of warming: noting asks, and planning a publication's renders. */
export interface DemandService {
  /** A variant was served (or revalidated) in `coding`; a Map look-up, never a query. */
  note(variant: ExportVariant, coding: DemandCoding): void;
  /** Writes the asks noted and not yet written (tests call it; otherwise it runs on its own). */
  flush(): Promise<void>;
  /**
   * The store's hot variants of its latest list, newest demand first (none when nothing is hot
   * or published); with `servedHere`, only those this instance served since it started (WARM_SCOPE=instance).
   */
  hotExports(storeId: string, options?: { servedHere?: boolean }): Promise<HotExports>;
  /** A feed of publications by any process (store/warming-types.ts). */
  publicationFeed(): PublicationFeed;
  /** Writes what is pending and stops the timer. */
  close(): Promise<void>;
}

const variantId = (d: Omit<VariantDemand, 'lastAskedAt'>): string =>
  `${d.storeId}\u0000${d.endpoint}\u0000${d.format}\u0000${d.profileId ?? ''}\u0000${d.onlyAvailable ? 1 : 0}\u0000${d.coding}`;

/**
 * Remembers which variants this instance served and writes them in batches. `now` (epoch ms) is
 * the clock seam (tests move it by days).
 */
export class DemandRecorder {
  private readonly written = new Map<string, number>();
  /** Every variant (and coding) this instance served, whether or not its row was written. */
  private readonly served = new Set<string>();
  private pending = new Map<string, VariantDemand>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastExpiry = -Infinity;

  constructor(
    private readonly repository: VariantDemandRepository,
    private readonly now: () => number,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  note(variant: ExportVariant, coding: DemandCoding): void {
    // A changes answer names two versions: the next publication has no such variant to warm.
    if (variant.endpoint === 'changes') return;
    const demand = { storeId: variant.storeId, endpoint: variant.endpoint, format: variant.format, profileId: variant.profileId, onlyAvailable: variant.onlyAvailable, coding };
    const id = variantId(demand);
    if (!this.served.has(id)) {
      if (this.served.size >= MAX_REMEMBERED) this.served.clear();
      this.served.add(id);
    }
    const at = this.now();
    const last = this.written.get(id);
    if (last !== undefined && Math.abs(at - last) < DEMAND_REFRESH_MS) return;
    if (this.written.size >= MAX_REMEMBERED) this.written.clear();
    this.written.set(id, at);
    this.pending.set(id, { ...demand, lastAskedAt: new Date(at) });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, DEMAND_FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** One batch at a time; a failed batch is forgotten, so its variants are written on their next ask. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      this.pending = new Map();
      const now = this.now();
      try {
        if (batch.size > 0) await this.repository.record([...batch.values()]);
        if (now - this.lastExpiry >= DEMAND_EXPIRE_EVERY_MS) {
          this.lastExpiry = now;
          await this.repository.expire(new Date(now - HOT_FOR_MS));
        }
      } catch (error) {
        for (const id of batch.keys()) this.written.delete(id);
        this.onError(error);
      }
    });
    return this.flushing;
  }

  /** This instance served the variant in that coding (since it started, or since the memory last filled). */
  servedHere(demand: Omit<VariantDemand, 'lastAskedAt'>): boolean {
    return this.served.has(variantId(demand));
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}

/** The demand service over `db`, planning renders through the export use case. */
export function createDemandService({ db, exports, now = Date.now, onError }: {
  db: Database;
  exports: ExportService;
  /** Epoch milliseconds. */
  now?: () => number;
  onError?: (error: unknown) => void;
}): DemandService {
  const recorder = new DemandRecorder(db.demand, now, onError);

  async function hotExports(storeId: string, { servedHere = false }: { servedHere?: boolean } = {}): Promise<HotExports> {
    const hot = await db.demand.hot(storeId, new Date(now() - HOT_FOR_MS));
    const rows = servedHere ? hot.filter((row) => recorder.servedHere(row)) : hot;
    if (rows.length === 0) return { publishedAt: null, plans: [] };
    const [store, list] = await Promise.all([db.stores.get(storeId), db.priceLists.latest(storeId)]);
    if (!store || !list) return { publishedAt: null, plans: [] };
    // Rows come newest first; a variant's codings gather under its first (newest) row.
    const byVariant = new Map<string, { row: VariantDemand; codings: DemandCoding[] }>();
    for (const row of rows) {
      const id = variantId({ ...row, coding: 'identity' });
      const seen = byVariant.get(id);
      if (seen) seen.codings.push(row.coding);
      else byVariant.set(id, { row, codings: [row.coding] });
    }
    const plans: WarmPlan[] = [];
    for (const { row, codings } of byVariant.values()) {
      try {
        const resolved = await exports.resolve({ store, list }, { endpoint: row.endpoint, format: row.format, onlyAvailable: row.onlyAvailable, profileId: row.profileId });
        plans.push({ resolved, codings });
      } catch {
        // The profile was deleted or the format retired since it was asked for: nothing to render.
      }
    }
    return { publishedAt: list.published_at, plans };
  }

  return {
    note: (variant, coding) => recorder.note(variant, coding),
    flush: () => recorder.flush(),
    hotExports,
    publicationFeed: () => db.publicationFeed(),
    close: () => recorder.close(),
  };
}
