import { once } from 'node:events';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** Runs `sql`, a `COPY … FROM STDIN`, with `pieces` as its data, in order; answers the rows it wrote. */
export async function copyIn(client: pg.ClientBase, sql: string, pieces: readonly Buffer[]): Promise<number> {
  const stream = client.query(copyFrom(sql));
  const done = once(stream, 'finish');
  for (const piece of pieces.slice(0, -1)) stream.write(piece);
  stream.end(pieces[pieces.length - 1]);
  await done;
  return stream.rowCount;
}
