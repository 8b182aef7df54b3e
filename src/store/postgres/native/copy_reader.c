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

const char *read_rows(const unsigned char *copy, size_t length, const RowCall *call) {
  const unsigned char *at = copy;
  const unsigned char *end = at + length;
  int column_count = call->column_count;
  const char *error = NULL;
  sqlite3_value *row = calloc((size_t)(column_count > 0 ? column_count : 1), sizeof(sqlite3_value));
  sqlite3_value **argv = calloc((size_t)(call->argument_count > 0 ? call->argument_count : 1), sizeof(sqlite3_value *));
  if (!row || !argv) {
    error = "out of memory";
    goto done;
  }
  for (int i = 0; i < call->argument_count; i++) argv[i] = call->columns[i] < 0 ? &call->constants[i] : &row[call->columns[i]];

  if (end - at < 19 || memcmp(at, SIGNATURE, sizeof SIGNATURE) != 0) {
    error = "COPY binary: not a binary COPY signature";
    goto done;
  }
  if ((uint32_t)int32_at(at + 11) & 0xffff0000u) {
    error = "COPY binary: unknown critical flags";
    goto done;
  }
  int32_t extension = int32_at(at + 15);
  at += 19;
  if (extension < 0 || end - at < extension) {
    error = "COPY binary: a header extension past the data";
    goto done;
  }
  at += extension;
  for (;;) {
    if (end - at < 2) {
      error = "COPY binary: the data ended before its trailer";
      goto done;
    }
    int fields = (int16_t)((at[0] << 8) | at[1]);
    at += 2;
    if (fields == -1) break;
    if (fields != column_count) {
      error = "COPY binary: a row with another number of fields than its columns";
      goto done;
    }
    for (int i = 0; i < column_count; i++) {
      if (end - at < 4) {
        error = "COPY binary: a row cut short";
        goto done;
      }
      int32_t length = int32_at(at);
      at += 4;
      sqlite3_value *value = &row[i];
      value->has_digits = 0;
      if (length == -1) {
        value->type = SQLITE_NULL, value->bytes = NULL, value->length = 0;
        continue;
      }
      if (length < 0 || end - at < length) {
        error = "COPY binary: a field past the data";
        goto done;
      }
      if (call->column_types[i] == 't') {
        value->type = SQLITE_TEXT, value->bytes = at, value->length = length;
      } else if (integer_field(at, length, &value->integer)) {
        value->type = SQLITE_INTEGER;
        if (call->column_types[i] == 'b') value->integer = value->integer != 0;
      } else {
        error = "COPY binary: an integer or boolean field of another size";
        goto done;
      }
      at += length;
    }
    call->step(call->context, call->argument_count, argv);
  }
  if (at != end) error = "COPY binary: data after the trailer";
done:
  free(row);
  free(argv);
  return error;
}

const char *unframe(const Piece *pieces, size_t count, unsigned char **made, unsigned char **copy, size_t *copy_length) {
  *made = NULL, *copy = NULL, *copy_length = 0;
  unsigned char *out;
  if (count == 1) {
    /* In place: a body is written where its message (header and all) began, or earlier, never
     * past what is yet to be read; memmove, for the two may overlap. A copy of the whole page
     * into a buffer of its own cost 100–150 MiB of copying a 1M-item render, and a pool of such
     * buffers beside copy-bytes.ts's (bench/RESULTS.md, "2026-11-28"). */
    out = pieces[0].bytes;
  } else {
    size_t total = 0;
    for (size_t i = 0; i < count; i++) total += pieces[i].length;
    out = *made = malloc(total + 1);
    if (!out) return "out of memory";
  }
  unsigned char header[5];
  int header_have = 0;
  size_t body_left = 0, length = 0;
  for (size_t i = 0; i < count; i++) {
    const unsigned char *at = pieces[i].bytes, *end = at + pieces[i].length;
    while (at < end) {
      if (body_left > 0) {
        size_t used = (size_t)(end - at) < body_left ? (size_t)(end - at) : body_left;
        memmove(out + length, at, used);
        length += used, at += used, body_left -= used;
        continue;
      }
      header[header_have++] = *at++;
      if (header_have < 5) continue;
      header_have = 0;
      int32_t size = int32_at(header + 1);
      if (header[0] != 'd' || size < 4) return "COPY: a message that is no CopyData among the rows";
      body_left = (size_t)size - 4;
    }
  }
  *copy = out, *copy_length = length;
  return header_have > 0 || body_left > 0 ? "COPY: a CopyData message cut short" : NULL;
}

size_t copy_data_run(const unsigned char *bytes, size_t length, size_t offset) {
  size_t at = offset;
  while (length - at >= 5 && bytes[at] == 'd') {
    int32_t size = int32_at(bytes + at + 1);
    if (size < 4 || (size_t)size + 1 > length - at) break;
    at += (size_t)size + 1;
  }
  return at;
}
