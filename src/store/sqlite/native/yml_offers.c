/*
 * price_export_yml(): a page of YML offers (model/yml-record.ts) in one pass over the rows, as
 * the YML writer prints them (formats/yml.ts). The SQL twin is sqlite/yml-sql.ts;
 * store/yml-records.contract.test.ts holds both to the writer's bytes.
 *
 * Why C: the offers' SQL spent most of its time reading `extra` (json_extract per key, a json_each
 * subquery for the attributes, a category look-up per offer) and escaping with nested replace()
 * calls: the first YML over HTTP was 0.79–1.24× `sqlite3 -json`, under 1.0× with 3,000
 * categories or on a slower host. Here each row's `extra` is walked once (json_text.c) and each
 * text escaped in one scan: 1.41–1.67×, 1.89× at 1M items, the service's CPU a third less
 * (bench/figures/first-json-xml.ts; bench/RESULTS.md, "2026-11-27, night").
 *
 *   price_export_yml(kinds, categories, seq, extra, …)
 *
 * categories is the category part's {path: id} JSON object (NULL when the offers have none); extra
 * the row's `extra` JSON text. kinds holds one letter per part, each taking the arguments listed:
 *   l (text)                 a literal;
 *   a (value)                a text as an attribute value;
 *   b (value)                `true` or `false`;
 *   T (value)                a text every item has, escaped, its tags in the literals around it;
 *   M (value)                money every item has, its tags in the literals around it;
 *   S (spellings, value)     the value's spelling in `spellings`, a JSON object of texts to
 *                            their spellings (already escaped: {"RUB":"RUR"}), else the value
 *                            escaped;
 *   t (name, value)          `<name>text</name>\n`, nothing for NULL;
 *   s (name, spellings, value) the same with S's spelling;
 *   m (name, value)          `<name>money</name>\n`, nothing for NULL;
 *   o (name, value, above)   the same, only when the value is greater than `above`'s;
 *   i (name, value)          `<name>digits</name>\n`, nothing for NULL;
 *   c (name, path, other)    `<name>id</name>\n`: the path's id in categories (NULL reads as ''),
 *                            else `other`;
 *   A (attributes)           `<param name="key">value</param>\n` for each of the object's keys;
 *   p (name, value)          `<param name="name">text</param>\n` (name already escaped), nothing
 *                            when the text is NULL or empty once escaped;
 *   P (name, value)          the same of money;
 *   q (name, attributes, key) p of the object's value at `key`.
 * Money is minor units with `.` and two digits. A part's value argument, after `x` (`xt`, `xA`…),
 * is the key of `extra` that holds the value (a JSON string is decoded, a number is its digits);
 * S and s take a column's value only.
 *
 * The spellings are a constant, looked up here, not a CASE column of the query: PostgreSQL's CASE
 * per row was ~15 % of its work on a YML page, and its COPY one column more (bench/RESULTS.md,
 * "2026-11-27, before noon").
 */
#include "json_text.h"
#include "records_page.h"
#include <stdlib.h>

/* One path of the categories and its id; `path` points into YmlState.category_text. */
typedef struct {
  const unsigned char *path;
  int length;
  sqlite3_int64 id;
} Category;

/* What a page's offers share: the categories, decoded once, and room to decode a JSON string. */
typedef struct {
  unsigned char *category_text;
  Category *categories;
  int category_count;
  unsigned char *scratch;
  sqlite3_int64 scratch_capacity;
} YmlState;

/* The keys of one row's `extra` and their values; extraJson writes at most nine. */
#define MAX_EXTRA_KEYS 16
typedef struct {
  const unsigned char *key[MAX_EXTRA_KEYS];
  int key_length[MAX_EXTRA_KEYS];
  Value value[MAX_EXTRA_KEYS];
  int count;
} Extra;

static const char *const NOT_JSON = "price_export_yml: extra, categories or spellings is not the JSON the store writes";

static void release_state(void *pointer) {
  YmlState *state = pointer;
  sqlite3_free(state->category_text);
  sqlite3_free(state->categories);
  sqlite3_free(state->scratch);
  sqlite3_free(state);
}

