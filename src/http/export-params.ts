import { AppError } from '../errors/app-error.js';

export interface ExportParams {
  format: string | null;
  onlyAvailable: boolean;
  profileId: number | null;
  /** `version=N` (addresses 2 and 4, CONTRACT §10); null: the latest. */
  version: number | null;
}

const BOOLEANS: Record<string, boolean> = { true: true, '1': true, yes: true, false: false, '0': false, no: false };

/** A parameter given twice counts with its first value; an empty value counts as absent (CONTRACT §3). */
export function first(query: Record<string, unknown>, name: string): string | null {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The query parameters of the export addresses. Checked by hand, after the key: the contract
 * orders the checks (405, 401, 400, 404), so schema validation before the handler would answer
 * 400 to a caller whose key is wrong. The route schemas still document every parameter.
 */
export function parseExportParams(query: unknown, allowedFormats: readonly string[], takesVersion = false): ExportParams {
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

  // Only addresses 2 and 4 take a version; elsewhere it is an unknown parameter, ignored.
  const versionText = takesVersion ? first(q, 'version') : null;
  let version: number | null = null;
  if (versionText !== null) {
    if (!/^[1-9]\d{0,8}$/.test(versionText)) throw new AppError('invalid_parameter', 'version must be a positive integer of up to 9 digits (a version /api/me lists)');
    version = Number(versionText);
  }
  return { format, onlyAvailable, profileId, version };
}

/**
 * `since` of the changes address (CONTRACT §11): required, a positive integer (a version the
 * caller was served). Beyond the latest is the domain's 400; older than retention its 410.
 */
export function parseSince(query: unknown): number {
  const text = first((query ?? {}) as Record<string, unknown>, 'since');
  if (text === null) throw new AppError('invalid_parameter', 'since is required: the version you hold (X-Price-List-Version of your last download)');
  if (!/^[1-9]\d{0,8}$/.test(text)) throw new AppError('invalid_parameter', 'since must be a positive integer of up to 9 digits (a version you were served)');
  return Number(text);
}
