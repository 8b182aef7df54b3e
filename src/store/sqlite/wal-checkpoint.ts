/**
 * The WAL pages past which a commit of the store's writing threads runs a checkpoint (SQLite's
 * `wal_autocheckpoint`; its default is 1,000 pages, 4 MiB). A checkpoint copies every page the
 * WAL holds into the file and syncs both, so a page rewritten by several commits between two
 * checkpoints is copied once: 1M lean items published ~10 % faster (the append thread;
 * bench/RESULTS.md, "2026-11-26: publication commits"), and a delivery ledger batch of 5,000
 * stores' answers, which rewrites one leaf of the ledger's index a store, cost its write thread
 * ~7.2 µs a row against ~8.9 (bench/RESULTS.md, "2026-12-07, night").
 */
export const WAL_AUTOCHECKPOINT_PAGES = 16_000;
