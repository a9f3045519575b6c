// bookpipe's C shim over libjpeg: setjmp/longjmp error handling, region and scaled decode.
#include "jshim.h"
#include "ycc_planes_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct bookpipe_error_manager {
  struct jpeg_error_mgr base;
  jmp_buf jump;
  int code;
  char text[JMSG_LENGTH_MAX];
} bookpipe_error_manager;

static void bookpipe_error_exit(j_common_ptr cinfo) {
  bookpipe_error_manager *manager = (bookpipe_error_manager *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, manager->text);
  manager->code = BOOKPIPE_JPEG_ERROR;
  longjmp(manager->jump, 1);
}

// Warnings are silent, except those that mean pixels are missing: libjpeg would go on and
// fill the rest of the picture with grey.
static void bookpipe_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER) {
    bookpipe_error_manager *manager = (bookpipe_error_manager *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, manager->text);
    manager->code = BOOKPIPE_JPEG_TRUNCATED;
    longjmp(manager->jump, 1);
  }
  cinfo->err->num_warnings++;
}

static void bookpipe_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void bookpipe_copy_message(const bookpipe_error_manager *manager, char *message,
                                  size_t message_size) {
  if (message == NULL || message_size == 0) return;
  snprintf(message, message_size, "%s", manager->text);
}

static void bookpipe_setup_errors(struct jpeg_decompress_struct *cinfo,
                                  bookpipe_error_manager *manager) {
  memset(manager, 0, sizeof(*manager));
  cinfo->err = jpeg_std_error(&manager->base);
  manager->base.error_exit = bookpipe_error_exit;
  manager->base.emit_message = bookpipe_emit_message;
  manager->base.output_message = bookpipe_output_message;
}

int bookpipe_jpeg_read_header(const unsigned char *data, size_t size,
                              bookpipe_jpeg_header *header,
                              char *message, size_t message_size) {
  struct jpeg_decompress_struct cinfo;
  bookpipe_error_manager manager;
  bookpipe_setup_errors(&cinfo, &manager);
  if (setjmp(manager.jump)) {
    bookpipe_copy_message(&manager, message, message_size);
    jpeg_destroy_decompress(&cinfo);
    return manager.code;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)size);
  jpeg_read_header(&cinfo, TRUE);
  header->width = (int)cinfo.image_width;
  header->height = (int)cinfo.image_height;
  header->components = cinfo.num_components;
  header->color_space = (int)cinfo.jpeg_color_space;
  jpeg_destroy_decompress(&cinfo);
  return BOOKPIPE_JPEG_OK;
}

struct bookpipe_jpeg_decoder {
  struct jpeg_decompress_struct cinfo;
  bookpipe_error_manager manager;
  int started;
  int region_x;
  int region_width;
  int region_height;
  int rows_read;
  size_t skip_bytes;
  size_t row_stride;
  unsigned char *row;
};

bookpipe_jpeg_decoder *bookpipe_jpeg_decoder_create(void) {
  bookpipe_jpeg_decoder *decoder = (bookpipe_jpeg_decoder *)calloc(1, sizeof(bookpipe_jpeg_decoder));
  if (decoder == NULL) return NULL;
  bookpipe_setup_errors(&decoder->cinfo, &decoder->manager);
  if (setjmp(decoder->manager.jump)) {
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
    return NULL;
  }
  jpeg_create_decompress(&decoder->cinfo);
  return decoder;
}

void bookpipe_jpeg_decoder_destroy(bookpipe_jpeg_decoder *decoder) {
  if (decoder == NULL) return;
  free(decoder->row);
  jpeg_destroy_decompress(&decoder->cinfo);
  free(decoder);
}

static int bookpipe_fail(bookpipe_jpeg_decoder *decoder, char *message, size_t message_size) {
  bookpipe_copy_message(&decoder->manager, message, message_size);
  jpeg_abort_decompress(&decoder->cinfo);
  decoder->started = 0;
  return decoder->manager.code;
}

