/*
 * price_export_copy_rows(rows): items' rows in PostgreSQL's COPY text format, as the store writes
 * them (item-rows/copy-rows.ts, item-rows/native/item_rows.c), as a table, so that SQLite stores
 * a batch of items with one statement:
 *
 *   INSERT OR IGNORE INTO price_items (price_list_id, seq, …, quote_free)
 *   SELECT price_list_id, seq, …, quote_free FROM price_export_copy_rows(?)
 *
 * rows is a BLOB (or TEXT): each row 12 tab-separated fields ended by LF, a field `\N` for NULL
 * or text in which `\\`, `\t`, `\n`, `\r` (and `\b`, `\f`, `\v`, as PostgreSQL reads them) stand
 * for their characters. The columns, in KINDS' order: price_list_id, seq, offer_id, name, price,
 * old_price, currency, available (`t` 1, `f` 0), quantity, url, extra, quote_free. Any other
 * backslash, a row of another number of fields or without its LF, an integer that is not
 * decimal digits after an optional minus, a boolean other than `t` or `f`, or `\N` in a column
 * that is never NULL fails the statement, the message naming the row (from 1).
 *
 * An eponymous-only virtual table: the argument is held once (xFilter), each row's fields found
 * and its integers read once (xNext), and a text handed from the held bytes, decoded into a
 * scratch buffer only when it has a backslash (xColumn).
 */
#include "records_page.h"
#include <stdarg.h>

/* Registers the table in the connection (price_export_records.c's init). */
int price_export_copy_rows_register(sqlite3 *db);

#ifdef PRICE_EXPORT_COPY_VALUES
/* The PostgreSQL module's SQLite (postgres/native/sqlite_host.c) has no virtual tables, and needs none. */
int price_export_copy_rows_register(sqlite3 *db) {
  (void)db;
  return SQLITE_OK;
}
#else

#define FIELDS 12
/* Per column: i an integer, I an integer or NULL, t a text, T a text or NULL, b a boolean. */
static const char KINDS[] = "iittiItbITTi";
static const char *const NAMES[FIELDS] = {"price_list_id", "seq", "offer_id", "name", "price", "old_price",
                                          "currency", "available", "quantity", "url", "extra", "quote_free"};
#define SCHEMA                                                                                                     \
  "CREATE TABLE x(price_list_id INTEGER, seq INTEGER, offer_id TEXT, name TEXT, price INTEGER, old_price INTEGER, " \
  "currency TEXT, available INTEGER, quantity INTEGER, url TEXT, extra TEXT, quote_free INTEGER, rows HIDDEN)"

/* What a backslash and the byte after it stand for; 0: no escape. */
static const unsigned char ESCAPED[256] = {
    ['\\'] = '\\', ['t'] = '\t', ['n'] = '\n', ['r'] = '\r', ['b'] = '\b', ['f'] = '\f', ['v'] = '\v',
};

typedef struct {
  sqlite3_vtab_cursor base;
  /* The argument, held from xFilter to the next xFilter or xClose: the texts are read from it. */
  sqlite3_value *rows;
  const unsigned char *next, *end;
  sqlite3_int64 row;
  int eof;
  /* The current row's fields: each one's bytes (NULL for `\N`), length, whether it has a backslash, and an integer's or boolean's value. */
  const unsigned char *field[FIELDS];
  sqlite3_int64 length[FIELDS];
  unsigned char escaped[FIELDS];
  sqlite3_int64 integer[FIELDS];
  unsigned char *scratch;
  sqlite3_int64 scratch_capacity;
} Cursor;

/* Fails the statement with the cursor's row named: SQLite takes zErrMsg as the statement's error. */
static int fail(Cursor *cursor, const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  char *detail = sqlite3_vmprintf(format, arguments);
  va_end(arguments);
  sqlite3_vtab *vtab = cursor->base.pVtab;
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("price_export_copy_rows: row %lld: %s", cursor->row, detail ? detail : "out of memory");
  sqlite3_free(detail);
  return SQLITE_ERROR;
}

/* Digits after an optional minus, within SQLite's 64-bit integers; 0 when the field is not. */
static int read_integer(const unsigned char *p, sqlite3_int64 length, sqlite3_int64 *integer) {
  int negative = length > 0 && p[0] == '-';
  p += negative, length -= negative;
  // 19 digits fit an unsigned 64-bit value; the range test below is on that.
  if (length == 0 || length > 19) return 0;
  sqlite3_uint64 value = 0;
  for (sqlite3_int64 i = 0; i < length; i++) {
    unsigned digit = (unsigned)p[i] - '0';
    if (digit > 9) return 0;
    value = value * 10 + digit;
  }
  if (value > (sqlite3_uint64)0x7fffffffffffffffLL + (sqlite3_uint64)negative) return 0;
  *integer = negative ? (sqlite3_int64)(0 - value) : (sqlite3_int64)value;
  return 1;
}

