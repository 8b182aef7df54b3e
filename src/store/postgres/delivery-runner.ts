import type pg from 'pg';
import type { DeliverySql, Steps } from '../sql/delivery-sql.js';

/** `?` placeholders as `$1, $2, …`, worked out once per text. */
const numbered = new Map<string, string>();
export function numberPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

/** Runs the steps on a client already inside a transaction (the publication's commit). */
export async function runStepsOn<T>(client: pg.ClientBase, steps: Steps<T>): Promise<T> {
  let step = steps.next();
  while (!step.done) {
    const result = await client.query(numberPlaceholders(step.value.sql), step.value.params as unknown[]);
    step = steps.next({ rows: result.rows, changes: result.rowCount ?? 0 });
  }
  return step.value;
}

/** PostgreSQL under the delivery repositories' seam (sql/delivery-sql.ts). */
export function postgresDeliveryRunner(
  pool: pg.Pool,
  transaction: <T>(work: (client: pg.ClientBase) => Promise<T>) => Promise<T>,
): DeliverySql {
  return {
    name: 'postgres',
    query: async ({ sql, params }) => {
      const result = await pool.query(numberPlaceholders(sql), params as unknown[]);
      return { rows: result.rows, changes: result.rowCount ?? 0 };
    },
    transaction: (steps) => transaction((client) => runStepsOn(client, steps)),
    time: (value) => value as Date,
    timeParam: (at) => at,
  };
}
