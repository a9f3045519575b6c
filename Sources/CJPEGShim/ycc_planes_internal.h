#pragma once
// The layout of bookpipe_ycc_planes, shared by ycc_planes.c (filling) and jshim.c (encoding).
// Not part of the module's public headers.
#include <stddef.h>
#include <stdint.h>

#include "jshim.h"

struct bookpipe_ycc_planes {
  int width;        // upright picture
  int height;
  int columns;      // lines are columns (else rows)
  int line_count;   // width when columns, else height
  int line_length;  // height when columns, else width
  // Planes padded as libjpeg pads them for 4:2:0: Y to whole 8-pixel blocks across and whole
  // 16-row iMCUs down, chroma to whole blocks of the half-size planes.
  size_t y_stride;
  int y_rows;
  size_t c_stride;
  int c_rows;
  unsigned char *y;
  unsigned char *cb;
  unsigned char *cr;
  // Per chroma row: Cb (Cr) of the last upright column's two pixels, summed; the chroma
  // columns right of the picture are averaged from copies of that column.
  uint16_t *edge_cb;
  uint16_t *edge_cr;
  // Two converted lines (Y, Cb, Cr, line_length bytes each) waiting for their partner.
  unsigned char *slots;
  int slot_line[2];
  int lines_done;
  int last_line;
  // Columns are gathered into a tile of BOOKPIPE_YCC_TILE lines (an aligned block of indices)
  // and written to the planes a block at a time: whole runs of bytes per plane row instead of
  // one byte per row per column (which misses the cache on every write).
  unsigned char *tile_y;   // BOOKPIPE_YCC_TILE lines of line_length bytes
  unsigned char *tile_cb;  // BOOKPIPE_YCC_TILE / 2 chroma lines of (line_length + 1) / 2 bytes
  unsigned char *tile_cr;
  int tile_block;          // index / BOOKPIPE_YCC_TILE of the lines in the tile, or -1
  int tile_low;            // lowest and highest line index in the tile
  int tile_high;
};

enum { BOOKPIPE_YCC_TILE = 32 };

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// Whether the CPU has AVX2 and FMA (resample.c; computed once).
int bookpipe_cpu_has_avx2_fma(void);
#endif
