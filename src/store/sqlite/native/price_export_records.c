/*
 * A SQLite extension with one aggregate, price_export_delimited(), that builds a page of CSV or
 * TSV records (model/delimited-record.ts) in one pass over the rows.
 *
 * Why C: the same records built by SQL expressions (delimited-sql.ts) cost 54 ms of SQLite's
 * work per 100k legacy records against 26 ms here, and with the SQL the first CSV and TSV over
 * HTTP stayed at 1.4–1.7× `sqlite3 -csv` against issue #18's goal of ≥ 2×; with this aggregate,
 * 2.0–2.3× at 100k items and 2.9–3.2× at 1M (bench/figures/first-json-xml.ts, bench/RESULTS.md
 * "2026-11-26, last night").
 * SQLite's VM spends that time on the expression's registers and calls, not on the text.
 *
 * The SQL records stay the reference and the fallback (a machine without a C compiler builds
 * none of this); store/delimited-records.contract.test.ts holds both to the CSV writer's bytes.
 *
 *   price_export_delimited(kinds, delimiter, decimal, record_end, seq, v1, …, vN)
 *
 * kinds holds one letter per value: `t` a text (quoted when it holds the delimiter, `"`, CR or
 * LF, or starts or ends with a space; inner `"` doubled), `m` money in minor units (units, the
 * decimal separator, two digits), `i` an integer, `b` a boolean (`1`/`0`), `l` a literal (a
 * profile's constant, already quoted by the writer). NULL is an empty field. The delimiter is
 * one ASCII character (model/profile.ts PROFILE_DELIMITERS), so a byte test finds it in UTF-8.
 *
 * The records follow one another in the order the rows arrive; seq must rise from row to row,
 * else the aggregate fails rather than return records out of publication order.
 */
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1
#include <string.h>

typedef struct {
  unsigned char *bytes;
  sqlite3_int64 length;
  sqlite3_int64 capacity;
  sqlite3_int64 last_seq;
  int rows;
  /* Set once: the first failure is what the aggregate answers. */
  const char *error;
} Page;

static void reserve(Page *page, sqlite3_int64 more) {
  if (page->error || page->length + more <= page->capacity) return;
  sqlite3_int64 capacity = page->capacity ? page->capacity * 2 : 256 * 1024;
  while (capacity < page->length + more) capacity *= 2;
  unsigned char *bytes = sqlite3_realloc64(page->bytes, (sqlite3_uint64)capacity);
  if (!bytes) {
    page->error = "out of memory";
    return;
  }
  page->bytes = bytes;
  page->capacity = capacity;
}

static void put(Page *page, const void *text, sqlite3_int64 length) {
  reserve(page, length);
  if (page->error || length == 0) return;
  memcpy(page->bytes + page->length, text, (size_t)length);
  page->length += length;
}

static void put_integer(Page *page, sqlite3_int64 value) {
  char digits[24];
  int at = sizeof digits;
  sqlite3_uint64 rest = value < 0 ? 0 - (sqlite3_uint64)value : (sqlite3_uint64)value;
  do {
    digits[--at] = (char)('0' + rest % 10);
    rest /= 10;
  } while (rest);
  if (value < 0) digits[--at] = '-';
  put(page, digits + at, (sqlite3_int64)sizeof digits - at);
}

static int must_quote(const unsigned char *text, int length, unsigned char delimiter) {
  if (length == 0) return 0;
  if (text[0] == ' ' || text[length - 1] == ' ') return 1;
  for (int i = 0; i < length; i++) {
    unsigned char c = text[i];
    if (c == delimiter || c == '"' || c == '\r' || c == '\n') return 1;
  }
  return 0;
}

static void put_text(Page *page, sqlite3_value *value, unsigned char delimiter) {
  const unsigned char *text = sqlite3_value_text(value);
  int length = sqlite3_value_bytes(value);
  if (!text) return;
  if (!must_quote(text, length, delimiter)) {
    put(page, text, length);
    return;
  }
  put(page, "\"", 1);
  int from = 0;
  for (int i = 0; i < length; i++) {
    if (text[i] != '"') continue;
    put(page, text + from, i - from + 1);
    put(page, "\"", 1);
    from = i + 1;
  }
  put(page, text + from, length - from);
  put(page, "\"", 1);
}

