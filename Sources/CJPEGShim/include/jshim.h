#pragma once
// bookpipe's C shim over the libjpeg API (libjpeg-turbo 2.1).
// libjpeg reports fatal errors through error_exit, which must not return; it longjmps back
// into these functions, so every libjpeg call lives here and Swift only sees return codes.
#include <stddef.h>

#include "resample.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Result codes of the shim functions.
enum {
  BOOKPIPE_JPEG_OK = 0,
  /// libjpeg rejected the data (not a JPEG, corrupt header, unsupported format).
  BOOKPIPE_JPEG_ERROR = 1,
  /// The data ended before the image did (libjpeg itself only warns).
  BOOKPIPE_JPEG_TRUNCATED = 2,
  /// The arguments do not fit the image (scale, region or output size).
  BOOKPIPE_JPEG_BAD_ARGUMENT = 3,
  /// Memory for a row buffer could not be allocated.
  BOOKPIPE_JPEG_NO_MEMORY = 4,
};

/// What the frame header says about an image.
typedef struct bookpipe_jpeg_header {
  int width;
  int height;
  /// Components in the file: 1 (grey), 3 (YCbCr or RGB) or 4 (CMYK/YCCK, unsupported).
  int components;
  /// libjpeg's J_COLOR_SPACE of the file.
  int color_space;
} bookpipe_jpeg_header;

/// Reads the header (up to the start of scan) without decoding any pixels.
/// `message` receives libjpeg's text on failure.
int bookpipe_jpeg_read_header(const unsigned char *data, size_t size,
                              bookpipe_jpeg_header *header,
                              char *message, size_t message_size);

/// A decompressor that decodes a region row by row; created and destroyed by the functions below.
/// One decoder belongs to one thread at a time.
typedef struct bookpipe_jpeg_decoder bookpipe_jpeg_decoder;

/// Creates a decoder, or returns NULL when out of memory.
bookpipe_jpeg_decoder *bookpipe_jpeg_decoder_create(void);

/// Frees the decoder and everything libjpeg allocated for it.
void bookpipe_jpeg_decoder_destroy(bookpipe_jpeg_decoder *decoder);

/// Starts decoding a region of the image at scale 1/`scale_denominator` (1, 2, 4 or 8) to RGB8.
///
/// The region (`x`, `y`, `width`, `height`) is in pixels of the scaled image, whose size must be
/// `expected_width` × `expected_height` (the caller computes ceil(size / denominator)).
/// Rows above the region are skipped (`jpeg_skip_scanlines`); columns outside it are not
/// decoded (`jpeg_crop_scanline`, which widens to iMCU boundaries; the extra columns are dropped
/// here). `data` must stay valid until `bookpipe_jpeg_decoder_finish` returns.
int bookpipe_jpeg_decoder_start(bookpipe_jpeg_decoder *decoder,
                                const unsigned char *data, size_t size, int scale_denominator,
                                int expected_width, int expected_height,
                                int x, int y, int width, int height,
                                char *message, size_t message_size);

/// Reads the next `count` rows of the region into `out` (`width * 3` bytes each, rows
/// `out_stride` bytes apart). Premature end of data is BOOKPIPE_JPEG_TRUNCATED, not grey rows.
int bookpipe_jpeg_decoder_read_rows(bookpipe_jpeg_decoder *decoder, unsigned char *out,
                                    size_t out_stride, int count,
                                    char *message, size_t message_size);

/// Ends the decode: reads on to the end of the image when every row was read (so a cut-off
/// file is noticed), or abandons the rest when the region ended earlier.
int bookpipe_jpeg_decoder_finish(bookpipe_jpeg_decoder *decoder, char *message,
                                 size_t message_size);

#ifdef __cplusplus
}
#endif
