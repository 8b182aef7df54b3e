/*
 * A JSON array's items found in its bytes, by the very rules json-items.ts's scanner frames them
 * (scanValue): an item that begins with `{` or `[` ends where the brackets it opens outside
 * strings close again, `{` and `[` counted alike, `}` and `]` alike; a string runs from a quote
 * to the next quote no backslash escapes. Nothing is checked as JSON here: the reader
 * (item_rows.c read_item) or JSON.parse checks each item, as they do for the scanner's.
 *
 * Why: the framer checked each item as JSON (item_rows.c skip_value) before the reader read it
 * again, ~0.42 µs a rich item of 913 bytes where NDJSON's lines are found at ~0.04 µs, and a
 * JSON array publication ran at 0.91× NDJSON's speed (bench/RESULTS.md, "2026-11-27, before
 * midnight", and "2026-11-28"). Here 64 bytes at a time make four bit masks (quotes,
 * backslashes, openings, closings); the quotes no backslash escapes, XORed as a prefix, mark the
 * strings, and only the brackets outside them are visited. An escape only counts in a string:
 * a block with a backslash outside the strings so found is walked byte by byte instead, as the
 * scanner walks it.
 */
#include "item_rows.h"
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { BLOCK = 64 };

typedef struct {
  uint64_t quote, backslash, open, close;
} Marks;

#if defined(__SSE2__)
static uint64_t equal_bits(__m128i bytes, unsigned char c) {
  return (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8((char)c)));
}
#endif

/* The marks of the 64 bytes at p; fewer than 64 read as if spaces followed. */
static void marks_of(const unsigned char *p, size_t n, Marks *m) {
  unsigned char padded[BLOCK];
  if (n < BLOCK) {
    memset(padded, ' ', BLOCK);
    memcpy(padded, p, n);
    p = padded;
  }
  *m = (Marks){0, 0, 0, 0};
#if defined(__SSE2__)
  const __m128i case_bit = _mm_set1_epi8(0x20);
  for (int k = 0; k < BLOCK / 16; k++) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(p + 16 * k));
    /* `[` | 0x20 is `{` and `]` | 0x20 is `}`; no other byte becomes either. */
    __m128i folded = _mm_or_si128(bytes, case_bit);
    m->quote |= equal_bits(bytes, '"') << (16 * k);
    m->backslash |= equal_bits(bytes, '\\') << (16 * k);
    m->open |= equal_bits(folded, '{') << (16 * k);
    m->close |= equal_bits(folded, '}') << (16 * k);
  }
#else
  for (int i = 0; i < BLOCK; i++) {
    uint64_t bit = (uint64_t)1 << i;
    unsigned char c = p[i];
    if (c == '"') m->quote |= bit;
    else if (c == '\\') m->backslash |= bit;
    else if (c == '{' || c == '[') m->open |= bit;
    else if (c == '}' || c == ']') m->close |= bit;
  }
#endif
}

/* Bit i: an odd number of the bits 0..i are set (for quotes: byte i is in a string, its opening quote in, its closing one out). */
static uint64_t prefix_xor(uint64_t bits) {
  for (int shift = 1; shift < BLOCK; shift *= 2) bits ^= bits << shift;
  return bits;
}

typedef struct {
  int64_t depth;
  int in_string;
  int escaped; /* in a string, the byte before was an escaping backslash */
} Scan;

/* The block at p walked byte by byte (json-items.ts scanValue's loop): the index past the item's last byte, or -1. */
static int walk_block(Scan *s, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (s->in_string) {
      if (s->escaped) s->escaped = 0;
      else if (c == '\\') s->escaped = 1;
      else if (c == '"') s->in_string = 0;
    } else if (c == '"') {
      s->in_string = 1;
    } else if (c == '{' || c == '[') {
      s->depth++;
    } else if ((c == '}' || c == ']') && --s->depth == 0) {
      return (int)i + 1;
    }
  }
  return -1;
}

/*
 * The bytes the backslashes escape, as if every backslash were in a string (simdjson's
 * json_escape_scanner): an odd run escapes the byte after it, an even run nothing. `carried`:
 * the last block ended in an escaping backslash, so this one's first byte is escaped.
 */
static uint64_t escaped_bits(uint64_t backslash, int *carried) {
  const uint64_t odd = 0xaaaaaaaaaaaaaaaaULL;
  uint64_t first = (uint64_t)*carried;
  uint64_t escaping = backslash & ~first;
  /* Subtracting each run from the odd bits with its shadow turns the bytes after odd runs on. */
  uint64_t codes = (((escaping << 1) | odd) - escaping) ^ odd;
  *carried = (int)((codes & backslash) >> (BLOCK - 1));
  return codes ^ (backslash | first);
}

/*
 * The block by its marks: the index past the item's last byte, or -1; -2 (and `s` as it was)
 * when a backslash lies outside the strings the marks find, where it escapes nothing and the
 * block must be walked.
 */
static int mark_block(Scan *s, const Marks *m) {
  Scan before = *s;
  uint64_t quotes = m->quote;
  if (m->backslash != 0 || s->escaped) quotes &= ~escaped_bits(m->backslash, &s->escaped);
  uint64_t strings = prefix_xor(quotes) ^ (s->in_string ? ~(uint64_t)0 : 0);
  if (m->backslash & ~strings) {
    *s = before;
    return -2;
  }
  s->in_string = (int)(strings >> (BLOCK - 1));
  for (uint64_t brackets = (m->open | m->close) & ~strings; brackets != 0; brackets &= brackets - 1) {
    int i = __builtin_ctzll(brackets);
    if ((m->open >> i) & 1) s->depth++;
    else if (--s->depth == 0) return i + 1;
  }
  return -1;
}

/* The end of the item that opens at p with `{` or `[`; NULL when it runs past `end`. */
static const unsigned char *item_end(const unsigned char *p, const unsigned char *end) {
  Scan s = {0, 0, 0};
  for (; p < end; p += BLOCK) {
    size_t n = (size_t)(end - p) < BLOCK ? (size_t)(end - p) : BLOCK;
    Marks m;
    marks_of(p, n, &m);
    int at = mark_block(&s, &m);
    if (at == -2) at = walk_block(&s, p, n);
    if (at >= 0) return p + at;
  }
  return NULL;
}

size_t frame_items(const unsigned char *bytes, size_t length, size_t start, uint32_t *bounds, size_t max_items) {
  const unsigned char *p = bytes + start, *end = bytes + length;
  size_t count = 0;
  /* A string or a scalar item is left to the scanner, as is one that runs past these bytes. */
  while (count < max_items && p < end && (*p == '{' || *p == '[')) {
    const unsigned char *last = item_end(p, end);
    if (last == NULL) break;
    /* Taken only when `,` or `]` follows in these bytes: where something else follows, the scanner's refusal is the one. */
    const unsigned char *next = after_json_space(last, end);
    if (next >= end || (*next != ',' && *next != ']')) break;
    bounds[2 * count] = (uint32_t)(p - bytes);
    bounds[2 * count + 1] = (uint32_t)(last - bytes);
    count++;
    if (*next != ',') break;
    p = after_json_space(next + 1, end);
  }
  return count;
}
