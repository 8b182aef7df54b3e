/*
 * A publication's items read from their JSON text (or a CSV record: csv_item_row) straight into
 * stored rows: the text parsed, the item checked and normalized as item-validation.ts does, its
 * `extra` JSON written as JSON.stringify writes it (item-row.ts), its quote_free bits worked out
 * (quote-free.ts), the feed check's rules counted (model/feed-rules.ts), and its row written in
 * PostgreSQL's COPY format: binary for PostgreSQL's COPY, text for SQLite's
 * price_export_copy_rows.
 *
 * Why: done in JavaScript, a rich item cost the main thread ~27 µs (JSON.parse ~21 %, the
 * collector ~11 %, extraJson ~10 %, decoding ~7 %), and a publication of 1M items ran at
 * 0.42–0.48× the bulk loaders (issue #18 goal 2; bench/RESULTS.md, "2026-11-27, afternoon").
 *
 * It only ever says yes: an item it takes is one item-validation.ts takes, with the very same
 * row. Anything else (a problem, a value in a form it does not read — a number with an
 * exponent, `"1990.500"`, a URL only the URL parser accepts, a category to tidy, a repeated key,
 * a lone surrogate, …) it leaves to the JavaScript reader, whose answer stands: the refusals
 * and their messages have one author. native-item-rows.test.ts holds the two to the same rows
 * over generated and hostile items.
 */
#include "item_rows.h"
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---------- bytes ---------- */

static int reserve(Bytes *b, size_t more) {
  if (b->failed) return 0;
  if (b->length + more <= b->capacity) return 1;
  size_t capacity = b->capacity ? b->capacity : 4096;
  while (capacity < b->length + more) capacity *= 2;
  unsigned char *grown = realloc(b->bytes, capacity);
  if (!grown) {
    b->failed = 1;
    return 0;
  }
  b->bytes = grown;
  b->capacity = capacity;
  return 1;
}

static void put(Bytes *b, const void *p, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->bytes + b->length, p, n);
  b->length += n;
}

static void put_byte(Bytes *b, unsigned char c) {
  if (!reserve(b, 1)) return;
  b->bytes[b->length++] = c;
}

static void put_integer(Bytes *b, int64_t value) {
  char digits[24];
  int n = 0;
  uint64_t v = value < 0 ? (uint64_t)(-value) : (uint64_t)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  if (value < 0) digits[n++] = '-';
  if (!reserve(b, (size_t)n)) return;
  while (n) b->bytes[b->length++] = (unsigned char)digits[--n];
}

void bytes_free(Bytes *b) {
  free(b->bytes);
  b->bytes = NULL;
  b->length = b->capacity = 0;
}

/* ---------- JSON text ---------- */

/*
 * The bytes the rows' texts are tested for (quote_free's, COPY's and JSON's escapes), as bits:
 * each text is read once into the or of its bytes' bits, and every test is then one `&`
 * (a strchr per byte and test was a sixth of the reader's time).
 */
enum {
  C_COMMA = 1, C_SEMICOLON = 2, C_TAB = 4, C_PIPE = 8, C_QUOTE = 16, C_BACKSLASH = 32, C_CR = 64, C_LF = 128,
  C_AMP = 256, C_LT = 512, C_GT = 1024, C_UNDERSCORE = 2048, C_EF = 4096 /* the lead byte of U+FFFE and U+FFFF */,
  C_CONTROL = 8192 /* below 0x20: a JSON string holds none raw */
};
#define CONTROL8(from) [from] = C_CONTROL, [from + 1] = C_CONTROL, [from + 2] = C_CONTROL, [from + 3] = C_CONTROL, \
  [from + 4] = C_CONTROL, [from + 5] = C_CONTROL, [from + 6] = C_CONTROL, [from + 7] = C_CONTROL
static const unsigned short CLASS[256] = {
  CONTROL8(0), [8] = C_CONTROL, ['\t'] = C_TAB | C_CONTROL, ['\n'] = C_LF | C_CONTROL, [11] = C_CONTROL, [12] = C_CONTROL,
  ['\r'] = C_CR | C_CONTROL, [14] = C_CONTROL, [15] = C_CONTROL, CONTROL8(16), CONTROL8(24),
  [','] = C_COMMA, [';'] = C_SEMICOLON, ['|'] = C_PIPE, ['"'] = C_QUOTE, ['\\'] = C_BACKSLASH,
  ['&'] = C_AMP, ['<'] = C_LT, ['>'] = C_GT, ['_'] = C_UNDERSCORE, [0xef] = C_EF,
};

typedef struct {
  const unsigned char *p;
  const unsigned char *end;
  unsigned char *scratch; /* decoded strings with escapes go here; never longer than their text */
} Cursor;

static void skip_space(Cursor *c) {
  c->p = after_json_space(c->p, c->end);
}

