#pragma once
// bookpipe's resampling inner loops, compiled twice (AVX2+FMA and baseline x86-64 / the
// platform default) and chosen once at run time. The weights, ring buffer and order of the
// passes are decided in Swift (BookpipeImaging/Resizer.swift); these only do the arithmetic.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// dst[i] = (float)src[i] for i < count.
void bookpipe_widen_row(const uint8_t *src, float *dst, size_t count);

/// acc[i] = sum over k < count of weights[k] * rows[k][i], for i < length.
void bookpipe_vertical_pass(const float *const *rows, const float *weights, int count,
                            size_t length, float *acc);

/// Filters one row of packed RGB floats horizontally (each output pixel x reads
/// counts[x] pixels from starts[x] with weights[x * taps ...]) and writes rounded, clamped bytes
/// to out + x * step. `row` must have one readable float after its last pixel.
void bookpipe_horizontal_pass(const float *row, const float *weights, int taps,
                              const int32_t *starts, const int32_t *counts, int out_width,
                              uint8_t *out, ptrdiff_t step);

#ifdef __cplusplus
}
#endif
