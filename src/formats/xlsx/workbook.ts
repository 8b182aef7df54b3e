/**
 * A streaming XLSX (SpreadsheetML, ECMA-376) workbook: the package parts around the sheets,
 * and the sheets themselves written one after another, each one's rows streamed as XML into
 * its zip entry.
 *
 * Hand-written rather than exceljs's streaming WorkbookWriter because that one manages about
 * 18k rows/s here and the aim is at least five times that; `bench/xlsx.ts` measures both.
 */
import { columnLetter, escapeXmlAttribute, escapeXmlText, SheetRows } from './sheet-xml.js';
import { STYLES_XML } from './styles.js';
import { zipStream } from './zip-stream.js';

/** One worksheet. */
export interface SheetSpec {
  /** 1–31 characters, none of `: \ / ? * [ ]` (Excel's rules for a sheet name). */
  name: string;
  /** Widths in characters of the first columns, left to right. */
  columnWidths?: readonly number[];
  /** Rows above and columns left of the split stay in view while scrolling. */
  freeze?: { rows: number; columns: number };
  /** Puts a filter on the header row over every row and column written. */
  autoFilter?: boolean;
  /**
   * Writes the sheet's rows into `rows`, yielding whenever what it wrote so far may go out:
   * when `rows.full` says so, and after each batch. Memory holds only what was written
   * between two yields. A yielded Uint8Array is sheet XML of its own (rows a store built,
   * counted with `rows.followedBy`), which goes out after what `rows` holds. Called once,
   * when the archive reaches this sheet.
   */
  write(rows: SheetRows): AsyncIterable<unknown>;
  /**
   * Called when the workbook is abandoned (the consumer stopped, or a part failed): releases
   * what `write` may hold open beyond its own run, such as a source shared with a later sheet.
   */
  close?(): Promise<void> | void;
}

export interface WorkbookOptions {
  /** Entry times in the archive (the price list's publication). */
  modified: Date;
  /** zlib level; 1 by default — see `DEFAULT_COMPRESSION_LEVEL`. */
  compressionLevel?: number;
}

/**
 * Level 1 deflates sheet XML about twice as fast as zlib's default 6 for a file ~20 % larger
 * (31.9 MB of XML for 100,000 rows → 4.1 MB against 3.4 MB). One entry deflates on one
 * thread-pool thread, so at level 6 deflate alone would cap the sheet near the target speed.
 */
export const DEFAULT_COMPRESSION_LEVEL = 1;

/** Bytes of sheet XML handed to the zip at a time. */
const CHUNK_BYTES = 256 * 1024;

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const SHEET_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml';
const INVALID_SHEET_NAME = /[:\\/?*[\]]/;

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
async function* once(text: () => string): AsyncGenerator<Uint8Array> {
  yield utf8(text());
}

/** `'It''s'!$A$1:$H$13`: a sheet name is always quoted in a reference, its quotes doubled. */
const absoluteRange = (sheet: string, columns: number, rows: number): string =>
  `'${sheet.replaceAll("'", "''")}'!$A$1:$${columnLetter(columns - 1)}$${rows}`;