static int hex(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read_hex4(const unsigned char *p) {
  int a = hex(p[0]), b = hex(p[1]), c = hex(p[2]), d = hex(p[3]);
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

/* The text's lengths and classes, in one pass. */
static void measure(Str *s) {
  size_t points = 0, astral = 0;
  unsigned classes = 0;
  for (size_t i = 0; i < s->n; i++) {
    unsigned char c = s->p[i];
    points += (c & 0xc0) != 0x80;
    astral += c >= 0xf0;
    classes |= CLASS[c];
  }
  s->points = points;
  s->units = points + astral;
  s->classes = classes;
}

/*
 * Reads a string at c->p (its opening quote). 0 when it is not one JSON.parse reads into text
 * the item rules allow: a raw control character (invalid JSON), a bad escape, an escaped
 * control character other than tab, LF and CR, or a lone surrogate (textProblem refuses both).
 * The bytes are UTF-8 already (text-decoding.ts checked them).
 */
static int read_string(Cursor *c, Str *out) {
  const unsigned char *p = c->p + 1, *end = c->end;
  const unsigned char *start = p;
  /* Most strings have no escape: measured as they are scanned, one pass. */
  size_t points = 0, astral = 0;
  unsigned classes = 0;
  for (; p < end; p++) {
    unsigned char ch = *p;
    unsigned k = CLASS[ch];
    if (k & (C_QUOTE | C_BACKSLASH | C_CONTROL)) break;
    points += (ch & 0xc0) != 0x80;
    astral += ch >= 0xf0;
    classes |= k;
  }
  if (p < end && *p == '"') {
    out->p = start;
    out->n = (size_t)(p - start);
    out->points = points;
    out->units = points + astral;
    out->classes = classes;
    c->p = p + 1;
    return 1;
  }
  unsigned char *w = c->scratch, *first = w;
  memcpy(w, start, (size_t)(p - start));
  w += p - start;
  for (;;) {
    if (p >= end || *p < 0x20) return 0;
    unsigned char ch = *p;
    if (ch == '"') break;
    if (ch != '\\') {
      *w++ = ch;
      p++;
      continue;
    }
    if (p + 1 >= end) return 0;
    unsigned char e = p[1];
    p += 2;
    switch (e) {
      case '"': *w++ = '"'; break;
      case '\\': *w++ = '\\'; break;
      case '/': *w++ = '/'; break;
      case 'n': *w++ = '\n'; break;
      case 'r': *w++ = '\r'; break;
      case 't': *w++ = '\t'; break;
      case 'u': {
        if (end - p < 4) return 0;
        int code = read_hex4(p);
        if (code < 0) return 0;
        p += 4;
        if (code >= 0xd800 && code <= 0xdbff) {
          if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return 0;
          int low = read_hex4(p + 2);
          if (low < 0xdc00 || low > 0xdfff) return 0;
          p += 6;
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        } else if (code >= 0xdc00 && code <= 0xdfff) {
          return 0;
        }
        if (code < 0x20 && code != '\t' && code != '\n' && code != '\r') return 0;
        if (code < 0x80) {
          *w++ = (unsigned char)code;
        } else if (code < 0x800) {
          *w++ = (unsigned char)(0xc0 | (code >> 6));
          *w++ = (unsigned char)(0x80 | (code & 0x3f));
        } else if (code < 0x10000) {
          *w++ = (unsigned char)(0xe0 | (code >> 12));
          *w++ = (unsigned char)(0x80 | ((code >> 6) & 0x3f));
          *w++ = (unsigned char)(0x80 | (code & 0x3f));
        } else {
          *w++ = (unsigned char)(0xf0 | (code >> 18));
          *w++ = (unsigned char)(0x80 | ((code >> 12) & 0x3f));
          *w++ = (unsigned char)(0x80 | ((code >> 6) & 0x3f));
          *w++ = (unsigned char)(0x80 | (code & 0x3f));
        }
        break;
      }
      default: return 0; /* \b, \f (control characters) or no escape at all */
    }
  }
  out->p = first;
  out->n = (size_t)(w - first);
  c->scratch = w;
  c->p = p + 1;
  measure(out);
  return 1;
}

/* A JSON number's text at c->p, checked against the grammar (RFC 8259 §6); 0 when it is none. */
static int read_number(Cursor *c, const unsigned char **start, size_t *length) {
  const unsigned char *p = c->p, *end = c->end;
  *start = p;
  if (p < end && *p == '-') p++;
  if (p >= end) return 0;
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
  else return 0;
  if (p < end && *p == '.') {
    p++;
    if (p >= end || *p < '0' || *p > '9') return 0;
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || *p < '0' || *p > '9') return 0;
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  *length = (size_t)(p - *start);
  c->p = p;
  return 1;
}

static int read_literal(Cursor *c, const char *word, size_t n) {
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
  c->p += n;
  return 1;
}

/* Past `open` and white space: 1 before the first member or element, 0 when the container is empty (its close passed), -1 at anything else. */
static int open_container(Cursor *c, unsigned char open, unsigned char close) {
  if (c->p >= c->end || *c->p != open) return -1;
  c->p++;
  skip_space(c);
  if (c->p < c->end && *c->p == close) {
    c->p++;
    return 0;
  }
  return 1;
}

/* After a member or element: 1 past its `,` (another follows), 0 past the container's close, -1 at anything else. */
static int next_member(Cursor *c, unsigned char close) {
  skip_space(c);
  if (c->p >= c->end) return -1;
  if (*c->p == close) {
    c->p++;
    return 0;
  }
  if (*c->p != ',') return -1;
  c->p++;
  return 1;
}

/*
 * The first byte from `p` that ends a JSON string's plain run: a quote, a backslash or a control
 * character; `end` if none. Sixteen bytes at a time where SSE2 is (every x86-64): the strings of
 * unknown keys are skipped through it (when the framer checked every item through skip_value, its
 * byte loop was ~4.6 % of the main thread: bench/RESULTS.md, "2026-11-27, late evening").
 */
static const unsigned char *plain_run_end(const unsigned char *p, const unsigned char *end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), last_control = _mm_set1_epi8(0x1f);
  for (; end - p >= 16; p += 16) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)p);
    /* max(byte, 0x1f) == 0x1f: the byte is at most 0x1f, unsigned. */
    __m128i stops = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(bytes, last_control), last_control));
    int mask = _mm_movemask_epi8(stops);
    if (mask) return p + __builtin_ctz((unsigned)mask);
  }
#endif
  while (p < end && *p != '"' && *p != '\\' && *p >= 0x20) p++;
  return p;
}

/* Skips any JSON value (an unknown key's), checking it; 0 when it is not valid JSON, or nested past a depth this reader leaves to JSON.parse. */
static int skip_value(Cursor *c, int depth) {
  if (depth > 64) return 0;
  skip_space(c);
  if (c->p >= c->end) return 0;
  const unsigned char *start;
  size_t length;
  switch (*c->p) {
    case '"': {
      /* A skipped string may hold anything JSON allows: only its syntax matters here. */
      const unsigned char *p = c->p + 1;
      for (;;) {
        p = plain_run_end(p, c->end);
        if (p >= c->end || *p < 0x20) return 0;
        if (*p == '"') break;
        if (*p == '\\') {
          if (p + 1 >= c->end) return 0;
          unsigned char e = p[1];
          if (e == 'u') {
            if (c->end - p < 6 || read_hex4(p + 2) < 0) return 0;
            p += 6;
          } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            p += 2;
          } else {
            return 0;
          }
          continue;
        }
      }
      c->p = p + 1;
      return 1;
    }
    case '{': {
      int more = open_container(c, '{', '}');
      while (more == 1) {
        skip_space(c);
        if (c->p >= c->end || *c->p != '"' || !skip_value(c, depth + 1)) return 0;
        skip_space(c);
        if (c->p >= c->end || *c->p != ':') return 0;
        c->p++;
        if (!skip_value(c, depth + 1)) return 0;
        more = next_member(c, '}');
      }
      return more == 0;
    }
    case '[': {
      int more = open_container(c, '[', ']');
      while (more == 1) {
        if (!skip_value(c, depth + 1)) return 0;
        more = next_member(c, ']');
      }
      return more == 0;
    }
    case 't': return read_literal(c, "true", 4);
    case 'f': return read_literal(c, "false", 5);
    case 'n': return read_literal(c, "null", 4);
    default: return read_number(c, &start, &length);
  }
}

/* ---------- values as item-validation.ts reads them ---------- */

/*
 * Minor units of a money value in the forms parseMoney reads without its regular expression
 * (money.ts): a JSON number or a text of at most 13 integer digits and at most two decimals, no
 * sign, no exponent, no white space. -1 for any other form (JavaScript reads it).
 */
static int64_t plain_cents(const unsigned char *p, size_t n) {
  size_t at = 0;
  int64_t units = 0;
  while (at < n && p[at] >= '0' && p[at] <= '9') units = units * 10 + (p[at++] - '0');
  if (at == 0 || at > 13) return -1;
  if (at == n) return units * 100;
  size_t decimals = n - at - 1;
  if (p[at] != '.' || decimals < 1 || decimals > 2) return -1;
  int tenths = p[at + 1] - '0';
  int hundredths = decimals == 2 ? p[at + 2] - '0' : 0;
  if (tenths < 0 || tenths > 9 || hundredths < 0 || hundredths > 9) return -1;
  return units * 100 + tenths * 10 + hundredths;
}

/* A JSON number that is a safe integer ≥ 0 written in digits only (String() of it is those digits); -1 otherwise. */
static int64_t plain_integer(const unsigned char *p, size_t n) {
  if (n == 0 || n > 15) return -1;
  int64_t value = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    value = value * 10 + (p[i] - '0');
  }
  return value;
}

