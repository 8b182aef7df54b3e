/*
 * The module's values (copy_records.c), read in place: in the module's build
 * (-DPRICE_EXPORT_COPY_VALUES, scripts/build-native.mjs) records_page.h includes this, so the
 * aggregates' sqlite3_value_type, _blob, _bytes and _int64 are inline reads of the struct below
 * instead of calls through the routines table, a few dozen a row: 100k XML items built in ~29 ms
 * instead of ~33 (bench/RESULTS.md, "2026-11-27, day").
 */
#ifndef PRICE_EXPORT_COPY_VALUES_H
#define PRICE_EXPORT_COPY_VALUES_H

#include "sqlite3ext.h"

struct sqlite3_value {
  int type; /* SQLITE_NULL, SQLITE_INTEGER or SQLITE_TEXT */
  const unsigned char *bytes;
  int length;
  sqlite3_int64 integer;
  /* An integer's digits, once asked for as text (as SQLite converts it). */
  int has_digits;
  char digits[24];
};

static inline void copy_value_digits(sqlite3_value *value) {
  if (value->has_digits) return;
  char reversed[24];
  int n = 0;
  sqlite3_uint64 magnitude = value->integer < 0 ? (sqlite3_uint64)0 - (sqlite3_uint64)value->integer : (sqlite3_uint64)value->integer;
  do {
    reversed[n++] = (char)('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude > 0);
  int at = 0;
  if (value->integer < 0) value->digits[at++] = '-';
  while (n > 0) value->digits[at++] = reversed[--n];
  value->has_digits = 1;
  value->bytes = (const unsigned char *)value->digits;
  value->length = at;
}

/* As SQLite's: NULL for NULL and for an empty value; an integer as its digits. */
static inline const void *copy_value_blob(sqlite3_value *value) {
  if (value->type == SQLITE_NULL) return 0;
  if (value->type == SQLITE_INTEGER) copy_value_digits(value);
  return value->length == 0 ? 0 : value->bytes;
}

static inline int copy_value_bytes(sqlite3_value *value) {
  if (value->type == SQLITE_NULL) return 0;
  if (value->type == SQLITE_INTEGER) copy_value_digits(value);
  return value->length;
}

static inline int copy_value_type(sqlite3_value *value) { return value->type; }

/* A text's leading integer, as SQLite reads one (none is asked for: a column's type is known). */
static inline sqlite3_int64 copy_value_int64(sqlite3_value *value) {
  if (value->type == SQLITE_INTEGER) return value->integer;
  if (value->type != SQLITE_TEXT) return 0;
  sqlite3_int64 result = 0;
  int at = 0, negative = 0;
  while (at < value->length && value->bytes[at] == ' ') at++;
  if (at < value->length && (value->bytes[at] == '-' || value->bytes[at] == '+')) negative = value->bytes[at++] == '-';
  for (; at < value->length && value->bytes[at] >= '0' && value->bytes[at] <= '9'; at++) result = result * 10 + (value->bytes[at] - '0');
  return negative ? -result : result;
}

#ifdef PRICE_EXPORT_COPY_VALUES
#undef sqlite3_value_type
#undef sqlite3_value_blob
#undef sqlite3_value_bytes
#undef sqlite3_value_int64
#define sqlite3_value_type copy_value_type
#define sqlite3_value_blob copy_value_blob
#define sqlite3_value_bytes copy_value_bytes
#define sqlite3_value_int64 copy_value_int64
#endif

#endif
