/*
 * A Node-API module that builds a page of CSV/TSV, JSON, XML or YML records out of a
 * PostgreSQL binary COPY of the stored columns, with the very C aggregates SQLite's pages run
 * (../../sqlite/native/: price_export_records.c, yml_offers.c, records_page.c), compiled in
 * unchanged.
 *
 * Why: with the records built by PostgreSQL's expressions, the server spent ~2.3 µs a JSON
 * record (~2.5 µs an offer, half of it reading `extra`) against ~0.9 µs for COPY's own text, and
 * the first JSON, XML and YML stayed at 1.05×, 0.92× and 0.58–0.68× `psql \copy` (issue #18 goal
 * 1; bench/RESULTS.md, "2026-11-27, night"). Here the server sends the plain columns, as psql
 * gets them, and the records are built in the instance off the event loop, on libuv's threads.
 *
 * How the aggregates run outside SQLite: a loadable extension calls SQLite only through the
 * routines table its init function is given (sqlite3ext.h). This file gives it a table of its
 * own, whose values are the COPY's fields (struct sqlite3_value below) and whose contexts hold
 * one page (struct sqlite3_context), then calls the step and final functions the extension
 * registered by name. Nothing of SQLite itself is linked in.
 *
 *   build(name, arguments, columnTypes, messages) → Promise<Buffer | null>
 *
 * `name` an aggregate (price_export_json …); `arguments` one entry per argument of its call: a
 * number is a column of the COPY's rows (0-based), a string a text constant, null a NULL;
 * `columnTypes` one letter per column: `t` text, `i` an integer (int2, int4 or int8), `b` a
 * boolean (read as the integer 0 or 1, as SQLite stores it); `messages` the COPY's CopyData
 * messages as the server sent them, framing and all, in Buffers cut anywhere (views of the
 * socket's chunks: copy-bytes.ts): their bodies, joined, are the binary COPY (PostgreSQL docs,
 * "COPY", Binary Format). The framing is stripped here, on the worker thread, while the bodies are
 * copied into one buffer. The promise gives the page's bytes, null for no rows, or fails with the
 * aggregate's or the parser's error.
 *
 *   copyDataRun(chunk, offset) → offset   (below)
 *
 * Built with -fvisibility=hidden and -Bsymbolic (scripts/build-native.mjs): SQLite loads the
 * extension's own build into the same process with RTLD_GLOBAL, and its symbols of the same
 * names (sqlite3_api, reserve, …) must not stand in for this module's.
 */
#include <node_api.h>
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3
#include "copy_values.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_priceexportrecords_init(sqlite3 *db, char **error, const sqlite3_api_routines *api);

struct sqlite3_context {
  void *aggregate;
  /* The result: a blob (owned, freed with blob_free), NULL, an integer or an error. */
  void *blob;
  sqlite3_uint64 blob_length;
  void (*blob_free)(void *);
  int integer;
  /* A page of rows whose records are all empty (zeroblob): an empty Buffer, not null. */
  int empty;
  const char *error;
};

/* ---- The routines the extension calls ---- */

/* The table's value routines: the module's own values (copy_values.h), for what calls through the table. */
static const void *value_blob(sqlite3_value *value) { return copy_value_blob(value); }
static int value_bytes(sqlite3_value *value) { return copy_value_bytes(value); }
static int value_type(sqlite3_value *value) { return copy_value_type(value); }
static sqlite3_int64 value_int64(sqlite3_value *value) { return copy_value_int64(value); }

static void *malloc64(sqlite3_uint64 size) { return malloc(size == 0 ? 1 : (size_t)size); }
static void *realloc64(void *memory, sqlite3_uint64 size) { return realloc(memory, size == 0 ? 1 : (size_t)size); }
static void free_memory(void *memory) { free(memory); }

static void *aggregate_context(sqlite3_context *context, int size) {
  if (!context->aggregate && size > 0) context->aggregate = calloc(1, (size_t)size);
  return context->aggregate;
}

static void result_blob64(sqlite3_context *context, const void *blob, sqlite3_uint64 length, void (*destructor)(void *)) {
  context->blob = (void *)blob;
  context->blob_length = length;
  context->blob_free = destructor;
}

static void result_error(sqlite3_context *context, const char *message, int length) {
  (void)length;
  context->error = message;
}

static void result_error_nomem(sqlite3_context *context) { context->error = "out of memory"; }
static void result_null(sqlite3_context *context) { context->blob = NULL, context->blob_length = 0; }
static void result_zeroblob(sqlite3_context *context, int length) {
  (void)length;
  context->blob = NULL, context->blob_length = 0, context->blob_free = NULL;
  context->empty = 1;
}
static void result_int(sqlite3_context *context, int value) { context->integer = value; }