/* A text value's UTF-8 bytes: a JSON string's decoded into the page's scratch when it has escapes. 0 (the error set) when it cannot be. */
static int text_bytes(Page *page, YmlState *state, Value *value) {
  if (value->type != V_JSON_STRING || !memchr(value->bytes, '\\', (size_t)value->length)) return 1;
  if (state->scratch_capacity < value->length) {
    unsigned char *scratch = sqlite3_realloc64(state->scratch, (sqlite3_uint64)value->length);
    if (!scratch) {
      page->error = "out of memory";
      return 0;
    }
    state->scratch = scratch, state->scratch_capacity = value->length;
  }
  sqlite3_int64 length = decode_string(value->bytes, value->length, state->scratch);
  if (length < 0) {
    page->error = NOT_JSON;
    return 0;
  }
  value->type = V_TEXT, value->bytes = state->scratch, value->length = length;
  return 1;
}

/* A value as escaped text (an attribute value with `attribute` 1): an integer's digits, a text escaped, nothing for NULL. */
static int put_escaped(Page *page, YmlState *state, Value value, int attribute) {
  if (value.type == V_NULL) return 1;
  if (value.type == V_INTEGER) {
    put_integer(page, value.integer);
    return 1;
  }
  if (!text_bytes(page, state, &value)) return 0;
  put_xml_escaped(page, value.bytes, value.length, attribute);
  return 1;
}

/* Money: minor units, never negative (CONTRACT §2), else the error set. */
static int put_money_value(Page *page, Value value) {
  if (value.type != V_INTEGER || value.integer < 0) {
    page->error = "price_export_yml: money must be a non-negative integer of minor units";
    return 0;
  }
  put_money(page, value.integer, ".", 1);
  return 1;
}

static Value column_value(sqlite3_value *argument) {
  Value value = {V_TEXT, NULL, 0, 0};
  switch (sqlite3_value_type(argument)) {
    case SQLITE_NULL:
      value.type = V_NULL;
      break;
    case SQLITE_INTEGER:
      value.type = V_INTEGER, value.integer = sqlite3_value_int64(argument);
      break;
    default:
      value.bytes = text_of(argument), value.length = sqlite3_value_bytes(argument);
  }
  return value;
}

/* Keeps a member of `extra`; fails past MAX_EXTRA_KEYS, which no extra the store writes has. */
static int remember_member(void *context, const unsigned char *key, int key_length, Value value) {
  Extra *extra = context;
  if (extra->count == MAX_EXTRA_KEYS) return -1;
  extra->key[extra->count] = key, extra->key_length[extra->count] = key_length, extra->value[extra->count] = value;
  extra->count++;
  return 1;
}

/* The value of `extra`'s key named by the argument; NULL when the row has no such key. */
static Value extra_value(const Extra *extra, sqlite3_value *key_argument) {
  const unsigned char *key = text_of(key_argument);
  int length = sqlite3_value_bytes(key_argument);
  for (int i = 0; key && i < extra->count; i++) {
    if (extra->key_length[i] == length && memcmp(extra->key[i], key, (size_t)length) == 0) return extra->value[i];
  }
  Value none = {V_NULL, NULL, 0, 0};
  return none;
}

typedef struct {
  Page *page;
  YmlState *state;
  const unsigned char *key;
  int key_length;
  Value found;
} Lookup;

/* Stops at the member whose decoded key is the one looked for. */
static int find_member(void *context, const unsigned char *key, int key_length, Value value) {
  Lookup *lookup = context;
  Value decoded = {V_JSON_STRING, key, key_length, 0};
  if (!text_bytes(lookup->page, lookup->state, &decoded)) return -1;
  if (decoded.length != lookup->key_length || memcmp(decoded.bytes, lookup->key, (size_t)decoded.length) != 0) return 1;
  lookup->found = value;
  return 0;
}

typedef struct {
  Page *page;
  YmlState *state;
} Params;