function contentTypesXml(sheetCount: number): string {
  let overrides = '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>';
  overrides += '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>';
  for (let i = 1; i <= sheetCount; i++) overrides += `<Override PartName="/xl/worksheets/sheet${i}.xml" ContentType="${SHEET_CONTENT_TYPE}"/>`;
  return (
    `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    `<Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`
  );
}

const ROOT_RELS_XML =
  `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">` +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>' +
  '</Relationships>';

function workbookRelsXml(sheetCount: number): string {
  let rels = '';
  for (let i = 1; i <= sheetCount; i++) {
    rels += `<Relationship Id="rId${i}" Type="${REL_NS}/worksheet" Target="worksheets/sheet${i}.xml"/>`;
  }
  rels += `<Relationship Id="rId${sheetCount + 1}" Type="${REL_NS}/styles" Target="styles.xml"/>`;
  return `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">${rels}</Relationships>`;
}

/** `filters[i]` is sheet i's autofilter range, or null; known only once the sheets are written. */
function workbookXml(sheets: readonly SheetSpec[], filters: readonly (string | null)[]): string {
  let list = '';
  let names = '';
  sheets.forEach((sheet, i) => {
    list += `<sheet name="${escapeXmlAttribute(sheet.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`;
    // Excel and LibreOffice tie an autofilter to this hidden name; without it the filter
    // buttons show but sorting and filtering may ignore rows.
    const range = filters[i];
    if (range) names += `<definedName name="_xlnm._FilterDatabase" localSheetId="${i}" hidden="1">${escapeXmlText(range)}</definedName>`;
  });
  return (
    `${XML_DECLARATION}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}">` +
    `<bookViews><workbookView activeTab="0"/></bookViews><sheets>${list}</sheets>` +
    `${names ? `<definedNames>${names}</definedNames>` : ''}</workbook>`
  );
}

function sheetViewXml(freeze: SheetSpec['freeze'], first: boolean): string {
  const selected = first ? ' tabSelected="1"' : '';
  const rows = freeze?.rows ?? 0;
  const columns = freeze?.columns ?? 0;
  if (rows === 0 && columns === 0) return `<sheetViews><sheetView${selected} workbookViewId="0"/></sheetViews>`;
  const topLeft = `${columnLetter(columns)}${rows + 1}`;
  const pane = rows && columns ? 'bottomRight' : rows ? 'bottomLeft' : 'topRight';
  return (
    `<sheetViews><sheetView${selected} workbookViewId="0">` +
    `<pane${columns ? ` xSplit="${columns}"` : ''}${rows ? ` ySplit="${rows}"` : ''} topLeftCell="${topLeft}" activePane="${pane}" state="frozen"/>` +
    `<selection pane="${pane}" activeCell="${topLeft}" sqref="${topLeft}"/></sheetView></sheetViews>`
  );
}

function sheetHeadXml(sheet: SheetSpec, first: boolean): string {
  let cols = '';
  sheet.columnWidths?.forEach((width, i) => {
    cols += `<col min="${i + 1}" max="${i + 1}" width="${width}" customWidth="1"/>`;
  });
  // No <dimension>: it comes before the rows, whose extent is known only at the end, and it is optional.
  return (
    `${XML_DECLARATION}<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_NS}">${sheetViewXml(sheet.freeze, first)}` +
    `<sheetFormatPr defaultRowHeight="15"/>${cols ? `<cols>${cols}</cols>` : ''}<sheetData>`
  );
}

function checkSheetNames(sheets: readonly SheetSpec[]): void {
  const seen = new Set<string>();
  for (const { name } of sheets) {
    if (name.length === 0 || name.length > 31 || INVALID_SHEET_NAME.test(name) || name.startsWith("'") || name.endsWith("'")) {
      throw new Error(`invalid sheet name ${JSON.stringify(name)}`);
    }
    if (seen.has(name.toLowerCase())) throw new Error(`duplicate sheet name ${JSON.stringify(name)}`);
    seen.add(name.toLowerCase());
  }
}

/** The workbook as a stream of zip chunks. */
export function renderWorkbook(sheets: readonly SheetSpec[], options: WorkbookOptions): AsyncIterable<Uint8Array> {
  checkSheetNames(sheets);
  const filters: (string | null)[] = sheets.map(() => null);

  async function* sheetXml(index: number): AsyncGenerator<Uint8Array> {
    const sheet = sheets[index]!;
    yield utf8(sheetHeadXml(sheet, index === 0));
    const rows = new SheetRows();
    // The XML is encoded straight into large chunks: every chunk costs a trip through the
    // zip's five streams whatever its size, and 16k chunks cost a sixth of the main thread.
    let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let used = 0;
    /** Encodes what `rows` holds into the chunk; the chunk so far when it must go out first. */
    const encode = (): Buffer | null => {
      const xml = rows.take();
      const worst = xml.length * 3; // UTF-8 bytes of one UTF-16 unit, at most
      let full: Buffer | null = null;
      if (used + worst > chunk.length) {
        if (used > 0) full = chunk.subarray(0, used);
        chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, worst));
        used = 0;
      }
      used += chunk.write(xml, used);
      return full;
    };
    for await (const piece of sheet.write(rows)) {
      if (piece instanceof Uint8Array) {
        // Rows made elsewhere, as bytes (a store's, model/sheet-row.ts): what was written before goes first.
        const full = encode();
        if (full) yield full;
        if (used > 0) {
          yield chunk.subarray(0, used);
          chunk = Buffer.allocUnsafe(CHUNK_BYTES);
          used = 0;
        }
        yield piece;
        continue;
      }
      if (!rows.full) continue;
      const full = encode();
      if (full) yield full;
    }
    if (used > 0) yield chunk.subarray(0, used);
    let tail = `${rows.take()}</sheetData>`;
    if (sheet.autoFilter && rows.rowCount > 0 && rows.columnCount > 0) {
      tail += `<autoFilter ref="A1:${columnLetter(rows.columnCount - 1)}${rows.rowCount}"/>`;
      filters[index] = absoluteRange(sheet.name, rows.columnCount, rows.rowCount);
    }
    yield utf8(`${tail}</worksheet>`);
  }

  // workbook.xml names the filter ranges, so it follows the sheets; zip order means nothing to readers.
  const parts = zipStream(
    [
      { path: '[Content_Types].xml', content: () => once(() => contentTypesXml(sheets.length)) },
      { path: '_rels/.rels', content: () => once(() => ROOT_RELS_XML) },
      { path: 'xl/_rels/workbook.xml.rels', content: () => once(() => workbookRelsXml(sheets.length)) },
      { path: 'xl/styles.xml', content: () => once(() => STYLES_XML) },
      ...sheets.map((_, i) => ({ path: `xl/worksheets/sheet${i + 1}.xml`, content: () => sheetXml(i) })),
      { path: 'xl/workbook.xml', content: () => once(() => workbookXml(sheets, filters)) },
    ],
    { mtime: options.modified, compressionLevel: options.compressionLevel ?? DEFAULT_COMPRESSION_LEVEL },
  );
  return closingSheetsWhenAbandoned(parts, sheets);
}

async function* closingSheetsWhenAbandoned(parts: AsyncIterable<Buffer>, sheets: readonly SheetSpec[]): AsyncGenerator<Buffer> {
  let finished = false;
  try {
    yield* parts;
    finished = true;
  } finally {
    if (!finished) await Promise.all(sheets.map((sheet) => sheet.close?.()));
  }
}
