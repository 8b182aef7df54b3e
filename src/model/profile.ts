/** One column of an export profile: an item field (or `attributes.<key>`) or a constant. */
export interface ProfileColumn {
  field?: string;
  value?: string;
  title: string;
  key?: string;
}

/** What `profile put` takes (CONTRACT §2, contract/profile-sample.json). */
export interface ProfileDefinition {
  name: string;
  columns: ProfileColumn[];
  delimiter: string;
  decimal_separator: '.' | ',';
  header: boolean;
  bom: boolean;
  encoding: 'utf-8' | 'windows-1251';
  /**
   * csv/tsv/xlsx: a text value that starts with `=`, `+`, `-`, `@`, tab or CR gets a leading
   * `'` (CONTRACT §14, OWASP CSV injection). Absent (profiles stored before §14) means false.
   */
  escape_formulas?: boolean;
  /** CommerceML: the site's price type id (`ИдТипаЦены`); absent means {@link DEFAULT_PRICE_TYPE_ID}. */
  price_type_id?: string;
  /** CommerceML: the price type's name; absent means {@link DEFAULT_PRICE_TYPE_NAME}. */
  price_type_name?: string;
}

export interface Profile extends ProfileDefinition {
  id: number;
  store_id: string;
  revision: number;
  updated_at: Date;
}

/**
 * The delimiters a profile may choose (README, "Decisions…"): what CSV importers (1C, Excel,
 * CMS plug-ins) read. A digit, a letter, a space or a quote would make a file nothing parses.
 */
export const PROFILE_DELIMITERS: readonly string[] = Object.freeze([',', ';', '\t', '|']);

/** The tabular options a profile sets for csv/tsv; the legacy layout uses these defaults. */
export type TabularOptions = Pick<ProfileDefinition, 'delimiter' | 'decimal_separator' | 'header' | 'bom' | 'encoding' | 'escape_formulas'>;

export const DEFAULT_TABULAR_OPTIONS: TabularOptions = Object.freeze({
  delimiter: ',',
  decimal_separator: '.',
  header: true,
  bom: false,
  encoding: 'utf-8',
  escape_formulas: false,
});

/**
 * The CommerceML price type when a profile names none (CONTRACT §14): a fixed id, so a site
 * that mapped it once keeps its mapping across publications. At most 40 characters
 * (`ИдентификаторГлобальныйТип` of the 2.08 schema).
 */
export const DEFAULT_PRICE_TYPE_ID = '6f1b7c2e-3d4a-4e8b-9c5d-2a7e1f0b8c41';
export const DEFAULT_PRICE_TYPE_NAME = 'Розничная';

/** The 1C price type that CommerceML prices are given as. */
export interface PriceType {
  id: string;
  name: string;
}
