/**
 * Spreadsheet formula injection (OWASP "CSV Injection"), CONTRACT §14: with a profile's
 * `escape_formulas`, a text value that a spreadsheet could take for a formula — one starting
 * with `=`, `+`, `-`, `@`, tab or CR — gets a leading `'`, which Excel and LibreOffice show as
 * text and do not evaluate. Only csv/tsv/xlsx text values; numbers and headers never.
 */
/** The first characters that make a text look like a formula (the stores' XLSX rows test them too). */
export const FORMULA_STARTS: readonly string[] = ['=', '+', '-', '@', '\t', '\r'];

export const escapeFormula = (text: string): string => (FORMULA_STARTS.includes(text.charAt(0)) ? `'${text}` : text);
