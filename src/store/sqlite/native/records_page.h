/*
 * A page of records the aggregates build (price_export_records.c, yml_offers.c): the bytes so
 * far, the row order check, and the writing of the values every format shares.
 */
#ifndef PRICE_EXPORT_RECORDS_PAGE_H
#define PRICE_EXPORT_RECORDS_PAGE_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3
#include <string.h>
#ifdef PRICE_EXPORT_COPY_VALUES
/* The PostgreSQL module's build (postgres/native/): its values read in place, not through the routines table. */
#include "copy_values.h"
#endif

/* A connection's room kept for its pages from one page to the next (records_page.c). */
typedef struct KeptRoom KeptRoom;

typedef struct {
  unsigned char *bytes;
  sqlite3_int64 length;
  sqlite3_int64 capacity;
  sqlite3_int64 last_seq;
  int rows;
  /* Set once: the first failure is what the aggregate answers. */
  const char *error;
  /* An aggregate's own state for the whole page (the YML offers' category ids), freed by release. */
  void *state;
  void (*release)(void *state);
  /* The kept room the page is built in (its bytes are the room's), or NULL: memory of its own. */
  KeptRoom *room;
  /* The page has asked for the kept room (at its first row): it asks once. */
  int asked;
} Page;

/* Room for `more` bytes; the page's error set when there is none to be had. */
void reserve(Page *page, sqlite3_int64 more);

/* Inline, the common case a bounds test and a copy: an item is written in a few dozen puts. */
static inline __attribute__((always_inline)) void put(Page *page, const void *text, sqlite3_int64 length) {
  if (page->length + length > page->capacity) {
    reserve(page, length);
    if (page->error) return;
  }
  if (length == 0) return;
  memcpy(page->bytes + page->length, text, (size_t)length);
  page->length += length;
}

/*
 * A value's UTF-8 bytes (sqlite3_value_bytes gives their length); NULL for SQL NULL. Read as a
 * blob: sqlite3_value_text would first copy a column's or a parameter's text to end it with a
 * NUL (a malloc and a memcpy per value: with it, the XML items' aggregate was no faster than
 * their SQL, bench/RESULTS.md "2026-11-26, last night"). Nothing here reads past the length.
 */
static inline const unsigned char *text_of(sqlite3_value *value) {
  const unsigned char *bytes = sqlite3_value_blob(value);
  if (bytes) return bytes;
  return sqlite3_value_type(value) == SQLITE_NULL ? NULL : (const unsigned char *)"";
}

/*
 * Eight bytes of text as one word, and whether any of them is one a JSON string or XML text must
 * escape: the scans pass eight plain bytes (most of a catalogue's text) with a few word
 * operations instead of a test per byte. `zero_in` and `below_in` are the classic exact tests
 * for "some byte is zero" and "some byte is below n" (n ≤ 128): a borrow can flag a byte only
 * above one that truly is.
 */
static inline sqlite3_uint64 word_at(const unsigned char *bytes) {
  sqlite3_uint64 word;
  memcpy(&word, bytes, 8);
  return word;
}
#define EACH_BYTE(b) (0x0101010101010101ULL * (sqlite3_uint64)(b))
static inline sqlite3_uint64 zero_in(sqlite3_uint64 x) { return (x - EACH_BYTE(1)) & ~x & EACH_BYTE(0x80); }
static inline sqlite3_uint64 below_in(sqlite3_uint64 x, unsigned char n) { return (x - EACH_BYTE(n)) & ~x & EACH_BYTE(0x80); }
/* A control character, `"` or `\`. */
static inline int json_escape_in(sqlite3_uint64 x) {
  return (below_in(x, 0x20) | zero_in(x ^ EACH_BYTE('"')) | zero_in(x ^ EACH_BYTE('\\'))) != 0;
}
/* Any byte put_xml_escaped looks at, in a text or an attribute value: a control character, `&`, `<`, `>`, `"`, or 0xEF (U+FFFE, U+FFFF). */
static inline int xml_look_in(sqlite3_uint64 x) {
  return (below_in(x, 0x20) | zero_in(x ^ EACH_BYTE('&')) | zero_in(x ^ EACH_BYTE('<')) | zero_in(x ^ EACH_BYTE('>')) |
          zero_in(x ^ EACH_BYTE('"')) | zero_in(x ^ EACH_BYTE(0xEF))) != 0;
}

void put_integer(Page *page, sqlite3_int64 value);
void put_value_text(Page *page, sqlite3_value *value);
/* An integer field: its digits, or what concat() would print for a value that is not an integer (none is stored so). */
void put_integer_value(Page *page, sqlite3_value *value);
/* The page of this aggregate call, or NULL when nothing more is to be written to it. */
Page *page_of(sqlite3_context *context);
/* Counts a row whose seq follows the last one's (or whose seq is NULL: no order checked); 0 (the error set) when it does not. */
int next_row(Page *page, sqlite3_value *seq_value, const char *out_of_order);
/* Minor units, never negative (CONTRACT §2), as units, the separator and two digits. */
void put_money(Page *page, sqlite3_int64 minor, const void *separator, int separator_length);
/* A money value's minor units; -1 (the error set) when it is not a non-negative integer. */
sqlite3_int64 minor_units(Page *page, sqlite3_value *value, const char *error);
/*
 * Text as the XML writer escapes it (xml-text.ts): C0 controls but tab, LF and CR, U+FFFE and
 * U+FFFF dropped; `&`, `<`, `>` and CR as references; as an attribute value (`attribute` 1) also
 * `"`, tab and LF.
 */
void put_xml_escaped(Page *page, const unsigned char *text, sqlite3_int64 length, int attribute);
/* Every aggregate's final call: the page as a blob, NULL for no rows, or the error. */
void page_final(sqlite3_context *context);

#ifndef PRICE_EXPORT_COPY_VALUES
/*
 * Registers price_export_room_taken() on the connection, with the connection's kept room; *room
 * is then the user data the aggregates are registered with (freed when the connection closes).
 */
int kept_room_register(sqlite3 *db, int flags, KeptRoom **room);
#endif

#endif
