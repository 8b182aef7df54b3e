/*
 * A SQLite extension with four aggregates that build a page of records in one pass over the
 * rows, each as the writer of its format prints them: price_export_delimited() CSV or TSV
 * records (model/delimited-record.ts), price_export_json() JSON items (model/json-record.ts),
 * price_export_xml() XML items (model/xml-record.ts), and price_export_yml() YML offers
 * (model/yml-record.ts; in yml_offers.c, which says its kinds). records_page.c holds what
 * their pages share.
 *
 * Why C: the same CSV records built by SQL expressions (delimited-sql.ts) cost 54 ms of SQLite's
 * work per 100k legacy records against 26 ms here, and with the SQL the first CSV and TSV over
 * HTTP stayed at 1.4–1.7× `sqlite3 -csv` against issue #18's goal of ≥ 2×; with this aggregate,
 * 2.0–2.3× at 100k items and 2.9–3.2× at 1M (bench/figures/first-json-xml.ts, bench/RESULTS.md
 * "2026-11-26, last night"). SQLite's VM spends that time on the expression's registers and
 * calls, not on the text. JSON and XML items gain the same way (the same section).
 *
 * The SQL records stay the reference and the fallback (a machine without a C compiler builds
 * none of this); store/{delimited,json,xml,yml}-records.contract.test.ts hold both to the
 * writers' bytes.
 *
 *   price_export_delimited(kinds, delimiter, decimal, record_end, seq, v1, …, vN)
 *   price_export_json(kinds, seq, v1, …, vN)
 *   price_export_xml(kinds, seq, …)
 *
 * kinds holds one letter per part. CSV: `t` a text (quoted when it holds the delimiter, `"`, CR
 * or LF, or starts or ends with a space; inner `"` doubled), `m` money in minor units (units,
 * the decimal separator, two digits), `i` an integer, `b` a boolean (`1`/`0`), `l` a literal (a
 * profile's constant, already quoted by the writer); NULL is an empty field. The delimiter is
 * one ASCII character (model/profile.ts PROFILE_DELIMITERS), so a byte test finds it in UTF-8.
 * JSON: the same letters, NULL printed `null`, a text as JSON.stringify prints it, money as
 * String(units / 100); `s` a text every item has, without its quotes (they are in the literals
 * around it). XML: `l` takes one argument, each field two (its element's name, then its value):
 * `<name/>` for NULL, else `<name>value</name>`, a text escaped as the XML writer does
 * (xml-text.ts), money with `.` and two digits, booleans `true`/`false`; `T`, `M`, `I`, `B` a
 * field every item has, its value alone (its tags are in the literals around it). A literal
 * carries the fixed text between two values: the fewer copies per row, the faster the page.
 *
 * The records follow one another in the order the rows arrive; seq must rise from row to row,
 * else the aggregate fails rather than return records out of publication order. A NULL seq
 * checks no order: the rows' query gives it (the changes feed's ORDER BY offer_id, which a
 * rank by row_number() to check would cost ~10× the scan: sql/change-rows.ts).
 */
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1
#include "records_page.h"

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
  const unsigned char *text = text_of(value);
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

static void step(sqlite3_context *context, int argc, sqlite3_value **argv) {
  Page *page = page_of(context);
  if (!page) return;
  if (argc < 5) {
    page->error = "price_export_delimited(kinds, delimiter, decimal, record_end, seq, values…)";
    return;
  }
  const unsigned char *kinds = text_of(argv[0]);
  const unsigned char *delimiter = text_of(argv[1]);
  const unsigned char *decimal = text_of(argv[2]);
  const unsigned char *record_end = text_of(argv[3]);
  if (!kinds || !delimiter || !decimal || !record_end || sqlite3_value_bytes(argv[0]) != argc - 5 || sqlite3_value_bytes(argv[1]) != 1) {
    page->error = "price_export_delimited: one kind per value and a one-byte delimiter";
    return;
  }
  int decimal_length = sqlite3_value_bytes(argv[2]);
  int record_end_length = sqlite3_value_bytes(argv[3]);
  if (!next_row(page, argv[4], "price_export_delimited: rows out of publication order")) return;
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
        sqlite3_int64 minor = minor_units(page, value, "price_export_delimited: money must be a non-negative integer of minor units");
        if (minor < 0) return;
        put_money(page, minor, decimal, decimal_length);
        break;
      }
      case 'i':
        put_integer_value(page, value);
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

