import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { demoAddresses, setUpDemo } from '../domain/demo.js';
import { importKey, issueKey, listKeys, revokeKey } from '../domain/keys.js';
import { putProfile } from '../domain/profiles.js';
import { readSource, sourceFormatOf } from '../domain/publication-source.js';
import { publishPriceList } from '../domain/publishing.js';
import { sourceEncodingOf } from '../domain/text-decoding.js';
import { createStore } from '../domain/stores.js';
import { runDoctor } from './doctor.js';
import { AppError } from '../errors/app-error.js';
import type { Database } from '../store/types.js';

export const USAGE = `Usage: price-export <command>

  serve                                              public API (+ internal API when ADMIN_TOKEN is set)
  migrate                                            create or upgrade the schema
  store create --id ID --name NAME [--currency RUB] [--url URL] [--company NAME]
  key issue --store ID [--label TEXT]                prints only the new key, once, on stdout
  key import --store ID --value KEY [--label TEXT]   a predecessor's key, by value
  key list --store ID [--json]                       id, label, prefix, dates; never values
  key revoke KEY_ID
  profile put --store ID --file PROFILE.json [--id N]   creates, or replaces N; prints the id
  publish --store ID [--encoding windows-1251] FILE  .json, .ndjson or .csv (UTF-8 unless told); prints the new version
  demo                                               a demo store, key, profile and price list
  doctor                                             checks configuration, database, Redis, cache directory; exit 1 if anything is wrong

Configuration comes from the environment (DATABASE_URL, …); see README.md.`;

type Out = { stdout: (text: string) => void; stderr: (text: string) => void; isTTY: boolean };

/** Opens (without migrating) the database at a DATABASE_URL; the composition module picks the dialect. */
export type OpenDatabase = (databaseUrl: string) => Promise<Database>;

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

const usageError = (message: string) => new UsageError(message);

function options<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], spec: T, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: spec, allowPositionals: positionals > 0, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  if (parsed.positionals.length > positionals) throw usageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return parsed as { values: { [K in keyof T]?: T[K]['type'] extends 'string' ? string : boolean }; positionals: string[] };
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined || value === '') throw usageError(`--${name} is required`);
  return value;
}

async function withOpenStore<T>(open: OpenDatabase, run: (db: Database) => Promise<T>): Promise<T> {
  const db = await open(loadConfig().databaseUrl);
  try {
    await db.migrate();
    return await run(db);
  } finally {
    await db.close();
  }
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
      const { values } = options(rest, { store: { type: 'string' }, label: { type: 'string' } });
      const storeId = required(values.store, 'store');
      const issued = await withStore((db) => issueKey(db, storeId, values.label ?? null));
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
        line(['id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'].join('\t'));
        for (const k of keys) {
          line([k.id, k.label ?? '', k.prefix, k.created_at.toISOString(), k.last_used_at?.toISOString() ?? '', k.revoked_at?.toISOString() ?? ''].join('\t'));
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
    default:
      break;
  }
  if (command === 'doctor' && sub === undefined) return runDoctor({ env: process.env, print: line });
  if (command === 'publish') return publish([sub, ...rest].filter((a) => a !== undefined), out, open);
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
  const { values, positionals } = options(args, { store: { type: 'string' }, encoding: { type: 'string' } }, 1);
  const storeId = required(values.store, 'store');
  const encoding = sourceEncodingOf(values.encoding ?? 'utf-8');
  if (encoding === null) throw usageError('--encoding must be utf-8 or windows-1251');
  const file = required(positionals[0], 'FILE (the last argument)');
  if (!existsSync(file)) throw new AppError('invalid_input', `no such file: ${file}`);
  const started = Date.now();
  const progress = out.isTTY ? (rows: number) => out.stderr(`\rread ${rows.toLocaleString('en-US')} rows…`) : undefined;
  const { maxFieldChars, maxLineBytes } = loadConfig();
  const list = await withOpenStore(open, (db) =>
    publishPriceList(db, storeId, readSource(createReadStream(file), sourceFormatOf(file), { encoding, maxLineBytes }), { onProgress: progress, maxFieldChars }),
  );
  if (out.isTTY) out.stderr(`\rpublished ${list.item_count.toLocaleString('en-US')} items in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  // The feed check's counts (CONTRACT §14): warnings on stderr, so stdout stays the version alone.
  for (const warning of list.warnings) {
    out.stderr(`warning: ${warning.format}: ${warning.count} item(s) break "${warning.description}" (${warning.rule}); see GET /api/export/check?format=${warning.format}\n`);
  }
  line(out, String(list.version));
  return 0;
}

const line = (out: Out, text: string) => out.stdout(`${text}\n`);