/* The code point at p (valid UTF-8), and its length. */
static uint32_t code_point(const unsigned char *p, int *length) {
  if (p[0] < 0x80) return *length = 1, p[0];
  if (p[0] < 0xe0) return *length = 2, ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
  if (p[0] < 0xf0) return *length = 3, ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
  return *length = 4, ((p[0] & 0x07u) << 18) | ((p[1] & 0x3fu) << 12) | ((p[2] & 0x3fu) << 6) | (p[3] & 0x3fu);
}

/* The code point that ends the text at end (valid UTF-8, not empty). */
static uint32_t last_code_point(const unsigned char *start, const unsigned char *end) {
  const unsigned char *p = end - 1;
  while (p > start && (*p & 0xc0) == 0x80) p--;
  int length;
  return code_point(p, &length);
}

/* What JavaScript's `\s` and trim() take for white space. */
static int js_space(uint32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0d) || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

/* Whether trim() leaves nothing of the text: every code point white space. */
static int blank(const Str *s) {
  for (size_t i = 0; i < s->n;) {
    int length;
    if (!js_space(code_point(s->p + i, &length))) return 0;
    i += (size_t)length;
  }
  return 1;
}

/*
 * Whether a category path is spelled as normalizeCategory spells it (item-validation.ts,
 * NORMAL_PATH): levels without `/` and without white space at either end, joined by ` / `.
 */
static int normal_path(const Str *s) {
  const unsigned char *p = s->p, *end = s->p + s->n;
  if (p == end) return 0;
  for (;;) {
    const unsigned char *slash = memchr(p, '/', (size_t)(end - p));
    const unsigned char *level_end = slash ? slash - 1 : end; /* a level before ` / ` ends before its space */
    if (slash && (slash == p || slash[-1] != ' ')) return 0;
    if (level_end <= p) return 0;
    int length;
    if (js_space(code_point(p, &length)) || js_space(last_code_point(p, level_end))) return 0;
    if (!slash) return 1;
    if (slash + 1 >= end || slash[1] != ' ') return 0;
    p = slash + 2;
  }
}

