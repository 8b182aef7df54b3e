import { AppError } from '../errors/app-error.js';

export interface ExportParams {
  format: string | null;
  onlyAvailable: boolean;
  profileId: number | null;
}

const BOOLEANS: Record<string, boolean> = { true: true, '1': true, yes: true, false: false, '0': false, no: false };

/** A parameter given twice counts with its first value; an empty value counts as absent (CONTRACT §3). */
function first(query: Record<string, unknown>, name: string): string | null {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The query parameters of the export addresses. Checked by hand, after the key: the contract
 * orders the checks (405, 401, 400, 404), so schema validation before the handler would answer
 * 400 to a caller whose key is wrong. The route schemas still document every parameter.
 */
export function parseExportParams(query: unknown, allowedFormats: readonly string[]): ExportParams {
  const q = (query ?? {}) as Record<string, unknown>;
  const formatText = first(q, 'format');
  let format: string | null = null;
  if (formatText !== null) {
    const lower = formatText.toLowerCase();
    if (!allowedFormats.includes(lower)) {
      throw new AppError('invalid_parameter', `format must be one of ${allowedFormats.join(', ')} (any case)`);
    }
    format = lower;
  }

  const onlyText = first(q, 'only_available');
  let onlyAvailable = false;
  if (onlyText !== null) {
    const value = BOOLEANS[onlyText.toLowerCase()];
    if (value === undefined) throw new AppError('invalid_parameter', 'only_available must be true or false (also 1/0, yes/no, any case)');
    onlyAvailable = value;
  }

  const profileText = first(q, 'profile_id');
  let profileId: number | null = null;
  if (profileText !== null) {
    // Up to 18 digits stays below 2^63. Beyond 2^53 Number() rounds (…993 → …992), and every
    // rounded value is itself beyond Number.MAX_SAFE_INTEGER: the profile look-up refuses those
    // as unknown (404) instead of fetching the neighbour the rounding landed on.
    if (!/^\d{1,18}$/.test(profileText) || /^0+$/.test(profileText)) {
      throw new AppError('invalid_parameter', 'profile_id must be a positive integer of up to 18 digits');
    }
    profileId = Number(profileText);
  }
  return { format, onlyAvailable, profileId };
}
