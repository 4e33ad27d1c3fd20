/* A small JSON reader (requests) and writer helpers (replies): the helper has no runtime to lean on. */
#include "helper.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p;
  char *err;
  size_t errlen;
  int depth;
} Parser;

static JVal *parse_value(Parser *ps);

static void skip_ws(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static JVal *bad(Parser *ps, const char *what) {
  if (!ps->err[0]) snprintf(ps->err, ps->errlen, "%s", what);
  return NULL;
}

static JVal *new_val(JType t) {
  JVal *v = calloc(1, sizeof *v);
  v->t = t;
  return v;
}

static void put_utf8(Buf *b, unsigned cp) {
  char out[4];
  int n;
  if (cp < 0x80) out[0] = (char)cp, n = 1;
  else if (cp < 0x800) out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
  else if (cp < 0x10000) out[0] = (char)(0xE0 | cp >> 12), out[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
  else
    out[0] = (char)(0xF0 | cp >> 18), out[1] = (char)(0x80 | ((cp >> 12) & 0x3F)), out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)),
    out[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
  buf_putn(b, out, n);
}

static int hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

static char *parse_string(Parser *ps) {
  Buf b = {0};
  ps->p++; /* opening quote */
  for (;;) {
    unsigned char c = (unsigned char)*ps->p;
    if (c == 0) {
      buf_free(&b);
      bad(ps, "unterminated string");
      return NULL;
    }
    if (c == '"') {
      ps->p++;
      break;
    }
    if (c < 0x20) {
      buf_free(&b);
      bad(ps, "control character in string");
      return NULL;
    }
    if (c != '\\') {
      buf_putn(&b, ps->p, 1);
      ps->p++;
      continue;
    }
    ps->p++;
    char e = *ps->p++;
    switch (e) {
    case '"': buf_put(&b, "\""); break;
    case '\\': buf_put(&b, "\\"); break;
    case '/': buf_put(&b, "/"); break;
    case 'b': buf_put(&b, "\b"); break;
    case 'f': buf_put(&b, "\f"); break;
    case 'n': buf_put(&b, "\n"); break;
    case 'r': buf_put(&b, "\r"); break;
    case 't': buf_put(&b, "\t"); break;
    case 'u': {
      unsigned cp, lo;
      if (hex4(ps->p, &cp) < 0) {
        buf_free(&b);
        bad(ps, "bad \\u escape");
        return NULL;
      }
      ps->p += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u' && hex4(ps->p + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        ps->p += 6;
      }
      put_utf8(&b, cp);
      break;
    }
    default:
      buf_free(&b);
      bad(ps, "bad escape in string");
      return NULL;
    }
  }
  buf_putn(&b, "", 1); /* NUL */
  return b.p;
}