static void put_value_text(Page *page, sqlite3_value *value) {
  const unsigned char *text = sqlite3_value_text(value);
  if (text) put(page, text, sqlite3_value_bytes(value));
}

static void step(sqlite3_context *context, int argc, sqlite3_value **argv) {
  Page *page = sqlite3_aggregate_context(context, sizeof(Page));
  if (!page) {
    sqlite3_result_error_nomem(context);
    return;
  }
  if (page->error) return;
  if (argc < 5) {
    page->error = "price_export_delimited(kinds, delimiter, decimal, record_end, seq, values…)";
    return;
  }
  const unsigned char *kinds = sqlite3_value_text(argv[0]);
  const unsigned char *delimiter = sqlite3_value_text(argv[1]);
  const unsigned char *decimal = sqlite3_value_text(argv[2]);
  const unsigned char *record_end = sqlite3_value_text(argv[3]);
  if (!kinds || !delimiter || !decimal || !record_end || sqlite3_value_bytes(argv[0]) != argc - 5 || sqlite3_value_bytes(argv[1]) != 1) {
    page->error = "price_export_delimited: one kind per value and a one-byte delimiter";
    return;
  }
  int decimal_length = sqlite3_value_bytes(argv[2]);
  int record_end_length = sqlite3_value_bytes(argv[3]);
  sqlite3_int64 seq = sqlite3_value_int64(argv[4]);
  if (page->rows > 0 && seq <= page->last_seq) {
    page->error = "price_export_delimited: rows out of publication order";
    return;
  }
  page->last_seq = seq;
  page->rows++;
  for (int field = 0; field < argc - 5; field++) {
    if (field > 0) put(page, delimiter, 1);
    sqlite3_value *value = argv[field + 5];
    int type = sqlite3_value_type(value);
    if (type == SQLITE_NULL) continue;
    switch (kinds[field]) {
      case 't':
        put_text(page, value, delimiter[0]);
        break;
      case 'l':
        put_value_text(page, value);
        break;
      case 'm': {
        if (type != SQLITE_INTEGER || sqlite3_value_int64(value) < 0) {
          page->error = "price_export_delimited: money must be a non-negative integer of minor units";
          return;
        }
        sqlite3_int64 minor = sqlite3_value_int64(value);
        char cents[2] = {(char)('0' + minor % 100 / 10), (char)('0' + minor % 10)};
        put_integer(page, minor / 100);
        put(page, decimal, decimal_length);
        put(page, cents, 2);
        break;
      }
      case 'i':
        // What concat() would print for a value that is not an integer (none is stored so).
        if (type == SQLITE_INTEGER) put_integer(page, sqlite3_value_int64(value));
        else put_value_text(page, value);
        break;
      case 'b':
        put(page, sqlite3_value_int64(value) ? "1" : "0", 1);
        break;
      default:
        page->error = "price_export_delimited: a kind is one of t, l, m, i, b";
        return;
    }
  }
  put(page, record_end, record_end_length);
}

static void final(sqlite3_context *context) {
  Page *page = sqlite3_aggregate_context(context, 0);
  if (page && page->error) {
    sqlite3_result_error(context, page->error, -1);
    sqlite3_free(page->bytes);
  } else if (!page || page->rows == 0) {
    sqlite3_result_null(context);
  } else if (!page->bytes) {
    sqlite3_result_zeroblob(context, 0);
  } else {
    sqlite3_result_blob64(context, page->bytes, (sqlite3_uint64)page->length, sqlite3_free);
  }
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_priceexportrecords_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  (void)error;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "price_export_delimited", -1, SQLITE_UTF8 | SQLITE_INNOCUOUS, 0, 0, step, final);
}