static int lower_alnum_hyphen(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

/*
 * isHttpUrl's PLAIN_HTTP_URL (item-validation.ts): lower-case http(s)://, labels of lower-case
 * letters, digits and hyphens, none punycode (`xn--`), the last beginning with a letter, a port
 * of at most four digits, then printable ASCII after `/`, `?` or `#`.
 */
static int plain_http_url(const Str *s) {
  const unsigned char *p = s->p, *end = s->p + s->n;
  if (s->n >= 7 && memcmp(p, "http://", 7) == 0) p += 7;
  else if (s->n >= 8 && memcmp(p, "https://", 8) == 0) p += 8;
  else return 0;
  for (;;) {
    const unsigned char *label = p;
    while (p < end && lower_alnum_hyphen(*p)) p++;
    if (p == label) return 0;
    if (p - label >= 4 && memcmp(label, "xn--", 4) == 0) return 0;
    if (p < end && *p == '.') {
      p++;
      continue;
    }
    if (*label < 'a' || *label > 'z') return 0;
    break;
  }
  if (p < end && *p == ':') {
    const unsigned char *digits = ++p;
    while (p < end && *p >= '0' && *p <= '9') p++;
    if (p == digits || p - digits > 4) return 0;
  }
  if (p == end) return 1;
  if (*p != '/' && *p != '?' && *p != '#') return 0;
  for (p++; p < end; p++) if (*p < 0x21 || *p > 0x7e) return 0;
  return 1;
}

/* ---------- the item ---------- */

enum {
  F_OFFER_ID, F_NAME, F_PRICE, F_OLD_PRICE, F_PURCHASE_PRICE, F_CURRENCY, F_AVAILABLE, F_QUANTITY, F_URL, F_PICTURE,
  F_VENDOR, F_VENDOR_CODE, F_BARCODE, F_DESCRIPTION, F_CATEGORY, F_COMPETITORS, F_ATTRIBUTES, F_COUNT
};

static const char *const FIELD_NAMES[F_COUNT] = {
  "offer_id", "name", "price", "old_price", "purchase_price", "currency", "available", "quantity", "url", "picture",
  "vendor", "vendor_code", "barcode", "description", "category", "competitors", "attributes",
};

static size_t FIELD_LENGTHS[F_COUNT];

static int field_of(const Str *key) {
  if (FIELD_LENGTHS[0] == 0) for (int f = 0; f < F_COUNT; f++) FIELD_LENGTHS[f] = strlen(FIELD_NAMES[f]);
  for (int f = 0; f < F_COUNT; f++) if (FIELD_LENGTHS[f] == key->n && memcmp(FIELD_NAMES[f], key->p, key->n) == 0) return f;
  return -1;
}

#define MAX_COMPETITORS 64
#define MAX_ATTRIBUTES 128

typedef struct {
  Str name; /* trimmed */
  int64_t price;
  int has_url;
  Str url;
  int available; /* -1 null, 0, 1 */
} Competitor;

typedef struct {
  Str key;
  Str value;
} Attribute;

typedef struct {
  unsigned seen; /* fields present (not null) */
  Str text[F_COUNT];
  int64_t money[F_COUNT];
  int64_t quantity;
  int available;
  int competitor_count;
  Competitor competitors[MAX_COMPETITORS];
  int attribute_count;
  Attribute attributes[MAX_ATTRIBUTES];
} Item;

static int text_fits(const ItemRowsCall *call, const Str *s) { return (int64_t)s->units <= call->max_field_chars; }

/* A text field's value: a string, or a number String() spells as its digits. 0: left to JavaScript. */
static int read_text_field(Cursor *c, Str *out) {
  if (*c->p == '"') return read_string(c, out);
  const unsigned char *start;
  size_t length;
  if (!read_number(c, &start, &length) || plain_integer(start, length) < 0) return 0;
  out->p = start;
  out->n = out->units = out->points = length;
  out->classes = 0; /* digits */
  return 1;
}

static int read_money(Cursor *c, int64_t *cents) {
  const unsigned char *start;
  size_t length;
  if (*c->p == '"') {
    Str s;
    if (!read_string(c, &s)) return 0;
    start = s.p;
    length = s.n;
  } else if (!read_number(c, &start, &length)) {
    return 0;
  }
  *cents = plain_cents(start, length);
  return *cents >= 0;
}

/* parseBoolean's BOOLEAN_TEXT (item-validation.ts) for a text spelled in lower case without white space; -1 otherwise. */
static int boolean_text(const Str *s) {
  static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
  for (int i = 0; i < 3; i++) {
    if (s->n == strlen(yes[i]) && memcmp(s->p, yes[i], s->n) == 0) return 1;
    if (s->n == strlen(no[i]) && memcmp(s->p, no[i], s->n) == 0) return 0;
  }
  return -1;
}

/* parseBoolean (item-validation.ts) for the spellings it reads exactly; -1 otherwise. */
static int read_boolean(Cursor *c) {
  if (read_literal(c, "true", 4)) return 1;
  if (read_literal(c, "false", 5)) return 0;
  if (*c->p == '"') {
    Str s;
    return read_string(c, &s) ? boolean_text(&s) : -1;
  }
  const unsigned char *start;
  size_t length;
  if (!read_number(c, &start, &length) || length != 1) return -1;
  return *start == '1' ? 1 : *start == '0' ? 0 : -1;
}

/* Trims what trim() would at either end; 0 when a non-ASCII white space is at an end (JavaScript reads it). */
static int trimmed(const Str *s, Str *out) {
  const unsigned char *p = s->p, *end = s->p + s->n;
  while (p < end && (*p == ' ' || (*p >= 0x09 && *p <= 0x0d))) p++;
  while (end > p && (end[-1] == ' ' || (end[-1] >= 0x09 && end[-1] <= 0x0d))) end--;
  if (p == end) return 0;
  int length;
  if (js_space(code_point(p, &length)) || js_space(last_code_point(p, end))) return 0;
  out->p = p;
  out->n = (size_t)(end - p);
  measure(out);
  return 1;
}

/* A member's key and its `:`, white space around: 1 with the value next, 0 at anything else. */
static int read_key(Cursor *c, Str *key) {
  skip_space(c);
  if (c->p >= c->end || *c->p != '"' || !read_string(c, key)) return 0;
  skip_space(c);
  if (c->p >= c->end || *c->p != ':') return 0;
  c->p++;
  skip_space(c);
  return c->p < c->end;
}

static int read_competitor(ItemRowsCall *call, Cursor *c, Competitor *out) {
  unsigned seen = 0; /* name, price, url, available */
  Str name = {0};
  out->price = -1;
  out->has_url = 0;
  out->available = -1;
  int more = open_container(c, '{', '}'); /* an empty one has no name */
  while (more == 1) {
    Str key;
    if (!read_key(c, &key)) return 0;
    int which = key.n == 4 && memcmp(key.p, "name", 4) == 0 ? 0 : key.n == 5 && memcmp(key.p, "price", 5) == 0 ? 1
              : key.n == 3 && memcmp(key.p, "url", 3) == 0 ? 2 : key.n == 9 && memcmp(key.p, "available", 9) == 0 ? 3 : -1;
    if (which >= 0) {
      if (seen & (1u << which)) return 0;
      seen |= 1u << which;
    }
    if (which == 0) {
      if (*c->p != '"' || !read_string(c, &name)) return 0;
    } else if (which == 1) {
      if (!read_money(c, &out->price)) return 0;
    } else if (which == 2) {
      if (read_literal(c, "null", 4)) {
        out->has_url = 0;
      } else {
        if (*c->p != '"' || !read_string(c, &out->url) || !plain_http_url(&out->url) || !text_fits(call, &out->url)) return 0;
        out->has_url = 1;
      }
    } else if (which == 3) {
      if (read_literal(c, "null", 4)) out->available = -1;
      else if ((out->available = read_boolean(c)) < 0) return 0;
    } else if (!skip_value(c, 2)) {
      return 0;
    }
    more = next_member(c, '}');
  }
  if (more < 0 || !(seen & 1) || !(seen & 2) || !text_fits(call, &name)) return 0;
  return trimmed(&name, &out->name);
}

/* An array index as a property name ("0", "12"): JavaScript orders those keys first, so JavaScript writes such attributes. */
static int index_like(const Str *key) {
  if (key->n == 0 || key->n > 10) return 0;
  for (size_t i = 0; i < key->n; i++) if (key->p[i] < '0' || key->p[i] > '9') return 0;
  return key->n == 1 || key->p[0] != '0';
}

static int read_attributes(ItemRowsCall *call, Cursor *c, Item *item) {
  int more = open_container(c, '{', '}');
  while (more == 1) {
    Str key;
    if (!read_key(c, &key)) return 0;
    if (index_like(&key) || (key.n == 9 && memcmp(key.p, "__proto__", 9) == 0) || !text_fits(call, &key)) return 0;
    for (int i = 0; i < item->attribute_count; i++) {
      const Str *other = &item->attributes[i].key;
      if (other->n == key.n && memcmp(other->p, key.p, key.n) == 0) return 0; /* JSON.parse keeps the last: JavaScript's */
    }
    Str value;
    if (read_literal(c, "null", 4)) {
      /* Skipped, as item-validation.ts skips it; the key may not repeat either way. */
      value = (Str){NULL, 0, 0, 0, 0};
    } else if (read_literal(c, "true", 4)) {
      value = (Str){(const unsigned char *)"true", 4, 4, 4, 0};
    } else if (read_literal(c, "false", 5)) {
      value = (Str){(const unsigned char *)"false", 5, 5, 5, 0};
    } else if (!read_text_field(c, &value) || !text_fits(call, &value)) {
      return 0;
    }
    if (item->attribute_count == MAX_ATTRIBUTES) return 0;
    item->attributes[item->attribute_count++] = (Attribute){key, value};
    more = next_member(c, '}');
  }
  return more == 0;
}

static int read_competitors(ItemRowsCall *call, Cursor *c, Item *item) {
  int more = open_container(c, '[', ']');
  while (more == 1) {
    skip_space(c);
    if (c->p >= c->end || item->competitor_count == MAX_COMPETITORS) return 0;
    if (!read_competitor(call, c, &item->competitors[item->competitor_count++])) return 0;
    more = next_member(c, ']');
  }
  return more == 0;
}

/* One member's value into the item; 0: left to JavaScript. */
static int read_field(ItemRowsCall *call, Cursor *c, Item *item, int field) {
  if (read_literal(c, "null", 4)) return 1; /* absent, as `present` says */
  item->seen |= 1u << field;
  switch (field) {
    case F_PRICE:
    case F_OLD_PRICE:
    case F_PURCHASE_PRICE: return read_money(c, &item->money[field]);
    case F_QUANTITY: {
      const unsigned char *start;
      size_t length;
      if (*c->p == '"' || !read_number(c, &start, &length)) return 0;
      return (item->quantity = plain_integer(start, length)) >= 0;
    }
    case F_AVAILABLE: return (item->available = read_boolean(c)) >= 0;
    case F_COMPETITORS: return read_competitors(call, c, item);
    case F_ATTRIBUTES: return read_attributes(call, c, item);
    default: return read_text_field(c, &item->text[field]) && text_fits(call, &item->text[field]);
  }
}

static int read_item(ItemRowsCall *call, Cursor *c, Item *item) {
  skip_space(c);
  unsigned members = 0;
  int more = open_container(c, '{', '}'); /* an empty one has no offer_id */
  while (more == 1) {
    Str key;
    if (!read_key(c, &key)) return 0;
    int field = field_of(&key);
    if (field >= 0) {
      if (members & (1u << field)) return 0; /* JSON.parse keeps the last: JavaScript's */
      members |= 1u << field;
      if (!read_field(call, c, item, field)) return 0;
    } else if (!skip_value(c, 1)) {
      return 0;
    }
    more = next_member(c, '}');
  }
  if (more != 0) return 0;
  skip_space(c);
  return c->p == c->end;
}

/* The checks of normalizeItem that reading did not make; 0: left to JavaScript (it has a problem to tell, or a value to tidy). */
static int valid(const Item *item) {
  const unsigned required = (1u << F_OFFER_ID) | (1u << F_NAME) | (1u << F_PRICE);
  if ((item->seen & required) != required) return 0;
  if (item->text[F_OFFER_ID].units > 120 || blank(&item->text[F_OFFER_ID]) || blank(&item->text[F_NAME])) return 0;
  if (item->seen & (1u << F_CURRENCY)) {
    const Str *s = &item->text[F_CURRENCY];
    if (s->n != 3) return 0;
    for (int i = 0; i < 3; i++) {
      unsigned char ch = s->p[i];
      if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z'))) return 0;
    }
  }
  if ((item->seen & (1u << F_URL)) && !plain_http_url(&item->text[F_URL])) return 0;
  if ((item->seen & (1u << F_PICTURE)) && !plain_http_url(&item->text[F_PICTURE])) return 0;
  if ((item->seen & (1u << F_CATEGORY)) && !normal_path(&item->text[F_CATEGORY])) return 0;
  return 1;
}

/* ---------- what the row says ---------- */

static const Str *present_text(const Item *item, int field) { return (item->seen & (1u << field)) ? &item->text[field] : NULL; }

/* JSON's escape of a character that needs one, as a binary COPY row holds it, or a text one (its backslashes doubled); NULL for the rest. */
static const char *json_escape(unsigned char ch, int binary) {
  switch (ch) {
    case '"': return binary ? "\\\"" : "\\\\\"";
    case '\\': return binary ? "\\\\" : "\\\\\\\\";
    case '\n': return binary ? "\\n" : "\\\\n";
    case '\r': return binary ? "\\r" : "\\\\r";
    case '\t': return binary ? "\\t" : "\\\\t";
    default: return NULL;
  }
}

/*
 * JSON.stringify's string (item-row.ts's extra): `"`, `\` and the three allowed controls
 * escaped for JSON, and in a text COPY row each backslash then doubled for COPY (JSON holds no
 * raw tab, LF or CR), in one pass.
 */
static void put_json_string(Bytes *b, const Str *s, int binary) {
  put_byte(b, '"');
  if (!(s->classes & (C_QUOTE | C_BACKSLASH | C_LF | C_CR | C_TAB))) {
    put(b, s->p, s->n);
    put_byte(b, '"');
    return;
  }
  const unsigned char *p = s->p, *end = s->p + s->n, *run = p;
  for (; p < end; p++) {
    const char *escape = json_escape(*p, binary);
    if (!escape) continue;
    put(b, run, (size_t)(p - run));
    put(b, escape, strlen(escape));
    run = p + 1;
  }
  put(b, run, (size_t)(end - run));
  put_byte(b, '"');
}

static void put_key(Bytes *b, int *first, const char *key) {
  if (!*first) put_byte(b, ',');
  *first = 0;
  put_byte(b, '"');
  put(b, key, strlen(key));
  put(b, "\":", 2);
}

/* item-row.ts extraJson: EXTRA_KEYS in order, absent when null; 0 when there is nothing to write (NULL). */
static int put_extra(Bytes *b, const Item *item, int attribute_entries, int binary) {
  size_t start = b->length;
  int first = 1;
  put_byte(b, '{');
  if (item->seen & (1u << F_PURCHASE_PRICE)) {
    put_key(b, &first, "purchase_price");
    put_integer(b, item->money[F_PURCHASE_PRICE]);
  }
  static const int texts[] = {F_PICTURE, F_VENDOR, F_VENDOR_CODE, F_BARCODE, F_DESCRIPTION, F_CATEGORY};
  for (int i = 0; i < 6; i++) {
    const Str *s = present_text(item, texts[i]);
    if (!s) continue;
    put_key(b, &first, FIELD_NAMES[texts[i]]);
    put_json_string(b, s, binary);
  }
  if (item->competitor_count > 0) {
    put_key(b, &first, "competitors");
    put_byte(b, '[');
    for (int i = 0; i < item->competitor_count; i++) {
      const Competitor *c = &item->competitors[i];
      if (i) put_byte(b, ',');
      put(b, "{\"name\":", 8);
      put_json_string(b, &c->name, binary);
      put(b, ",\"price\":", 9);
      put_integer(b, c->price);
      put(b, ",\"url\":", 7);
      if (c->has_url) put_json_string(b, &c->url, binary);
      else put(b, "null", 4);
      put(b, ",\"available\":", 13);
      put(b, c->available < 0 ? "null" : c->available ? "true" : "false", c->available < 0 ? 4 : c->available ? 4 : 5);
      put_byte(b, '}');
    }
    put_byte(b, ']');
  }
  if (attribute_entries > 0) {
    put_key(b, &first, "attributes");
    put_byte(b, '{');
    int written = 0;
    for (int i = 0; i < item->attribute_count; i++) {
      const Attribute *a = &item->attributes[i];
      if (!a->value.p) continue;
      if (written++) put_byte(b, ',');
      put_json_string(b, &a->key, binary);
      put_byte(b, ':');
      put_json_string(b, &a->value, binary);
    }
    put_byte(b, '}');
  }
  if (first) {
    b->length = start;
    return 0;
  }
  put_byte(b, '}');
  return 1;
}

/* COPY text: backslash, tab, LF and CR escaped (copy-rows.ts does the same). */
static void put_copy_text(Bytes *b, const Str *s) {
  if (!(s->classes & (C_BACKSLASH | C_TAB | C_LF | C_CR))) return put(b, s->p, s->n);
  const unsigned char *p = s->p, *end = s->p + s->n, *run = p;
  for (; p < end; p++) {
    unsigned char ch = *p;
    const char *escape = ch == '\\' ? "\\\\" : ch == '\t' ? "\\t" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : NULL;
    if (!escape) continue;
    put(b, run, (size_t)(p - run));
    put(b, escape, 2);
    run = p + 1;
  }
  put(b, run, (size_t)(end - run));
}

/* ---------- quote_free (quote-free.ts) ---------- */

/* XML_ILLEGAL beyond the controls reading refused (U+FFFE, U+FFFF: EF BF BE/BF). */
static int has_nonchar(const Str *s) {
  if (!(s->classes & C_EF)) return 0;
  for (size_t i = 0; i + 2 < s->n; i++) if (s->p[i] == 0xef && s->p[i + 1] == 0xbf && (s->p[i + 2] == 0xbe || s->p[i + 2] == 0xbf)) return 1;
  return 0;
}

/* TEXT_WORK: `& < > CR` or an XML-illegal character (the only controls left are tab and LF, which it allows). */
static int text_work(const Str *s) { return (s->classes & (C_AMP | C_LT | C_GT | C_CR)) || has_nonchar(s); }
/* ATTRIBUTE_WORK: TEXT_WORK's and `" tab LF`. */
static int attribute_work(const Str *s) { return (s->classes & (C_AMP | C_LT | C_GT | C_CR | C_QUOTE | C_TAB | C_LF)) || has_nonchar(s); }

/* `_x` and four hex digits and `_`: Excel's escape, which a cell must escape (sheet-row.ts). */
static int has_cell_escape(const Str *s) {
  if (!(s->classes & C_UNDERSCORE)) return 0;
  for (size_t i = 0; i + 7 <= s->n; i++) {
    if (s->p[i] == '_' && s->p[i + 1] == 'x' && hex(s->p[i + 2]) >= 0 && hex(s->p[i + 3]) >= 0 && hex(s->p[i + 4]) >= 0 &&
        hex(s->p[i + 5]) >= 0 && s->p[i + 6] == '_')
      return 1;
  }
  return 0;
}

#define MAX_CELL_TEXT 32767

/* isPlainCellText, for the texts reading lets through (no controls but tab, LF, CR; no lone surrogates). */
static int plain_cell(const Str *s) {
  if (s->units == 0 || s->units > MAX_CELL_TEXT) return 0;
  if (s->p[0] <= 0x20 || s->p[s->n - 1] <= 0x20) return 0;
  return !(s->classes & (C_AMP | C_LT | C_GT | C_CR)) && !has_nonchar(s) && !has_cell_escape(s);
}

static const unsigned DELIMITERS[4] = {C_COMMA, C_SEMICOLON, C_TAB, C_PIPE};

/* The CSV, XML, JSON and cell bits of the stored text at `index` of TEXT_FIELDS (offer_id, name, currency, url). */
static uint64_t stored_text_bits(const Str *value, int index) {
  const uint64_t csv_all = 0xfull << (index * 4), xml = 1ull << (16 + index), json = 1ull << (33 + index), cell = 1ull << (37 + index);
  if (!value) return csv_all | xml;
  uint64_t bits = 0;
  int edge_space = value->n > 0 && (value->p[0] == ' ' || value->p[value->n - 1] == ' ');
  int quoted_anyway = edge_space || (value->classes & (C_QUOTE | C_CR | C_LF));
  for (int d = 0; d < 4; d++) if (!quoted_anyway && !(value->classes & DELIMITERS[d])) bits |= 1ull << (index * 4 + d);
  if (!text_work(value)) bits |= xml;
  if (!(value->classes & (C_QUOTE | C_BACKSLASH | C_TAB | C_LF | C_CR))) bits |= json;
  if (plain_cell(value)) bits |= cell;
  return bits;
}

static uint64_t quote_free(const Item *item, const Str *offer_id, const Str *name, const Str *currency, const Str *url) {
  uint64_t bits = stored_text_bits(offer_id, 0) | stored_text_bits(name, 1) | stored_text_bits(currency, 2) | stored_text_bits(url, 3);
  static const int extra_texts[] = {F_PICTURE, F_VENDOR, F_VENDOR_CODE, F_BARCODE, F_DESCRIPTION};
  for (int i = 0; i < 5; i++) {
    const Str *s = present_text(item, extra_texts[i]);
    if (!s || !text_work(s)) bits |= 1ull << (20 + i);
  }
  int attributes_plain = 1;
  for (int i = 0; i < item->attribute_count && attributes_plain; i++) {
    const Attribute *a = &item->attributes[i];
    if (a->value.p && (attribute_work(&a->key) || text_work(&a->value))) attributes_plain = 0;
  }
  if (attributes_plain) bits |= 1ull << 25;
  if (!attribute_work(offer_id)) bits |= 1ull << 26;
  static const int read_extras[] = {F_PICTURE, F_VENDOR, F_VENDOR_CODE, F_BARCODE, F_DESCRIPTION, F_CATEGORY};
  for (int i = 0; i < 6; i++) if (!present_text(item, read_extras[i])) bits |= 1ull << (27 + i);
  return bits;
}

/* ---------- the feed check's rules (model/feed-rules.ts) ---------- */

static int digits_only(const Str *s) {
  for (size_t i = 0; i < s->n; i++) if (s->p[i] < '0' || s->p[i] > '9') return 0;
  return 1;
}

/* YML_OFFER_ID: 1–80 of Latin and Cyrillic (А–я, Ё, ё) letters, digits and . , / \ ( ) [ ] - = _. */
static int yml_offer_id(const Str *s) {
  if (s->units < 1 || s->units > 80) return 0;
  for (size_t i = 0; i < s->n;) {
    int length;
    uint32_t c = code_point(s->p + i, &length);
    i += (size_t)length;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 0x410 && c <= 0x44f) || c == 0x401 || c == 0x451) continue;
    if (c < 0x80 && c && strchr(".,/\\()[]-=_", (int)c)) continue;
    return 0;
  }
  return 1;
}

