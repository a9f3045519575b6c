// Upright pictures held as YCbCr 4:2:0 planes; see bookpipe_ycc_planes in include/jshim.h.
//
// Everything here reproduces libjpeg-turbo's compression front end bit for bit:
//   - RGB -> YCbCr with jccolor.c's 16-bit fixed-point constants and rounding (its SIMD
//     versions use the same integers);
//   - 2x2 chroma averaging with h2v2_downsample's alternating bias 1, 2, 1, 2 by output column;
//   - padding: the full-size rows are completed to a pair by repeating the last one, the
//     full-size columns are repeated out to the chroma blocks' width before averaging
//     (expand_right_edge), Y is repeated out to its blocks' width, and both planes repeat their
//     last row down to a whole iMCU (expand_bottom_edge).
#include "ycc_planes_internal.h"

#include <stdlib.h>
#include <string.h>

#define BOOKPIPE_INLINE static inline __attribute__((always_inline))

// jccolor.c: FIX(x) = (INT32)(x * 65536 + 0.5), ONE_HALF = 1 << 15, CBCR_OFFSET = 128 << 16.
enum {
  FIX_0_29900 = 19595, FIX_0_58700 = 38470, FIX_0_11400 = 7471,
  FIX_0_16874 = 11059, FIX_0_33126 = 21709, FIX_0_50000 = 32768,
  FIX_0_41869 = 27439, FIX_0_08131 = 5329,
};
#define Y_ROUND (1 << 15)
#define C_ROUND ((128 << 16) + (1 << 15) - 1)

BOOKPIPE_INLINE void convert_body(const unsigned char *restrict rgb, size_t n,
                                  unsigned char *restrict y, unsigned char *restrict cb,
                                  unsigned char *restrict cr) {
  for (size_t i = 0; i < n; i++) {
    int32_t r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    y[i] = (unsigned char)((FIX_0_29900 * r + FIX_0_58700 * g + FIX_0_11400 * b + Y_ROUND) >> 16);
    cb[i] = (unsigned char)((-FIX_0_16874 * r - FIX_0_33126 * g + FIX_0_50000 * b + C_ROUND) >> 16);
    cr[i] = (unsigned char)((FIX_0_50000 * r - FIX_0_41869 * g - FIX_0_08131 * b + C_ROUND) >> 16);
  }
}

