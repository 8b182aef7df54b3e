/* A PostgreSQL binary COPY read for the records aggregates (copy_reader.h). */
#include "copy_reader.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char SIGNATURE[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};

static int32_t int32_at(const unsigned char *at) {
  return (int32_t)(((uint32_t)at[0] << 24) | ((uint32_t)at[1] << 16) | ((uint32_t)at[2] << 8) | (uint32_t)at[3]);
}

/* A big-endian signed integer of 1, 2, 4 or 8 bytes. */
static int integer_field(const unsigned char *at, int32_t length, sqlite3_int64 *out) {
  if (length != 1 && length != 2 && length != 4 && length != 8) return 0;
  uint64_t bits = 0;
  for (int32_t i = 0; i < length; i++) bits = (bits << 8) | at[i];
  if (length < 8 && (at[0] & 0x80)) bits |= ~(uint64_t)0 << (8 * length);
  *out = (sqlite3_int64)bits;
  return 1;
}

/*
 * Where a read is in the CopyData messages: PostgreSQL sends the header, each row and the trailer
 * in a message of its own, so a row is read where it lies, the next message's 5-byte header
 * skipped between rows. A value that runs on into the next message (as another server may cut
 * them) joins the rest of the bodies in place, once, and the read goes on over them. Stripping
 * the framing of every page first cost a pass over all its bytes: ~3.5 % of the service's CPU in
 * a 1M-item YML render (bench/RESULTS.md, "2026-11-27, before midnight").
 */
typedef struct {
  unsigned char *at;
  /* The end of the current message's body; of the data once the rest is joined. */
  unsigned char *body_end;
  unsigned char *end;
  int joined;
  const char *error;
} Cursor;

/* What copy_data_body answers for a message it cannot take. */
enum { CUT_SHORT = -1, NOT_COPY_DATA = -2 };

/*
 * The body's length of the CopyData message at `at`, `left` bytes from it; CUT_SHORT when its
 * header or body runs past them, NOT_COPY_DATA when it is no CopyData message. The reader and
 * copy_data_run, which finds a socket chunk's whole messages, read the framing alike.
 */
static int64_t copy_data_body(const unsigned char *at, size_t left) {
  if (left < 5) return CUT_SHORT;
  int32_t size = int32_at(at + 1);
  if (at[0] != 'd' || size < 4) return NOT_COPY_DATA;
  if ((size_t)size > left - 1) return CUT_SHORT;
  return (int64_t)size - 4;
}

/* copy_data_body, its refusal made the cursor's error. */
static int64_t body_length(Cursor *c, const unsigned char *at, size_t left) {
  int64_t length = copy_data_body(at, left);
  if (length == CUT_SHORT) c->error = "COPY: a CopyData message cut short";
  if (length == NOT_COPY_DATA) c->error = "COPY: a message that is no CopyData among the rows";
  return length;
}

/* Past the headers of the messages that follow a body read to its end. 0 on a framing error. */
static int next_body(Cursor *c) {
  while (c->at == c->body_end && c->at < c->end && !c->joined) {
    int64_t length = body_length(c, c->at, (size_t)(c->end - c->at));
    if (length < 0) return 0;
    c->at += 5;
    c->body_end = c->at + length;
  }
  return 1;
}

/* The bodies after the current one moved up in place to follow it: from here on one run. */
static int join_rest(Cursor *c) {
  unsigned char *out = c->body_end, *from = c->body_end;
  while (from < c->end) {
    int64_t length = body_length(c, from, (size_t)(c->end - from));
    if (length < 0) return 0;
    memmove(out, from + 5, (size_t)length);
    out += length, from += 5 + length;
  }
  c->body_end = c->end = out;
  c->joined = 1;
  return 1;
}

/* `n` bytes at c->at in one piece; 0 when the data ends first, or on a framing error (c->error). */
static inline int have(Cursor *c, size_t n) {
  if ((size_t)(c->body_end - c->at) >= n) return 1;
  if (!next_body(c)) return 0;
  if ((size_t)(c->body_end - c->at) >= n) return 1;
  if (!c->joined && !join_rest(c)) return 0;
  return (size_t)(c->body_end - c->at) >= n;
}

const char *read_rows(unsigned char *messages, size_t length, const RowCall *call) {
  Cursor c = {.at = messages, .body_end = messages, .end = messages + length};
  int column_count = call->column_count;
  const char *error = NULL;
  sqlite3_value *row = calloc((size_t)(column_count > 0 ? column_count : 1), sizeof(sqlite3_value));
  sqlite3_value **argv = calloc((size_t)(call->argument_count > 0 ? call->argument_count : 1), sizeof(sqlite3_value *));
  if (!row || !argv) {
    error = "out of memory";
    goto done;
  }
  for (int i = 0; i < call->argument_count; i++) argv[i] = call->columns[i] < 0 ? &call->constants[i] : &row[call->columns[i]];

  if (!have(&c, 19) || memcmp(c.at, SIGNATURE, sizeof SIGNATURE) != 0) {
    error = "COPY binary: not a binary COPY signature";
    goto done;
  }
  if ((uint32_t)int32_at(c.at + 11) & 0xffff0000u) {
    error = "COPY binary: unknown critical flags";
    goto done;
  }
  int32_t extension = int32_at(c.at + 15);
  c.at += 19;
  if (extension < 0 || !have(&c, (size_t)extension)) {
    error = "COPY binary: a header extension past the data";
    goto done;
  }
  c.at += extension;
  for (;;) {
    if (!have(&c, 2)) {
      error = "COPY binary: the data ended before its trailer";
      goto done;
    }
    int fields = (int16_t)((c.at[0] << 8) | c.at[1]);
    c.at += 2;
    if (fields == -1) break;
    if (fields != column_count) {
      error = "COPY binary: a row with another number of fields than its columns";
      goto done;
    }
    for (int i = 0; i < column_count; i++) {
      if (!have(&c, 4)) {
        error = "COPY binary: a row cut short";
        goto done;
      }
      int32_t field_length = int32_at(c.at);
      c.at += 4;
      sqlite3_value *value = &row[i];
      value->has_digits = 0;
      if (field_length == -1) {
        value->type = SQLITE_NULL, value->bytes = NULL, value->length = 0;
        continue;
      }
      if (field_length < 0 || !have(&c, (size_t)field_length)) {
        error = "COPY binary: a field past the data";
        goto done;
      }
      if (call->column_types[i] == 't') {
        value->type = SQLITE_TEXT, value->bytes = c.at, value->length = field_length;
      } else if (integer_field(c.at, field_length, &value->integer)) {
        value->type = SQLITE_INTEGER;
        if (call->column_types[i] == 'b') value->integer = value->integer != 0;
      } else {
        error = "COPY binary: an integer or boolean field of another size";
        goto done;
      }
      c.at += field_length;
    }
    call->step(call->context, call->argument_count, argv);
  }
  if (next_body(&c) && c.at != c.end) error = "COPY binary: data after the trailer";
done:
  /* A framing error found on the way is what is wrong, whatever the read made of it. */
  if (c.error) error = c.error;
  free(row);
  free(argv);
  return error;
}

size_t copy_data_run(const unsigned char *bytes, size_t length, size_t offset) {
  size_t at = offset;
  for (int64_t body; (body = copy_data_body(bytes + at, length - at)) >= 0;) at += 5 + (size_t)body;
  return at;
}
