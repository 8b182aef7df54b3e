/*
 * A PostgreSQL binary COPY read for the records aggregates (PostgreSQL docs, "Message Formats"
 * and "COPY", Binary Format): the CopyData messages' framing stripped, each row's fields made the
 * aggregate's values, and the run of whole CopyData messages in a socket's chunk.
 */
#ifndef PRICE_EXPORT_COPY_READER_H
#define PRICE_EXPORT_COPY_READER_H

#include "sqlite_host.h"
#include <stddef.h>

/* A piece of the messages: writable, for the framing is stripped in place where there is one. */
typedef struct {
  unsigned char *bytes;
  size_t length;
} Piece;

/*
 * The CopyData messages in `pieces` (cut anywhere), their bodies joined: the binary COPY, at
 * *copy for *length bytes. One piece (what copy-bytes.ts hands over) is unframed in place, its
 * bytes overwritten from its start; several are joined into a buffer made here, *made, for the
 * caller to free (NULL when none was made). NULL, or what is wrong.
 */
const char *unframe(const Piece *pieces, size_t count, unsigned char **made, unsigned char **copy, size_t *length);

/* A page's call: its aggregate's step, its arguments over a row's columns and its constants. */
typedef struct {
  StepFunction step;
  sqlite3_context *context;
  int argument_count;
  /* Per argument: the column it reads, or -1 for its constant. */
  const int *columns;
  sqlite3_value *constants;
  /* One letter per column: t text, i integer (int2, int4, int8), b boolean. */
  const char *column_types;
  int column_count;
} RowCall;

/* Steps the aggregate over each row of the binary COPY; NULL, or what is wrong with it. */
const char *read_rows(const unsigned char *copy, size_t length, const RowCall *call);

/* The offset after the run of whole CopyData messages from `offset` in `bytes`. */
size_t copy_data_run(const unsigned char *bytes, size_t length, size_t offset);

#endif