/* `<param name="key">value</param>\n`; none for a null value (the SQL's concatenation would be NULL). */
static int put_param_member(void *context, const unsigned char *key, int key_length, Value value) {
  Params *params = context;
  Page *page = params->page;
  if (value.type == V_NULL) return 1;
  Value name = {V_JSON_STRING, key, key_length, 0};
  put(page, "<param name=\"", 13);
  if (!put_escaped(page, params->state, name, 1)) return -1;
  put(page, "\">", 2);
  if (!put_escaped(page, params->state, value, 0)) return -1;
  put(page, "</param>\n", 9);
  return 1;
}

/* Walks the object `value` with `member`; 0 (the page's error set: the member's own, else NOT_JSON) when that fails. */
static int walk(Page *page, Value value, Member member, void *context) {
  if (each_member(value.bytes, value.bytes + value.length, member, context) < 0 && !page->error) page->error = NOT_JSON;
  return !page->error;
}

static int compare_categories(const void *a, const void *b) {
  const Category *left = a, *right = b;
  int shorter = left->length < right->length ? left->length : right->length;
  int order = memcmp(left->path, right->path, (size_t)shorter);
  return order ? order : (left->length > right->length) - (left->length < right->length);
}

typedef struct {
  YmlState *state;
  int capacity;
} Categories;

/* Keeps a path (decoded in place in the state's copy of the text) and its id. */
static int keep_category(void *context, const unsigned char *key, int key_length, Value value) {
  Categories *categories = context;
  YmlState *state = categories->state;
  sqlite3_int64 length = decode_string(key, key_length, (unsigned char *)key);
  if (length < 0 || value.type != V_INTEGER) return -1;
  if (state->category_count == categories->capacity) {
    int capacity = categories->capacity ? categories->capacity * 2 : 64;
    Category *grown = sqlite3_realloc64(state->categories, (sqlite3_uint64)capacity * sizeof(Category));
    if (!grown) return -1;
    state->categories = grown, categories->capacity = capacity;
  }
  Category *category = &state->categories[state->category_count++];
  category->path = key, category->length = (int)length, category->id = value.integer;
  return 1;
}

/* The page's state on its first row: the categories copied, decoded and sorted for a binary search. */
static YmlState *state_of(Page *page, sqlite3_value *categories_argument) {
  if (page->state) return page->state;
  YmlState *state = sqlite3_malloc64(sizeof(YmlState));
  if (!state) {
    page->error = "out of memory";
    return NULL;
  }
  memset(state, 0, sizeof *state);
  page->state = state, page->release = release_state;
  const unsigned char *text = text_of(categories_argument);
  int length = sqlite3_value_bytes(categories_argument);
  if (!text) return state;
  state->category_text = sqlite3_malloc64((sqlite3_uint64)length + 1);
  if (!state->category_text) {
    page->error = "out of memory";
    return NULL;
  }
  memcpy(state->category_text, text, (size_t)length);
  Categories categories = {state, 0};
  Value object = {V_JSON_OTHER, state->category_text, length, 0};
  if (!walk(page, object, keep_category, &categories)) return NULL;
  qsort(state->categories, (size_t)state->category_count, sizeof(Category), compare_categories);
  return state;
}

/* Whether a path is among the categories, its id in *id. */
static int find_category(const YmlState *state, const unsigned char *path, sqlite3_int64 length, sqlite3_int64 *id) {
  if (state->category_count == 0) return 0;
  Category wanted = {path, (int)length, 0};
  const Category *found = bsearch(&wanted, state->categories, (size_t)state->category_count, sizeof(Category), compare_categories);
  if (!found) return 0;
  *id = found->id;
  return 1;
}

/* Each kind letter's count of arguments (0 for a letter that is none). */
static int argument_count(unsigned char kind) {
  switch (kind) {
    case 'l': case 'a': case 'b': case 'T': case 'M': case 'A': return 1;
    case 'S': case 't': case 'm': case 'i': case 'p': case 'P': return 2;
    case 's': case 'o': case 'c': case 'q': return 3;
    default: return 0;
  }
}

