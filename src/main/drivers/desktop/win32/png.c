/*
 * PNG writer for screenshots: 8-bit RGB, filter 0, one zlib stream of fixed-Huffman deflate with
 * a greedy single-candidate LZ77 match finder. Windows' pixels are flat colour for the most part,
 * so this is small and fast without a zlib to link.
 */
#include "helper.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *p;
  size_t n, cap;
  unsigned bits;
  int nbits;
} Out;

static void out_byte(Out *o, unsigned char c) {
  if (o->n + 1 > o->cap) {
    o->cap = o->cap ? o->cap * 2 : 4096;
    o->p = realloc(o->p, o->cap);
  }
  o->p[o->n++] = c;
}

/* Deflate writes values LSB first. */
static void put_bits(Out *o, unsigned value, int count) {
  o->bits |= value << o->nbits;
  o->nbits += count;
  while (o->nbits >= 8) {
    out_byte(o, (unsigned char)(o->bits & 0xFF));
    o->bits >>= 8;
    o->nbits -= 8;
  }
}

/* Huffman codes are defined MSB first: reverse them into the LSB-first stream. */
static void put_code(Out *o, unsigned code, int len) {
  unsigned r = 0;
  for (int i = 0; i < len; i++) r |= ((code >> i) & 1u) << (len - 1 - i);
  put_bits(o, r, len);
}

static void put_symbol(Out *o, int sym) {
  if (sym < 144) put_code(o, 0x30u + (unsigned)sym, 8);
  else if (sym < 256) put_code(o, 0x190u + (unsigned)(sym - 144), 9);
  else if (sym < 280) put_code(o, (unsigned)(sym - 256), 7);
  else put_code(o, 0xC0u + (unsigned)(sym - 280), 8);
}

static const int LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const int LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int DIST_BASE[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                  193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const int DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void put_match(Out *o, int len, int dist) {
  int i = 28;
  while (LEN_BASE[i] > len) i--;
  put_symbol(o, 257 + i);
  if (LEN_EXTRA[i]) put_bits(o, (unsigned)(len - LEN_BASE[i]), LEN_EXTRA[i]);
  int d = 29;
  while (DIST_BASE[d] > dist) d--;
  put_code(o, (unsigned)d, 5);
  if (DIST_EXTRA[d]) put_bits(o, (unsigned)(dist - DIST_BASE[d]), DIST_EXTRA[d]);
}

#define HASH_BITS 16
#define WINDOW 32768

static void deflate_fixed(Out *o, const unsigned char *d, size_t n) {
  int *head = malloc(sizeof(int) * (1u << HASH_BITS));
  for (size_t i = 0; i < (1u << HASH_BITS); i++) head[i] = -1;
  put_bits(o, 1, 1); /* BFINAL */
  put_bits(o, 1, 2); /* BTYPE = fixed Huffman */
  size_t i = 0;
  while (i < n) {
    int best = 0, dist = 0;
    if (i + 3 <= n) {
      unsigned h = ((unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2]) * 2654435761u >> (32 - HASH_BITS);
      int cand = head[h];
      head[h] = (int)i;
      if (cand >= 0 && i - (size_t)cand <= WINDOW) {
        size_t max = n - i < 258 ? n - i : 258;
        size_t l = 0;
        while (l < max && d[(size_t)cand + l] == d[i + l]) l++;
        if (l >= 3) best = (int)l, dist = (int)(i - (size_t)cand);
      }
    }
    if (best) {
      put_match(o, best, dist);
      i += (size_t)best;
    } else {
      put_symbol(o, d[i]);
      i++;
    }
  }
  put_symbol(o, 256);
  if (o->nbits) put_bits(o, 0, 8 - o->nbits);
  free(head);
}

static unsigned long crc_table[256];

static unsigned long crc32_of(const unsigned char *p, size_t n, unsigned long crc) {
  if (!crc_table[1])
    for (unsigned long c, k = 0; k < 256; k++) {
      c = k;
      for (int j = 0; j < 8; j++) c = c & 1 ? 0xEDB88320UL ^ (c >> 1) : c >> 1;
      crc_table[k] = c;
    }
  crc ^= 0xFFFFFFFFUL;
  for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFUL;
}

static void put_be32(Out *o, unsigned long v) {
  out_byte(o, (unsigned char)(v >> 24));
  out_byte(o, (unsigned char)(v >> 16));
  out_byte(o, (unsigned char)(v >> 8));
  out_byte(o, (unsigned char)v);
}

static void put_chunk(Out *o, const char *type, const unsigned char *data, size_t n) {
  put_be32(o, (unsigned long)n);
  size_t start = o->n;
  for (int i = 0; i < 4; i++) out_byte(o, (unsigned char)type[i]);
  for (size_t i = 0; i < n; i++) out_byte(o, data[i]);
  put_be32(o, crc32_of(o->p + start, o->n - start, 0));
}

unsigned char *png_encode_rgb(int width, int height, const unsigned char *rgb, size_t *out_len) {
  size_t stride = (size_t)width * 3, raw_len = (stride + 1) * (size_t)height;
  unsigned char *raw = malloc(raw_len);
  for (int y = 0; y < height; y++) {
    raw[(stride + 1) * (size_t)y] = 0;
    memcpy(raw + (stride + 1) * (size_t)y + 1, rgb + stride * (size_t)y, stride);
  }
  Out z = {0};
  out_byte(&z, 0x78);
  out_byte(&z, 0x01);
  deflate_fixed(&z, raw, raw_len);
  unsigned long a = 1, b = 0;
  for (size_t i = 0; i < raw_len; i++) {
    a = (a + raw[i]) % 65521;
    b = (b + a) % 65521;
  }
  put_be32(&z, (b << 16) | a);
  free(raw);

  Out png = {0};
  static const unsigned char SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  for (int i = 0; i < 8; i++) out_byte(&png, SIG[i]);
  unsigned char ihdr[13] = {(unsigned char)(width >> 24), (unsigned char)(width >> 16), (unsigned char)(width >> 8), (unsigned char)width,
                            (unsigned char)(height >> 24), (unsigned char)(height >> 16), (unsigned char)(height >> 8), (unsigned char)height,
                            8, 2, 0, 0, 0};
  put_chunk(&png, "IHDR", ihdr, 13);
  put_chunk(&png, "IDAT", z.p, z.n);
  put_chunk(&png, "IEND", NULL, 0);
  free(z.p);
  *out_len = png.n;
  return png.p;
}
