import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config/config.js';
import { demoAddresses, setUpDemo } from '../domain/demo.js';
import { importKey, issueKey, listKeys, revokeKey, rotateKey, updateKeyAccess, type KeyAccessInput } from '../domain/keys.js';
import { describeScopes, parseOverlap } from '../domain/key-scopes.js';
import { putProfile } from '../domain/profiles.js';
import { sourceFormatOf } from '../domain/publication-source.js';
import { publishPriceList, readPublication } from '../domain/publishing.js';
import { sourceEncodingOf } from '../domain/text-decoding.js';
import { createStore } from '../domain/stores.js';
import { runDoctor } from './doctor.js';
import { AppError } from '../errors/app-error.js';
import type { Database } from '../store/types.js';
import { printChange, VERSION_COMMANDS, VERSION_USAGE } from './version-commands.js';
import { runWebhookCommand } from './webhook-commands.js';

export const USAGE = `Usage: price-export <command>

  serve                                              public API (+ internal API when ADMIN_TOKEN is set)
  migrate                                            create or upgrade the schema
  store create --id ID --name NAME [--currency RUB] [--url URL] [--company NAME]
  key issue --store ID [--label TEXT] [--addresses prices,summary,changes,me] [--formats csv,yml,…]
            [--profiles 3,7] [--expires 2027-01-31T00:00:00Z]
                                                     prints only the new key, once, on stdout
  key rotate KEY_ID [--overlap 7d]                   a new key with the same store, label and scopes, printed once;
                                                     the old one expires after the overlap (s, m, h, d; 0: at once)
  key update KEY_ID [--addresses …|all] [--formats …|all] [--profiles …|all] [--expires ISO|never]
  key import --store ID --value KEY [--label TEXT]   a predecessor's key, by value
  key list --store ID [--json]                       id, label, prefix, dates, expiry, scopes; never values
  key revoke KEY_ID
  profile put --store ID --file PROFILE.json [--id N]   creates, or replaces N; prints the id
  publish --store ID [--encoding windows-1251] [--force] [--json] FILE   .json, .ndjson or .csv (UTF-8 unless told); prints the version and its diff
${VERSION_USAGE}
  demo                                               a demo store, key, profile and price list
  webhook add --store ID --url URL [--events a,b]    prints the webhook's id and its signing secret, once
  webhook list --store ID [--json]                   id, url, events, failing; never secrets
  webhook remove WEBHOOK_ID
  doctor                                             checks configuration, database, Redis, cache directory; exit 1 if anything is wrong

Configuration comes from the environment (DATABASE_URL, …); see README.md.`;

export type Out = { stdout: (text: string) => void; stderr: (text: string) => void; isTTY: boolean };

/** Opens (without migrating) the configuration's database (DATABASE_URL, DATABASE_POOL_SIZE); the composition module picks the dialect. */
export type OpenDatabase = (config: Readonly<Config>) => Promise<Database>;

/**
 * Bad usage: an unknown command, a missing or unknown option. Exit 2 (README "Command line"),
 * and raised before any database is opened, so a mistyped command never creates or migrates one.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(`${message}\n\n${USAGE}`);
    this.name = 'UsageError';
  }
}

export const usageError = (message: string) => new UsageError(message);

export function options<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(args: string[], spec: T, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: spec, allowPositionals: positionals > 0, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  if (parsed.positionals.length > positionals) throw usageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return parsed as unknown as { values: { [K in keyof T]?: T[K]['type'] extends 'string' ? (T[K]['multiple'] extends true ? string[] : string) : boolean }; positionals: string[] };
}

export function required<T>(value: T | undefined, name: string): T {
  if (value === undefined || value === '') throw usageError(`--${name} is required`);
  return value;
}

export async function withOpenStore<T>(open: OpenDatabase, run: (db: Database) => Promise<T>): Promise<T> {
  const db = await open(loadConfig());
  try {
    await db.migrate();
    return await run(db);
  } finally {
    await db.close();
  }
}

const ACCESS_OPTIONS = { addresses: { type: 'string' }, formats: { type: 'string' }, profiles: { type: 'string' }, expires: { type: 'string' } } as const;

/**
 * The scope and expiry options of `key issue` and `key update`. With `lift` (update), that word
 * (`all`, `never` for --expires) lifts a limit; an option left out keeps what the key has.
 */