/* Where among a part's arguments its value is (what `x` makes a key of extra); `l` has none. */
static int value_position(unsigned char kind) {
  switch (kind) {
    case 'a': case 'b': case 'T': case 'M': case 'A': return 0;
    case 's': return 2;
    default: return 1;
  }
}

/* Whether kinds and the arguments agree: each letter known, `x` before a part with a value, one argument each. */
static int well_formed(const unsigned char *kinds, int kind_count, int argc) {
  int expected = 4;
  for (int k = 0; k < kind_count; k++) {
    unsigned char kind = kinds[k];
    if (kind == 'x') {
      unsigned char next = k + 1 < kind_count ? kinds[k + 1] : 'l';
      if (next == 'l' || next == 'S' || next == 's' || argument_count(next) == 0) return 0;
      continue;
    }
    if (argument_count(kind) == 0) return 0;
    expected += argument_count(kind);
  }
  return expected == argc;
}

/* `<name>` and `</name>\n`, around an element's text. */
static void open_element(Page *page, sqlite3_value *name) {
  put(page, "<", 1);
  put_value_text(page, name);
  put(page, ">", 1);
}

static void close_element(Page *page, sqlite3_value *name) {
  put(page, "</", 2);
  put_value_text(page, name);
  put(page, ">\n", 2);
}

/* The text of a `t`, `i`, `m` or `o` element: a text escaped, an integer's digits (another value as it is, as the SQL's concatenation prints it), or money. */
static int put_element_text(Page *page, YmlState *state, unsigned char kind, Value value) {
  switch (kind) {
    case 't':
      return put_escaped(page, state, value, 0);
    case 'i':
      if (value.type == V_INTEGER) put_integer(page, value.integer);
      else put(page, value.bytes, value.length);
      return 1;
    default:
      return put_money_value(page, value);
  }
}

/*
 * A column's text as `spellings` (a JSON object, NULL for none) spell it, else escaped; 0 (the
 * error set) when the object is no JSON object. The map ({"RUB":"RUR"}) is walked for each row,
 * not kept decoded in the page's state as the categories are: ~19 ns a row (1M rows: 114 ms
 * against 95 without spellings, the median of 7 alternating rounds), under 2 % of a render's CPU,
 * where keeping it would need a table per spelled part.
 */
static int put_spelled(Page *page, YmlState *state, sqlite3_value *spellings, Value value) {
  const unsigned char *text = text_of(spellings);
  if (text && value.type == V_TEXT) {
    Lookup lookup = {page, state, value.bytes, (int)value.length, {V_NULL, NULL, 0, 0}};
    Value object = {V_JSON_OTHER, text, sqlite3_value_bytes(spellings), 0};
    if (!walk(page, object, find_member, &lookup)) return 0;
    if (lookup.found.type != V_NULL) {
      Value spelling = lookup.found;
      if (spelling.type != V_JSON_STRING) {
        page->error = NOT_JSON;
        return 0;
      }
      // Already escaped: its bytes as they are, once the JSON string is decoded.
      if (!text_bytes(page, state, &spelling)) return 0;
      put(page, spelling.bytes, spelling.length);
      return 1;
    }
  }
  return put_escaped(page, state, value, 0);
}

