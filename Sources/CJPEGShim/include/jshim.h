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
  /// The data was read whole, but writing the re-encoded file failed.
  BOOKPIPE_JPEG_ENCODE_FAILED = 5,
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
/// Rows above the region are skipped (`jpeg_skip_scanlines`); in a file whose restart markers
/// fall on MCU-row boundaries only the restart intervals around the region are decoded at all
/// (the same pixels). Columns outside it are not
/// decoded (`jpeg_crop_scanline`, which widens to iMCU boundaries; the extra columns are dropped
/// here). `data` must stay valid until `bookpipe_jpeg_decoder_finish` returns.
int bookpipe_jpeg_decoder_start(bookpipe_jpeg_decoder *decoder,
                                const unsigned char *data, size_t size, int scale_denominator,
                                int expected_width, int expected_height,
                                int x, int y, int width, int height,
                                char *message, size_t message_size);

/// Re-encodes a JPEG without loss (the same DCT coefficients, so the same pixels) with a restart
/// marker at the start of every MCU row (standard Huffman tables), keeping its APPn and COM
/// markers (Exif orientation, ICC profile) as they are. A decoder then reads only the rows a
/// region needs (`bookpipe_jpeg_decoder_start` notices the markers). `*out` is allocated: free
/// it with `bookpipe_jpeg_free`. Stricter than the decoders: data that ends early is
/// BOOKPIPE_JPEG_TRUNCATED and damaged coded data (bad Huffman or arithmetic codes, lost restart
/// markers; libjpeg only warns) is BOOKPIPE_JPEG_ERROR, so every coefficient of a file that passes
/// was read from the file. A failure after the whole file was read is BOOKPIPE_JPEG_ENCODE_FAILED.
int bookpipe_jpeg_add_row_restarts(const unsigned char *data, size_t size, unsigned char **out,
                                   size_t *out_size, char *message, size_t message_size);

/// Frees bytes allocated by the shim.
void bookpipe_jpeg_free(unsigned char *bytes);

/// Reads the next `count` rows of the region into `out` (`width * 3` bytes each, rows
/// `out_stride` bytes apart). Premature end of data is BOOKPIPE_JPEG_TRUNCATED, not grey rows.
int bookpipe_jpeg_decoder_read_rows(bookpipe_jpeg_decoder *decoder, unsigned char *out,
                                    size_t out_stride, int count,
                                    char *message, size_t message_size);

/// Ends the decode: reads on to the end of the image when every row was read (so a cut-off
/// file is noticed), or abandons the rest when the region ended earlier.
int bookpipe_jpeg_decoder_finish(bookpipe_jpeg_decoder *decoder, char *message,
                                 size_t message_size);


/// Decodes rows on a background thread into a ring of rows, so a consumer (the resizer) can
/// work on earlier rows at the same time. Created by `bookpipe_row_pump_start`, which owns the
/// decoder until `bookpipe_row_pump_finish` returns.
typedef struct bookpipe_row_pump bookpipe_row_pump;

/// Starts a thread that reads the next `rows` rows of the region (`row_bytes` bytes each) from a
/// started decoder into a ring of `ring_rows` rows. Returns NULL when the thread or the ring
/// cannot be created (the caller then reads rows itself). When the region leaves out columns, the
/// ring keeps libjpeg's own (wider) rows and `bookpipe_row_pump_row` points at the region's
/// first pixel in them, which saves copying every row.
bookpipe_row_pump *bookpipe_row_pump_start(bookpipe_jpeg_decoder *decoder, int rows,
                                           size_t row_bytes, int ring_rows);

/// The row `index` (0-based, asked for in increasing order), waiting for the thread to decode it.
/// Asking for `index` hands every earlier row back to the ring; the pointer stays valid until the
/// next call. Returns NULL when decoding failed (see `bookpipe_row_pump_finish`).
const unsigned char *bookpipe_row_pump_row(bookpipe_row_pump *pump, int index);

