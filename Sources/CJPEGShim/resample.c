// bookpipe's resampling inner loops; see include/resample.h.
#include "resample.h"
#include "ycc_planes_internal.h"

#include <string.h>

typedef float bookpipe_f4 __attribute__((vector_size(16)));

#define BOOKPIPE_INLINE static inline __attribute__((always_inline))

BOOKPIPE_INLINE void widen_body(const uint8_t *src, float *dst, size_t count) {
  for (size_t i = 0; i < count; i++) dst[i] = (float)src[i];
}

BOOKPIPE_INLINE void vertical_body(const float *const *rows, const float *weights, int count,
                                   size_t length, float *acc) {
  int k = 0;
  if (count >= 2) {
    const float *r0 = rows[0], *r1 = rows[1];
    float w0 = weights[0], w1 = weights[1];
    for (size_t i = 0; i < length; i++) acc[i] = w0 * r0[i] + w1 * r1[i];
    k = 2;
  } else {
    const float *r0 = rows[0];
    float w0 = weights[0];
    for (size_t i = 0; i < length; i++) acc[i] = w0 * r0[i];
    k = 1;
  }
  for (; k + 3 < count; k += 4) {
    const float *r0 = rows[k], *r1 = rows[k + 1], *r2 = rows[k + 2], *r3 = rows[k + 3];
    float w0 = weights[k], w1 = weights[k + 1], w2 = weights[k + 2], w3 = weights[k + 3];
    for (size_t i = 0; i < length; i++) acc[i] += (w0 * r0[i] + w1 * r1[i]) + (w2 * r2[i] + w3 * r3[i]);
  }
  for (; k + 1 < count; k += 2) {
    const float *r0 = rows[k], *r1 = rows[k + 1];
    float w0 = weights[k], w1 = weights[k + 1];
    for (size_t i = 0; i < length; i++) acc[i] += w0 * r0[i] + w1 * r1[i];
  }
  if (k < count) {
    const float *r0 = rows[k];
    float w0 = weights[k];
    for (size_t i = 0; i < length; i++) acc[i] += w0 * r0[i];
  }
}

BOOKPIPE_INLINE void horizontal_body(const float *row, const float *weights, int taps,
                                     const int32_t *starts, const int32_t *counts, int out_width,
                                     uint8_t *out, ptrdiff_t step) {
  for (int x = 0; x < out_width; x++) {
    const float *pixel = row + (size_t)starts[x] * 3;
    const float *w = weights + (size_t)x * (size_t)taps;
    int count = counts[x];
    bookpipe_f4 sum0 = {0, 0, 0, 0}, sum1 = {0, 0, 0, 0};
    int k = 0;
    for (; k + 1 < count; k += 2) {
      bookpipe_f4 a, b;
      memcpy(&a, pixel, sizeof a);
      memcpy(&b, pixel + 3, sizeof b);
      sum0 += a * w[k];
      sum1 += b * w[k + 1];
      pixel += 6;
    }
    if (k < count) {
      bookpipe_f4 a;
      memcpy(&a, pixel, sizeof a);
      sum0 += a * w[k];
    }
    bookpipe_f4 value = sum0 + sum1 + 0.5f;
    for (int c = 0; c < 3; c++) {
      float v = value[c];
      v = v < 0 ? 0 : (v > 255 ? 255 : v);
      out[c] = (uint8_t)v;
    }
    out += step;
  }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define BOOKPIPE_AVX2 __attribute__((target("avx2,fma")))

BOOKPIPE_AVX2 static void widen_avx2(const uint8_t *src, float *dst, size_t count) {
  widen_body(src, dst, count);
}
BOOKPIPE_AVX2 static void vertical_avx2(const float *const *rows, const float *weights, int count,
                                        size_t length, float *acc) {
  vertical_body(rows, weights, count, length, acc);
}
BOOKPIPE_AVX2 static void horizontal_avx2(const float *row, const float *weights, int taps,
                                          const int32_t *starts, const int32_t *counts,
                                          int out_width, uint8_t *out, ptrdiff_t step) {
  horizontal_body(row, weights, taps, starts, counts, out_width, out, step);
}

int bookpipe_cpu_has_avx2_fma(void) {
  static int answer = -1;  // benign race: every thread computes the same value
  if (answer < 0) {
    __builtin_cpu_init();
    answer = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return answer;
}
#define BOOKPIPE_DISPATCH(avx2_call, plain_call) \
  do {                                            \
    if (bookpipe_cpu_has_avx2_fma()) {            \
      avx2_call;                                  \
    } else {                                      \
      plain_call;                                 \
    }                                             \
  } while (0)
#else
#define BOOKPIPE_DISPATCH(avx2_call, plain_call) plain_call
#endif

void bookpipe_widen_row(const uint8_t *src, float *dst, size_t count) {
  BOOKPIPE_DISPATCH(widen_avx2(src, dst, count), widen_body(src, dst, count));
}

void bookpipe_vertical_pass(const float *const *rows, const float *weights, int count,
                            size_t length, float *acc) {
  BOOKPIPE_DISPATCH(vertical_avx2(rows, weights, count, length, acc),
                    vertical_body(rows, weights, count, length, acc));
}

void bookpipe_horizontal_pass(const float *row, const float *weights, int taps,
                              const int32_t *starts, const int32_t *counts, int out_width,
                              uint8_t *out, ptrdiff_t step) {
  BOOKPIPE_DISPATCH(horizontal_avx2(row, weights, taps, starts, counts, out_width, out, step),
                    horizontal_body(row, weights, taps, starts, counts, out_width, out, step));
}
