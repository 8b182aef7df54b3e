/*
 * A PostgreSQL binary COPY read for the records aggregates (PostgreSQL docs, "Message Formats"
 * and "COPY", Binary Format): each row's fields, read in its CopyData message, made the
 * aggregate's values, and the run of whole CopyData messages in a socket's chunk.
 */
#ifndef PRICE_EXPORT_COPY_READER_H
#define PRICE_EXPORT_COPY_READER_H

#include "sqlite_host.h"
#include <stddef.h>

/* A piece of the messages: writable, for a row cut across messages is joined in place. */
typedef struct {
  unsigned char *bytes;
  size_t length;
} Piece;

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

/*
 * Steps the aggregate over each row of the binary COPY in `messages`, its CopyData messages,
 * framing and all; NULL, or what is wrong with them. A row cut across messages has the bodies
 * after it joined in place: `messages` may be overwritten.
 */
const char *read_rows(unsigned char *messages, size_t length, const RowCall *call);

/* The offset after the run of whole CopyData messages from `offset` in `bytes`. */
size_t copy_data_run(const unsigned char *bytes, size_t length, size_t offset);

#endif
