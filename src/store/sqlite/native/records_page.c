/* What every aggregate's page does (records_page.h). */
#include "records_page.h"

/*
 * The length of the page built last: the room a new page first asks for. Grown from 256 KiB by
 * doubling, each ~4 MiB page of a 1M-item YML render was copied by realloc four times over,
 * ~4 % of the service's CPU on PostgreSQL (bench/RESULTS.md, "2026-11-27, before midnight").
 * A render's pages are of much the same size; a smaller page leaves the rest of its room
 * unwritten. Read and written by the pages' threads at once: a stale length is still a fair guess.
 */
#define FIRST_ROOM ((sqlite3_int64)256 * 1024)
#define FIRST_ROOM_MAX ((sqlite3_int64)32 * 1024 * 1024)
static sqlite3_int64 last_page_length;

static sqlite3_int64 first_room(void) {
  sqlite3_int64 last = __atomic_load_n(&last_page_length, __ATOMIC_RELAXED);
  sqlite3_int64 room = last + last / 8;
  return room < FIRST_ROOM ? FIRST_ROOM : room > FIRST_ROOM_MAX ? FIRST_ROOM_MAX : room;
}

void reserve(Page *page, sqlite3_int64 more) {
  if (page->error || page->length + more <= page->capacity) return;
  sqlite3_int64 capacity = page->capacity ? page->capacity * 2 : first_room();
  while (capacity < page->length + more) capacity *= 2;
  unsigned char *bytes = sqlite3_realloc64(page->bytes, (sqlite3_uint64)capacity);
  if (!bytes) {
    page->error = "out of memory";
    return;
  }
  page->bytes = bytes;
  page->capacity = capacity;
}

void put_integer(Page *page, sqlite3_int64 value) {
  char digits[24];
  int at = sizeof digits;
  sqlite3_uint64 rest = value < 0 ? 0 - (sqlite3_uint64)value : (sqlite3_uint64)value;
  do {
    digits[--at] = (char)('0' + rest % 10);
    rest /= 10;
  } while (rest);
  if (value < 0) digits[--at] = '-';
  put(page, digits + at, (sqlite3_int64)sizeof digits - at);
}

void put_value_text(Page *page, sqlite3_value *value) {
  const unsigned char *text = text_of(value);
  if (text) put(page, text, sqlite3_value_bytes(value));
}

void put_integer_value(Page *page, sqlite3_value *value) {
  if (sqlite3_value_type(value) == SQLITE_INTEGER) put_integer(page, sqlite3_value_int64(value));
  else put_value_text(page, value);
}

#ifndef PRICE_EXPORT_COPY_VALUES
/*
 * A page thread's room for its pages (store/sqlite/page-worker.ts), kept from one page to the
 * next. A page built in memory of its own cost three fresh allocations of its size on the page
 * thread: its room, SQLite's copy of the result (OP_Copy copies a value its function handed
 * over with a destructor) and better-sqlite3's Buffer of it. The Buffers live until the main
 * thread's collector frees them, after the export, so a page's room and copy often landed beyond
 * them on memory new to the process, where a page fault can cost ~12 µs (a fresh server's first
 * 100k JSON: ~4,400 faults a thread with SQLite's page cache, ~6,000 in all after this and the
 * smaller cache of page-worker.ts; bench/RESULTS.md, "2026-12-02, night"). Built in the kept room
 * and handed over as SQLITE_STATIC, a page costs only the Buffer: SQLite's shallow copy of a
 * static value stays a pointer.
 *
 * SQLITE_STATIC promises the bytes stay as they are while SQLite or its caller may read them:
 * so the room is lent to one page at a time, from its first row until the caller says the
 * value was taken (price_export_room_taken(), after better-sqlite3 copied it and reset the
 * statement). A page that starts while the room is lent (two aggregates in one statement, a
 * value not yet taken) is built in memory of its own, as before. Off until the connection's
 * first price_export_room_taken(): a connection that never calls it (the main thread's) builds
 * every page in memory of its own.
 */
struct KeptRoom {
  unsigned char *bytes;
  sqlite3_int64 capacity;
  int on;
  int lent;
};

/* A room grown past this by one large page is let go once its value is taken, not kept. */
#define KEPT_ROOM_MAX ((sqlite3_int64)8 * 1024 * 1024)

static void borrow_room(Page *page, KeptRoom *room) {
  page->asked = 1;
  if (!room || !room->on || room->lent) return;
  room->lent = 1;
  page->room = room;
  page->bytes = room->bytes;
  page->capacity = room->capacity;
}

/* The page's bytes back to its room (grown, maybe moved); still lent while its value is the bytes. */
static void give_back(Page *page, int lent) {
  KeptRoom *room = page->room;
  room->bytes = page->bytes;
  room->capacity = page->capacity;
  room->lent = lent;
}

static void room_taken(sqlite3_context *context, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  KeptRoom *room = sqlite3_user_data(context);
  room->on = 1;
  room->lent = 0;
  if (room->capacity > KEPT_ROOM_MAX) {
    sqlite3_free(room->bytes);
    room->bytes = NULL;
    room->capacity = 0;
  }
  sqlite3_result_null(context);
}

static void free_room(void *data) {
  KeptRoom *room = data;
  sqlite3_free(room->bytes);
  sqlite3_free(room);
}