static int valid_gtin(const Str *s) {
  if (!digits_only(s) || !(s->n == 8 || s->n == 12 || s->n == 13 || s->n == 14)) return 0;
  int sum = 0;
  for (int i = (int)s->n - 2, weight = 3; i >= 0; i--, weight = 4 - weight) sum += (s->p[i] - '0') * weight;
  return (10 - sum % 10) % 10 == s->p[s->n - 1] - '0';
}

static void count_rules(ItemRowsCall *call, const Item *item, int64_t seq, const Str *offer_id, const Str *name, const char *currency, const Str *url) {
  uint32_t *n = call->rule_counts;
  const Str *description = present_text(item, F_DESCRIPTION), *barcode = present_text(item, F_BARCODE), *picture = present_text(item, F_PICTURE);
  if (name->points > 150) n[RULE_YML_NAME]++;
  if (description && description->points > 3000) n[RULE_YML_DESCRIPTION]++;
  if (barcode && !(digits_only(barcode) && (barcode->n == 8 || barcode->n == 12 || barcode->n == 13))) n[RULE_YML_BARCODE]++;
  if (item->seen & (1u << F_OLD_PRICE)) {
    int64_t old = item->money[F_OLD_PRICE], price = item->money[F_PRICE];
    /* discountOutside: integers below 2^53 · 100, exact in 64 bits. */
    if (old > price) {
      int64_t off = (old - price) * 100;
      if (!(off >= 5 * old && off <= 95 * old)) n[RULE_YML_DISCOUNT]++;
    }
  }
  if (!yml_offer_id(offer_id)) n[RULE_YML_OFFER_ID]++;
  static const char *const yml_currencies[] = {"RUR", "RUB", "UAH", "BYR", "BYN", "KZT", "USD", "EUR"};
  int known = 0;
  for (int i = 0; i < 8; i++) known |= memcmp(currency, yml_currencies[i], 3) == 0;
  if (!known) n[RULE_YML_CURRENCY]++;
  if (offer_id->points > 50) n[RULE_GOOGLE_ID]++;
  if (name->points > 150) n[RULE_GOOGLE_TITLE]++;
  if (description && description->points > 5000) n[RULE_GOOGLE_DESCRIPTION]++;
  if (!url || url->n == 0) n[RULE_GOOGLE_LINK]++;
  if (!picture || picture->n == 0) n[RULE_GOOGLE_IMAGE]++;
  if (barcode && !valid_gtin(barcode)) n[RULE_GOOGLE_GTIN]++;
  if (offer_id->points > 80) n[RULE_CML_ID]++;
  if (name->points > 255) n[RULE_CML_NAME]++;
  /* The legacy columns' texts: offer_id, name, currency (3 letters) and url. */
  if (offer_id->points > MAX_CELL_TEXT || name->points > MAX_CELL_TEXT || (url && url->points > MAX_CELL_TEXT)) n[RULE_XLSX_CELL]++;
  if (seq >= 1048575) n[RULE_XLSX_ROWS]++;
}

