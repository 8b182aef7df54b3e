/*
 * The Node-API side of item_rows.c (native-item-rows.ts loads it):
 *
 *   seen() → an external: what one publication's calls of read share
 *
 *   read(bytes, bounds, draftId, firstSeq, storeCurrency, maxFieldChars, columns, binary, seen) → {
 *     rows, accepted, left, available, ruleCounts, currencies, categories }
 *
 * `bytes` a Buffer holding the items' JSON texts, or CSV records when `columns` (an array of
 * the header's names) is not null; `bounds` an Int32Array of [start, end) pairs, one per item,
 * whose seq is firstSeq + its index. `rows` the COPY rows of the items it took (a Buffer: in
 * COPY's binary format when `binary`, without its header and trailer, else in its text
 * format), `left` the indexes of the items it left to JavaScript (an Int32Array),
 * `ruleCounts` the feed rules' counts over the items it took (item_rows.h's order),
 * `currencies` and `categories` their texts that no earlier call with `seen` handed over, each
 * ended by a NUL (past the bounds of `seen`'s tables, item_rows.h Distinct, a text not in them
 * each time).
 *
 *   frame(bytes, start) → Int32Array
 *
 * The [start, end) pairs of the run of a JSON array's whole items from `start` (item_rows.h
 * frame_items): json-items.ts's splitter asks it at each item, and scans on from the last.
 *
 *   frameCsv(bytes, start, atEnd, maxRecordBytes) → { bounds, lines, next, lfs, handOver }
 *
 * A CSV publication's whole records from `start` (item_rows.h frame_csv): `bounds` their
 * [start, end) pairs, `lines` each one's LFs from `start` to its end (Int32Arrays), `next` the
 * first byte not framed, `lfs` the LFs before it, `handOver` whether the record there is one
 * csv-records.ts must read (it breaks the grammar or the limit).
 *
 *   version() → number
 *
 * Runs on the calling thread: a batch is ~2,000 items, ~2–4 ms; the thread that reads the
 * publication waits for it either way.
 */
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include "item_rows.h"

/* native-item-rows.ts ITEM_ROWS_VERSION: raised with any change to the call or the rows. */
#define ITEM_ROWS_VERSION 5