function accessInput(values: { addresses?: string; formats?: string; profiles?: string; expires?: string }, lift?: string): KeyAccessInput {
  const list = (value: string | undefined) => (lift !== undefined && value === lift ? null : value);
  return {
    addresses: list(values.addresses),
    formats: list(values.formats),
    profiles: list(values.profiles),
    expires: lift !== undefined && values.expires === 'never' ? null : values.expires,
  };
}

/**
 * Runs one command (everything but `serve`); returns the exit code. Every argument is checked
 * before `open` is called: bad usage throws {@link UsageError} with no database touched.
 */
export async function runCommand(argv: string[], out: Out, open: OpenDatabase): Promise<number> {
  const [command, sub, ...rest] = argv;
  const line = (text: string) => out.stdout(`${text}\n`);
  const withStore = <T>(run: (db: Database) => Promise<T>) => withOpenStore(open, run);
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'migrate':
      options(rest, {});
      await withStore(async () => undefined);
      line('schema is up to date');
      return 0;
    case 'store create': {
      const { values } = options(rest, { id: { type: 'string' }, name: { type: 'string' }, currency: { type: 'string' }, url: { type: 'string' }, company: { type: 'string' } });
      const input = { id: required(values.id, 'id'), name: required(values.name, 'name'), currency: values.currency, url: values.url ?? null, company: values.company ?? null };
      const created = await withStore((db) => createStore(db, input));
      line(created.id);
      return 0;
    }
    case 'key issue': {
      const { values } = options(rest, { store: { type: 'string' }, label: { type: 'string' }, ...ACCESS_OPTIONS });
      const storeId = required(values.store, 'store');
      const access = accessInput(values);
      const issued = await withStore((db) => issueKey(db, storeId, values.label ?? null, access));
      out.stderr(`key ${issued.record.id} issued for store ${issued.record.store_id}; it is shown once:\n`);
      line(issued.value);
      return 0;
    }
    case 'key import': {
      const { values } = options(rest, { store: { type: 'string' }, value: { type: 'string' }, label: { type: 'string' } });
      const storeId = required(values.store, 'store');
      const value = required(values.value, 'value');
      const record = await withStore((db) => importKey(db, storeId, value, values.label ?? null));
      line(record.id);
      return 0;
    }
    case 'key list': {
      const { values } = options(rest, { store: { type: 'string' }, json: { type: 'boolean' } });
      const storeId = required(values.store, 'store');
      const keys = await withStore((db) => listKeys(db, storeId));
      if (values.json) line(JSON.stringify(keys, null, 2));
      else {
        line(['id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at', 'expires_at', 'scopes'].join('\t'));
        for (const k of keys) {
          const dates = [k.created_at, k.last_used_at, k.revoked_at, k.expires_at].map((d) => d?.toISOString() ?? '');
          line([k.id, k.label ?? '', k.prefix, ...dates, describeScopes(k.scopes)].join('\t'));
        }
      }
      return 0;
    }
    case 'key revoke': {
      const { positionals } = options(rest, {}, 1);
      const keyId = required(positionals[0], 'KEY_ID (the first argument)');
      const record = await withStore((db) => revokeKey(db, keyId));
      line(`revoked ${record.id} at ${record.revoked_at!.toISOString()}`);
      return 0;
    }
    case 'key rotate': {
      const { values, positionals } = options(rest, { overlap: { type: 'string' } }, 1);
      const keyId = required(positionals[0], 'KEY_ID (the first argument)');
      try {
        parseOverlap(values.overlap);
      } catch (error) {
        throw usageError((error as Error).message);
      }
      const rotated = await withStore((db) => rotateKey(db, keyId, values.overlap ?? null));
      out.stderr(`key ${rotated.record.id} replaces ${rotated.old.id}, which expires at ${rotated.old.expires_at!.toISOString()}; the new key is shown once:\n`);
      line(rotated.value);
      return 0;
    }
    case 'key update': {
      const { values, positionals } = options(rest, ACCESS_OPTIONS, 1);
      const keyId = required(positionals[0], 'KEY_ID (the first argument)');
      const access = accessInput(values, 'all');
      const record = await withStore((db) => updateKeyAccess(db, keyId, access));
      line(`${record.id}\t${record.expires_at?.toISOString() ?? 'never expires'}\t${describeScopes(record.scopes)}`);
      return 0;
    }
    case 'profile put': {
      const { values } = options(rest, { store: { type: 'string' }, file: { type: 'string' }, id: { type: 'string' } });
      const storeId = required(values.store, 'store');
      const file = required(values.file, 'file');
      if (values.id !== undefined && !/^[1-9]\d{0,17}$/.test(values.id)) throw usageError('--id must be a positive integer');
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(file, 'utf8'));
      } catch (error) {
        throw new AppError('invalid_input', `cannot read ${file} as JSON: ${(error as Error).message}`);
      }
      const profile = await withStore((db) => putProfile(db, storeId, raw, values.id === undefined ? undefined : Number(values.id)));
      line(String(profile.id));
      return 0;
    }
    case 'webhook add':
    case 'webhook list':
    case 'webhook remove':
      return runWebhookCommand(sub, rest, { options, required, withStore, line });
    default:
      break;
  }
  if (command === 'doctor' && sub === undefined) return runDoctor({ env: process.env, print: line });
  if (command === 'publish') return publish([sub, ...rest].filter((a) => a !== undefined), out, open);
  const twoWords = VERSION_COMMANDS[`${command} ${sub ?? ''}`];
  if (twoWords) return twoWords(rest, out, open);
  if (command === 'versions' || command === 'rollback') return VERSION_COMMANDS[command]([sub, ...rest].filter((a) => a !== undefined), out, open);
  if (command === 'demo') {
    options([sub, ...rest].filter((a) => a !== undefined), {});
    const demo = await withStore((db) => setUpDemo(db));
    const config = loadConfig();
    const base = config.publicUrl ?? `http://localhost:${config.port}${config.basePath}`;
    out.stderr(`Demo store "${demo.storeId}", price list version ${demo.priceList.version}, profile ${demo.profile.id}. New demo key (shown once):\n`);
    line(demo.key);
    out.stderr(`\nTry:\n${demoAddresses(base, demo.key, demo.profile.id).map((l) => `  ${l}`).join('\n')}\n`);
    return 0;
  }
  throw usageError(command === undefined ? 'no command given' : `unknown command "${[command, sub].filter(Boolean).join(' ')}"`);
}

