/**
 * Gathers what is asked during one turn of the event loop and hands it to `send` once, in the
 * turn's check phase (after the poll phase has read every ready socket), keyed so a repeat keeps
 * the latest value. Each ask answers that batch's result; what is asked once the batch has gone
 * makes the next one, so a batch never predates an ask it serves.
 */
export function turnBatch<K, V, R>(send: (batch: ReadonlyMap<K, V>) => Promise<R>): (key: K, value: V) => Promise<R> {
  let pending: { batch: Map<K, V>; sent: Promise<R> } | null = null;
  return (key, value) => {
    if (!pending) {
      const batch = new Map<K, V>();
      pending = {
        batch,
        sent: new Promise((resolve) => setImmediate(resolve)).then(() => {
          pending = null;
          return send(batch);
        }),
      };
    }
    pending.batch.set(key, value);
    return pending.sent;
  };
}
