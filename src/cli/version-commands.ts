import { loadConfig } from '../config/config.js';
import { getGuard, parseGuardChange, setGuard } from '../domain/guard.js';
import { discardHeld, listVersions, releaseHeld, releaseQuarantine, rollback, showQuarantine } from '../domain/versions.js';
import { formatMoney } from '../model/money.js';
import type { GuardPolicy, PublicationDiff } from '../model/versions.js';
import type { PriceListRecord } from '../store/types.js';
import { options, required, usageError, withOpenStore, type OpenDatabase, type Out } from './commands.js';
import { diffTable } from './diff-table.js';

/** The commands of CONTRACT §10, as USAGE lists them. */
export const VERSION_USAGE = `  versions --store ID [--json]                       retained and held versions, newest first
  rollback --store ID [--to N] [--json]              republishes version N (default: the one before latest) as a new version
  publication release --store ID --version N         a held version becomes the latest
  publication discard --store ID --version N         drops a held version
  quarantine show --store ID [--json]                the latest version's quarantined items
  quarantine release --store ID (--offer ID… | --all) [--json]   publishes their new values as a new version
  guard show --store ID                              the store's publication guard
  guard set --store ID [--max-removed-pct 20] [--max-price-drop-pct 50] [--max-price-rise-pct 100] [--min-items 1] [--zero-price hold|allow]`;

const line = (out: Out, text: string) => out.stdout(`${text}\n`);

const positiveInteger = (text: string | undefined, name: string): number | null => {
  if (text === undefined) return null;
  if (!/^[1-9]\d{0,8}$/.test(text)) throw usageError(`--${name} must be a positive integer`);
  return Number(text);
};

/**
 * Prints what a publication, release or rollback did: the JSON answer with --json, otherwise
 * the short table. A held publication exits 1 (refused for now), with a line on stderr saying so.
 */
export function printChange(out: Out, storeId: string, list: PriceListRecord, state: 'latest' | 'held', source: 'publish' | 'rollback', diff: PublicationDiff, json = false, restored: number | null = null): number {
  if (json) {
    line(out, JSON.stringify({
      version: list.version, state, source, ...(restored === null ? {} : { restored }), item_count: list.item_count, available_count: list.available_count,
      published_at: list.published_at.toISOString(), diff,
    }, null, 2));
  } else {
    line(out, diffTable(storeId, list.version, diff, restored));
  }
  if (state !== 'held') return 0;
  out.stderr(`price-export: version ${list.version} is held by the publication guard and not served; the latest stays\n`);
  return 1;
}

const keep = () => loadConfig().historyVersions;

const guardText = (policy: GuardPolicy) =>
  [`max_removed_pct     ${policy.max_removed_pct}`, `max_price_drop_pct  ${policy.max_price_drop_pct}`, `max_price_rise_pct  ${policy.max_price_rise_pct}`,
    `min_items           ${policy.min_items}`, `zero_price          ${policy.zero_price}`].join('\n');

type Command = (args: string[], out: Out, open: OpenDatabase) => Promise<number>;

export const VERSION_COMMANDS: Record<string, Command> = {
  versions: async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, json: { type: 'boolean' } });
    const versions = await withOpenStore(open, (store) => listVersions(store, required(values.store, 'store')));
    if (values.json) {
      line(out, JSON.stringify(versions, null, 2));
      return 0;
    }
    line(out, ['version', 'state', 'source', 'published_at', 'items', 'available', 'verdict', 'added', 'removed', 'price_up', 'price_down'].join('\t'));
    for (const v of versions) {
      const d = v.diff;
      line(out, [v.version, v.state, v.source, v.published_at.toISOString(), v.item_count, v.available_count, d?.verdict ?? '', d?.added ?? '', d?.removed ?? '', d?.price_up ?? '', d?.price_down ?? ''].join('\t'));
    }
    return 0;
  },

  rollback: async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } });
    const storeId = required(values.store, 'store');
    const to = positiveInteger(values.to, 'to');
    const { list, diff, restored } = await withOpenStore(open, (store) => rollback(store, storeId, to, keep()));
    return printChange(out, storeId, list, 'latest', 'rollback', diff, values.json, restored ?? null);
  },

  'publication release': async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, version: { type: 'string' }, json: { type: 'boolean' } });
    const storeId = required(values.store, 'store');
    const version = positiveInteger(required(values.version, 'version'), 'version')!;
    const { list, diff } = await withOpenStore(open, (store) => releaseHeld(store, storeId, version, keep()));
    return printChange(out, storeId, list, 'latest', 'publish', { ...diff, verdict: 'published' }, values.json);
  },

  'publication discard': async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, version: { type: 'string' } });
    const storeId = required(values.store, 'store');
    const version = positiveInteger(required(values.version, 'version'), 'version')!;
    await withOpenStore(open, (store) => discardHeld(store, storeId, version));
    line(out, `discarded version ${version}`);
    return 0;
  },

  'quarantine show': async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, json: { type: 'boolean' } });
    const { count, items } = await withOpenStore(open, (store) => showQuarantine(store, required(values.store, 'store')));
    const shown = items.map((i) => ({ offer_id: i.offer_id, check: i.check, served_price: i.old_price === null ? null : formatMoney(i.old_price), proposed_price: i.new_price === null ? null : formatMoney(i.new_price) }));
    if (values.json) {
      line(out, JSON.stringify({ count, items: shown }, null, 2));
      return 0;
    }
    line(out, `${count} quarantined item(s)${count > shown.length ? `, the first ${shown.length}:` : ''}`);
    for (const i of shown) line(out, [i.offer_id, i.check, i.served_price ?? '(left out)', '->', i.proposed_price].join('\t'));
    return 0;
  },

  'quarantine release': async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, offer: { type: 'string', multiple: true }, all: { type: 'boolean' }, json: { type: 'boolean' } });
    const storeId = required(values.store, 'store');
    const offers = values.offer ?? [];
    if ((offers.length > 0) === Boolean(values.all)) throw usageError('give either --offer ID (repeatable) or --all');
    const { list, diff } = await withOpenStore(open, (store) => releaseQuarantine(store, storeId, values.all ? null : offers, keep()));
    return printChange(out, storeId, list, 'latest', 'publish', diff, values.json);
  },

  'guard show': async (args, out, open) => {
    const { values } = options(args, { store: { type: 'string' }, json: { type: 'boolean' } });
    const policy = await withOpenStore(open, (store) => getGuard(store, required(values.store, 'store')));
    line(out, values.json ? JSON.stringify(policy, null, 2) : guardText(policy));
    return 0;
  },

  'guard set': async (args, out, open) => {
    const { values } = options(args, {
      store: { type: 'string' }, 'max-removed-pct': { type: 'string' }, 'max-price-drop-pct': { type: 'string' }, 'max-price-rise-pct': { type: 'string' },
      'min-items': { type: 'string' }, 'zero-price': { type: 'string' },
    });
    const storeId = required(values.store, 'store');
    const change = {
      max_removed_pct: values['max-removed-pct'], max_price_drop_pct: values['max-price-drop-pct'], max_price_rise_pct: values['max-price-rise-pct'],
      min_items: values['min-items'], zero_price: values['zero-price'],
    };
    if (Object.values(change).every((v) => v === undefined)) throw usageError('give at least one guard value to set');
    parseGuardChange(change); // refused before the database is opened
    const policy = await withOpenStore(open, (store) => setGuard(store, storeId, change));
    line(out, guardText(policy));
    return 0;
  },
};
