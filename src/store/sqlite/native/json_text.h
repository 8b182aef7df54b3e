/*
 * Reading the JSON texts the store writes (an item's `extra`, a YML category map, both made by
 * JSON.stringify) without a parser's tree: an object's members as spans of the text, a string
 * decoded only when asked. yml_offers.c reads them so.
 *
 * Why not SQLite's JSON functions, which the SQL twin (yml-sql.ts) calls: a json_extract per key
 * and a json_each per offer's attributes kept the first YML at 0.79–1.24× `sqlite3 -json`, and
 * this walk, once a row, made it 1.41–1.67× (bench/RESULTS.md, "2026-11-27, night"). It reads
 * only what JSON.stringify writes: no comments, no duplicate keys, valid UTF-8; a text that is
 * not an object fails the page instead.
 */
#ifndef PRICE_EXPORT_JSON_TEXT_H
#define PRICE_EXPORT_JSON_TEXT_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

enum { V_NULL, V_INTEGER, V_TEXT, V_JSON_STRING, V_JSON_OTHER };

/* A value: SQL NULL, an integer, UTF-8 text, a JSON string's body (escapes not decoded) or another JSON value's text. */
typedef struct {
  int type;
  const unsigned char *bytes;
  sqlite3_int64 length;
  sqlite3_int64 integer;
} Value;

/*
 * Walks a JSON object's members: `member` is called with each key's body (escapes not decoded)
 * and value (a string's body, an integer, null, or another value's text), and returns 1 to go
 * on, 0 to stop there (what it looked for is found), -1 when it failed. -1 when the text is no
 * object or `member` failed, else 1.
 */
typedef int (*Member)(void *context, const unsigned char *key, int key_length, Value value);
int each_member(const unsigned char *p, const unsigned char *end, Member member, void *context);

/* A JSON string's body decoded to UTF-8 at out (never longer than the body, so out may be the body itself); its length, or -1. */
sqlite3_int64 decode_string(const unsigned char *p, sqlite3_int64 length, unsigned char *out);

#endif
