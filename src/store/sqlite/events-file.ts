import { closeSync, openSync, truncateSync, watch, type FSWatcher } from 'node:fs';

/**
 * A file beside a SQLite database (`<database>-events`) that our code touches once after each
 * commit other processes must hear of: a publication or another change of a store's latest
 * list, a webhook event queued (sql/dialect.ts's `announce`). Every process on the host that
 * watches it (inotify, through `fs.watch`) is told at once, so an idle instance need not poll.
 *
 * Why not a watch of the database's own files: every page a publication writes to the `-wal`
 * file is an event there, ~160,000 in a 300,000-item publication, which cost the publishing
 * process a third more CPU (bench/RESULTS.md, "2026-12-02, morning", "Why the watch was
 * undone"). Here a publication is one event.
 *
 * The touch follows the commit, so whatever a watcher reads when told is already there. A
 * touch can still be missed (a process killed between its commit and its touch, an edit by
 * hand, a filesystem that reports nothing), so each watcher keeps a slow check of its own.
 * An in-memory database has no file and no other process: its listeners are called directly.
 */
export class EventsFile {
  private readonly listeners = new Set<() => void>();
  private watcher: FSWatcher | null = null;
  /** False once watching failed (inotify's limit, a read-only folder): watchers then poll. */
  private watchable: boolean;

  constructor(private readonly path: string | null) {
    this.watchable = path !== null;
  }

  /** Tells every watcher; never throws (a lost announcement costs at most a watcher's slow check). */
  announce(): void {
    if (this.path === null) {
      for (const listener of [...this.listeners]) queueMicrotask(listener);
      return;
    }
    try {
      // Truncating the empty file is a change every watcher is told of, and needs only write
      // permission (setting its times needs ownership: the CLI may run as another user of the group).
      truncateSync(this.path, 0);
    } catch {
      // Removed meanwhile: made again, which watchers see as a rename and watch anew.
      this.create();
    }
  }

  /**
   * Calls `listener` after each announcement by any process (this one too); answers a function
   * that stops it, or null where nothing can be watched (the caller then polls as before).
   */
  subscribe(listener: () => void): (() => void) | null {
    if (this.path !== null && !this.watcher && !this.watch()) return null;
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private watch(): boolean {
    if (!this.watchable || this.path === null) return false;
    this.create();
    try {
      // Not persistent: a watch alone does not keep a process (the CLI, a test) running.
      this.watcher = watch(this.path, { persistent: false }, (event) => {
        // The file was removed or replaced: this watch is of an inode nobody touches any more.
        if (event === 'rename') this.rewatch();
        this.tell();
      });
      this.watcher.on('error', () => {
        this.rewatch();
        this.tell();
      });
      return true;
    } catch {
      this.watchable = false;
      return false;
    }
  }

  /** Watches the file anew (made again if it was removed); the caller tells, since anything may have happened meanwhile. */
  private rewatch(): void {
    this.close();
    if (this.listeners.size > 0) this.watch();
  }

  private tell(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private create(): void {
    if (this.path === null) return;
    try {
      closeSync(openSync(this.path, 'a'));
    } catch {
      // A read-only folder: announcing is impossible, and watching fails in watch().
    }
  }
}
