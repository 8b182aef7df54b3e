import { AppError } from '../errors/app-error.js';
import type { Database } from '../store/types.js';
import { isItemField } from '../model/price-item.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME, DEFAULT_TABULAR_OPTIONS, PROFILE_DELIMITERS, type Profile, type ProfileColumn, type ProfileDefinition } from '../model/profile.js';
import { textProblems } from '../model/text.js';
import { getStoreOrFail } from './stores.js';

/** Checks a profile file (contract/profile-sample.json) and fills the defaults; lists every problem. */
export function validateProfile(raw: unknown): ProfileDefinition {
  const problems: string[] = [];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new AppError('invalid_input', 'a profile must be a JSON object');
  const input = raw as Record<string, unknown>;
  if (typeof input.name !== 'string' || input.name.trim() === '') problems.push('name must be a non-empty string');
  else problems.push(...textProblems({ name: input.name }));

  const columns: ProfileColumn[] = [];
  if (!Array.isArray(input.columns) || input.columns.length === 0) problems.push('columns must be a non-empty list');
  else {
    input.columns.forEach((entry: unknown, index) => {
      const at = `columns[${index}]`;
      if (entry === null || typeof entry !== 'object') return void problems.push(`${at} must be an object`);
      const c = entry as Record<string, unknown>;
      const hasField = c.field !== undefined;
      if (hasField === (c.value !== undefined)) return void problems.push(`${at} needs exactly one of "field" or "value"`);
      if (hasField && (typeof c.field !== 'string' || !(isItemField(c.field) || /^attributes\.[^.].*$/.test(c.field)))) {
        return void problems.push(`${at}.field must be an item field (offer_id, name, price, …) or attributes.<key>`);
      }
      if (!hasField && typeof c.value !== 'string') return void problems.push(`${at}.value must be a string`);
      if (typeof c.title !== 'string' || c.title === '') return void problems.push(`${at}.title must be a non-empty string`);
      if (c.key !== undefined && (typeof c.key !== 'string' || c.key === '')) return void problems.push(`${at}.key must be a non-empty string`);
      const textFaults = textProblems({ [`${at}.field`]: c.field as string, [`${at}.value`]: c.value as string, [`${at}.title`]: c.title, [`${at}.key`]: c.key as string });
      if (textFaults.length > 0) return void problems.push(...textFaults);
      columns.push({
        ...(hasField ? { field: c.field as string } : { value: c.value as string }),
        title: c.title,
        ...(c.key !== undefined ? { key: c.key as string } : {}),
      });
    });
  }

  // JSON properties and XML elements are named by key: two columns with one key would collide.
  const keys = columns.map((c) => c.key ?? (c.field !== undefined ? c.field.replaceAll('.', '_') : c.title));
  const repeated = [...new Set(keys.filter((key, i) => keys.indexOf(key) !== i))];
  if (repeated.length > 0) problems.push(`column keys must be unique; repeated: ${repeated.map((k) => `"${k}"`).join(', ')} (set "key" on one of them)`);

  const delimiter = input.delimiter ?? DEFAULT_TABULAR_OPTIONS.delimiter;
  if (typeof delimiter !== 'string' || !PROFILE_DELIMITERS.includes(delimiter)) {
    problems.push('delimiter must be one of "," ";" "|" or a tab ("\\t")');
  }
  const decimal = input.decimal_separator ?? DEFAULT_TABULAR_OPTIONS.decimal_separator;
  if (decimal !== '.' && decimal !== ',') problems.push('decimal_separator must be "." or ","');
  const header = input.header ?? DEFAULT_TABULAR_OPTIONS.header;
  if (typeof header !== 'boolean') problems.push('header must be true or false');
  const bom = input.bom ?? DEFAULT_TABULAR_OPTIONS.bom;
  if (typeof bom !== 'boolean') problems.push('bom must be true or false');
  const encoding = typeof input.encoding === 'string' ? input.encoding.toLowerCase() : (input.encoding ?? DEFAULT_TABULAR_OPTIONS.encoding);
  if (encoding !== 'utf-8' && encoding !== 'windows-1251') problems.push('encoding must be "utf-8" or "windows-1251"');
  if (delimiter === decimal && delimiter === ',') problems.push('delimiter and decimal_separator cannot both be ","');
  const escapeFormulas = input.escape_formulas ?? DEFAULT_TABULAR_OPTIONS.escape_formulas;
  if (typeof escapeFormulas !== 'boolean') problems.push('escape_formulas must be true or false');
  // CommerceML 2.08 gives a price type id at most 40 characters and a name at most 255 (ИдентификаторГлобальныйТип, НаименованиеТип).
  const priceTypeId = input.price_type_id ?? DEFAULT_PRICE_TYPE_ID;
  if (typeof priceTypeId !== 'string' || priceTypeId.trim() === '' || [...priceTypeId].length > 40) problems.push('price_type_id must be a non-empty string of at most 40 characters');
  const priceTypeName = input.price_type_name ?? DEFAULT_PRICE_TYPE_NAME;
  if (typeof priceTypeName !== 'string' || priceTypeName.trim() === '' || [...priceTypeName].length > 255) problems.push('price_type_name must be a non-empty string of at most 255 characters');

  if (problems.length > 0) throw new AppError('invalid_input', problems.join('; '));
  return {
    name: (input.name as string).trim(),
    columns,
    delimiter: delimiter as string,
    decimal_separator: decimal as '.' | ',',
    header: header as boolean,
    bom: bom as boolean,
    encoding: encoding as ProfileDefinition['encoding'],
    escape_formulas: escapeFormulas as boolean,
    price_type_id: (priceTypeId as string).trim(),
    price_type_name: (priceTypeName as string).trim(),
  };
}

/** Creates a profile, or replaces profile `id` (which must be this store's). */
export async function putProfile(db: Database, storeId: string, raw: unknown, id?: number): Promise<Profile> {
  await getStoreOrFail(db, storeId);
  const definition = validateProfile(raw);
  const profile = await db.profiles.put(storeId, definition, id);
  if (!profile) throw new AppError('invalid_input', `profile ${id} does not exist or belongs to another store`);
  return profile;
}

/**
 * A store's profile for an export; another store's is answered exactly like a missing one.
 * An id beyond Number.MAX_SAFE_INTEGER was rounded on its way here (999999999999999999 arrives
 * as 1e18) and is never one we issued: it is looked up as id 0, which no profile has, so it
 * gets the same query and the same 404 as any unknown id, and the rounded number is not echoed.
 */
export async function getProfileForStore(db: Database, storeId: string, id: number): Promise<Profile> {
  const exact = Number.isSafeInteger(id) && id > 0;
  // By (store, id) in one query: another store's id misses in the database like an unknown one.
  const profile = await db.profiles.get(storeId, exact ? id : 0);
  if (!profile) throw new AppError('profile_not_found', exact ? `no export profile ${id} for this key` : 'no such export profile for this key');
  return profile;
}
