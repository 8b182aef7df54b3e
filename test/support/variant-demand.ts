import { until } from './until.js';

/**
 * Waits until the variant_demand rows of `store` in the PostgreSQL database at `databaseUrl`
 * satisfy `enough`: an instance writes the variants it served within a second, and a test of
 * warming by another instance or process must not publish before they are there.
 */
export async function untilDemandWritten(databaseUrl: string, store: string, enough: (rows: number) => boolean, label = `${store}: demand written`): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await until(label, async () => enough((await client.query('SELECT count(*)::int AS n FROM variant_demand WHERE store_id = $1', [store])).rows[0].n));
  } finally {
    await client.end();
  }
}