int kept_room_register(sqlite3 *db, int flags, KeptRoom **room) {
  *room = sqlite3_malloc64(sizeof(KeptRoom));
  if (!*room) return SQLITE_NOMEM;
  memset(*room, 0, sizeof(KeptRoom));
  /* On failure SQLite calls free_room itself. */
  int rc = sqlite3_create_function_v2(db, "price_export_room_taken", 0, flags, *room, room_taken, 0, 0, free_room);
  if (rc != SQLITE_OK) *room = NULL;
  return rc;
}
#endif

Page *page_of(sqlite3_context *context) {
  Page *page = sqlite3_aggregate_context(context, sizeof(Page));
  if (!page) {
    sqlite3_result_error_nomem(context);
    return NULL;
  }
#ifndef PRICE_EXPORT_COPY_VALUES
  if (!page->asked) borrow_room(page, sqlite3_user_data(context));
#endif
  return page->error ? NULL : page;
}

int next_row(Page *page, sqlite3_value *seq_value, const char *out_of_order) {
  /* No seq: the caller's query orders the rows (the changes feed's, along offer_id: sql/change-rows.ts). */
  if (sqlite3_value_type(seq_value) == SQLITE_NULL) {
    page->rows++;
    return 1;
  }
  sqlite3_int64 seq = sqlite3_value_int64(seq_value);
  if (page->rows > 0 && seq <= page->last_seq) {
    page->error = out_of_order;
    return 0;
  }
  page->last_seq = seq;
  page->rows++;
  return 1;
}

void put_money(Page *page, sqlite3_int64 minor, const void *separator, int separator_length) {
  char cents[2] = {(char)('0' + minor % 100 / 10), (char)('0' + minor % 10)};
  put_integer(page, minor / 100);
  put(page, separator, separator_length);
  put(page, cents, 2);
}

sqlite3_int64 minor_units(Page *page, sqlite3_value *value, const char *error) {
  if (sqlite3_value_type(value) != SQLITE_INTEGER || sqlite3_value_int64(value) < 0) {
    page->error = error;
    return -1;
  }
  return sqlite3_value_int64(value);
}

/*
 * The bytes put_xml_escaped must look at (1: in any text, 2: in an attribute value only), so the
 * common byte costs one load and a test instead of ten comparisons: the XML items of 100k bench
 * rows built in 40 ms without it (bench/RESULTS.md, "2026-11-27, day").
 */
static const unsigned char XML_LOOK[256] = {
    [0x00 ... 0x08] = 1, ['\t'] = 2, ['\n'] = 2, [0x0b ... 0x1f] = 1, ['"'] = 2, ['&'] = 1, ['<'] = 1, ['>'] = 1, [0xEF] = 1,
};

void put_xml_escaped(Page *page, const unsigned char *text, sqlite3_int64 length, int attribute) {
  sqlite3_int64 from = 0;
  unsigned char look = attribute ? 3 : 1;
  for (sqlite3_int64 i = 0; text && i < length; i++) {
    while (i + 8 <= length && !xml_look_in(word_at(text + i))) i += 8;
    if (i >= length) break;
    unsigned char c = text[i];
    if (!(XML_LOOK[c] & look)) continue;
    const char *reference;
    int skip = 0;
    if (c == '&') reference = "&amp;";
    else if (c == '<') reference = "&lt;";
    else if (c == '>') reference = "&gt;";
    else if (c == '\r') reference = "&#13;";
    else if (attribute && c == '"') reference = "&quot;";
    else if (attribute && c == '\t') reference = "&#9;";
    else if (attribute && c == '\n') reference = "&#10;";
    else if (c > 0 && c < 0x20 && c != '\t' && c != '\n') reference = "";
    else if (c == 0xEF && i + 2 < length && text[i + 1] == 0xBF && (text[i + 2] == 0xBE || text[i + 2] == 0xBF)) reference = "", skip = 2;
    else continue;
    put(page, text + from, i - from);
    put(page, reference, (sqlite3_int64)strlen(reference));
    i += skip;
    from = i + 1;
  }
  put(page, text + from, length - from);
}

/* The page's memory once its value no longer needs it: back to the kept room, or freed. */
static void let_go(Page *page) {
#ifndef PRICE_EXPORT_COPY_VALUES
  if (page->room) {
    give_back(page, 0);
    return;
  }
#endif
  sqlite3_free(page->bytes);
}

void page_final(sqlite3_context *context) {
  Page *page = sqlite3_aggregate_context(context, 0);
  if (page && page->release) page->release(page->state);
  if (page && page->error) {
    sqlite3_result_error(context, page->error, -1);
    let_go(page);
  } else if (!page || page->rows == 0) {
    sqlite3_result_null(context);
    if (page) let_go(page);
  } else if (!page->bytes) {
    sqlite3_result_zeroblob(context, 0);
    let_go(page);
  } else {
    __atomic_store_n(&last_page_length, page->length, __ATOMIC_RELAXED);
#ifndef PRICE_EXPORT_COPY_VALUES
    if (page->room) {
      /* The room stays lent until price_export_room_taken(). */
      give_back(page, 1);
      sqlite3_result_blob64(context, page->bytes, (sqlite3_uint64)page->length, SQLITE_STATIC);
      return;
    }
#endif
    sqlite3_result_blob64(context, page->bytes, (sqlite3_uint64)page->length, sqlite3_free);
  }
}
