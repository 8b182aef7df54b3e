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
export type TabularOptions = Pick<ProfileDefinition, 'delimiter' | 'decimal_separator' | 'header' | 'bom' | 'encoding'>;

export const DEFAULT_TABULAR_OPTIONS: TabularOptions = Object.freeze({
  delimiter: ',',
  decimal_separator: '.',
  header: true,
  bom: false,
  encoding: 'utf-8',
});