typedef void (*StepFunction)(sqlite3_context *, int, sqlite3_value **);
typedef void (*FinalFunction)(sqlite3_context *);

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

static int find_function(const char *name) {
  for (int i = 0; i < function_count; i++) {
    if (strcmp(functions[i].name, name) == 0) return i;
  }
  return -1;
}

static sqlite3_api_routines routines;

/* ---- The binary COPY ---- */

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

/* One call of build(): what the worker thread reads, and what it leaves for the main thread. */
typedef struct {
  const unsigned char *bytes;
  size_t length;
} Piece;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  /* The array of messages' pieces, kept alive while the worker reads them. */
  napi_ref pieces_ref;
  Piece *pieces;
  uint32_t piece_count;
  /* The COPY, the framing stripped (unframe). */
  unsigned char *copy;
  size_t copy_length;
  int function;
  int argument_count;
  /* Per argument: the column it reads, or -1 for its constant. */
  int *columns;
  sqlite3_value *constants;
  char *constant_text;
  int column_count;
  char *column_types;
  /* The outcome. */
  sqlite3_context context;
  const char *error;
} Build;

/* Reads the COPY's rows into the aggregate; sets build->error on a malformed COPY. */
static void run_rows(Build *build) {
  const unsigned char *at = build->copy;
  const unsigned char *end = at + build->copy_length;
  StepFunction step = functions[build->function].step;
  int column_count = build->column_count;
  sqlite3_value *row = calloc((size_t)(column_count > 0 ? column_count : 1), sizeof(sqlite3_value));
  sqlite3_value **argv = calloc((size_t)(build->argument_count > 0 ? build->argument_count : 1), sizeof(sqlite3_value *));
  if (!row || !argv) {
    build->error = "out of memory";
    goto done;
  }
  for (int i = 0; i < build->argument_count; i++) argv[i] = build->columns[i] < 0 ? &build->constants[i] : &row[build->columns[i]];

  if (end - at < 19 || memcmp(at, SIGNATURE, sizeof SIGNATURE) != 0) {
    build->error = "COPY binary: not a binary COPY signature";
    goto done;
  }
  if ((uint32_t)int32_at(at + 11) & 0xffff0000u) {
    build->error = "COPY binary: unknown critical flags";
    goto done;
  }
  int32_t extension = int32_at(at + 15);
  at += 19;
  if (extension < 0 || end - at < extension) {
    build->error = "COPY binary: a header extension past the data";
    goto done;
  }
  at += extension;
  for (;;) {
    if (end - at < 2) {
      build->error = "COPY binary: the data ended before its trailer";
      goto done;
    }
    int fields = (int16_t)((at[0] << 8) | at[1]);
    at += 2;
    if (fields == -1) break;
    if (fields != column_count) {
      build->error = "COPY binary: a row with another number of fields than its columns";
      goto done;
    }
    for (int i = 0; i < column_count; i++) {
      if (end - at < 4) {
        build->error = "COPY binary: a row cut short";
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
        build->error = "COPY binary: a field past the data";
        goto done;
      }
      if (build->column_types[i] == 't') {
        value->type = SQLITE_TEXT, value->bytes = at, value->length = length;
      } else if (integer_field(at, length, &value->integer)) {
        value->type = SQLITE_INTEGER;
        if (build->column_types[i] == 'b') value->integer = value->integer != 0;
      } else {
        build->error = "COPY binary: an integer or boolean field of another size";
        goto done;
      }
      at += length;
    }
    step(&build->context, build->argument_count, argv);
  }
  if (at != end) build->error = "COPY binary: data after the trailer";
done:
  free(row);
  free(argv);
}

/* The CopyData messages' bodies, joined into build->copy; sets build->error on anything else. */
static void unframe(Build *build) {
  size_t total = 0;
  for (uint32_t i = 0; i < build->piece_count; i++) total += build->pieces[i].length;
  build->copy = malloc(total ? total : 1);
  if (!build->copy) {
    build->error = "out of memory";
    return;
  }
  unsigned char header[5];
  int header_have = 0;
  size_t body_left = 0, length = 0;
  for (uint32_t i = 0; i < build->piece_count; i++) {
    const unsigned char *at = build->pieces[i].bytes, *end = at + build->pieces[i].length;
    while (at < end) {
      if (body_left > 0) {
        size_t used = (size_t)(end - at) < body_left ? (size_t)(end - at) : body_left;
        memcpy(build->copy + length, at, used);
        length += used, at += used, body_left -= used;
        continue;
      }
      header[header_have++] = *at++;
      if (header_have < 5) continue;
      header_have = 0;
      int32_t size = int32_at(header + 1);
      if (header[0] != 'd' || size < 4) {
        build->error = "COPY: a message that is no CopyData among the rows";
        return;
      }
      body_left = (size_t)size - 4;
    }
  }
  if (header_have > 0 || body_left > 0) build->error = "COPY: a CopyData message cut short";
  build->copy_length = length;
}