/* Writes one part; 0 (the error set) when it cannot. */
static int put_part(Page *page, YmlState *state, unsigned char kind, sqlite3_value **args, Value *value) {
  switch (kind) {
    case 'l':
      put_value_text(page, args[0]);
      return 1;
    case 'a':
      return put_escaped(page, state, *value, 1);
    case 'b':
      // As the SQL's CASE WHEN: NULL is false, a text its number's truth.
      if (value->type == V_INTEGER ? value->integer != 0 : value->type != V_NULL && sqlite3_value_int64(args[0]) != 0) put(page, "true", 4);
      else put(page, "false", 5);
      return 1;
    case 'T':
      return put_escaped(page, state, *value, 0);
    case 'M':
      return value->type == V_NULL || put_money_value(page, *value);
    case 'S':
    case 's': {
      if (value->type == V_NULL) return 1;
      if (kind == 's') open_element(page, args[0]);
      if (!put_spelled(page, state, args[kind == 'S' ? 0 : 1], *value)) return 0;
      if (kind == 's') close_element(page, args[0]);
      return 1;
    }
    case 't':
    case 'm':
    case 'o':
    case 'i': {
      if (value->type == V_NULL) return 1;
      if (kind == 'o') {
        Value above = column_value(args[2]);
        if (value->type != V_INTEGER || above.type != V_INTEGER || value->integer <= above.integer) return 1;
      }
      open_element(page, args[0]);
      if (!put_element_text(page, state, kind, *value)) return 0;
      close_element(page, args[0]);
      return 1;
    }
    case 'c': {
      sqlite3_int64 id;
      if (value->type != V_NULL && !text_bytes(page, state, value)) return 0;
      // A path is a text (the domain's); NULL reads as ''.
      int is_text = value->type == V_TEXT || value->type == V_JSON_STRING;
      open_element(page, args[0]);
      if ((value->type == V_NULL || is_text) && find_category(state, is_text ? value->bytes : (const unsigned char *)"", is_text ? value->length : 0, &id)) put_integer(page, id);
      else put_value_text(page, args[2]);
      close_element(page, args[0]);
      return 1;
    }
    case 'A': {
      if (value->type != V_JSON_OTHER) return 1;
      Params params = {page, state};
      return walk(page, *value, put_param_member, &params);
    }
    case 'p':
    case 'P':
    case 'q': {
      if (kind == 'q') {
        if (value->type != V_JSON_OTHER) return 1;
        Lookup lookup = {page, state, text_of(args[2]), sqlite3_value_bytes(args[2]), {V_NULL, NULL, 0, 0}};
        if (!walk(page, *value, find_member, &lookup)) return 0;
        *value = lookup.found;
      }
      if (value->type == V_NULL) return 1;
      sqlite3_int64 start = page->length;
      put(page, "<param name=\"", 13);
      put_value_text(page, args[0]);
      put(page, "\">", 2);
      sqlite3_int64 before_value = page->length;
      if (!(kind == 'P' ? put_money_value(page, *value) : put_escaped(page, state, *value, 0))) return 0;
      // A param whose text is empty once escaped is left out, as the layout does.
      if (page->length == before_value) page->length = start;
      else put(page, "</param>\n", 9);
      return 1;
    }
  }
  page->error = "price_export_yml: an unknown kind";
  return 0;
}

void yml_step(sqlite3_context *context, int argc, sqlite3_value **argv) {
  Page *page = page_of(context);
  if (!page) return;
  const unsigned char *kinds = argc >= 4 ? text_of(argv[0]) : NULL;
  int kind_count = kinds ? sqlite3_value_bytes(argv[0]) : 0;
  // The kinds are the same for every row: checked on the first.
  if (page->rows == 0 && (!kinds || !well_formed(kinds, kind_count, argc))) {
    page->error = "price_export_yml(kinds, categories, seq, extra, …): a known kind letter per part, its arguments after it";
    return;
  }
  YmlState *state = state_of(page, argv[1]);
  if (!state || !next_row(page, argv[2], "price_export_yml: rows out of publication order")) return;
  // Only count is set: zeroing the whole (~700 bytes) for every row showed in profiles.
  Extra extra;
  extra.count = 0;
  // Read as text whatever its type (sqlite3_value_bytes after text_of, as SQLite asks).
  Value extra_text = {V_JSON_OTHER, text_of(argv[3]), 0, 0};
  extra_text.length = sqlite3_value_bytes(argv[3]);
  if (extra_text.bytes && !walk(page, extra_text, remember_member, &extra)) return;
  for (int k = 0, at = 4; k < kind_count; k++) {
    int from_extra = kinds[k] == 'x';
    unsigned char kind = kinds[k + from_extra];
    k += from_extra;
    Value value = {V_NULL, NULL, 0, 0};
    if (kind != 'l') {
      sqlite3_value *value_argument = argv[at + value_position(kind)];
      value = from_extra ? extra_value(&extra, value_argument) : column_value(value_argument);
    }
    if (!put_part(page, state, kind, argv + at, &value)) return;
    at += argument_count(kind);
  }
}