int bookpipe_jpeg_decoder_start(bookpipe_jpeg_decoder *decoder,
                                const unsigned char *data, size_t size, int scale_denominator,
                                int expected_width, int expected_height,
                                int x, int y, int width, int height,
                                char *message, size_t message_size) {
  struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  if (setjmp(decoder->manager.jump)) return bookpipe_fail(decoder, message, message_size);
  if (decoder->started) jpeg_abort_decompress(cinfo);
  decoder->started = 0;
  if (scale_denominator != 1 && scale_denominator != 2 && scale_denominator != 4 &&
      scale_denominator != 8) {
    snprintf(message, message_size, "scale 1/%d is not one of 1, 1/2, 1/4, 1/8", scale_denominator);
    return BOOKPIPE_JPEG_BAD_ARGUMENT;
  }
  jpeg_mem_src(cinfo, data, (unsigned long)size);
  jpeg_read_header(cinfo, TRUE);
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned int)scale_denominator;
  cinfo->out_color_space = JCS_EXT_RGB;
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->do_fancy_upsampling = TRUE;
  jpeg_calc_output_dimensions(cinfo);
  if ((int)cinfo->output_width != expected_width || (int)cinfo->output_height != expected_height ||
      x < 0 || y < 0 || width <= 0 || height <= 0 || x + width > expected_width ||
      y + height > expected_height) {
    snprintf(message, message_size,
             "region %dx%d at (%d,%d) does not fit the %ux%u image decoded at 1/%d (expected %dx%d)",
             width, height, x, y, cinfo->output_width, cinfo->output_height, scale_denominator,
             expected_width, expected_height);
    jpeg_abort_decompress(cinfo);
    return BOOKPIPE_JPEG_BAD_ARGUMENT;
  }
  jpeg_start_decompress(cinfo);
  decoder->started = 1;
  // Ask for one extra column on each side: at the edges of a cropped scanline the chroma
  // upsampling has no neighbour and would differ from a full decode.
  int padded_left = x > 0 ? x - 1 : 0;
  int padded_right = x + width < expected_width ? x + width + 1 : expected_width;
  JDIMENSION column = (JDIMENSION)padded_left;
  JDIMENSION columns = (JDIMENSION)(padded_right - padded_left);
  if (padded_left != 0 || padded_right != (int)cinfo->output_width) {
    jpeg_crop_scanline(cinfo, &column, &columns);  // widens to iMCU boundaries
  }
  decoder->region_x = x;
  decoder->region_width = width;
  decoder->region_height = height;
  decoder->rows_read = 0;
  decoder->row_stride = (size_t)cinfo->output_width * 3;  // after cropping: the cropped width
  decoder->skip_bytes = (size_t)((JDIMENSION)x - column) * 3;
  free(decoder->row);
  decoder->row = NULL;
  if (decoder->skip_bytes != 0 || decoder->row_stride != (size_t)width * 3) {
    decoder->row = (unsigned char *)malloc(decoder->row_stride);
    if (decoder->row == NULL) {
      snprintf(message, message_size, "out of memory for a row of %zu bytes", decoder->row_stride);
      jpeg_abort_decompress(cinfo);
      decoder->started = 0;
      return BOOKPIPE_JPEG_NO_MEMORY;
    }
  }
  if (y > 0) {
    JDIMENSION skipped = jpeg_skip_scanlines(cinfo, (JDIMENSION)y);
    if (skipped != (JDIMENSION)y) {
      snprintf(message, message_size, "could skip only %u of %d rows", skipped, y);
      jpeg_abort_decompress(cinfo);
      decoder->started = 0;
      return BOOKPIPE_JPEG_TRUNCATED;
    }
  }
  return BOOKPIPE_JPEG_OK;
}

// True when `count` more rows of the region can be read; otherwise says why in `message`.
static int bookpipe_rows_left(const bookpipe_jpeg_decoder *decoder, int count, char *message, size_t message_size) {
  if (decoder->started && count >= 0 && decoder->rows_read + count <= decoder->region_height) return 1;
  snprintf(message, message_size, "cannot read %d more rows (%d of %d read)", count, decoder->rows_read,
           decoder->region_height);
  return 0;
}