static void execute(napi_env env, void *data) {
  (void)env;
  Build *build = data;
  unframe(build);
  if (!build->error) run_rows(build);
  /* Final frees the aggregate's state whether or not the rows were read whole. */
  functions[build->function].final(&build->context);
  free(build->context.aggregate);
  build->context.aggregate = NULL;
}

static void free_blob(napi_env env, void *data, void *hint) {
  (void)env;
  void (*destructor)(void *) = (void (*)(void *))hint;
  if (destructor && destructor != SQLITE_STATIC && destructor != SQLITE_TRANSIENT) destructor(data);
}

static void release(napi_env env, Build *build) {
  if (build->pieces_ref) napi_delete_reference(env, build->pieces_ref);
  free(build->pieces);
  free(build->copy);
  if (build->work) napi_delete_async_work(env, build->work);
  free(build->columns);
  free(build->constants);
  free(build->constant_text);
  free(build->column_types);
  free(build);
}

static void reject(napi_env env, napi_deferred deferred, const char *message) {
  napi_value text, error;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &error);
  napi_reject_deferred(env, deferred, error);
}

static void complete(napi_env env, napi_status status, void *data) {
  Build *build = data;
  sqlite3_context *context = &build->context;
  const char *error = status != napi_ok ? "the page's build was cancelled" : build->error ? build->error : context->error;
  if (error) {
    if (context->blob && context->blob_free) free_blob(env, context->blob, (void *)context->blob_free);
    reject(env, build->deferred, error);
  } else {
    napi_value result;
    if (context->blob) {
      napi_status made = napi_create_external_buffer(env, (size_t)context->blob_length, context->blob, free_blob, (void *)context->blob_free, &result);
      if (made != napi_ok) {
        /* Runtimes that forbid external buffers: a copy. */
        void *copied;
        napi_create_buffer_copy(env, (size_t)context->blob_length, context->blob, &copied, &result);
        free_blob(env, context->blob, (void *)context->blob_free);
      }
    } else if (context->empty) {
      void *none;
      napi_create_buffer(env, 0, &none, &result);
    } else {
      napi_get_null(env, &result);
    }
    napi_resolve_deferred(env, build->deferred, result);
  }
  release(env, build);
}

