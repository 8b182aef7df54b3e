import { loadConfig } from '../config/config.js';
import { addWebhook, listWebhooks, removeWebhook } from '../domain/webhooks.js';
import type { Database } from '../store/types.js';

type Spec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** What commands.ts lends: its argument parser, its database opener and its output. */
export interface CommandKit {
  options<T extends Spec>(args: string[], spec: T, positionals?: number): { values: { [K in keyof T]?: T[K]['type'] extends 'string' ? (T[K]['multiple'] extends true ? string[] : string) : boolean }; positionals: string[] };
  required<T>(value: T | undefined, name: string): T;
  withStore<T>(run: (db: Database) => Promise<T>): Promise<T>;
  line(text: string): void;
}

/** `price-export webhook add | list | remove` (CONTRACT §13). */
export async function runWebhookCommand(sub: string, rest: string[], kit: CommandKit): Promise<number> {
  const { options, required, withStore, line } = kit;
  if (sub === 'add') {
    const { values } = options(rest, { store: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } });
    const storeId = required(values.store, 'store');
    const url = required(values.url, 'url');
    const config = loadConfig();
    const added = await withStore((db) =>
      addWebhook(db, { storeId, url, events: values.events?.split(',') }, { allowHttp: config.webhookAllowHttp, allowPrivate: config.webhookAllowPrivate }),
    );
    // The secret is printed this once; receivers verify signatures with it.
    line(`id ${added.record.id}`);
    line(`secret ${added.secret}`);
    line(`events ${added.record.events.join(',')}`);
    return 0;
  }
  if (sub === 'list') {
    const { values } = options(rest, { store: { type: 'string' }, json: { type: 'boolean' } });
    const hooks = await withStore((db) => listWebhooks(db, required(values.store, 'store')));
    if (values.json) {
      line(JSON.stringify(hooks, null, 2));
      return 0;
    }
    line(['id', 'url', 'events', 'created_at', 'failing_since', 'last_error'].join('\t'));
    for (const h of hooks) {
      line([h.id, h.url, h.events.join(','), h.created_at.toISOString(), h.failing_since ? `FAILING since ${h.failing_since.toISOString()}` : '', h.last_error ?? ''].join('\t'));
    }
    return 0;
  }
  const { positionals } = options(rest, {}, 1);
  const id = required(positionals[0], 'WEBHOOK_ID (the first argument)');
  await withStore((db) => removeWebhook(db, id));
  line(`removed ${id}`);
  return 0;
}