static napi_value fail(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

/*
 * The header's names into `columns`, their texts into `*names` (freed by the caller); 1 when every
 * column is one csv_item_row reads (else every record is left to JavaScript), -1 on a bad argument.
 */
static int read_columns(napi_env env, napi_value array, CsvColumns *columns, char **names) {
  bool is_array;
  uint32_t count;
  if (napi_is_array(env, array, &is_array) != napi_ok || !is_array) return -1;
  napi_get_array_length(env, array, &count);
  size_t total = 0;
  for (uint32_t k = 0; k < count; k++) {
    napi_value name;
    size_t length;
    napi_get_element(env, array, k, &name);
    if (napi_get_value_string_utf8(env, name, NULL, 0, &length) != napi_ok) return -1;
    total += length + 1;
  }
  char *text = *names = malloc(total + 1);
  if (!text) return 0;
  int readable = 1;
  for (uint32_t k = 0; k < count; k++) {
    napi_value name;
    size_t length;
    napi_get_element(env, array, k, &name);
    napi_get_value_string_utf8(env, name, text, total + 1, &length);
    readable &= csv_column(columns, (const unsigned char *)text, length);
    text += length + 1;
    total -= length + 1;
  }
  return readable;
}

/* Tells a `seen` external from any other (napi_check_object_type_tag). */
static const napi_type_tag SEEN_TAG = {0x7072696365657870ull, 0x6f72747365656e31ull};

static void free_seen(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Seen *seen = data;
  distinct_free(&seen->currencies);
  distinct_free(&seen->categories);
  free(seen);
}

/* seen() → an external holding the texts a publication's calls handed over, freed with it. */
static napi_value new_seen(napi_env env, napi_callback_info info) {
  (void)info;
  Seen *seen = calloc(1, sizeof *seen);
  if (!seen) return fail(env, "out of memory");
  napi_value value;
  if (napi_create_external(env, seen, free_seen, NULL, &value) != napi_ok) {
    free(seen);
    return fail(env, "out of memory");
  }
  napi_type_tag_object(env, value, &SEEN_TAG);
  return value;
}

static napi_value read_items(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 9) return fail(env, "read(bytes, bounds, draftId, firstSeq, storeCurrency, maxFieldChars, columns, binary, seen)");
  bool tagged = false;
  Seen *seen = NULL;
  if (napi_check_object_type_tag(env, argv[8], &SEEN_TAG, &tagged) != napi_ok || !tagged || napi_get_value_external(env, argv[8], (void **)&seen) != napi_ok)
    return fail(env, "seen: what seen() gave");
  unsigned char *bytes;
  size_t byte_length;
  bool is_buffer;
  if (napi_is_buffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer) return fail(env, "bytes: a Buffer");
  napi_get_buffer_info(env, argv[0], (void **)&bytes, &byte_length);
  napi_typedarray_type type;
  size_t bound_count;
  void *bound_data;
  bool is_typedarray;
  napi_is_typedarray(env, argv[1], &is_typedarray);
  if (!is_typedarray) return fail(env, "bounds: an Int32Array");
  napi_get_typedarray_info(env, argv[1], &type, &bound_count, &bound_data, NULL, NULL);
  if (type != napi_int32_array || bound_count % 2) return fail(env, "bounds: an Int32Array of [start, end) pairs");
  const int32_t *bounds = bound_data;
  ItemRowsCall call;
  memset(&call, 0, sizeof call);
  double draft_id, first_seq, max_field_chars;
  if (napi_get_value_double(env, argv[2], &draft_id) != napi_ok || napi_get_value_double(env, argv[3], &first_seq) != napi_ok ||
      napi_get_value_double(env, argv[5], &max_field_chars) != napi_ok)
    return fail(env, "draftId, firstSeq, maxFieldChars: numbers");
  size_t currency_length;
  if (napi_get_value_string_utf8(env, argv[4], call.store_currency, sizeof call.store_currency, &currency_length) != napi_ok || currency_length != 3)
    return fail(env, "storeCurrency: three letters");
  bool binary;
  if (napi_get_value_bool(env, argv[7], &binary) != napi_ok) return fail(env, "binary: a boolean");
  call.binary = binary;
  call.seen = seen;
  call.draft_id = (int64_t)draft_id;
  call.max_field_chars = (int64_t)max_field_chars;

  napi_valuetype columns_type;
  napi_typeof(env, argv[6], &columns_type);
  CsvColumns columns;
  columns.count = 0;
  char *names = NULL;
  int csv = columns_type != napi_null && columns_type != napi_undefined;
  int readable = csv ? read_columns(env, argv[6], &columns, &names) : 1;
  if (readable < 0) {
    free(names);
    return fail(env, "columns: null, or an array of the CSV header's names");
  }

  size_t items = bound_count / 2, longest = 0;
  for (size_t i = 0; i < items; i++) {
    if (bounds[2 * i] < 0 || bounds[2 * i + 1] < bounds[2 * i] || (size_t)bounds[2 * i + 1] > byte_length) return fail(env, "bounds: outside bytes");
    size_t length = (size_t)(bounds[2 * i + 1] - bounds[2 * i]);
    if (length > longest) longest = length;
  }
  unsigned char *scratch = malloc(2 * longest + 1);
  int32_t *left = malloc((items + 1) * sizeof *left);
  if (!scratch || !left) {
    free(scratch);
    free(left);
    free(names);
    return fail(env, "out of memory");
  }
  size_t left_count = 0;
  for (size_t i = 0; i < items; i++) {
    const unsigned char *item = bytes + bounds[2 * i];
    size_t length = (size_t)(bounds[2 * i + 1] - bounds[2 * i]);
    int64_t seq = (int64_t)first_seq + (int64_t)i;
    int taken = !csv ? item_row(&call, item, length, seq, scratch) : readable && csv_item_row(&call, &columns, item, length, seq, scratch);
    if (!taken) left[left_count++] = (int32_t)i;
  }
  free(scratch);
  free(names);
  if (call.rows.failed || call.currencies.failed || call.categories.failed) {
    free(left);
    bytes_free(&call.rows);
    bytes_free(&call.currencies);
    bytes_free(&call.categories);
    return fail(env, "out of memory");
  }

  napi_value result, value;
  napi_create_object(env, &result);
  /* Copied into a Buffer of Node's, not handed over: memory V8 counts, so a publication's
     garbage rows are collected as they pile up (~0.1 µs an item for the copy). */
  napi_create_buffer_copy(env, call.rows.length, call.rows.bytes ? (const void *)call.rows.bytes : (const void *)"", NULL, &value);
  bytes_free(&call.rows);
  napi_set_named_property(env, result, "rows", value);
  napi_create_uint32(env, call.accepted, &value);
  napi_set_named_property(env, result, "accepted", value);
  napi_create_uint32(env, call.available, &value);
  napi_set_named_property(env, result, "available", value);
  napi_value left_buffer;
  void *left_data;
  napi_create_arraybuffer(env, left_count * sizeof *left, &left_data, &left_buffer);
  if (left_count) memcpy(left_data, left, left_count * sizeof *left);
  free(left);
  napi_create_typedarray(env, napi_int32_array, left_count, left_buffer, 0, &value);
  napi_set_named_property(env, result, "left", value);
  napi_create_array_with_length(env, RULE_COUNT, &value);
  for (uint32_t i = 0; i < RULE_COUNT; i++) {
    napi_value count;
    napi_create_uint32(env, call.rule_counts[i], &count);
    napi_set_element(env, value, i, count);
  }
  napi_set_named_property(env, result, "ruleCounts", value);
  napi_create_string_utf8(env, (const char *)call.currencies.bytes, call.currencies.length, &value);
  napi_set_named_property(env, result, "currencies", value);
  napi_create_string_utf8(env, (const char *)call.categories.bytes, call.categories.length, &value);
  napi_set_named_property(env, result, "categories", value);
  bytes_free(&call.currencies);
  bytes_free(&call.categories);
  return result;
}