/* ---------- distinct texts ---------- */

static uint32_t hash_of(const unsigned char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  return h;
}

/* Doubles the table (or makes its first); 0 past DISTINCT_MAX_SLOTS or out of memory. */
static int grow_distinct(Distinct *d) {
  uint32_t capacity = d->capacity ? d->capacity * 2 : 256;
  if (capacity > DISTINCT_MAX_SLOTS) return 0;
  uint32_t *slots = calloc(capacity, sizeof *slots), *lengths = malloc(capacity * sizeof *lengths);
  if (!slots || !lengths) {
    free(slots);
    free(lengths);
    return 0;
  }
  for (uint32_t k = 0; k < d->capacity; k++) {
    if (d->slots[k] == 0) continue;
    uint32_t i = hash_of(d->known.bytes + d->slots[k] - 1, d->lengths[k]) & (capacity - 1);
    while (slots[i]) i = (i + 1) & (capacity - 1);
    slots[i] = d->slots[k];
    lengths[i] = d->lengths[k];
  }
  free(d->slots);
  free(d->lengths);
  d->slots = slots;
  d->lengths = lengths;
  d->capacity = capacity;
  return 1;
}

/*
 * Hands `s` over in `fresh` (ended by a NUL) unless the publication did already: its items
 * mostly repeat a few currencies and categories, and each text handed to JavaScript is decoded
 * there and looked up in a Set (~4 % of the main thread over rich items, when each call handed
 * its own). Past the table's bounds each text not in it is handed over, every time; the caller's
 * Set keeps them distinct.
 */