/*
 * The first tab, LF or backslash from p, or end. Most of a row is plain text: eight bytes are
 * tested at once (records_page.h's word tests), and in a word that has one, the lowest flagged
 * byte is the first (a borrow flags a byte only above a true one; little-endian: the lowest
 * byte is the first in memory).
 */
static inline const unsigned char *special_from(const unsigned char *p, const unsigned char *end) {
  for (; end - p >= 8; p += 8) {
    sqlite3_uint64 x = word_at(p);
    sqlite3_uint64 found = zero_in(x ^ EACH_BYTE('\t')) | zero_in(x ^ EACH_BYTE('\n')) | zero_in(x ^ EACH_BYTE('\\'));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (found) return p + (__builtin_ctzll(found) >> 3);
#else
    if (found) break;
#endif
  }
  while (p < end && *p != '\t' && *p != '\n' && *p != '\\') p++;
  return p;
}

/* Reads the row at cursor->next into the cursor's fields, or sets eof after the last one. */
static int read_row(Cursor *cursor) {
  const unsigned char *p = cursor->next, *end = cursor->end;
  if (p == end) {
    cursor->eof = 1;
    return SQLITE_OK;
  }
  cursor->row++;
  int count = 0;
  for (;;) {
    const unsigned char *start = p;
    int escaped = 0, null = 0;
    for (;;) {
      p = special_from(p, end);
      if (p == end || (*p == '\\' && end - p < 2)) return fail(cursor, "no LF at its end");
      if (*p != '\\') break;
      // `\N` is NULL only as the whole field, as PostgreSQL reads it.
      if (p == start && p[1] == 'N' && end - p >= 3 && (p[2] == '\t' || p[2] == '\n')) {
        null = 1;
      } else if (!ESCAPED[p[1]]) {
        const char *name = count < FIELDS ? NAMES[count] : "a field past the 12th";
        if (p[1] > ' ' && p[1] < 0x7f) return fail(cursor, "%s: \\%c is no COPY escape", name, p[1]);
        return fail(cursor, "%s: a backslash before byte 0x%02x is no COPY escape", name, p[1]);
      }
      escaped = 1;
      p += 2;
    }
    if (count < FIELDS) {
      cursor->field[count] = null ? NULL : start;
      cursor->length[count] = p - start;
      cursor->escaped[count] = (unsigned char)(escaped && !null);
    }
    count++;
    if (*p++ == '\n') break;
  }
  cursor->next = p;
  if (count != FIELDS) return fail(cursor, "%d fields, expected %d", count, FIELDS);
  for (int i = 0; i < FIELDS; i++) {
    const unsigned char *field = cursor->field[i];
    char kind = KINDS[i];
    if (!field) {
      if (kind == 'i' || kind == 't' || kind == 'b') return fail(cursor, "%s is \\N, and never NULL", NAMES[i]);
      continue;
    }
    // Shown at most 40 bytes of a field that is not what its column holds.
    int shown = cursor->length[i] < 40 ? (int)cursor->length[i] : 40;
    if (kind == 'i' || kind == 'I') {
      if (!read_integer(field, cursor->length[i], &cursor->integer[i])) return fail(cursor, "%s: not an integer: '%.*s'", NAMES[i], shown, field);
    } else if (kind == 'b') {
      if (cursor->length[i] != 1 || (field[0] != 't' && field[0] != 'f')) return fail(cursor, "%s: not t or f: '%.*s'", NAMES[i], shown, field);
      cursor->integer[i] = field[0] == 't';
    }
  }
  return SQLITE_OK;
}

static int rows_connect(sqlite3 *db, void *data, int argc, const char *const *argv, sqlite3_vtab **vtab, char **error) {
  (void)data, (void)argc, (void)argv, (void)error;
  int rc = sqlite3_declare_vtab(db, SCHEMA);
  if (rc != SQLITE_OK) return rc;
  // As the aggregates (SQLITE_INNOCUOUS): it reads nothing but its argument.
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *vtab = sqlite3_malloc(sizeof **vtab);
  if (!*vtab) return SQLITE_NOMEM;
  memset(*vtab, 0, sizeof **vtab);
  return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

/* The hidden `rows` column must be given (the function's argument): a scan without it has no rows to read. */
static int rows_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  (void)vtab;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
    // Not usable: a join's table that gives the argument is not read yet in this plan; SQLite tries another order.
    if (constraint->iColumn != FIELDS || constraint->op != SQLITE_INDEX_CONSTRAINT_EQ || !constraint->usable) continue;
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->estimatedCost = 1000;
    info->estimatedRows = 1000;
    return SQLITE_OK;
  }
  return SQLITE_CONSTRAINT;
}

