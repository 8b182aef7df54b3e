/*
 * A publication's items read from their JSON text straight into stored rows (item_rows.c says
 * how and why). The Node-API side is item_rows_module.c.
 */
#ifndef PRICE_EXPORT_ITEM_ROWS_H
#define PRICE_EXPORT_ITEM_ROWS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The feed check's item rules that publishing counts (model/feed-rules.ts over the legacy
 * columns), in this order; native-item-rows.ts names them and refuses the module if the
 * TypeScript rules are not these.
 */
enum {
  RULE_YML_NAME, RULE_YML_DESCRIPTION, RULE_YML_BARCODE, RULE_YML_DISCOUNT, RULE_YML_OFFER_ID, RULE_YML_CURRENCY,
  RULE_GOOGLE_ID, RULE_GOOGLE_TITLE, RULE_GOOGLE_DESCRIPTION, RULE_GOOGLE_LINK, RULE_GOOGLE_IMAGE, RULE_GOOGLE_GTIN,
  RULE_CML_ID, RULE_CML_NAME,
  RULE_XLSX_CELL, RULE_XLSX_ROWS,
  RULE_COUNT
};

/* A growable byte buffer. */
typedef struct {
  unsigned char *bytes;
  size_t length;
  size_t capacity;
  int failed; /* out of memory */
} Bytes;

/* Texts noted once each (item_rows.c note_distinct). */
#define DISTINCT_SLOTS 4096
typedef struct {
  Bytes list;
  uint32_t slots[DISTINCT_SLOTS]; /* 1 + the text's offset in list; 0: empty */
  uint32_t lengths[DISTINCT_SLOTS];
  uint32_t used;
} Distinct;

void distinct_free(Distinct *d);

/* What one call reads, and what it adds up for the publication. */
typedef struct {
  /* In. */
  int64_t draft_id;
  /* The store's currency (3 upper-case ASCII letters), for items that name none. */
  char store_currency[4];
  /* MAX_FIELD_CHARS: the longest text, in UTF-16 units (JavaScript's length). */
  int64_t max_field_chars;
  /* Out. */
  Bytes rows;
  uint32_t accepted;
  uint32_t available;
  uint32_t rule_counts[RULE_COUNT];
  /* Distinct currencies and category paths of the accepted items, each ended by a NUL. */
  Distinct currencies;
  Distinct categories;
} ItemRowsCall;

/*
 * Reads the item at bytes[0..length) as the item of seq `seq`: 1 when its row was written to
 * call->rows and counted, 0 when it is left to the JavaScript reader (item-validation.ts), which
 * then gives its answer, a row or the item's problems. `scratch` holds at least `length` bytes.
 */
int item_row(ItemRowsCall *call, const unsigned char *bytes, size_t length, int64_t seq, unsigned char *scratch);

void bytes_free(Bytes *b);

/*
 * Finds the whole JSON values of an array's items from `start` (the first item's first byte):
 * each checked as JSON, then `,` and the next; it stops before anything else (the array's `]`),
 * before a value that runs to the end of the bytes, or nested deeper than it reads. Their
 * [start, end) pairs go in `bounds`; answers how many (json-items.ts reads the rest itself).
 */
size_t frame_items(const unsigned char *bytes, size_t length, size_t start, uint32_t *bounds, size_t max_items);

#endif