/* JSON.stringify of a text without its quotes: `"`, `\` and the C0 controls escaped (\b \t \n \f \r, else \u00xx). */
static void put_json_body(Page *page, sqlite3_value *value) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *text = text_of(value);
  int length = sqlite3_value_bytes(value);
  int from = 0;
  for (int i = 0; text && i < length; i++) {
    // Eight bytes that need nothing are passed over at once (records_page.h json_escape_in).
    while (i + 8 <= length && !json_escape_in(word_at(text + i))) i += 8;
    if (i >= length) break;
    unsigned char c = text[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    put(page, text + from, i - from);
    from = i + 1;
    char escape[6] = {'\\', 0, 0, 0, 0, 0};
    int escape_length = 2;
    switch (c) {
      case '"': escape[1] = '"'; break;
      case '\\': escape[1] = '\\'; break;
      case '\b': escape[1] = 'b'; break;
      case '\t': escape[1] = 't'; break;
      case '\n': escape[1] = 'n'; break;
      case '\f': escape[1] = 'f'; break;
      case '\r': escape[1] = 'r'; break;
      default:
        escape[1] = 'u', escape[2] = '0', escape[3] = '0', escape[4] = hex[c >> 4], escape[5] = hex[c & 15];
        escape_length = 6;
    }
    put(page, escape, escape_length);
  }
  put(page, text + from, length - from);
}

/* Below this many minor units (2^46 · 100) String(units / 100) is the exact amount (sqlite/json-number-sql.ts). */
#define EXACT_BELOW 7036874417766400LL

/* The exact amount, trailing zeros dropped: 199050 → 1990.5, 100 → 1, 5 → 0.05. */
static void put_exact_decimal(Page *page, sqlite3_int64 minor) {
  put_integer(page, minor / 100);
  int cents = (int)(minor % 100);
  if (cents == 0) return;
  char digits[3] = {'.', (char)('0' + cents / 10), (char)('0' + cents % 10)};
  put(page, digits, cents % 10 == 0 ? 2 : 3);
}

static int rank(sqlite3_int64 cents) {
  return cents % 100 == 0 ? 0 : cents % 10 == 0 ? 1 : 2;
}

/* From EXACT_BELOW to 2^53: the cent JavaScript prints for the double nearest units / 100 (sqlite/json-number-sql.ts says why). */
static sqlite3_int64 nearest_shortest(sqlite3_int64 units) {
  sqlite3_int64 m = (units * 16 + 12) / 25;
  sqlite3_int64 a = 50 * m / 32, b = a + 1;
  sqlite3_int64 da = 32 * a - 50 * m, db = 32 * b - 50 * m;
  if (da < 0) da = -da;
  if (db < 0) db = -db;
  if (db >= 25) return a;
  if (da >= 25) return b;
  if (rank(a) != rank(b)) return rank(a) < rank(b) ? a : b;
  if (da != db) return da < db ? a : b;
  return a % 2 == 0 ? a : b;
}

static void json_step(sqlite3_context *context, int argc, sqlite3_value **argv) {
  Page *page = page_of(context);
  if (!page) return;
  const unsigned char *kinds = argc >= 2 ? text_of(argv[0]) : NULL;
  if (!kinds || sqlite3_value_bytes(argv[0]) != argc - 2) {
    page->error = "price_export_json(kinds, seq, values…): one kind per value";
    return;
  }
  if (!next_row(page, argv[1], "price_export_json: rows out of publication order")) return;
  for (int part = 0; part < argc - 2; part++) {
    sqlite3_value *value = argv[part + 2];
    int type = sqlite3_value_type(value);
    if (type == SQLITE_NULL) {
      if (kinds[part] == 's') {
        page->error = "price_export_json: a text every item has is NULL";
        return;
      }
      if (kinds[part] != 'l') put(page, "null", 4);
      continue;
    }
    switch (kinds[part]) {
      case 'l':
        put_value_text(page, value);
        break;
      case 't':
        put(page, "\"", 1);
        put_json_body(page, value);
        put(page, "\"", 1);
        break;
      case 's':
        put_json_body(page, value);
        break;
      case 'm': {
        sqlite3_int64 minor = minor_units(page, value, "price_export_json: money must be a non-negative integer of minor units");
        if (minor < 0) return;
        put_exact_decimal(page, minor < EXACT_BELOW ? minor : nearest_shortest(minor));
        break;
      }
      case 'i':
        put_integer_value(page, value);
        break;
      case 'b':
        if (sqlite3_value_int64(value)) put(page, "true", 4);
        else put(page, "false", 5);
        break;
      default:
        page->error = "price_export_json: a kind is one of l, t, s, m, i, b";
        return;
    }
  }
}

