/* An SQLite of our own for the records extension (sqlite_host.h). */
#include "sqlite_host.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_priceexportrecords_init(sqlite3 *db, char **error, const sqlite3_api_routines *api);

/* The aggregates read their values in place (copy_values.h), never through the table: built so. */
#ifndef PRICE_EXPORT_COPY_VALUES
#error "the module is built with -DPRICE_EXPORT_COPY_VALUES (scripts/build-native.mjs)"
#endif

static void *malloc64(sqlite3_uint64 size) { return malloc(size == 0 ? 1 : (size_t)size); }
static void *realloc64(void *memory, sqlite3_uint64 size) { return realloc(memory, size == 0 ? 1 : (size_t)size); }
static void free_memory(void *memory) { free(memory); }

static void *aggregate_context(sqlite3_context *context, int size) {
  if (!context->aggregate && size > 0) context->aggregate = calloc(1, (size_t)size);
  return context->aggregate;
}

/* Takes the blob over: page_final hands its page with sqlite3_free (free_memory); anything else is copied. */
static void result_blob64(sqlite3_context *context, const void *blob, sqlite3_uint64 length, void (*destructor)(void *)) {
  void *owned = (void *)blob;
  if (destructor != free_memory) {
    owned = malloc(length ? (size_t)length : 1);
    if (!owned) {
      context->error = "out of memory";
      return;
    }
    memcpy(owned, blob, (size_t)length);
    if (destructor != SQLITE_STATIC && destructor != SQLITE_TRANSIENT) destructor((void *)blob);
  }
  context->blob = owned;
  context->blob_length = length;
}

static void result_error(sqlite3_context *context, const char *message, int length) {
  (void)length;
  context->error = message;
}

static void result_error_nomem(sqlite3_context *context) { context->error = "out of memory"; }
static void result_null(sqlite3_context *context) { context->blob = NULL, context->blob_length = 0; }
static void result_zeroblob(sqlite3_context *context, int length) {
  (void)length;
  context->blob = NULL, context->blob_length = 0;
  context->empty = 1;
}
static void result_int(sqlite3_context *context, int value) { context->integer = value; }

/* The functions the extension registered, by name. */
#define MAX_FUNCTIONS 8
static struct {
  char name[48];
  StepFunction call; /* a scalar function */
  StepFunction step;
  FinalFunction final;
} functions[MAX_FUNCTIONS];
static int function_count = 0;

static int create_function(sqlite3 *db, const char *name, int arguments, int flags, void *data, StepFunction call, StepFunction step,
                           FinalFunction final) {
  (void)db, (void)arguments, (void)flags, (void)data;
  if (function_count == MAX_FUNCTIONS || strlen(name) >= sizeof functions[0].name) return SQLITE_ERROR;
  strcpy(functions[function_count].name, name);
  functions[function_count].call = call;
  functions[function_count].step = step;
  functions[function_count].final = final;
  function_count++;
  return SQLITE_OK;
}

static sqlite3_api_routines routines;
static int registered = SQLITE_ERROR;

/* Once a process: each worker thread that loads the module runs its init again. */
static void register_functions(void) {
  routines.malloc64 = malloc64;
  routines.realloc64 = realloc64;
  routines.free = free_memory;
  routines.aggregate_context = aggregate_context;
  routines.result_blob64 = result_blob64;
  routines.result_error = result_error;
  routines.result_error_nomem = result_error_nomem;
  routines.result_null = result_null;
  routines.result_zeroblob = result_zeroblob;
  routines.result_int = result_int;
  routines.create_function = create_function;
  /* No database: the init only registers its functions through the table. */
  registered = sqlite3_priceexportrecords_init(NULL, NULL, &routines);
}

int host_register(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_functions);
  return registered;
}

int host_find(const char *name) {
  for (int i = 0; i < function_count; i++) {
    if (strcmp(functions[i].name, name) == 0) return i;
  }
  return -1;
}

StepFunction host_call(int function) { return functions[function].call; }
StepFunction host_step(int function) { return functions[function].step; }
FinalFunction host_final(int function) { return functions[function].final; }