int bookpipe_jpeg_decoder_read_rows(bookpipe_jpeg_decoder *decoder, unsigned char *out,
                                    size_t out_stride, int count,
                                    char *message, size_t message_size) {
  struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  if (!bookpipe_rows_left(decoder, count, message, message_size)) return BOOKPIPE_JPEG_BAD_ARGUMENT;
  if (setjmp(decoder->manager.jump)) return bookpipe_fail(decoder, message, message_size);
  size_t width_bytes = (size_t)decoder->region_width * 3;
  for (int done = 0; done < count; done++) {
    unsigned char *target = out + (size_t)done * out_stride;
    JSAMPROW rows[1] = {decoder->row != NULL ? decoder->row : target};
    JDIMENSION got = jpeg_read_scanlines(cinfo, rows, 1);
    if (got != 1) {
      snprintf(message, message_size, "no data for row %d of the region", decoder->rows_read);
      jpeg_abort_decompress(cinfo);
      decoder->started = 0;
      return BOOKPIPE_JPEG_TRUNCATED;
    }
    if (decoder->row != NULL) memcpy(target, decoder->row + decoder->skip_bytes, width_bytes);
    decoder->rows_read++;
  }
  return BOOKPIPE_JPEG_OK;
}

// Like bookpipe_jpeg_decoder_read_rows, but each row is left as libjpeg writes it (row_stride
// bytes, the region starting skip_bytes in), so a caller that can use an offset saves the copy.
static int bookpipe_jpeg_decoder_read_whole_rows(bookpipe_jpeg_decoder *decoder, unsigned char *out,
                                                 size_t out_stride, int count, char *message,
                                                 size_t message_size) {
  struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  if (!bookpipe_rows_left(decoder, count, message, message_size)) return BOOKPIPE_JPEG_BAD_ARGUMENT;
  if (setjmp(decoder->manager.jump)) return bookpipe_fail(decoder, message, message_size);
  for (int done = 0; done < count; done++) {
    JSAMPROW rows[1] = {out + (size_t)done * out_stride};
    if (jpeg_read_scanlines(cinfo, rows, 1) != 1) {
      snprintf(message, message_size, "no data for row %d of the region", decoder->rows_read);
      jpeg_abort_decompress(cinfo);
      decoder->started = 0;
      return BOOKPIPE_JPEG_TRUNCATED;
    }
    decoder->rows_read++;
  }
  return BOOKPIPE_JPEG_OK;
}

int bookpipe_jpeg_decoder_finish(bookpipe_jpeg_decoder *decoder, char *message,
                                 size_t message_size) {
  struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  if (!decoder->started) return BOOKPIPE_JPEG_OK;
  if (setjmp(decoder->manager.jump)) return bookpipe_fail(decoder, message, message_size);
  if (cinfo->output_scanline == cinfo->output_height) {
    jpeg_finish_decompress(cinfo);  // reads on to EOI, so a cut-off file is noticed
  } else {
    jpeg_abort_decompress(cinfo);  // the remaining rows are not needed
  }
  decoder->started = 0;
  return BOOKPIPE_JPEG_OK;
}

// ---- Row pump: decode on a second thread ----------------------------------------------------

#include <pthread.h>

struct bookpipe_row_pump {
  bookpipe_jpeg_decoder *decoder;
  unsigned char *ring;
  size_t row_bytes;
  // Ring rows hold libjpeg's whole (iMCU-widened) row; the region starts `offset` bytes in.
  int whole_rows;
  size_t offset;
  int ring_rows;
  int rows;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int produced;  // rows decoded into the ring
  int consumed;  // the row the consumer holds; rows before it are free
  int stop;      // set by the consumer: stop early
  int failed;
  int code;
  int waiting;   // someone is waiting on `changed`
  char message[JMSG_LENGTH_MAX + 64];
};

enum { BOOKPIPE_PUMP_BATCH = 16 };