async function publish(args: string[], out: Out, open: OpenDatabase): Promise<number> {
  const { values, positionals } = options(args, { store: { type: 'string' }, encoding: { type: 'string' }, force: { type: 'boolean' }, json: { type: 'boolean' } }, 1);
  const storeId = required(values.store, 'store');
  const encoding = sourceEncodingOf(values.encoding ?? 'utf-8');
  if (encoding === null) throw usageError('--encoding must be utf-8 or windows-1251');
  const file = required(positionals[0], 'FILE (the last argument)');
  if (!existsSync(file)) throw new AppError('invalid_input', `no such file: ${file}`);
  const started = Date.now();
  const progress = out.isTTY ? (rows: number) => out.stderr(`\rread ${rows.toLocaleString('en-US')} rows…`) : undefined;
  const { maxFieldChars, maxLineBytes, historyVersions } = loadConfig();
  const published = await withOpenStore(open, (db) =>
    publishPriceList(db, storeId, readPublication(db, createReadStream(file), sourceFormatOf(file), { encoding, maxLineBytes }), {
      onProgress: progress, maxFieldChars, force: values.force, keepVersions: historyVersions,
    }),
  );
  if (out.isTTY) out.stderr(`\rpublished ${published.item_count.toLocaleString('en-US')} items in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  // The feed check's counts (CONTRACT §14): warnings on stderr, so stdout stays the version and its diff.
  for (const warning of published.warnings) {
    out.stderr(`warning: ${warning.format}: ${warning.count} item(s) break "${warning.description}" (${warning.rule}); see GET /api/export/check?format=${warning.format}\n`);
  }
  return printChange(out, storeId, published, published.state, 'publish', published.diff, values.json);
}

