/* Reading the JSON texts the store writes (json_text.h). */
#include "json_text.h"
#include <string.h>

static const unsigned char *skip_space(const unsigned char *p, const unsigned char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* From a string's opening quote: its closing quote, or NULL. */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end) {
  for (p++; p < end; p++) {
    if (*p == '\\') p++;
    else if (*p == '"') return p;
  }
  return NULL;
}

/* Past the JSON value that starts at p, or NULL. Objects and arrays by their brackets, strings skipped whole. */
static const unsigned char *value_end(const unsigned char *p, const unsigned char *end) {
  int depth = 0;
  do {
    if (p >= end) return NULL;
    if (*p == '"') {
      p = string_end(p, end);
      if (!p) return NULL;
      p++;
    } else if (*p == '{' || *p == '[') {
      depth++, p++;
    } else if (*p == '}' || *p == ']') {
      if (--depth < 0) return NULL;
      p++;
    } else if (depth > 0) {
      p++;
    } else {
      while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
    }
  } while (depth > 0);
  return p;
}

/* The JSON value from p to end as a Value: a string's body, an integer, null, or the value's text. */
static Value json_value(const unsigned char *p, const unsigned char *end) {
  Value value = {V_JSON_OTHER, p, end - p, 0};
  if (*p == '"') {
    value.type = V_JSON_STRING, value.bytes = p + 1, value.length = end - p - 2;
  } else if (end - p == 4 && memcmp(p, "null", 4) == 0) {
    value.type = V_NULL;
  } else if (end - p <= 18) {
    // An integer (what JSON.stringify writes for minor units): its value, as json_extract's.
    const unsigned char *digit = p + (*p == '-');
    sqlite3_int64 integer = 0;
    if (digit == end) return value;
    for (const unsigned char *q = digit; q < end; q++) {
      if (*q < '0' || *q > '9') return value;
      integer = integer * 10 + (*q - '0');
    }
    value.type = V_INTEGER, value.integer = *p == '-' ? -integer : integer;
  }
  return value;
}

int each_member(const unsigned char *p, const unsigned char *end, Member member, void *context) {
  p = skip_space(p, end);
  if (p >= end || *p != '{') return -1;
  p = skip_space(p + 1, end);
  if (p < end && *p == '}') return 1;
  for (;;) {
    if (p >= end || *p != '"') return -1;
    const unsigned char *key_end = string_end(p, end);
    if (!key_end) return -1;
    const unsigned char *colon = skip_space(key_end + 1, end);
    if (colon >= end || *colon != ':') return -1;
    const unsigned char *value = skip_space(colon + 1, end);
    const unsigned char *after = value_end(value, end);
    if (!after) return -1;
    int go_on = member(context, p + 1, (int)(key_end - p - 1), json_value(value, after));
    if (go_on <= 0) return go_on < 0 ? -1 : 1;
    p = skip_space(after, end);
    if (p < end && *p == '}') return 1;
    if (p >= end || *p != ',') return -1;
    p = skip_space(p + 1, end);
  }
}

static int hex_digit(unsigned char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int hex4(const unsigned char *p, const unsigned char *end) {
  if (end - p < 4) return -1;
  int code = 0;
  for (int i = 0; i < 4; i++) {
    int digit = hex_digit(p[i]);
    if (digit < 0) return -1;
    code = code * 16 + digit;
  }
  return code;
}

sqlite3_int64 decode_string(const unsigned char *p, sqlite3_int64 length, unsigned char *out) {
  const unsigned char *end = p + length;
  unsigned char *at = out;
  while (p < end) {
    const unsigned char *backslash = memchr(p, '\\', (size_t)(end - p));
    if (!backslash) backslash = end;
    memmove(at, p, (size_t)(backslash - p));
    at += backslash - p;
    if (backslash == end) break;
    p = backslash + 1;
    if (p >= end) return -1;
    unsigned char c = *p++;
    int code;
    switch (c) {
      case 'b': code = '\b'; break;
      case 'f': code = '\f'; break;
      case 'n': code = '\n'; break;
      case 'r': code = '\r'; break;
      case 't': code = '\t'; break;
      case 'u':
        code = hex4(p, end);
        if (code < 0) return -1;
        p += 4;
        if (code >= 0xD800 && code < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
          int low = hex4(p + 2, end);
          if (low >= 0xDC00 && low < 0xE000) code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), p += 6;
        }
        break;
      default: code = c;
    }
    if (code < 0x80) {
      *at++ = (unsigned char)code;
    } else if (code < 0x800) {
      *at++ = (unsigned char)(0xC0 | code >> 6), *at++ = (unsigned char)(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      *at++ = (unsigned char)(0xE0 | code >> 12), *at++ = (unsigned char)(0x80 | (code >> 6 & 0x3F)), *at++ = (unsigned char)(0x80 | (code & 0x3F));
    } else {
      *at++ = (unsigned char)(0xF0 | code >> 18), *at++ = (unsigned char)(0x80 | (code >> 12 & 0x3F));
      *at++ = (unsigned char)(0x80 | (code >> 6 & 0x3F)), *at++ = (unsigned char)(0x80 | (code & 0x3F));
    }
  }
  return at - out;
}