static void *bookpipe_row_pump_main(void *argument) {
  bookpipe_row_pump *pump = (bookpipe_row_pump *)argument;
  int next = 0;
  while (next < pump->rows) {
    pthread_mutex_lock(&pump->lock);
    // Row i may be written once the consumer holds a row after i - ring_rows.
    while (!pump->stop && next >= pump->consumed + pump->ring_rows) {
      pump->waiting = 1;
      pthread_cond_wait(&pump->changed, &pump->lock);
    }
    int stop = pump->stop;
    int limit = pump->consumed + pump->ring_rows;
    pthread_mutex_unlock(&pump->lock);
    if (stop) break;
    int slot = next % pump->ring_rows;
    int count = limit - next;
    if (count > BOOKPIPE_PUMP_BATCH) count = BOOKPIPE_PUMP_BATCH;
    if (count > pump->ring_rows - slot) count = pump->ring_rows - slot;
    if (count > pump->rows - next) count = pump->rows - next;
    unsigned char *into = pump->ring + (size_t)slot * pump->row_bytes;
    int code = pump->whole_rows
                   ? bookpipe_jpeg_decoder_read_whole_rows(pump->decoder, into, pump->row_bytes, count,
                                                           pump->message, sizeof pump->message)
                   : bookpipe_jpeg_decoder_read_rows(pump->decoder, into, pump->row_bytes, count,
                                                     pump->message, sizeof pump->message);
    pthread_mutex_lock(&pump->lock);
    if (code != BOOKPIPE_JPEG_OK) {
      pump->failed = 1;
      pump->code = code;
    } else {
      next += count;
      pump->produced = next;
    }
    if (pump->waiting) {
      pump->waiting = 0;
      pthread_cond_broadcast(&pump->changed);
    }
    pthread_mutex_unlock(&pump->lock);
    if (code != BOOKPIPE_JPEG_OK) break;
  }
  return NULL;
}

static bookpipe_row_pump *bookpipe_row_pump_launch(bookpipe_jpeg_decoder *decoder, int rows,
                                                    size_t row_bytes, int ring_rows) {
  if (decoder == NULL || rows <= 0 || row_bytes == 0 || ring_rows <= 0) return NULL;
  bookpipe_row_pump *pump = (bookpipe_row_pump *)calloc(1, sizeof(bookpipe_row_pump));
  if (pump == NULL) return NULL;
  if (decoder->row != NULL) {
    // A ring of libjpeg's own rows: no copy of each row to drop the columns outside the region.
    pump->whole_rows = 1;
    pump->offset = decoder->skip_bytes;
    row_bytes = decoder->row_stride;
  }
  pump->ring = (unsigned char *)malloc(row_bytes * (size_t)ring_rows);
  if (pump->ring == NULL) {
    free(pump);
    return NULL;
  }
  pump->decoder = decoder;
  pump->row_bytes = row_bytes;
  pump->ring_rows = ring_rows;
  pump->rows = rows;
  pthread_mutex_init(&pump->lock, NULL);
  pthread_cond_init(&pump->changed, NULL);
  if (pthread_create(&pump->thread, NULL, bookpipe_row_pump_main, pump) != 0) {
    pthread_cond_destroy(&pump->changed);
    pthread_mutex_destroy(&pump->lock);
    free(pump->ring);
    free(pump);
    return NULL;
  }
  return pump;
}

bookpipe_row_pump *bookpipe_row_pump_start(bookpipe_jpeg_decoder *decoder, int rows,
                                           size_t row_bytes, int ring_rows) {
  return bookpipe_row_pump_launch(decoder, rows, row_bytes, ring_rows);
}

const unsigned char *bookpipe_row_pump_row(bookpipe_row_pump *pump, int index) {
  if (index < 0 || index >= pump->rows) return NULL;
  pthread_mutex_lock(&pump->lock);
  if (index != pump->consumed) {
    pump->consumed = index;
    if (pump->waiting) {
      pump->waiting = 0;
      pthread_cond_broadcast(&pump->changed);
    }
  }
  while (!pump->failed && pump->produced <= index) {
    pump->waiting = 1;
    pthread_cond_wait(&pump->changed, &pump->lock);
  }
  int failed = pump->failed;
  pthread_mutex_unlock(&pump->lock);
  if (failed) return NULL;
  return pump->ring + (size_t)(index % pump->ring_rows) * pump->row_bytes + pump->offset;
}

