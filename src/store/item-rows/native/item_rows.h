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

/*
 * Texts a publication has handed to JavaScript (item_rows.c note_distinct): a table of their
 * offsets in `known`, grown as it fills (to 3/4 of its slots), up to DISTINCT_MAX_SLOTS slots
 * (196,608 texts) or DISTINCT_MAX_BYTES of texts.
 */
#define DISTINCT_MAX_SLOTS (1u << 18)
#define DISTINCT_MAX_BYTES ((size_t)16 << 20)
typedef struct {
  Bytes known;       /* each text, ended by a NUL */
  uint32_t *slots;   /* 1 + a text's offset in known; 0: empty */
  uint32_t *lengths;
  uint32_t capacity; /* slots: 0 or a power of two */
  uint32_t used;
  int full;          /* at a bound, or out of memory: a text not in the table is handed over each time */
} Distinct;

void distinct_free(Distinct *d);

/* What the calls of one publication share (item_rows_module.c's `seen`). */
typedef struct {
  Distinct currencies;
  Distinct categories;
} Seen;

/* What one call reads, and what it adds up for the publication. */
typedef struct {
  /* In. */
  int64_t draft_id;
  /* The store's currency (3 upper-case ASCII letters), for items that name none. */
  char store_currency[4];
  /* MAX_FIELD_CHARS: the longest text, in UTF-16 units (JavaScript's length). */
  int64_t max_field_chars;
  /* Rows in COPY's binary format (PostgreSQL), else its text format (both dialects). */
  int binary;
  /* The texts earlier calls of the publication handed over. */
  Seen *seen;
  /* Out. */
  Bytes rows;
  uint32_t accepted;
  uint32_t available;
  uint32_t rule_counts[RULE_COUNT];
  /* The accepted items' currencies and category paths not in `seen` (now added), each ended by a NUL. */
  Bytes currencies;
  Bytes categories;
} ItemRowsCall;

/*
 * Reads the item at bytes[0..length) as the item of seq `seq`: 1 when its row was written to
 * call->rows and counted, 0 when it is left to the JavaScript reader (item-validation.ts), which
 * then gives its answer, a row or the item's problems. `scratch` holds at least `length` bytes.
 */
int item_row(ItemRowsCall *call, const unsigned char *bytes, size_t length, int64_t seq, unsigned char *scratch);

void bytes_free(Bytes *b);

/* A string value, decoded: its UTF-8 bytes, JavaScript's length of it, and which bytes that need work it holds (item_rows.c CLASS). */
typedef struct {
  const unsigned char *p;
  size_t n;
  size_t units;  /* UTF-16 code units: String#length */
  size_t points; /* code points: what the feed rules count */
  unsigned classes; /* CLASS of its bytes, or-ed */
} Str;

/* ---------- CSV (csv_frame.c finds the records, csv_item_row reads one) ---------- */

/* The columns of a CSV publication, as its header names them (the domain checked the header). */
#define MAX_CSV_COLUMNS 256
#define CSV_ATTRIBUTE_COLUMN (-1)
typedef struct {
  size_t count;
  /* The item field each column holds (item_rows.c's F_*), or CSV_ATTRIBUTE_COLUMN for `attributes.<key>`. */
  int field[MAX_CSV_COLUMNS];
  /* An attribute column's key, measured (set by csv_column). */
  Str key[MAX_CSV_COLUMNS];
} CsvColumns;

/* Adds the column named `name` (kept, not copied); 0 when the reader does not read it or there are too many. */
int csv_column(CsvColumns *columns, const unsigned char *name, size_t length);

/*
 * Reads the CSV record at bytes[0..length) (a whole one: csv_frame found it, its LF left out)
 * as the item of seq `seq`, in the text rules of a CSV row (item-validation.ts, `text`): as
 * item_row, 1 when its row was written, 0 when it is left to JavaScript. `scratch` holds at
 * least 2 * length bytes.
 */
int csv_item_row(ItemRowsCall *call, const CsvColumns *columns, const unsigned char *bytes, size_t length, int64_t seq, unsigned char *scratch);

/* Where frame_csv stopped. */
typedef struct {
  size_t count;       /* records found */
  size_t next;        /* the first byte not framed: the start of a record not whole in the bytes, or of one to hand over */
  size_t next_lfs;    /* LFs from `start` to `next` */
  int hand_over;      /* 1: the record at `next` breaks the grammar or the byte limit; csv-records.ts reads on from it and tells why */
} CsvFrame;

/*
 * Finds the whole records of a CSV publication from `start` (a record's first byte; the BOM
 * already skipped), as csv-records.ts reads them: [start, end) pairs in `bounds` (the LF left
 * out), and in `lfs` each one's LFs from `start` to its end (its line is the line at `start`
 * plus those). A blank line is no record. `at_end`: the bytes end the file. `bounds` has room
 * for 2 * max_records, `lfs` for max_records.
 */
void frame_csv(const unsigned char *bytes, size_t length, size_t start, int at_end, size_t max_record_bytes,
               uint32_t *bounds, uint32_t *lfs, size_t max_records, CsvFrame *out);

/*
 * Finds the whole items of a JSON array from `start` (the first item's first byte), framed as
 * json-items.ts frames them and not checked as JSON (json_frame.c): each an object or an array,
 * then `,` and the next; it stops before anything else (the array's `]`, a string or scalar
 * item) and before an item that runs to the end of the bytes. Their [start, end) pairs go in
 * `bounds`; answers how many (json-items.ts reads the rest itself).
 */
size_t frame_items(const unsigned char *bytes, size_t length, size_t start, uint32_t *bounds, size_t max_items);

/* The first byte from `p` that is not JSON's white space (space, LF, CR, tab); `end` if none. */
static inline const unsigned char *after_json_space(const unsigned char *p, const unsigned char *end) {
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

#endif
