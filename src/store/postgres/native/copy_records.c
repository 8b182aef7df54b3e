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
 * routines table its init function is given (sqlite3ext.h). sqlite_host.c gives it a table of
 * its own, whose values are the COPY's fields (copy_values.h) and whose contexts hold one page,
 * and calls the step and final functions the extension registered by name; copy_reader.c reads
 * the COPY. Nothing of SQLite itself is linked in. This file is the Node-API side.
 *
 *   build(name, arguments, columnTypes, messages) → Promise<Buffer | null>
 *
 * `name` an aggregate (price_export_json …); `arguments` one entry per argument of its call: a
 * number is a column of the COPY's rows (0-based), a string a text constant, null a NULL;
 * `columnTypes` one letter per column: `t` text, `i` an integer (int2, int4 or int8), `b` a
 * boolean (read as the integer 0 or 1, as SQLite stores it); `messages` the COPY's CopyData
 * messages as the server sent them, framing and all, in Buffers cut anywhere: their bodies,
 * joined, are the binary COPY (PostgreSQL docs, "COPY", Binary Format). The rows are read on the
 * worker thread where they lie in one Buffer (as copy-bytes.ts hands them over), whose bytes the
 * build may overwrite (copy_reader.c), so the caller must not read them again; several Buffers
 * are joined into one of the build's own first. The promise gives the page's bytes, null for no
 * rows, or fails with the aggregate's or the parser's error.
 *
 *   copyDataRun(chunk, offset) → offset
 *
 * The offset after the run of whole CopyData messages from `offset` in the socket's `chunk`
 * (copy-frames.ts asks it once a chunk).
 *
 *   externalMemory() → bytes
 *
 * V8's count of external memory, which starts its full collections (for the tests).
 *
 * Built with -fvisibility=hidden and -Bsymbolic (scripts/build-native.mjs): SQLite loads the
 * extension's own build into the same process with RTLD_GLOBAL, and its symbols of the same
 * names (sqlite3_api, reserve, …) must not stand in for this module's.
 */
#include <node_api.h>
#include "copy_reader.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One call of build(): what the worker thread reads, and what it leaves for the main thread. */
typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  /* The array of messages' pieces, kept alive while the worker reads them. */
  napi_ref pieces_ref;
  Piece *pieces;
  uint32_t piece_count;
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