int bookpipe_row_pump_finish(bookpipe_row_pump *pump, char *message, size_t message_size) {
  if (pump == NULL) return BOOKPIPE_JPEG_OK;
  pthread_mutex_lock(&pump->lock);
  pump->stop = 1;
  pthread_cond_broadcast(&pump->changed);
  pthread_mutex_unlock(&pump->lock);
  pthread_join(pump->thread, NULL);
  int code = pump->failed ? pump->code : BOOKPIPE_JPEG_OK;
  if (code != BOOKPIPE_JPEG_OK && message != NULL && message_size > 0) {
    snprintf(message, message_size, "%s", pump->message);
  }
  pthread_cond_destroy(&pump->changed);
  pthread_mutex_destroy(&pump->lock);
  free(pump->ring);
  free(pump);
  return code;
}

// ---- Streaming encoder -------------------------------------------------------------------------

struct bookpipe_jpeg_encoder {
  struct jpeg_compress_struct cinfo;
  bookpipe_error_manager manager;
  unsigned char *buffer;
  unsigned long size;
  int created;
};

static int bookpipe_encoder_fail(bookpipe_jpeg_encoder *encoder, char *message,
                                 size_t message_size) {
  bookpipe_copy_message(&encoder->manager, message, message_size);
  return encoder->manager.code;
}

// Starts a compressor with tjCompress2's settings; `raw` takes YCbCr planes
// (jpeg_write_raw_data) instead of RGB rows, which only skips the colour conversion and the
// downsampling: everything after them is the same code.
static bookpipe_jpeg_encoder *bookpipe_encoder_begin(int width, int height, int quality,
                                                     int subsample_chroma, int raw, char *message,
                                                     size_t message_size) {
  if (width <= 0 || height <= 0 || quality < 1 || quality > 100) {
    snprintf(message, message_size, "cannot encode %dx%d at quality %d", width, height, quality);
    return NULL;
  }
  bookpipe_jpeg_encoder *encoder = (bookpipe_jpeg_encoder *)calloc(1, sizeof(bookpipe_jpeg_encoder));
  if (encoder == NULL) {
    snprintf(message, message_size, "out of memory for a JPEG encoder");
    return NULL;
  }
  struct jpeg_compress_struct *cinfo = &encoder->cinfo;
  memset(&encoder->manager, 0, sizeof encoder->manager);
  cinfo->err = jpeg_std_error(&encoder->manager.base);
  encoder->manager.base.error_exit = bookpipe_error_exit;
  encoder->manager.base.output_message = bookpipe_output_message;
  if (setjmp(encoder->manager.jump)) {
    bookpipe_encoder_fail(encoder, message, message_size);
    bookpipe_jpeg_encoder_destroy(encoder);
    return NULL;
  }
  jpeg_create_compress(cinfo);
  encoder->created = 1;
  jpeg_mem_dest(cinfo, &encoder->buffer, &encoder->size);
  cinfo->image_width = (JDIMENSION)width;
  cinfo->image_height = (JDIMENSION)height;
  cinfo->input_components = 3;
  cinfo->in_color_space = JCS_EXT_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, quality, TRUE);
  // As tjCompress2 without TJFLAG_ACCURATEDCT: the fast integer DCT below quality 96.
  cinfo->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
  cinfo->optimize_coding = FALSE;
  jpeg_set_colorspace(cinfo, JCS_YCbCr);
  cinfo->comp_info[0].h_samp_factor = subsample_chroma ? 2 : 1;
  cinfo->comp_info[0].v_samp_factor = subsample_chroma ? 2 : 1;
  cinfo->comp_info[1].h_samp_factor = 1;
  cinfo->comp_info[1].v_samp_factor = 1;
  cinfo->comp_info[2].h_samp_factor = 1;
  cinfo->comp_info[2].v_samp_factor = 1;
  cinfo->raw_data_in = raw ? TRUE : FALSE;
  jpeg_start_compress(cinfo, TRUE);
  return encoder;
}

