/**
 * The one style table every workbook carries, fixed up front so that a cell's style is a
 * constant index and no style bookkeeping happens per row.
 */

/** Indices into `cellXfs` below; a cell's `s` attribute. */
export const Style = {
  default: 0,
  header: 1,
  /** Money and other two-decimal amounts: built-in number format 2, `0.00`. */
  decimal: 2,
  /** Whole numbers: built-in number format 1, `0`. */
  integer: 3,
  /** A competitor's price below ours: red fill, `0.00`. */
  cheaper: 4,
  /** A competitor's price equal to ours: yellow fill, `0.00`. */
  equal: 5,
  /** A competitor's price above ours: green fill, `0.00`. */
  dearer: 6,
  /** A percentage already multiplied by 100 (`12.5` is 12.5 %): `0.00`, not Excel's `%` format, which would multiply again. */
  percent: 7,
  /** Bold text outside the header row (section titles). */
  bold: 8,
} as const;

export type StyleId = (typeof Style)[keyof typeof Style];

/** Fill colours of the matrix, ARGB; the light red/yellow/green Excel itself uses for "Bad", "Neutral", "Good". */
export const FILL_COLOURS = { cheaper: 'FFFFC7CE', equal: 'FFFFEB9C', dearer: 'FFC6EFCE' } as const;

const BUILTIN_INTEGER = 1;
const BUILTIN_TWO_DECIMALS = 2;

const font = (bold: boolean): string =>
  `<font>${bold ? '<b/>' : ''}<sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>`;
const solidFill = (argb: string): string =>
  `<fill><patternFill patternType="solid"><fgColor rgb="${argb}"/><bgColor indexed="64"/></patternFill></fill>`;
const xf = (numFmtId: number, fontId: number, fillId: number): string =>
  `<xf numFmtId="${numFmtId}" fontId="${fontId}" fillId="${fillId}" borderId="0" xfId="0"` +
  `${numFmtId ? ' applyNumberFormat="1"' : ''}${fontId ? ' applyFont="1"' : ''}${fillId ? ' applyFill="1"' : ''}/>`;

// Order matters: the position of each <xf> is its Style index. Fills 0 and 1 are the two
// that Excel reserves (none, gray125); ours start at 2.
const CELL_XFS = [
  xf(0, 0, 0), // default
  xf(0, 1, 0), // header
  xf(BUILTIN_TWO_DECIMALS, 0, 0), // decimal
  xf(BUILTIN_INTEGER, 0, 0), // integer
  xf(BUILTIN_TWO_DECIMALS, 0, 2), // cheaper
  xf(BUILTIN_TWO_DECIMALS, 0, 3), // equal
  xf(BUILTIN_TWO_DECIMALS, 0, 4), // dearer
  xf(BUILTIN_TWO_DECIMALS, 0, 0), // percent
  xf(0, 1, 0), // bold
];

export const STYLES_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  `<fonts count="2">${font(false)}${font(true)}</fonts>` +
  '<fills count="5"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>' +
  `${solidFill(FILL_COLOURS.cheaper)}${solidFill(FILL_COLOURS.equal)}${solidFill(FILL_COLOURS.dearer)}</fills>` +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  `<cellXfs count="${CELL_XFS.length}">${CELL_XFS.join('')}</cellXfs>` +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  '<dxfs count="0"/><tableStyles count="0"/>' +
  '</styleSheet>';