static void note_distinct(Distinct *d, Bytes *fresh, const unsigned char *s, size_t n) {
  if (!d->full && d->used + 1 > d->capacity / 4 * 3 && !grow_distinct(d)) d->full = 1;
  /* A full table is still looked in (a quarter of its slots are empty): only new texts pass. */
  if (d->capacity) {
    uint32_t i = hash_of(s, n) & (d->capacity - 1);
    for (; d->slots[i]; i = (i + 1) & (d->capacity - 1)) {
      if (d->lengths[i] == n && memcmp(d->known.bytes + d->slots[i] - 1, s, n) == 0) return;
    }
    size_t offset = d->known.length;
    if (!d->full && offset + n + 1 <= DISTINCT_MAX_BYTES) {
      put(&d->known, s, n);
      put_byte(&d->known, 0);
    }
    if (d->full || d->known.failed || d->known.length == offset) {
      d->full = 1;
    } else {
      d->slots[i] = (uint32_t)offset + 1;
      d->lengths[i] = (uint32_t)n;
      d->used++;
    }
  }
  put(fresh, s, n);
  put_byte(fresh, 0);
}

void distinct_free(Distinct *d) {
  bytes_free(&d->known);
  free(d->slots);
  free(d->lengths);
  memset(d, 0, sizeof *d);
}

/* ---------- a row, in COPY's text or binary format ---------- */

/*
 * A row being written: text (tab-separated, `\N` for null, the texts escaped; PostgreSQL's COPY
 * and SQLite's price_export_copy_rows read it) or binary (PostgreSQL's COPY binary tuple: a
 * field count, then each field's int32 length, -1 for null, and its bytes, integers
 * big-endian), which PostgreSQL reads with less work: its own parsing of each row was the
 * limit there (bench/RESULTS.md, "2026-11-27, evening").
 */
typedef struct {
  Bytes *b;
  int binary;
  int fields; /* written so far */
} Row;

static void put_big_endian(Bytes *b, uint64_t value, int bytes) {
  if (!reserve(b, (size_t)bytes)) return;
  for (int i = bytes - 1; i >= 0; i--) b->bytes[b->length++] = (unsigned char)(value >> (8 * i));
}

static void begin_row(Row *row, int fields) {
  if (row->binary) put_big_endian(row->b, (uint64_t)fields, 2);
}

/* Before a field: the text format's tab. */
static void next_field(Row *row) {
  if (!row->binary && row->fields > 0) put_byte(row->b, '\t');
  row->fields++;
}

static void field_integer(Row *row, int64_t value, int bytes) {
  next_field(row);
  if (!row->binary) return put_integer(row->b, value);
  put_big_endian(row->b, (uint64_t)bytes, 4);
  put_big_endian(row->b, (uint64_t)value, bytes);
}

/* A null field's bytes: a length of -1, or the text format's `\N`. */
static void put_null(Row *row) {
  if (row->binary) put_big_endian(row->b, 0xffffffffu, 4);
  else put(row->b, "\\N", 2);
}

static void field_null(Row *row) {
  next_field(row);
  put_null(row);
}

static void field_boolean(Row *row, int value) {
  next_field(row);
  if (!row->binary) return put_byte(row->b, value ? 't' : 'f');
  put_big_endian(row->b, 1, 4);
  put_byte(row->b, value ? 1 : 0);
}

static void field_text(Row *row, const Str *s) {
  next_field(row);
  if (!row->binary) return put_copy_text(row->b, s);
  put_big_endian(row->b, s->n, 4);
  put(row->b, s->p, s->n);
}

/* The `extra` JSON (put_extra), or null when the item has none. */
static void field_extra(Row *row, const Item *item, int attribute_entries) {
  next_field(row);
  Bytes *b = row->b;
  size_t at = b->length;
  if (row->binary) put_big_endian(b, 0, 4); /* its length, once written */
  if (!put_extra(b, item, attribute_entries, row->binary)) {
    b->length = at;
    put_null(row);
    return;
  }
  if (row->binary && !b->failed) {
    size_t length = b->length - at - 4;
    for (int i = 0; i < 4; i++) b->bytes[at + i] = (unsigned char)(length >> (8 * (3 - i)));
  }
}

static void end_row(Row *row) {
  if (!row->binary) put_byte(row->b, '\n');
}

/* ---------- one item ---------- */

/* An item with nothing read yet (its arrays are filled as they are read, not cleared). */
static void start_item(Item *item) {
  item->seen = 0;
  item->competitor_count = 0;
  item->attribute_count = 0;
}

/* Writes the row of a read and valid item, and counts it. */
static void put_item_row(ItemRowsCall *call, const Item *item, int64_t seq) {
  const Str *offer_id = &item->text[F_OFFER_ID], *name = &item->text[F_NAME], *url = present_text(item, F_URL);
  char currency[4];
  if (item->seen & (1u << F_CURRENCY)) {
    for (int i = 0; i < 3; i++) {
      unsigned char ch = item->text[F_CURRENCY].p[i];
      currency[i] = (char)(ch >= 'a' ? ch - 32 : ch);
    }
  } else {
    memcpy(currency, call->store_currency, 3);
  }
  currency[3] = 0;
  const Str currency_text = {(const unsigned char *)currency, 3, 3, 3, 0};
  int64_t quantity = (item->seen & (1u << F_QUANTITY)) ? item->quantity : -1;
  int available = (item->seen & (1u << F_AVAILABLE)) ? item->available : quantity < 0 ? 1 : quantity > 0;
  int attribute_entries = 0;
  for (int i = 0; i < item->attribute_count; i++) attribute_entries += item->attributes[i].value.p != NULL;

  Row row = {&call->rows, call->binary, 0};
  begin_row(&row, 12);
  field_integer(&row, call->draft_id, 8);
  field_integer(&row, seq, 4);
  field_text(&row, offer_id);
  field_text(&row, name);
  field_integer(&row, item->money[F_PRICE], 8);
  if (item->seen & (1u << F_OLD_PRICE)) field_integer(&row, item->money[F_OLD_PRICE], 8);
  else field_null(&row);
  field_text(&row, &currency_text);
  field_boolean(&row, available);
  if (quantity >= 0) field_integer(&row, quantity, 8);
  else field_null(&row);
  if (url) field_text(&row, url);
  else field_null(&row);
  field_extra(&row, item, attribute_entries);
  field_integer(&row, (int64_t)quote_free(item, offer_id, name, &currency_text, url), 8);
  end_row(&row);

  call->accepted++;
  call->available += available;
  count_rules(call, item, seq, offer_id, name, currency, url);
  note_distinct(&call->seen->currencies, &call->currencies, (const unsigned char *)currency, 3);
  const Str *category = present_text(item, F_CATEGORY);
  if (category) note_distinct(&call->seen->categories, &call->categories, category->p, category->n);
  else note_distinct(&call->seen->categories, &call->categories, (const unsigned char *)"", 0);
}