bookpipe_jpeg_encoder *bookpipe_jpeg_encoder_start(int width, int height, int quality,
                                                   int subsample_chroma, char *message,
                                                   size_t message_size) {
  return bookpipe_encoder_begin(width, height, quality, subsample_chroma, 0, message, message_size);
}

int bookpipe_jpeg_encoder_write_rows(bookpipe_jpeg_encoder *encoder, const unsigned char *rows,
                                     size_t stride, int count, char *message, size_t message_size) {
  struct jpeg_compress_struct *cinfo = &encoder->cinfo;
  if (count < 0 || cinfo->next_scanline + (JDIMENSION)count > cinfo->image_height) {
    snprintf(message, message_size, "cannot write %d more rows (%u of %u written)", count,
             cinfo->next_scanline, cinfo->image_height);
    return BOOKPIPE_JPEG_BAD_ARGUMENT;
  }
  if (setjmp(encoder->manager.jump)) return bookpipe_encoder_fail(encoder, message, message_size);
  for (int done = 0; done < count; done++) {
    JSAMPROW row[1] = {(JSAMPROW)(rows + (size_t)done * stride)};
    jpeg_write_scanlines(cinfo, row, 1);
  }
  return BOOKPIPE_JPEG_OK;
}

int bookpipe_jpeg_encoder_finish(bookpipe_jpeg_encoder *encoder, const unsigned char **data,
                                 size_t *size, char *message, size_t message_size) {
  struct jpeg_compress_struct *cinfo = &encoder->cinfo;
  if (cinfo->next_scanline != cinfo->image_height) {
    snprintf(message, message_size, "only %u of %u rows were written", cinfo->next_scanline,
             cinfo->image_height);
    return BOOKPIPE_JPEG_BAD_ARGUMENT;
  }
  if (setjmp(encoder->manager.jump)) return bookpipe_encoder_fail(encoder, message, message_size);
  jpeg_finish_compress(cinfo);
  *data = encoder->buffer;
  *size = (size_t)encoder->size;
  return BOOKPIPE_JPEG_OK;
}

void bookpipe_jpeg_encoder_destroy(bookpipe_jpeg_encoder *encoder) {
  if (encoder == NULL) return;
  if (encoder->created) jpeg_destroy_compress(&encoder->cinfo);
  free(encoder->buffer);
  free(encoder);
}

bookpipe_jpeg_encoder *bookpipe_jpeg_encode_planes(const bookpipe_ycc_planes *planes, int quality,
                                                   char *message, size_t message_size) {
  if (planes == NULL || !bookpipe_ycc_planes_complete(planes)) {
    snprintf(message, message_size, "the picture is not complete");
    return NULL;
  }
  bookpipe_jpeg_encoder *encoder =
      bookpipe_encoder_begin(planes->width, planes->height, quality, 1, 1, message, message_size);
  if (encoder == NULL) return NULL;
  struct jpeg_compress_struct *cinfo = &encoder->cinfo;
  if (setjmp(encoder->manager.jump)) {
    bookpipe_encoder_fail(encoder, message, message_size);
    bookpipe_jpeg_encoder_destroy(encoder);
    return NULL;
  }
  // One iMCU row per call: 16 rows of Y, 8 of Cb and Cr (the planes are padded to whole iMCUs).
  JSAMPROW y_rows[16], cb_rows[8], cr_rows[8];
  JSAMPARRAY data[3] = {y_rows, cb_rows, cr_rows};
  for (int row = 0; row < planes->y_rows; row += 16) {
    for (int i = 0; i < 16; i++) y_rows[i] = planes->y + (size_t)(row + i) * planes->y_stride;
    for (int i = 0; i < 8; i++) {
      cb_rows[i] = planes->cb + (size_t)(row / 2 + i) * planes->c_stride;
      cr_rows[i] = planes->cr + (size_t)(row / 2 + i) * planes->c_stride;
    }
    jpeg_write_raw_data(cinfo, data, 16);
  }
  jpeg_finish_compress(cinfo);
  return encoder;
}

void bookpipe_jpeg_encoder_output(const bookpipe_jpeg_encoder *encoder, const unsigned char **data,
                                  size_t *size) {
  *data = encoder->buffer;
  *size = (size_t)encoder->size;
}
