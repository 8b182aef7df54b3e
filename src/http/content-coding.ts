import type { Readable } from 'node:stream';
import { createCompressor } from '../render-cache/compression.js';
import type { Coding } from '../render-cache/interface.js';

/** The codings we make, in our order of preference when the client likes them equally. */
const CODINGS = ['br', 'gzip'] as const;

/** `{ br: 0.5, gzip: 1, '*': … }` from Accept-Encoding; a malformed q counts as 0 (not acceptable). */
function qualities(header: string): Map<string, number> {
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name === '' || accepted.has(name)) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    accepted.set(name, Number.isFinite(value) && value >= 0 && value <= 1 ? value : 0);
  }
  return accepted;
}

/**
 * The coding of the answer (RFC 9110 §12.5.3): the acceptable one with the highest q-value
 * (`br;q=0.5, gzip;q=1` → gzip), br before gzip when equal; identity when neither is acceptable,
 * or when the client ranks identity itself above both.
 */
export function negotiateEncoding(header: string | undefined): Coding {
  if (!header) return 'identity';
  const accepted = qualities(header);
  const wildcard = accepted.get('*') ?? 0;
  let best: Coding = 'identity';
  let bestQ = 0;
  for (const coding of CODINGS) {
    const q = accepted.get(coding) ?? wildcard;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identityQ = accepted.get('identity');
  return identityQ !== undefined && identityQ > bestQ ? 'identity' : best;
}

/** The identity stream compressed on the fly, by the same compressor as the cache's copies (compression.ts). */
export function compressStream(source: Readable, coding: Exclude<Coding, 'identity'>): Readable {
  const compressor = createCompressor(coding);
  source.on('error', (error) => compressor.destroy(error));
  return source.pipe(compressor);
}