static int rows_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **cursor) {
  (void)vtab;
  Cursor *opened = sqlite3_malloc(sizeof *opened);
  if (!opened) return SQLITE_NOMEM;
  memset(opened, 0, sizeof *opened);
  opened->eof = 1;
  *cursor = &opened->base;
  return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *base) {
  Cursor *cursor = (Cursor *)base;
  sqlite3_value_free(cursor->rows);
  sqlite3_free(cursor->scratch);
  sqlite3_free(cursor);
  return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *base, int index, const char *index_text, int argc, sqlite3_value **argv) {
  (void)index, (void)index_text;
  Cursor *cursor = (Cursor *)base;
  sqlite3_value_free(cursor->rows);
  cursor->rows = NULL, cursor->row = 0, cursor->eof = 1;
  int type = argc == 1 ? sqlite3_value_type(argv[0]) : SQLITE_NULL;
  if (type != SQLITE_BLOB && type != SQLITE_TEXT) {
    sqlite3_free(base->pVtab->zErrMsg);
    base->pVtab->zErrMsg = sqlite3_mprintf("price_export_copy_rows: rows is a BLOB or TEXT of COPY rows, not %s", type == SQLITE_NULL ? "NULL" : "a number");
    return SQLITE_ERROR;
  }
  // The argument lives only as long as this call: its copy is what the texts are read from.
  cursor->rows = sqlite3_value_dup(argv[0]);
  if (!cursor->rows) return SQLITE_NOMEM;
  const unsigned char *bytes = type == SQLITE_TEXT ? sqlite3_value_text(cursor->rows) : sqlite3_value_blob(cursor->rows);
  sqlite3_int64 length = sqlite3_value_bytes(cursor->rows);
  if (!bytes && length > 0) return SQLITE_NOMEM;
  // An empty blob's bytes are NULL: no rows.
  if (!bytes) bytes = (const unsigned char *)"";
  cursor->next = bytes, cursor->end = bytes + length, cursor->eof = 0;
  return read_row(cursor);
}

static int rows_next(sqlite3_vtab_cursor *base) {
  return read_row((Cursor *)base);
}

static int rows_eof(sqlite3_vtab_cursor *base) {
  return ((Cursor *)base)->eof;
}

/* A text's escapes decoded into out (never longer than the text); its length. read_row checked every escape. */
static sqlite3_int64 unescape(const unsigned char *p, sqlite3_int64 length, unsigned char *out) {
  const unsigned char *end = p + length;
  unsigned char *at = out;
  while (p < end) {
    const unsigned char *backslash = memchr(p, '\\', (size_t)(end - p));
    if (!backslash) backslash = end;
    memcpy(at, p, (size_t)(backslash - p));
    at += backslash - p;
    if (backslash == end) break;
    *at++ = ESCAPED[backslash[1]];
    p = backslash + 2;
  }
  return at - out;
}

static int rows_column(sqlite3_vtab_cursor *base, sqlite3_context *context, int i) {
  Cursor *cursor = (Cursor *)base;
  if (i == FIELDS) {
    sqlite3_result_value(context, cursor->rows);
    return SQLITE_OK;
  }
  const unsigned char *field = cursor->field[i];
  if (!field) {
    sqlite3_result_null(context);
    return SQLITE_OK;
  }
  if (KINDS[i] != 't' && KINDS[i] != 'T') {
    sqlite3_result_int64(context, cursor->integer[i]);
    return SQLITE_OK;
  }
  sqlite3_int64 length = cursor->length[i];
  if (cursor->escaped[i]) {
    if (cursor->scratch_capacity < length) {
      unsigned char *scratch = sqlite3_realloc64(cursor->scratch, (sqlite3_uint64)length);
      if (!scratch) {
        sqlite3_result_error_nomem(context);
        return SQLITE_NOMEM;
      }
      cursor->scratch = scratch, cursor->scratch_capacity = length;
    }
    length = unescape(field, length, cursor->scratch);
    field = cursor->scratch;
  }
  /*
   * SQLITE_TRANSIENT, even for the held bytes: SQLite copies them into the column's register,
   * whose buffer it keeps from row to row (a memcpy, no malloc). SQLITE_STATIC would leave the
   * register pointing into the held copy, which a correlated subquery's next xFilter frees while
   * the value may still be held (max() over such a subquery keeps its best value so).
   */
  sqlite3_result_text64(context, (const char *)field, (sqlite3_uint64)length, SQLITE_TRANSIENT, SQLITE_UTF8);
  return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *base, sqlite_int64 *row) {
  *row = ((Cursor *)base)->row;
  return SQLITE_OK;
}

/* xCreate NULL: eponymous-only, no CREATE VIRTUAL TABLE of it. */
static sqlite3_module module = {
    .iVersion = 0,
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = rows_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

int price_export_copy_rows_register(sqlite3 *db) {
  return sqlite3_create_module(db, "price_export_copy_rows", &module, 0);
}

#endif
