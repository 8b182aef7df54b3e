/*
 * What the domain hands its callers (http/, cli/): the stored records and the Database port the
 * use cases run over. They name these types through the domain and never import store/ (the
 * layering rule `http-not-to-store` in .dependency-cruiser.cjs); only the composition modules
 * open a database.
 */
export type { ApiKeyRecord, Database, KeyLookup, PriceListRecord, StoreRecord } from '../store/types.js';
