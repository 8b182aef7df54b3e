import type { SqlDialect } from '../../src/store/sql/dialect.js';

/** What `run` answers, and how many statements `dialect` ran for it (its `query` wrapped meanwhile). */
export async function queriesOf<T>(dialect: Pick<SqlDialect, 'query'>, run: () => Promise<T>): Promise<{ value: T; asked: number }> {
  const query = dialect.query.bind(dialect);
  let asked = 0;
  dialect.query = (q) => {
    asked++;
    return query(q);
  };
  try {
    return { value: await run(), asked };
  } finally {
    dialect.query = query;
  }
}
