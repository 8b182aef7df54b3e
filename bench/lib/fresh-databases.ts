import { join } from 'node:path';
import { createEmptyDatabase } from '../../test/multi-instance/processes.js';

/**
 * New, empty databases for a benchmark: a SQLite file in `dir`, or, given a PostgreSQL admin URL,
 * a database of its own on that server; `dropAll` drops those at the end.
 */
export function freshDatabases(dir: string, pgAdminUrl: string | undefined): { url(name: string): Promise<string>; dropAll(): Promise<void> } {
  const drops: Array<() => Promise<void>> = [];
  return {
    async url(name) {
      if (!pgAdminUrl) return `sqlite:${join(dir, `${name}.db`)}`;
      const created = await createEmptyDatabase(pgAdminUrl);
      drops.push(created.drop);
      return created.url;
    },
    async dropAll() {
      for (const drop of drops.splice(0)) await drop();
    },
  };
}
