/**
 * Test-only: `COPY … TO STDOUT (FORMAT binary)` of one text column, as PostgreSQL lays it out
 * (docs, "COPY", Binary Format), for the tests of src/store/postgres/copy-binary.ts and
 * copy-frames.ts.
 */

export const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The COPY's pieces in order: the header (with an extension), one row per value (null: NULL), the trailer. */
export function binaryCopyPieces(values: readonly (string | null)[], extension: Buffer = Buffer.alloc(0)): Buffer[] {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(extension.length, 4);
  const pieces = [Buffer.concat([SIGNATURE, header, extension])];
  for (const value of values) {
    const bytes = value === null ? null : Buffer.from(value, 'utf8');
    const row = Buffer.alloc(6);
    row.writeInt16BE(1, 0);
    row.writeInt32BE(bytes === null ? -1 : bytes.length, 2);
    pieces.push(bytes ? Buffer.concat([row, bytes]) : row);
  }
  pieces.push(Buffer.from([0xff, 0xff]));
  return pieces;
}
