/*
 * A CSV publication's records found in its bytes, by the grammar csv-records.ts reads (RFC 4180,
 * strict): a record ends at an LF outside quotes; a field that begins with `"` ends at the
 * first quote not doubled, which `,`, LF or CR LF must follow; an unquoted field holds no quote.
 *
 * Why: the records of a catalogue's CSV cost csv-records.ts ~17 µs each in JavaScript
 * (decoding, slicing, a string per field) where NDJSON's lines are found in its bytes, and a
 * publication of CSV ran at ~0.37× the bulk loaders (issue #18 goal 2; bench/RESULTS.md,
 * "2026-11-27, evening"). Here each record is found in place; csv_item_row reads its fields.
 *
 * It never tells why a file is bad: at a record that breaks the grammar or the byte limit it
 * stops and says so (`hand_over`), and csv-records.ts reads the file on from that record and
 * gives its refusal, to the word.
 */
#include "item_rows.h"
#include <string.h>

/* How a record's scan ended. */
enum { AT_LF, AT_END, NOT_WHOLE, BROKEN };

static size_t count_lfs(const unsigned char *p, size_t n) {
  size_t lfs = 0;
  for (const unsigned char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lfs++;
  return lfs;
}

/* A byte that ends an unquoted field's text: `,`, LF, or a quote (which breaks the grammar there). */
static const unsigned char STOPS_UNQUOTED[256] = {[','] = 1, ['\n'] = 1, ['"'] = 1};

/*
 * Scans the record at `*at` to its end: AT_LF with `*at` on its LF, AT_END at the end of the
 * file's bytes, NOT_WHOLE when it runs past the bytes, BROKEN at a quote inside an unquoted
 * field, text after a closing quote, or a quote left open by the end of the file. `*lfs` counts
 * the LFs inside quotes; `*quoted` whether a field was quoted.
 */
static int scan_record(const unsigned char *bytes, size_t length, int at_end, size_t *at, size_t *lfs, int *quoted) {
  size_t p = *at;
  for (;;) {
    if (p < length && bytes[p] == '"') {
      *quoted = 1;
      p++;
      for (;;) {
        const unsigned char *quote = memchr(bytes + p, '"', length - p);
        size_t until = quote ? (size_t)(quote - bytes) : length;
        *lfs += count_lfs(bytes + p, until - p);
        if (!quote) return at_end ? BROKEN : NOT_WHOLE;
        p = until + 1;
        if (p == length) return at_end ? (*at = p, AT_END) : NOT_WHOLE; /* a closing quote, or the first of a pair */
        if (bytes[p] != '"') break;
        p++;
      }
      if (bytes[p] == ',') {
        p++;
        continue;
      }
      if (bytes[p] == '\n') return *at = p, AT_LF;
      if (bytes[p] != '\r') return BROKEN;
      if (p + 1 == length) return at_end ? (*at = length, AT_END) : NOT_WHOLE;
      if (bytes[p + 1] != '\n') return BROKEN;
      return *at = p + 1, AT_LF;
    }
    while (p < length && !STOPS_UNQUOTED[bytes[p]]) p++;
    if (p == length) return at_end ? (*at = p, AT_END) : NOT_WHOLE;
    if (bytes[p] == '"') return BROKEN;
    if (bytes[p] == '\n') return *at = p, AT_LF;
    p++; /* a comma: the next field */
  }
}

void frame_csv(const unsigned char *bytes, size_t length, size_t start, int at_end, size_t max_record_bytes,
               uint32_t *bounds, uint32_t *lfs, size_t max_records, CsvFrame *out) {
  size_t p = start, seen_lfs = 0, count = 0;
  out->hand_over = 0;
  while (p < length && count < max_records) {
    size_t end = p, inside = 0;
    int quoted = 0;
    int how = scan_record(bytes, length, at_end, &end, &inside, &quoted);
    if (how == NOT_WHOLE || how == BROKEN) {
      out->hand_over = how == BROKEN;
      break;
    }
    /* A line with nothing on it (or only the CR of CRLF) is no record; a line holding "" is one. */
    int blank = !quoted && (end == p || (end == p + 1 && bytes[p] == '\r'));
    if (!blank) {
      if (end - p > max_record_bytes) {
        out->hand_over = 1;
        break;
      }
      bounds[2 * count] = (uint32_t)p;
      bounds[2 * count + 1] = (uint32_t)end;
      lfs[count] = (uint32_t)(seen_lfs + inside);
      count++;
    }
    seen_lfs += inside;
    if (how == AT_END) {
      p = end;
      break;
    }
    seen_lfs++;
    p = end + 1;
  }
  out->count = count;
  out->next = p;
  out->next_lfs = seen_lfs;
}
