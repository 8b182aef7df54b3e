/** One satisfiable byte range, both ends inclusive (RFC 9110 §14.1.2). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What a GET with `Range` gets, for a representation of `size` bytes whose strong ETag is `etag`:
 * - `null`: the whole representation, 200 — no Range, a Range we do not serve (not `bytes`,
 *   malformed, or several ranges: RFC 9110 §14.2 lets a server ignore it), or an If-Range that
 *   does not match (the client's partial copy is of other bytes).
 * - `'unsatisfiable'`: 416 with `Content-Range: bytes *\/size`.
 * - a range: 206 with that slice.
 *
 * If-Range with a date never matches: Last-Modified has one-second resolution and is shared by
 * every format, filter and coding of a list, so it is not a strong validator of one
 * representation's bytes (RFC 9110 §8.8.2.2, §13.1.5).
 */
export function selectRange(
  rangeHeader: string | undefined,
  ifRange: string | undefined,
  etag: string,
  size: number,
): ByteRange | 'unsatisfiable' | null {
  if (rangeHeader === undefined) return null;
  if (ifRange !== undefined && ifRange.trim() !== etag) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(rangeHeader);
  if (!match) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