/// Stops the thread (early, when rows are left), waits for it and frees the pump. Returns the
/// decoder's result code; on failure `message` receives its text.
int bookpipe_row_pump_finish(bookpipe_row_pump *pump, char *message, size_t message_size);


/// A compressor fed row by row (so the whole output picture is never held), with the settings
/// TurboJPEG's tjCompress2 uses: JFIF, YCbCr, 4:2:0 or 4:4:4, libjpeg-turbo's fastest DCT below
/// quality 96 (the accurate one from 96), no optimised Huffman tables.
typedef struct bookpipe_jpeg_encoder bookpipe_jpeg_encoder;

/// Starts encoding a `width` × `height` RGB8 picture. Returns NULL on failure, with `message`.
bookpipe_jpeg_encoder *bookpipe_jpeg_encoder_start(int width, int height, int quality,
                                                   int subsample_chroma, char *message,
                                                   size_t message_size);

/// Encodes the next `count` rows (`width * 3` bytes each, `stride` bytes apart).
int bookpipe_jpeg_encoder_write_rows(bookpipe_jpeg_encoder *encoder, const unsigned char *rows,
                                     size_t stride, int count, char *message, size_t message_size);

/// Finishes the file after the last row. `*data` and `*size` describe it; it stays owned by the
/// encoder until `bookpipe_jpeg_encoder_destroy`.
int bookpipe_jpeg_encoder_finish(bookpipe_jpeg_encoder *encoder, const unsigned char **data,
                                 size_t *size, char *message, size_t message_size);

/// Frees the encoder and its output.
void bookpipe_jpeg_encoder_destroy(bookpipe_jpeg_encoder *encoder);



/// An upright picture held as JPEG's YCbCr 4:2:0 planes (1.5 bytes a pixel instead of 3), filled
/// one line (an upright row or column) at a time in the order a resizer produces them, and
/// encoded with `jpeg_write_raw_data`. The colour conversion, the 2×2 chroma averaging and the
/// edge padding are exactly libjpeg's (jccolor.c, jcsample.c h2v2_downsample, jcprepct.c), so
/// the file is bit-identical to encoding the RGB picture with 4:2:0 chroma.
typedef struct bookpipe_ycc_planes bookpipe_ycc_planes;

/// Creates planes for a `width` × `height` upright picture. With `lines_are_columns` the lines
/// given to `bookpipe_ycc_planes_put_line` are columns (top to bottom), otherwise rows (left to
/// right). Returns NULL when out of memory or for a size of 0.
bookpipe_ycc_planes *bookpipe_ycc_planes_create(int width, int height, int lines_are_columns);

/// Frees the planes.
void bookpipe_ycc_planes_destroy(bookpipe_ycc_planes *planes);

/// Adds line `index` (a row or column of the upright picture): its pixels as RGB8, the first at
/// `pixels`, each next one `step` bytes further (negative to read backwards). Lines must come in
/// increasing or decreasing order of index, each exactly once. Returns BOOKPIPE_JPEG_OK, or
/// BOOKPIPE_JPEG_BAD_ARGUMENT for an index out of range or out of order.
int bookpipe_ycc_planes_put_line(bookpipe_ycc_planes *planes, int index, const unsigned char *pixels,
                                 ptrdiff_t step);

/// Whether every line has been added (the planes can then be encoded).
int bookpipe_ycc_planes_complete(const bookpipe_ycc_planes *planes);

/// Encodes complete planes at `quality` with the same settings as `bookpipe_jpeg_encoder_start`
/// (4:2:0). Returns NULL on failure, with `message`; otherwise the encoder holds the finished
/// file: get it with `bookpipe_jpeg_encoder_output` and free it with
/// `bookpipe_jpeg_encoder_destroy`.
bookpipe_jpeg_encoder *bookpipe_jpeg_encode_planes(const bookpipe_ycc_planes *planes, int quality,
                                                   char *message, size_t message_size);

/// The file a finished encoder holds.
void bookpipe_jpeg_encoder_output(const bookpipe_jpeg_encoder *encoder, const unsigned char **data,
                                  size_t *size);

#ifdef __cplusplus
}
#endif