int item_row(ItemRowsCall *call, const unsigned char *bytes, size_t length, int64_t seq, unsigned char *scratch) {
  Item item;
  start_item(&item);
  Cursor c = {bytes, bytes + length, scratch};
  if (!read_item(call, &c, &item) || !valid(&item)) return 0;
  put_item_row(call, &item, seq);
  return 1;
}

/* ---------- a CSV record ---------- */

int csv_column(CsvColumns *columns, const unsigned char *name, size_t length) {
  if (columns->count == MAX_CSV_COLUMNS) return 0;
  size_t k = columns->count;
  static const char prefix[] = "attributes.";
  if (length > sizeof prefix - 1 && memcmp(name, prefix, sizeof prefix - 1) == 0) {
    columns->field[k] = CSV_ATTRIBUTE_COLUMN;
    columns->key[k] = (Str){name + sizeof prefix - 1, length - (sizeof prefix - 1), 0, 0, 0};
    measure(&columns->key[k]);
  } else {
    Str s = {name, length, 0, 0, 0};
    if ((columns->field[k] = field_of(&s)) < 0) return 0; /* `attributes.` alone: a problem JavaScript tells */
  }
  columns->count++;
  return 1;
}

/* A control character textProblem refuses (model/text.ts): below 0x20, other than tab, LF and CR. */
static int refused_control(const Str *s) {
  if (!(s->classes & C_CONTROL)) return 0;
  for (size_t i = 0; i < s->n; i++) if (s->p[i] < 0x20 && s->p[i] != '\t' && s->p[i] != '\n' && s->p[i] != '\r') return 1;
  return 0;
}

/* A text the text rule lets through (textProblem, MAX_FIELD_CHARS); the bytes are UTF-8, so no lone surrogate. */
static int good_text(const ItemRowsCall *call, const Str *s) { return !refused_control(s) && text_fits(call, s); }

/*
 * The fields of a whole record (frame_csv checked its grammar): a quoted one without its quotes
 * and with each doubled quote made one (in *scratch), the last without the CR of a CRLF line
 * end. 0 when there are more than `most`.
 */
static int csv_fields(const unsigned char *p, size_t n, Str *fields, size_t most, size_t *count, unsigned char **scratch) {
  size_t at = 0, k = 0;
  for (;;) {
    if (k == most) return 0;
    Str *f = &fields[k++];
    if (at < n && p[at] == '"') {
      size_t from = ++at;
      unsigned char *w = NULL;
      for (;;) {
        const unsigned char *quote = memchr(p + at, '"', n - at);
        if (!quote) return 0;
        size_t q = (size_t)(quote - p);
        if (q + 1 < n && p[q + 1] == '"') {
          if (!w) w = *scratch;
          memcpy(w, p + from, q + 1 - from);
          w += q + 1 - from;
          at = from = q + 2;
          continue;
        }
        if (w) {
          memcpy(w, p + from, q - from);
          w += q - from;
          f->p = *scratch;
          f->n = (size_t)(w - *scratch);
          *scratch = w;
        } else {
          f->p = p + from;
          f->n = q - from;
        }
        at = q + 1;
        break;
      }
      measure(f);
      if (at == n || (at + 1 == n && p[at] == '\r')) break;
      if (p[at] != ',') return 0;
      at++;
    } else {
      const unsigned char *comma = memchr(p + at, ',', n - at);
      size_t end = comma ? (size_t)(comma - p) : n;
      f->p = p + at;
      f->n = end - at;
      if (!comma && f->n > 0 && f->p[f->n - 1] == '\r') f->n--;
      measure(f);
      if (!comma) break;
      at = end + 1;
    }
  }
  *count = k;
  return 1;
}

/* A cell holding JSON (`competitors`, `attributes`: fromJsonText), read as that field's JSON value; `null` is none. */
static int json_cell(ItemRowsCall *call, Item *item, int field, const Str *cell, unsigned char **scratch) {
  Cursor c = {cell->p, cell->p + cell->n, *scratch};
  skip_space(&c);
  if (read_literal(&c, "null", 4)) item->seen &= ~(1u << field);
  else if (c.p >= c.end || !(field == F_COMPETITORS ? read_competitors(call, &c, item) : read_attributes(call, &c, item))) return 0;
  skip_space(&c);
  *scratch = c.scratch;
  return c.p == c.end;
}

/* One cell of a text row into the item (normalizeItem with `text`): '' is absent. 0: left to JavaScript. */
static int read_cell(ItemRowsCall *call, Item *item, int field, const Str *cell, unsigned char **scratch) {
  if (cell->n == 0) return 1;
  item->seen |= 1u << field;
  switch (field) {
    case F_PRICE:
    case F_OLD_PRICE:
    case F_PURCHASE_PRICE: return (item->money[field] = plain_cents(cell->p, cell->n)) >= 0;
    case F_QUANTITY: return (item->quantity = plain_integer(cell->p, cell->n)) >= 0;
    case F_AVAILABLE: return (item->available = boolean_text(cell)) >= 0;
    case F_COMPETITORS:
    case F_ATTRIBUTES: return json_cell(call, item, field, cell, scratch);
    default:
      item->text[field] = *cell;
      return good_text(call, cell);
  }
}

/* An `attributes.<key>` cell, after the `attributes` cell's entries (collectAttributeColumns). 0: left to JavaScript. */
static int read_attribute_cell(ItemRowsCall *call, Item *item, const CsvColumns *columns, size_t k, const Str *cell) {
  if (cell->n == 0) return 1;
  const Str key = columns->key[k];
  if (index_like(&key) || (key.n == 9 && memcmp(key.p, "__proto__", 9) == 0) || !good_text(call, &key) || !good_text(call, cell)) return 0;
  /* A key the `attributes` cell holds too: the column's value replaces it in place, which JavaScript writes. */
  for (int i = 0; i < item->attribute_count; i++) {
    const Str *other = &item->attributes[i].key;
    if (other->n == key.n && memcmp(other->p, key.p, key.n) == 0) return 0;
  }
  if (item->attribute_count == MAX_ATTRIBUTES) return 0;
  item->attributes[item->attribute_count++] = (Attribute){key, *cell};
  return 1;
}

int csv_item_row(ItemRowsCall *call, const CsvColumns *columns, const unsigned char *bytes, size_t length, int64_t seq, unsigned char *scratch) {
  Str cells[MAX_CSV_COLUMNS];
  size_t count;
  if (!csv_fields(bytes, length, cells, MAX_CSV_COLUMNS, &count, &scratch) || count != columns->count) return 0;
  Item item;
  start_item(&item);
  for (size_t k = 0; k < count; k++) {
    if (columns->field[k] != CSV_ATTRIBUTE_COLUMN && !read_cell(call, &item, columns->field[k], &cells[k], &scratch)) return 0;
  }
  for (size_t k = 0; k < count; k++) {
    if (columns->field[k] == CSV_ATTRIBUTE_COLUMN && !read_attribute_cell(call, &item, columns, k, &cells[k])) return 0;
  }
  if (!valid(&item)) return 0;
  put_item_row(call, &item, seq);
  return 1;
}