/* Throws a TypeError and answers NULL. */
static napi_value usage(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static void execute(napi_env env, void *data) {
  (void)env;
  Build *build = data;
  /* The messages read where they are in copy-bytes.ts's one buffer; several pieces joined first. */
  unsigned char *made = NULL, *messages;
  size_t length = 0;
  if (build->piece_count == 1) {
    messages = build->pieces[0].bytes, length = build->pieces[0].length;
  } else {
    for (uint32_t i = 0; i < build->piece_count; i++) length += build->pieces[i].length;
    messages = made = malloc(length + 1);
    if (!made) build->error = "out of memory";
    for (size_t i = 0, at = 0; made && i < build->piece_count; at += build->pieces[i].length, i++) {
      memcpy(made + at, build->pieces[i].bytes, build->pieces[i].length);
    }
  }
  if (!build->error) {
    RowCall call = {
        .step = host_step(build->function),
        .context = &build->context,
        .argument_count = build->argument_count,
        .columns = build->columns,
        .constants = build->constants,
        .column_types = build->column_types,
        .column_count = build->column_count,
    };
    build->error = read_rows(messages, length, &call);
  }
  free(made);
  /* Final frees the aggregate's state whether or not the rows were read whole. */
  host_final(build->function)(&build->context);
  free(build->context.aggregate);
  build->context.aggregate = NULL;
}

/*
 * A page's bytes, freed once its Buffer is collected. V8 counts them as external memory itself, as
 * it counts every Buffer's, and that count is what makes it collect: adding them to it here as
 * well doubled the pressure, so a 1M-item render took 6–13 full collections instead of 4–7, and
 * ~15 % more of the service's CPU (bench/RESULTS.md, "2026-11-27, late night").
 */
static void free_page(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  free(data);
}

static void release(napi_env env, Build *build) {
  if (build->pieces_ref) napi_delete_reference(env, build->pieces_ref);
  free(build->pieces);
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
    free(context->blob);
    reject(env, build->deferred, error);
  } else {
    napi_value result;
    if (context->blob) {
      size_t length = (size_t)context->blob_length;
      if (napi_create_external_buffer(env, length, context->blob, free_page, NULL, &result) != napi_ok) {
        /* Runtimes that forbid external buffers: a copy. */
        void *copied;
        napi_create_buffer_copy(env, length, context->blob, &copied, &result);
        free(context->blob);
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

/* columnTypes: one of t, i, b per column. NULL, or what is wrong. */
static const char *read_column_types(napi_env env, napi_value types, Build *build) {
  size_t length;
  if (napi_get_value_string_utf8(env, types, NULL, 0, &length) != napi_ok) return "columnTypes: a string";
  build->column_types = malloc(length + 1);
  if (!build->column_types) return "out of memory";
  napi_get_value_string_utf8(env, types, build->column_types, length + 1, &length);
  build->column_count = (int)length;
  for (size_t i = 0; i < length; i++) {
    if (!strchr("tib", build->column_types[i]) || build->column_types[i] == 0) return "columnTypes: one of t, i, b per column";
  }
  return NULL;
}

/*
 * arguments: a column number, a string or null each; the strings copied one after another into
 * constant_text (their offsets kept while it grows, made pointers at the end). NULL, or what is wrong.
 */
static const char *read_arguments(napi_env env, napi_value list, Build *build) {
  bool is_array;
  uint32_t count;
  napi_is_array(env, list, &is_array);
  if (!is_array) return "arguments: an array";
  napi_get_array_length(env, list, &count);
  build->argument_count = (int)count;
  build->columns = calloc(count ? count : 1, sizeof(int));
  build->constants = calloc(count ? count : 1, sizeof(sqlite3_value));
  if (!build->columns || !build->constants) return "out of memory";
  size_t *offsets = calloc(count ? count : 1, sizeof(size_t));
  if (!offsets) return "out of memory";
  size_t text_length = 0;
  const char *error = NULL;
  for (uint32_t i = 0; i < count && !error; i++) {
    napi_value entry;
    napi_valuetype type;
    napi_get_element(env, list, i, &entry);
    napi_typeof(env, entry, &type);
    sqlite3_value *constant = &build->constants[i];
    build->columns[i] = -1;
    if (type == napi_number) {
      int32_t column;
      napi_get_value_int32(env, entry, &column);
      if (column < 0 || column >= build->column_count) error = "arguments: a column number past columnTypes";
      build->columns[i] = column;
    } else if (type == napi_string) {
      size_t length;
      napi_get_value_string_utf8(env, entry, NULL, 0, &length);
      char *grown = realloc(build->constant_text, text_length + length + 1);
      if (!grown) {
        error = "out of memory";
        break;
      }
      build->constant_text = grown;
      napi_get_value_string_utf8(env, entry, grown + text_length, length + 1, &length);
      constant->type = SQLITE_TEXT, constant->length = (int)length;
      offsets[i] = text_length;
      text_length += length + 1;
    } else if (type == napi_null) {
      constant->type = SQLITE_NULL;
    } else {
      error = "arguments: a column number, a string or null each";
    }
  }
  for (uint32_t i = 0; i < count && !error; i++) {
    if (build->constants[i].type == SQLITE_TEXT) build->constants[i].bytes = (const unsigned char *)build->constant_text + offsets[i];
  }
  free(offsets);
  return error;
}

/* messages: an array of Buffers, kept alive (a reference) while the worker reads them. NULL, or what is wrong. */
static const char *read_pieces(napi_env env, napi_value list, Build *build) {
  bool is_array;
  napi_is_array(env, list, &is_array);
  if (!is_array) return "messages: an array of Buffers";
  napi_get_array_length(env, list, &build->piece_count);
  build->pieces = calloc(build->piece_count ? build->piece_count : 1, sizeof(Piece));
  if (!build->pieces) return "out of memory";
  for (uint32_t i = 0; i < build->piece_count; i++) {
    napi_value piece;
    bool is_buffer;
    void *bytes;
    napi_get_element(env, list, i, &piece);
    napi_is_buffer(env, piece, &is_buffer);
    if (!is_buffer) return "messages: an array of Buffers";
    napi_get_buffer_info(env, piece, &bytes, &build->pieces[i].length);
    build->pieces[i].bytes = bytes;
  }
  napi_create_reference(env, list, 1, &build->pieces_ref);
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
  int function = host_find(name);
  if (function < 0 || !host_step(function)) return usage(env, "name: no aggregate of that name");

  Build *build = calloc(1, sizeof(Build));
  if (!build) return usage(env, "out of memory");
  build->function = function;
  const char *error = read_column_types(env, args[2], build);
  if (!error) error = read_arguments(env, args[1], build);
  if (!error) error = read_pieces(env, args[3], build);
  if (error) {
    release(env, build);
    return usage(env, error);
  }
  napi_value promise, resource_name;
  napi_create_promise(env, &build->deferred, &promise);
  napi_create_string_utf8(env, "price-export:copy-records", NAPI_AUTO_LENGTH, &resource_name);
  napi_create_async_work(env, NULL, resource_name, execute, complete, build, &build->work);
  napi_queue_async_work(env, build->work);
  return promise;
}

/*
 * copyDataRun(chunk, offset) → the offset after the run of whole CopyData messages that starts at
 * `offset` in `chunk` (copy-frames.ts wholeRows asks it once a chunk): in a fresh process the
 * same loop in JavaScript, a step per row before the JIT compiles it, cost the event loop 6–17 ms
 * of a 100k-item render (bench/RESULTS.md, "2026-11-27, day").
 */
static napi_value copy_data_run_call(napi_env env, napi_callback_info info) {
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
  napi_value result;
  napi_create_int64(env, (int64_t)copy_data_run(data, length, (size_t)offset), &result);
  return result;
}

/* V8's count of external memory, what starts its full collections: tests hold a page to counting once. */
static napi_value external_memory(napi_env env, napi_callback_info info) {
  (void)info;
  int64_t total;
  napi_adjust_external_memory(env, 0, &total);
  napi_value result;
  napi_create_int64(env, total, &result);
  return result;
}

/* The version of the aggregates' calls (native-builds.ts RECORDS_EXTENSION_VERSION). */
static napi_value version(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  int at = host_find("price_export_records_version");
  if (at < 0 || !host_call(at)) {
    napi_get_null(env, &result);
    return result;
  }
  sqlite3_context context = {0};
  host_call(at)(&context, 0, NULL);
  napi_create_int32(env, context.integer, &result);
  return result;
}

NAPI_MODULE_INIT() {
  if (host_register() != SQLITE_OK) {
    napi_throw_error(env, NULL, "the records aggregates could not be registered");
    return NULL;
  }
  napi_property_descriptor properties[] = {
      {"build", NULL, build, NULL, NULL, NULL, napi_enumerable, NULL},
      {"version", NULL, version, NULL, NULL, NULL, napi_enumerable, NULL},
      {"copyDataRun", NULL, copy_data_run_call, NULL, NULL, NULL, napi_enumerable, NULL},
      {"externalMemory", NULL, external_memory, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}