/* Throws a TypeError and answers NULL. */
static napi_value usage(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static napi_value build(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc != 4) return usage(env, "build(name, arguments, columnTypes, messages)");

  char name[48];
  size_t name_length;
  if (napi_get_value_string_utf8(env, args[0], name, sizeof name, &name_length) != napi_ok) return usage(env, "name: a string");
  int function = find_function(name);
  if (function < 0 || !functions[function].step) return usage(env, "name: no aggregate of that name");

  bool is_array;
  napi_is_array(env, args[3], &is_array);
  if (!is_array) return usage(env, "messages: an array of Buffers");

  Build *build = calloc(1, sizeof(Build));
  if (!build) return usage(env, "out of memory");
  build->function = function;

  size_t types_length;
  if (napi_get_value_string_utf8(env, args[2], NULL, 0, &types_length) != napi_ok) {
    release(env, build);
    return usage(env, "columnTypes: a string");
  }
  build->column_types = malloc(types_length + 1);
  napi_get_value_string_utf8(env, args[2], build->column_types, types_length + 1, &types_length);
  build->column_count = (int)types_length;
  for (size_t i = 0; i < types_length; i++) {
    char type = build->column_types[i];
    if (type != 't' && type != 'i' && type != 'b') {
      release(env, build);
      return usage(env, "columnTypes: one of t, i, b per column");
    }
  }

  uint32_t count;
  napi_is_array(env, args[1], &is_array);
  if (!is_array) {
    release(env, build);
    return usage(env, "arguments: an array");
  }
  napi_get_array_length(env, args[1], &count);
  build->argument_count = (int)count;
  build->columns = calloc(count ? count : 1, sizeof(int));
  build->constants = calloc(count ? count : 1, sizeof(sqlite3_value));
  /* The constants' texts, one after another: measured first, then copied. */
  size_t text_total = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value entry;
    napi_valuetype type;
    napi_get_element(env, args[1], i, &entry);
    napi_typeof(env, entry, &type);
    if (type == napi_string) {
      size_t length;
      napi_get_value_string_utf8(env, entry, NULL, 0, &length);
      text_total += length + 1;
    }
  }
  build->constant_text = malloc(text_total ? text_total : 1);
  size_t text_at = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value entry;
    napi_valuetype type;
    napi_get_element(env, args[1], i, &entry);
    napi_typeof(env, entry, &type);
    sqlite3_value *constant = &build->constants[i];
    build->columns[i] = -1;
    if (type == napi_number) {
      int32_t column;
      napi_get_value_int32(env, entry, &column);
      if (column < 0 || column >= build->column_count) {
        release(env, build);
        return usage(env, "arguments: a column number past columnTypes");
      }
      build->columns[i] = column;
    } else if (type == napi_string) {
      size_t length;
      napi_get_value_string_utf8(env, entry, build->constant_text + text_at, text_total - text_at, &length);
      constant->type = SQLITE_TEXT;
      constant->bytes = (const unsigned char *)build->constant_text + text_at;
      constant->length = (int)length;
      text_at += length + 1;
    } else if (type == napi_null) {
      constant->type = SQLITE_NULL;
    } else {
      release(env, build);
      return usage(env, "arguments: a column number, a string or null each");
    }
  }

  napi_get_array_length(env, args[3], &build->piece_count);
  build->pieces = calloc(build->piece_count ? build->piece_count : 1, sizeof(Piece));
  for (uint32_t i = 0; i < build->piece_count; i++) {
    napi_value piece;
    bool is_buffer;
    napi_get_element(env, args[3], i, &piece);
    napi_is_buffer(env, piece, &is_buffer);
    if (!is_buffer) {
      release(env, build);
      return usage(env, "messages: an array of Buffers");
    }
    void *bytes;
    napi_get_buffer_info(env, piece, &bytes, &build->pieces[i].length);
    build->pieces[i].bytes = bytes;
  }
  napi_create_reference(env, args[3], 1, &build->pieces_ref);

  napi_value promise, resource_name;
  napi_create_promise(env, &build->deferred, &promise);
  napi_create_string_utf8(env, "price-export:copy-records", NAPI_AUTO_LENGTH, &resource_name);
  napi_create_async_work(env, NULL, resource_name, execute, complete, build, &build->work);
  napi_queue_async_work(env, build->work);
  return promise;
}

/*
 * copyDataRun(chunk, offset) → the offset after the run of whole CopyData messages that starts at
 * `offset` in `chunk` (copy-frames.ts wholeMessages asks it once a chunk): in a fresh process the
 * same loop in JavaScript, a step per row before the JIT compiles it, cost the event loop 6–17 ms
 * of a 100k-item render (bench/RESULTS.md, "2026-11-27, day").
 */
static napi_value copy_data_run(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  void *data;
  size_t length;
  int64_t offset;
  if (argc != 2 || napi_get_buffer_info(env, args[0], &data, &length) != napi_ok || napi_get_value_int64(env, args[1], &offset) != napi_ok ||
      offset < 0 || (uint64_t)offset > length) {
    return usage(env, "copyDataRun(chunk, offset): a Buffer and an offset in it");
  }
  const unsigned char *bytes = data;
  size_t at = (size_t)offset;
  while (length - at >= 5 && bytes[at] == 'd') {
    int32_t size = int32_at(bytes + at + 1);
    if (size < 4 || (size_t)size + 1 > length - at) break;
    at += (size_t)size + 1;
  }
  napi_value result;
  napi_create_int64(env, (int64_t)at, &result);
  return result;
}

/* The version of the aggregates' calls (records-extension.ts RECORDS_EXTENSION_VERSION). */
static napi_value version(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  int at = find_function("price_export_records_version");
  if (at < 0 || !functions[at].call) {
    napi_get_null(env, &result);
    return result;
  }
  sqlite3_context context = {0};
  functions[at].call(&context, 0, NULL);
  napi_create_int32(env, context.integer, &result);
  return result;
}

static int registered = SQLITE_ERROR;

/* Once a process: each worker thread that loads the module runs NAPI_MODULE_INIT again. */
static void register_functions(void) {
  routines.value_blob = value_blob;
  routines.value_bytes = value_bytes;
  routines.value_type = value_type;
  routines.value_int64 = value_int64;
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

NAPI_MODULE_INIT() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_functions);
  if (registered != SQLITE_OK) {
    napi_throw_error(env, NULL, "the records aggregates could not be registered");
    return NULL;
  }
  napi_property_descriptor properties[] = {
      {"build", NULL, build, NULL, NULL, NULL, napi_enumerable, NULL},
      {"version", NULL, version, NULL, NULL, NULL, napi_enumerable, NULL},
      {"copyDataRun", NULL, copy_data_run, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}
