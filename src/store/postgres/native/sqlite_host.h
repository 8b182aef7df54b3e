/*
 * An SQLite of our own for the records extension (../../sqlite/native/): the routines table a
 * loadable extension reaches SQLite through (sqlite3ext.h), over the module's values
 * (copy_values.h) and contexts that each hold one page, and the functions the extension
 * registered, by name. Nothing of SQLite itself is linked in.
 */
#ifndef PRICE_EXPORT_SQLITE_HOST_H
#define PRICE_EXPORT_SQLITE_HOST_H

#include "sqlite3ext.h"
#include "copy_values.h"

struct sqlite3_context {
  void *aggregate;
  /* The result: a blob (malloc'd, the caller's to free), NULL, an integer or an error. */
  void *blob;
  sqlite3_uint64 blob_length;
  int integer;
  /* A page of rows whose records are all empty (zeroblob): an empty Buffer, not null. */
  int empty;
  const char *error;
};

typedef void (*StepFunction)(sqlite3_context *, int, sqlite3_value **);
typedef void (*FinalFunction)(sqlite3_context *);

/* Registers the extension's functions, once a process; SQLITE_OK when they are. */
int host_register(void);
/* A registered function's index by name, or -1. */
int host_find(const char *name);
/* Its scalar function, or its aggregate's step and final (NULL for what it has not). */
StepFunction host_call(int function);
StepFunction host_step(int function);
FinalFunction host_final(int function);

#endif