static napi_value int32_array(napi_env env, const uint32_t *values, size_t count) {
  napi_value buffer, array;
  void *data;
  napi_create_arraybuffer(env, count * sizeof *values, &data, &buffer);
  if (count) memcpy(data, values, count * sizeof *values);
  napi_create_typedarray(env, napi_int32_array, count, buffer, 0, &array);
  return array;
}

/* A framer's first two arguments: a Buffer and an offset in it (at most INT32_MAX bytes: the bounds are Int32). 0 when they are not. */
static int bytes_from(napi_env env, const napi_value *argv, unsigned char **bytes, size_t *length, size_t *start) {
  bool is_buffer;
  double at;
  if (napi_is_buffer(env, argv[0], &is_buffer) != napi_ok || !is_buffer || napi_get_value_double(env, argv[1], &at) != napi_ok) return 0;
  napi_get_buffer_info(env, argv[0], (void **)bytes, length);
  if (at < 0 || at > (double)*length || *length > INT32_MAX) return 0;
  *start = (size_t)at;
  return 1;
}

/* frame(bytes, start) → Int32Array of [start, end) pairs (item_rows.h frame_items). */
static napi_value frame(napi_env env, napi_callback_info info) {
  size_t argc = 2, length, start;
  napi_value argv[2];
  unsigned char *bytes;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 2 || !bytes_from(env, argv, &bytes, &length, &start)) return fail(env, "frame(bytes, start), start within bytes");
  /* An item is at least one byte and its comma another: at most half the bytes are items. */
  size_t most = (length - start) / 2 + 1;
  uint32_t *bounds = malloc(most * 2 * sizeof *bounds);
  if (!bounds) return fail(env, "out of memory");
  size_t count = frame_items(bytes, length, start, bounds, most);
  napi_value result = int32_array(env, bounds, count * 2);
  free(bounds);
  return result;
}

/* frameCsv(bytes, start, atEnd, maxRecordBytes) → { bounds, lines, next, lfs, handOver } (item_rows.h frame_csv). */
static napi_value frame_csv_records(napi_env env, napi_callback_info info) {
  size_t argc = 4, length, start;
  napi_value argv[4];
  unsigned char *bytes;
  bool at_end;
  double max_record_bytes;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 4 || !bytes_from(env, argv, &bytes, &length, &start) || napi_get_value_bool(env, argv[2], &at_end) != napi_ok ||
      napi_get_value_double(env, argv[3], &max_record_bytes) != napi_ok)
    return fail(env, "frameCsv(bytes, start, atEnd, maxRecordBytes), start within bytes");
  /* A record is at least one byte and its LF another: at most half the bytes (and one) are records. */
  size_t most = (length - start) / 2 + 1;
  uint32_t *bounds = malloc(most * 3 * sizeof *bounds);
  if (!bounds) return fail(env, "out of memory");
  CsvFrame frame;
  frame_csv(bytes, length, start, at_end, max_record_bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)max_record_bytes, bounds, bounds + 2 * most, most, &frame);
  napi_value result, value;
  napi_create_object(env, &result);
  napi_set_named_property(env, result, "bounds", int32_array(env, bounds, 2 * frame.count));
  napi_set_named_property(env, result, "lines", int32_array(env, bounds + 2 * most, frame.count));
  free(bounds);
  napi_create_double(env, (double)frame.next, &value);
  napi_set_named_property(env, result, "next", value);
  napi_create_double(env, (double)frame.next_lfs, &value);
  napi_set_named_property(env, result, "lfs", value);
  napi_get_boolean(env, frame.hand_over, &value);
  napi_set_named_property(env, result, "handOver", value);
  return result;
}

static napi_value version(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value value;
  napi_create_uint32(env, ITEM_ROWS_VERSION, &value);
  return value;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "read", NAPI_AUTO_LENGTH, read_items, NULL, &fn);
  napi_set_named_property(env, exports, "read", fn);
  napi_create_function(env, "seen", NAPI_AUTO_LENGTH, new_seen, NULL, &fn);
  napi_set_named_property(env, exports, "seen", fn);
  napi_create_function(env, "frame", NAPI_AUTO_LENGTH, frame, NULL, &fn);
  napi_set_named_property(env, exports, "frame", fn);
  napi_create_function(env, "frameCsv", NAPI_AUTO_LENGTH, frame_csv_records, NULL, &fn);
  napi_set_named_property(env, exports, "frameCsv", fn);
  napi_create_function(env, "version", NAPI_AUTO_LENGTH, version, NULL, &fn);
  napi_set_named_property(env, exports, "version", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