/* A field's value as its element's text; 0 (the error set) when it cannot be written. */
static int put_xml_value(Page *page, unsigned char kind, sqlite3_value *value) {
  switch (kind) {
    case 't':
      put_xml_escaped(page, text_of(value), sqlite3_value_bytes(value), 0);
      return 1;
    case 'm': {
      sqlite3_int64 minor = minor_units(page, value, "price_export_xml: money must be a non-negative integer of minor units");
      if (minor < 0) return 0;
      put_money(page, minor, ".", 1);
      return 1;
    }
    case 'i':
      put_integer_value(page, value);
      return 1;
    case 'b':
      if (sqlite3_value_int64(value)) put(page, "true", 4);
      else put(page, "false", 5);
      return 1;
    default:
      page->error = "price_export_xml: a kind is one of l, t, m, i, b, or T, M, I, B";
      return 0;
  }
}

static void xml_step(sqlite3_context *context, int argc, sqlite3_value **argv) {
  Page *page = page_of(context);
  if (!page) return;
  const unsigned char *kinds = argc >= 2 ? text_of(argv[0]) : NULL;
  int kind_count = kinds ? sqlite3_value_bytes(argv[0]) : 0, expected = 2;
  for (int part = 0; part < kind_count; part++) expected += kinds[part] >= 'a' && kinds[part] != 'l' ? 2 : 1;
  if (!kinds || expected != argc) {
    page->error = "price_export_xml(kinds, seq, …): one argument per literal and bare value, an element name and a value per field";
    return;
  }
  if (!next_row(page, argv[1], "price_export_xml: rows out of publication order")) return;
  for (int part = 0, at = 2; part < kind_count; part++) {
    unsigned char kind = kinds[part];
    if (kind == 'l') {
      put_value_text(page, argv[at++]);
      continue;
    }
    // Upper case: a field every item has, its tags in the literals around it.
    if (kind < 'a') {
      sqlite3_value *value = argv[at++];
      if (sqlite3_value_type(value) == SQLITE_NULL) {
        page->error = "price_export_xml: a field every item has is NULL";
        return;
      }
      if (!put_xml_value(page, (unsigned char)(kind - 'A' + 'a'), value)) return;
      continue;
    }
    const unsigned char *name = text_of(argv[at]);
    int name_length = sqlite3_value_bytes(argv[at]);
    sqlite3_value *value = argv[at + 1];
    at += 2;
    put(page, "<", 1);
    put(page, name, name_length);
    if (sqlite3_value_type(value) == SQLITE_NULL) {
      put(page, "/>", 2);
      continue;
    }
    put(page, ">", 1);
    if (!put_xml_value(page, kind, value)) return;
    put(page, "</", 2);
    put(page, name, name_length);
    put(page, ">", 1);
  }
}

/* The version of the calls above (native-builds.ts RECORDS_EXTENSION_VERSION): raised with any change to them. */
static void version(sqlite3_context *context, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_int(context, 7);
}

/* The YML offers' aggregate step (yml_offers.c). */
void yml_step(sqlite3_context *context, int argc, sqlite3_value **argv);
/* The price_export_copy_rows(rows) table-valued function: COPY text rows as a table (copy_rows.c). */
int price_export_copy_rows_register(sqlite3 *db);

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_priceexportrecords_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  (void)error;
  SQLITE_EXTENSION_INIT2(api);
  int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;
  /* The aggregates' user data: the connection's kept room (records_page.c), none in the PostgreSQL module. */
  void *room = 0;
  int rc = SQLITE_OK;
#ifndef PRICE_EXPORT_COPY_VALUES
  KeptRoom *kept;
  rc = kept_room_register(db, flags, &kept);
  room = kept;
#endif
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "price_export_delimited", -1, flags, room, 0, step, page_final);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "price_export_json", -1, flags, room, 0, json_step, page_final);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "price_export_xml", -1, flags, room, 0, xml_step, page_final);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "price_export_yml", -1, flags, room, 0, yml_step, page_final);
  if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "price_export_records_version", 0, flags | SQLITE_DETERMINISTIC, 0, version, 0, 0);
  if (rc == SQLITE_OK) rc = price_export_copy_rows_register(db);
  return rc;
}
