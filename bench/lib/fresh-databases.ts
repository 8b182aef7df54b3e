import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEmptyDatabase } from '../../test/multi-instance/processes.js';

/** A new, empty database: a SQLite file `name`.db in `dir`, or, given a PostgreSQL admin URL, a database of its own on that server; `drop` removes it. */
export async function freshDatabase(dir: string, name: string, pgAdminUrl: string | undefined): Promise<{ url: string; drop(): Promise<void> }> {
  if (pgAdminUrl) return createEmptyDatabase(pgAdminUrl);
  const path = join(dir, `${name}.db`);
  return {
    url: `sqlite:${path}`,
    drop: async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    },
  };
}

/** New, empty databases for a benchmark (freshDatabase); `dropAll` drops those at the end. */
export function freshDatabases(dir: string, pgAdminUrl: string | undefined): { url(name: string): Promise<string>; dropAll(): Promise<void> } {
  const drops: Array<() => Promise<void>> = [];
  return {
    async url(name) {
      const created = await freshDatabase(dir, name, pgAdminUrl);
      drops.push(created.drop);
      return created.url;
    },
    async dropAll() {
      for (const drop of drops.splice(0)) await drop();
    },
  };
}