// Chroma of a pair of lines along the line: out[j] = (a[2j] + a[2j+1] + b[2j] + b[2j+1] + bias) >> 2
// for the whole pairs; `bias` is 1 or 2, or alternates starting at 1 when `alternate`.
BOOKPIPE_INLINE void average_body(const unsigned char *restrict a, const unsigned char *restrict b,
                                  size_t pairs, int bias, int alternate,
                                  unsigned char *restrict out) {
  for (size_t j = 0; j < pairs; j++) {
    int add = alternate ? 1 + (int)(j & 1) : bias;
    out[j] = (unsigned char)((a[2 * j] + a[2 * j + 1] + b[2 * j] + b[2 * j + 1] + add) >> 2);
  }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define BOOKPIPE_AVX2 __attribute__((target("avx2,fma")))
BOOKPIPE_AVX2 static void convert_avx2(const unsigned char *rgb, size_t n, unsigned char *y,
                                       unsigned char *cb, unsigned char *cr) {
  convert_body(rgb, n, y, cb, cr);
}
BOOKPIPE_AVX2 static void average_avx2(const unsigned char *a, const unsigned char *b, size_t pairs,
                                       int bias, int alternate, unsigned char *out) {
  average_body(a, b, pairs, bias, alternate, out);
}
static void convert_line(const unsigned char *rgb, size_t n, unsigned char *y, unsigned char *cb,
                         unsigned char *cr) {
  if (bookpipe_cpu_has_avx2_fma()) convert_avx2(rgb, n, y, cb, cr);
  else convert_body(rgb, n, y, cb, cr);
}
static void average_line(const unsigned char *a, const unsigned char *b, size_t pairs, int bias,
                         int alternate, unsigned char *out) {
  if (bookpipe_cpu_has_avx2_fma()) average_avx2(a, b, pairs, bias, alternate, out);
  else average_body(a, b, pairs, bias, alternate, out);
}
#else
static void convert_line(const unsigned char *rgb, size_t n, unsigned char *y, unsigned char *cb,
                         unsigned char *cr) {
  convert_body(rgb, n, y, cb, cr);
}
static void average_line(const unsigned char *a, const unsigned char *b, size_t pairs, int bias,
                         int alternate, unsigned char *out) {
  average_body(a, b, pairs, bias, alternate, out);
}
#endif

bookpipe_ycc_planes *bookpipe_ycc_planes_create(int width, int height, int lines_are_columns) {
  if (width <= 0 || height <= 0) return NULL;
  bookpipe_ycc_planes *planes = (bookpipe_ycc_planes *)calloc(1, sizeof(bookpipe_ycc_planes));
  if (planes == NULL) return NULL;
  planes->width = width;
  planes->height = height;
  planes->columns = lines_are_columns ? 1 : 0;
  planes->line_count = lines_are_columns ? width : height;
  planes->line_length = lines_are_columns ? height : width;
  planes->y_stride = (size_t)(width + 7) / 8 * 8;
  planes->y_rows = (height + 15) / 16 * 16;
  planes->c_stride = (size_t)(width + 15) / 16 * 8;
  planes->c_rows = planes->y_rows / 2;
  size_t y_bytes = planes->y_stride * (size_t)planes->y_rows;
  size_t c_bytes = planes->c_stride * (size_t)planes->c_rows;
  // The line length is odd-safe: one spare byte lets a pair read a[2j + 1] past an odd end.
  size_t slot_bytes = 3 * ((size_t)planes->line_length + 1);
  planes->y = (unsigned char *)malloc(y_bytes + 2 * c_bytes);
  planes->edge_cb = (uint16_t *)calloc(2 * (size_t)planes->c_rows, sizeof(uint16_t));
  planes->slots = (unsigned char *)malloc(2 * slot_bytes);
  if (planes->y == NULL || planes->edge_cb == NULL || planes->slots == NULL) {
    bookpipe_ycc_planes_destroy(planes);
    return NULL;
  }
  planes->cb = planes->y + y_bytes;
  planes->cr = planes->cb + c_bytes;
  planes->edge_cr = planes->edge_cb + planes->c_rows;
  planes->slot_line[0] = planes->slot_line[1] = -1;
  planes->last_line = -1;
  planes->tile_block = -1;
  if (planes->columns) {
    size_t n = (size_t)planes->line_length, pairs = (n + 1) / 2;
    planes->tile_y = (unsigned char *)malloc(BOOKPIPE_YCC_TILE * n + BOOKPIPE_YCC_TILE * pairs);
    if (planes->tile_y == NULL) {
      bookpipe_ycc_planes_destroy(planes);
      return NULL;
    }
    planes->tile_cb = planes->tile_y + BOOKPIPE_YCC_TILE * n;
    planes->tile_cr = planes->tile_cb + BOOKPIPE_YCC_TILE / 2 * pairs;
  }
  return planes;
}

void bookpipe_ycc_planes_destroy(bookpipe_ycc_planes *planes) {
  if (planes == NULL) return;
  free(planes->y);
  free(planes->edge_cb);
  free(planes->slots);
  free(planes->tile_y);
  free(planes);
}

int bookpipe_ycc_planes_complete(const bookpipe_ycc_planes *planes) {
  return planes->lines_done == planes->line_count;
}

// Slot s holds Y, Cb, Cr of one line, each line_length + 1 bytes (the spare one repeats the last
// pixel, so an odd line's last pair reads it twice, as libjpeg's padding does).
static unsigned char *slot(bookpipe_ycc_planes *planes, int s, int component) {
  size_t length = (size_t)planes->line_length + 1;
  return planes->slots + ((size_t)s * 3 + (size_t)component) * length;
}

// Writes the pair of lines `first` (even) and `first + 1` (or `first` again past the end).
static void emit_pair(bookpipe_ycc_planes *planes, int first, int s0, int s1) {
  int n = planes->line_length;
  int k = first / 2;
  int second_exists = first + 1 < planes->line_count;
  size_t pairs = (size_t)(n + 1) / 2;
  const unsigned char *y0 = slot(planes, s0, 0), *y1 = slot(planes, s1, 0);
  const unsigned char *cb0 = slot(planes, s0, 1), *cb1 = slot(planes, s1, 1);
  const unsigned char *cr0 = slot(planes, s0, 2), *cr1 = slot(planes, s1, 2);
  if (!planes->columns) {
    memcpy(planes->y + (size_t)first * planes->y_stride, y0, (size_t)n);
    if (second_exists) memcpy(planes->y + (size_t)(first + 1) * planes->y_stride, y1, (size_t)n);
    average_line(cb0, cb1, pairs, 0, 1, planes->cb + (size_t)k * planes->c_stride);
    average_line(cr0, cr1, pairs, 0, 1, planes->cr + (size_t)k * planes->c_stride);
    planes->edge_cb[k] = (uint16_t)(cb0[n - 1] + cb1[n - 1]);
    planes->edge_cr[k] = (uint16_t)(cr0[n - 1] + cr1[n - 1]);
    return;
  }
  // Lines are columns: into the tile (written down the planes by flush_tile).
  size_t pairs_per_line = pairs;
  int t = first % BOOKPIPE_YCC_TILE;
  memcpy(planes->tile_y + (size_t)t * (size_t)n, y0, (size_t)n);
  if (second_exists) memcpy(planes->tile_y + (size_t)(t + 1) * (size_t)n, y1, (size_t)n);
  int bias = 1 + (k & 1);
  average_line(cb0, cb1, pairs, bias, 0, planes->tile_cb + (size_t)(t / 2) * pairs_per_line);
  average_line(cr0, cr1, pairs, bias, 0, planes->tile_cr + (size_t)(t / 2) * pairs_per_line);
  int low = first, high = second_exists ? first + 1 : first;
  if (planes->tile_block < 0) {
    planes->tile_block = first / BOOKPIPE_YCC_TILE;
    planes->tile_low = low;
    planes->tile_high = high;
  } else {
    if (low < planes->tile_low) planes->tile_low = low;
    if (high > planes->tile_high) planes->tile_high = high;
  }
  int last = planes->line_count - 1;
  if (first == last || first + 1 == last) {
    const unsigned char *cbl = first == last ? cb0 : cb1, *crl = first == last ? cr0 : cr1;
    for (size_t j = 0; j < pairs; j++) {
      planes->edge_cb[j] = (uint16_t)(cbl[2 * j] + cbl[2 * j + 1]);
      planes->edge_cr[j] = (uint16_t)(crl[2 * j] + crl[2 * j + 1]);
    }
  }
}

#if defined(__SSE2__)
#include <emmintrin.h>

// out row j (16 bytes, `out_stride` apart) = byte j of each of 16 input lines (`in_stride` apart).
static void transpose16(const unsigned char *in, size_t in_stride, unsigned char *out,
                        size_t out_stride) {
  __m128i r[16], b[16], c[16], d[16];
  for (int i = 0; i < 16; i++) r[i] = _mm_loadu_si128((const __m128i *)(in + (size_t)i * in_stride));
  for (int p = 0; p < 8; p++) {  // 16-bit units (line 2p, 2p+1) for bytes 0-7 and 8-15
    b[2 * p] = _mm_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
    b[2 * p + 1] = _mm_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
  }
  for (int q = 0; q < 4; q++) {  // 32-bit units (lines 4q..4q+3) for bytes 0-3, 4-7, 8-11, 12-15
    c[4 * q] = _mm_unpacklo_epi16(b[4 * q], b[4 * q + 2]);
    c[4 * q + 1] = _mm_unpackhi_epi16(b[4 * q], b[4 * q + 2]);
    c[4 * q + 2] = _mm_unpacklo_epi16(b[4 * q + 1], b[4 * q + 3]);
    c[4 * q + 3] = _mm_unpackhi_epi16(b[4 * q + 1], b[4 * q + 3]);
  }
  for (int h = 0; h < 2; h++) {  // 64-bit units (lines 8h..8h+7), two bytes each
    for (int m = 0; m < 4; m++) {
      d[8 * h + 2 * m] = _mm_unpacklo_epi32(c[8 * h + m], c[8 * h + 4 + m]);
      d[8 * h + 2 * m + 1] = _mm_unpackhi_epi32(c[8 * h + m], c[8 * h + 4 + m]);
    }
  }
  for (int e = 0; e < 8; e++) {
    _mm_storeu_si128((__m128i *)(out + (size_t)(2 * e) * out_stride), _mm_unpacklo_epi64(d[e], d[8 + e]));
    _mm_storeu_si128((__m128i *)(out + (size_t)(2 * e + 1) * out_stride), _mm_unpackhi_epi64(d[e], d[8 + e]));
  }
}
#endif

// Output row v (`lines` bytes, `out_stride` apart) = byte v of each input line, for v < length.
static void transpose(const unsigned char *in, size_t in_stride, int lines, size_t length,
                      unsigned char *out, size_t out_stride) {
  int done = 0;
#if defined(__SSE2__)
  for (; done + 16 <= lines; done += 16) {
    const unsigned char *block = in + (size_t)done * in_stride;
    size_t v = 0;
    for (; v + 16 <= length; v += 16) transpose16(block + v, in_stride, out + v * out_stride + (size_t)done, out_stride);
    for (; v < length; v++) {
      for (int i = 0; i < 16; i++) out[v * out_stride + (size_t)(done + i)] = block[(size_t)i * in_stride + v];
    }
  }
#endif
  if (done == lines) return;
  for (size_t v = 0; v < length; v++) {
    for (int i = done; i < lines; i++) out[v * out_stride + (size_t)i] = in[(size_t)i * in_stride + v];
  }
}

// Writes the tile's columns (tile_low...tile_high, a whole number of pairs) into the planes.
static void flush_tile(bookpipe_ycc_planes *planes) {
  if (planes->tile_block < 0) return;
  size_t n = (size_t)planes->line_length, pairs = (n + 1) / 2;
  size_t ys = planes->y_stride, cs = planes->c_stride;
  int low = planes->tile_low, high = planes->tile_high;
  int base = planes->tile_block * BOOKPIPE_YCC_TILE;
  int count = high - low + 1;
  transpose(planes->tile_y + (size_t)(low - base) * n, n, count, n, planes->y + (size_t)low, ys);
  int c_low = low / 2, c_count = high / 2 - low / 2 + 1;
  transpose(planes->tile_cb + (size_t)(c_low - base / 2) * pairs, pairs, c_count, pairs,
            planes->cb + (size_t)c_low, cs);
  transpose(planes->tile_cr + (size_t)(c_low - base / 2) * pairs, pairs, c_count, pairs,
            planes->cr + (size_t)c_low, cs);
  planes->tile_block = -1;
}

// Pads the planes as libjpeg would once every line is in.
static void pad(bookpipe_ycc_planes *planes) {
  int w = planes->width, h = planes->height;
  size_t ys = planes->y_stride, cs = planes->c_stride;
  for (int r = 0; r < h; r++) {
    unsigned char *row = planes->y + (size_t)r * ys;
    memset(row + w, row[w - 1], ys - (size_t)w);
  }
  for (int r = h; r < planes->y_rows; r++) {
    memcpy(planes->y + (size_t)r * ys, planes->y + (size_t)(h - 1) * ys, ys);
  }
  int cw = (w + 1) / 2, ch = (h + 1) / 2;
  for (int r = 0; r < ch; r++) {
    unsigned char *cb = planes->cb + (size_t)r * cs, *cr = planes->cr + (size_t)r * cs;
    for (size_t c = (size_t)cw; c < cs; c++) {
      int bias = 1 + (int)(c & 1);
      cb[c] = (unsigned char)((2 * planes->edge_cb[r] + bias) >> 2);
      cr[c] = (unsigned char)((2 * planes->edge_cr[r] + bias) >> 2);
    }
  }
  for (int r = ch; r < planes->c_rows; r++) {
    memcpy(planes->cb + (size_t)r * cs, planes->cb + (size_t)(ch - 1) * cs, cs);
    memcpy(planes->cr + (size_t)r * cs, planes->cr + (size_t)(ch - 1) * cs, cs);
  }
}

int bookpipe_ycc_planes_put_line(bookpipe_ycc_planes *planes, int index, const unsigned char *pixels,
                                 ptrdiff_t step) {
  if (pixels == NULL || index < 0 || index >= planes->line_count) return BOOKPIPE_JPEG_BAD_ARGUMENT;
  if (planes->lines_done >= planes->line_count) return BOOKPIPE_JPEG_BAD_ARGUMENT;
  // Increasing or decreasing by one: at most one line waits for its partner.
  if (planes->last_line >= 0 && index != planes->last_line + 1 && index != planes->last_line - 1) {
    return BOOKPIPE_JPEG_BAD_ARGUMENT;
  }
  int s = index & 1;
  if (planes->slot_line[s] >= 0) return BOOKPIPE_JPEG_BAD_ARGUMENT;
  size_t n = (size_t)planes->line_length;
  unsigned char *y = slot(planes, s, 0), *cb = slot(planes, s, 1), *cr = slot(planes, s, 2);
  if (step == 3) {
    convert_line(pixels, n, y, cb, cr);
  } else {
    unsigned char pixel[3];
    for (size_t i = 0; i < n; i++) {
      memcpy(pixel, pixels + (ptrdiff_t)i * step, 3);
      convert_line(pixel, 1, y + i, cb + i, cr + i);
    }
  }
  y[n] = y[n - 1];
  cb[n] = cb[n - 1];
  cr[n] = cr[n - 1];
  planes->slot_line[s] = index;
  planes->last_line = index;
  planes->lines_done++;
  int first = index & ~1;
  int partner = index ^ 1;
  if (planes->columns && planes->tile_block >= 0 && first / BOOKPIPE_YCC_TILE != planes->tile_block) {
    flush_tile(planes);
  }
  if (partner >= planes->line_count) {
    emit_pair(planes, first, 0, 0);
    planes->slot_line[0] = -1;
  } else if (planes->slot_line[partner & 1] == partner) {
    emit_pair(planes, first, 0, 1);
    planes->slot_line[0] = planes->slot_line[1] = -1;
  }
  if (planes->lines_done == planes->line_count) {
    flush_tile(planes);
    pad(planes);
  }
  return BOOKPIPE_JPEG_OK;
}