static JVal *parse_value(Parser *ps) {
  skip_ws(ps);
  if (++ps->depth > 64) return bad(ps, "nested too deeply");
  JVal *v = NULL;
  const char *p = ps->p;
  if (*p == '{' || *p == '[') {
    int obj = *p == '{';
    v = new_val(obj ? J_OBJ : J_ARR);
    ps->p++;
    skip_ws(ps);
    if (*ps->p == (obj ? '}' : ']')) {
      ps->p++;
    } else {
      for (;;) {
        char *key = NULL;
        if (obj) {
          skip_ws(ps);
          if (*ps->p != '"' || !(key = parse_string(ps))) {
            json_free(v);
            return bad(ps, "expected a string key");
          }
          skip_ws(ps);
          if (*ps->p != ':') {
            free(key);
            json_free(v);
            return bad(ps, "expected ':'");
          }
          ps->p++;
        }
        JVal *item = parse_value(ps);
        if (!item) {
          free(key);
          json_free(v);
          return NULL;
        }
        v->v = realloc(v->v, sizeof(JVal *) * (size_t)(v->len + 1));
        v->v[v->len] = item;
        if (obj) {
          v->k = realloc(v->k, sizeof(char *) * (size_t)(v->len + 1));
          v->k[v->len] = key;
        }
        v->len++;
        skip_ws(ps);
        if (*ps->p == ',') {
          ps->p++;
          continue;
        }
        if (*ps->p == (obj ? '}' : ']')) {
          ps->p++;
          break;
        }
        json_free(v);
        return bad(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
  } else if (*p == '"') {
    char *s = parse_string(ps);
    if (!s) return NULL;
    v = new_val(J_STR);
    v->s = s;
  } else if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
    v = new_val(J_BOOL);
    v->b = *p == 't';
    ps->p += v->b ? 4 : 5;
  } else if (strncmp(p, "null", 4) == 0) {
    v = new_val(J_NULL);
    ps->p += 4;
  } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
    char *end;
    double n = strtod(p, &end);
    if (end == p) return bad(ps, "bad number");
    v = new_val(J_NUM);
    v->n = n;
    ps->p = end;
  } else {
    return bad(ps, "unexpected character");
  }
  ps->depth--;
  return v;
}

JVal *json_parse(const char *text, char *err, size_t errlen) {
  Parser ps = {text, err, errlen, 0};
  err[0] = 0;
  JVal *v = parse_value(&ps);
  if (!v) return NULL;
  skip_ws(&ps);
  if (*ps.p) {
    json_free(v);
    snprintf(err, errlen, "trailing characters after the value");
    return NULL;
  }
  return v;
}

void json_free(JVal *v) {
  if (!v) return;
  for (int i = 0; i < v->len; i++) {
    json_free(v->v[i]);
    if (v->k) free(v->k[i]);
  }
  free(v->v);
  free(v->k);
  free(v->s);
  free(v);
}

JVal *json_get(const JVal *obj, const char *key) {
  if (!obj || obj->t != J_OBJ) return NULL;
  for (int i = obj->len - 1; i >= 0; i--)
    if (strcmp(obj->k[i], key) == 0) return obj->v[i];
  return NULL;
}

int json_is_int(const JVal *v) {
  return v && v->t == J_NUM && v->n == (double)(long long)v->n && v->n > -9007199254740992.0 && v->n < 9007199254740992.0;
}

/* ---- output -------------------------------------------------------------------------------- */
void buf_putn(Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    b->p = realloc(b->p, cap);
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void buf_put(Buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

void buf_printf(Buf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < (int)sizeof tmp) {
    buf_putn(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  buf_putn(b, big, (size_t)n);
  free(big);
}

void buf_str(Buf *b, const char *s) {
  buf_put(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': buf_put(b, "\\\""); break;
    case '\\': buf_put(b, "\\\\"); break;
    case '\n': buf_put(b, "\\n"); break;
    case '\r': buf_put(b, "\\r"); break;
    case '\t': buf_put(b, "\\t"); break;
    default:
      if (*p < 0x20) buf_printf(b, "\\u%04x", *p);
      else buf_putn(b, (const char *)p, 1);
    }
  }
  buf_put(b, "\"");
}

void buf_wstr(Buf *b, const wchar_t *w) {
  char *s = utf8_of(w ? w : L"");
  buf_str(b, s);
  free(s);
}

void buf_base64(Buf *b, const unsigned char *d, size_t n) {
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t need = (n + 2) / 3 * 4;
  if (b->n + need + 1 > b->cap) {
    b->cap = b->n + need + 1;
    b->p = realloc(b->p, b->cap);
  }
  char *o = b->p + b->n;
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];
    *o++ = A[v >> 18], *o++ = A[(v >> 12) & 63], *o++ = A[(v >> 6) & 63], *o++ = A[v & 63];
  }
  if (i < n) {
    unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0);
    *o++ = A[v >> 18], *o++ = A[(v >> 12) & 63];
    *o++ = i + 1 < n ? A[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  b->n = (size_t)(o - b->p);
  b->p[b->n] = 0;
}

void buf_free(Buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

char *utf8_of(const wchar_t *w) {
  int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
  char *s = malloc(n > 0 ? (size_t)n : 1);
  if (n <= 0 || !WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL)) s[0] = 0;
  return s;
}

wchar_t *wide_of(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  wchar_t *w = malloc(sizeof(wchar_t) * (size_t)(n > 0 ? n : 1));
  if (n <= 0 || !MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n)) w[0] = 0;
  return w;
}
