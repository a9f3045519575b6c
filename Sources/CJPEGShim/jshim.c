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
  // Also fail on the warnings that mean the entropy-coded data is damaged (bad Huffman or
  // arithmetic codes, lost restart markers), where libjpeg would go on with wrong pixels. Set by
  // the import's re-encode, which must refuse a damaged photo; decoders stay lenient.
  int fails_on_corrupt_data;
  char text[JMSG_LENGTH_MAX];
} bookpipe_error_manager;

static void bookpipe_error_exit(j_common_ptr cinfo) {
  bookpipe_error_manager *manager = (bookpipe_error_manager *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, manager->text);
  manager->code = BOOKPIPE_JPEG_ERROR;
  longjmp(manager->jump, 1);
}

// Warnings are silent, except those that mean pixels are missing: libjpeg would go on and
// fill the rest of the picture with grey. With `fails_on_corrupt_data`, also those that mean the
// coded data is damaged. (Bytes after the end-of-image marker, which some cameras append, raise
// no warning: libjpeg stops reading at the marker.)
static void bookpipe_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  bookpipe_error_manager *manager = (bookpipe_error_manager *)cinfo->err;
  int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER) {
    (*cinfo->err->format_message)(cinfo, manager->text);
    manager->code = BOOKPIPE_JPEG_TRUNCATED;
    longjmp(manager->jump, 1);
  }
  if (manager->fails_on_corrupt_data &&
      (code == JWRN_HUFF_BAD_CODE || code == JWRN_ARITH_BAD_CODE || code == JWRN_MUST_RESYNC)) {
    (*cinfo->err->format_message)(cinfo, manager->text);
    manager->code = BOOKPIPE_JPEG_ERROR;
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
  // The rows of the image the region needs, cut out of a file with restart markers (see
  // bookpipe_restart_window), or NULL when the whole file is decoded.
  unsigned char *window;
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
  free(decoder->window);
  jpeg_destroy_decompress(&decoder->cinfo);
  free(decoder);
}

// ---- Restart markers: a re-encode that adds them, and decoding only the rows a region needs -----

// Big-endian 16-bit value at `p`.
static size_t bookpipe_be16(const unsigned char *p) { return ((size_t)p[0] << 8) | p[1]; }

// When the file (its header already read into `cinfo`) is one baseline scan whose restart
// intervals are whole MCU rows, builds in `*window` a JPEG of only the intervals that rows
// `fy0..<fy1` (full-resolution rows) and one MCU row on each side fall in: the same header with
// the frame's height changed, the intervals' entropy-coded bytes as they are (a restart resets
// the DC predictions, so each interval decodes on its own) with their restart markers numbered
// again, and EOI. Decoding it gives the same pixels for those rows as decoding the whole file:
// the same coefficients, and the extra MCU row on each side keeps the edges of the window (where
// chroma upsampling replicates rows) out of them. Returns 1 and sets `*skipped_rows` (full-resolution
// rows above the window) and `*window_height`, or 0 when the file does not qualify or the window
// would be the whole image (then nothing is allocated).
static int bookpipe_restart_window(const unsigned char *data, size_t size,
                                   const struct jpeg_decompress_struct *cinfo, int fy0, int fy1,
                                   unsigned char **window, size_t *window_size, int *skipped_rows,
                                   int *window_height) {
  if (cinfo->progressive_mode || cinfo->arith_code || cinfo->restart_interval == 0) return 0;
  if (cinfo->comps_in_scan != cinfo->num_components) return 0;
  if (cinfo->num_components != 1 && cinfo->num_components != 3) return 0;
  int mcu_width = cinfo->num_components == 1 ? DCTSIZE : cinfo->max_h_samp_factor * DCTSIZE;
  int mcu_height = cinfo->num_components == 1 ? DCTSIZE : cinfo->max_v_samp_factor * DCTSIZE;
  long image_height = (long)cinfo->image_height;
  long mcus_per_row = ((long)cinfo->image_width + mcu_width - 1) / mcu_width;
  if (mcus_per_row <= 0 || cinfo->restart_interval % mcus_per_row != 0) return 0;
  long interval_height = (long)(cinfo->restart_interval / mcus_per_row) * mcu_height;
  long mcu_rows = (image_height + mcu_height - 1) / mcu_height;
  long intervals = (mcu_rows * mcu_height + interval_height - 1) / interval_height;
  long first = ((long)fy0 - mcu_height) > 0 ? ((long)fy0 - mcu_height) / interval_height : 0;
  long last = ((long)fy1 + mcu_height + interval_height - 1) / interval_height;  // one past
  if (last > intervals) last = intervals;
  if (first >= last || (first == 0 && last == intervals)) return 0;

  // The header: every segment up to and including SOS; the frame must be baseline or extended
  // sequential Huffman (SOF0, SOF1).
  size_t position = 2, frame = 0, header_end = 0;
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
  while (header_end == 0) {
    if (position + 4 > size || data[position] != 0xFF) return 0;
    while (position < size && data[position] == 0xFF) position++;  // fill bytes
    if (position + 3 > size) return 0;
    unsigned char marker = data[position];
    size_t length = bookpipe_be16(data + position + 1);
    if (length < 2 || position + 1 + length > size) return 0;
    if (marker == 0xC0 || marker == 0xC1) frame = position - 1;
    else if (marker >= 0xC2 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) return 0;
    if (marker == 0xDA) header_end = position + 1 + length;
    position += 1 + length;
  }
  if (frame == 0) return 0;

  // The entropy-coded data: where each wanted interval starts and ends.
  size_t start_of_first = 0, end_of_last = 0;
  long interval = 0;  // the interval the scan is in
  size_t interval_start = header_end;
  position = header_end;
  while (end_of_last == 0) {
    const unsigned char *found = memchr(data + position, 0xFF, size - position);
    if (found == NULL) return 0;
    position = (size_t)(found - data);
    size_t next = position + 1;
    while (next < size && data[next] == 0xFF) next++;  // fill bytes before a marker
    if (next >= size) return 0;
    unsigned char code = data[next];
    if (code == 0x00) {  // a stuffed 0xFF data byte
      position = next + 1;
      continue;
    }
    int is_restart = code >= 0xD0 && code <= 0xD7;
    if (!is_restart && code != 0xD9) return 0;  // another scan, DNL, …: decode the whole file
    if (is_restart && (code & 7) != (interval & 7)) return 0;
    if (interval == first) start_of_first = interval_start;
    if (interval == last - 1) end_of_last = position;
    if (code == 0xD9 && end_of_last == 0) return 0;  // fewer intervals than the header says
    interval++;
    interval_start = next + 1;
    position = next + 1;
  }

  long count = last - first;
  size_t total = header_end + (end_of_last - start_of_first) + 2 * (size_t)count + 2;
  unsigned char *output = (unsigned char *)malloc(total);
  if (output == NULL) return 0;
  memcpy(output, data, header_end);
  long height = last == intervals ? image_height - first * interval_height : count * interval_height;
  output[frame + 5] = (unsigned char)(height >> 8);
  output[frame + 6] = (unsigned char)(height & 0xFF);
  size_t written = header_end;
  // Copy the intervals, numbering their restart markers from 0 again.
  position = start_of_first;
  long copied = 0;
  while (position < end_of_last) {
    const unsigned char *found = memchr(data + position, 0xFF, end_of_last - position);
    size_t stop = found == NULL ? end_of_last : (size_t)(found - data);
    memcpy(output + written, data + position, stop - position);
    written += stop - position;
    if (stop >= end_of_last) break;
    size_t next = stop + 1;
    while (next < end_of_last && data[next] == 0xFF) next++;
    if (next < end_of_last && data[next] >= 0xD0 && data[next] <= 0xD7) {
      output[written++] = 0xFF;
      output[written++] = (unsigned char)(0xD0 + (copied & 7));
      copied++;
    } else {  // a stuffed byte (or fill bytes before one): as it is
      memcpy(output + written, data + stop, next + 1 - stop);
      written += next + 1 - stop;
    }
    position = next + 1;
  }
  output[written++] = 0xFF;
  output[written++] = 0xD9;
  *window = output;
  *window_size = written;
  *skipped_rows = (int)(first * interval_height);
  *window_height = (int)height;
  return 1;
}

int bookpipe_jpeg_add_row_restarts(const unsigned char *data, size_t size, unsigned char **out,
                                   size_t *out_size, char *message, size_t message_size) {
  struct jpeg_decompress_struct source;
  struct jpeg_compress_struct target;
  bookpipe_error_manager manager;
  unsigned char *volatile buffer = NULL;
  unsigned long buffer_size = 0;
  volatile int target_created = 0;
  volatile int coefficients_read = 0;
  *out = NULL;
  *out_size = 0;
  bookpipe_setup_errors(&source, &manager);
  manager.fails_on_corrupt_data = 1;
  if (setjmp(manager.jump)) {
    bookpipe_copy_message(&manager, message, message_size);
    if (target_created) jpeg_destroy_compress(&target);
    jpeg_destroy_decompress(&source);
    free(buffer);
    // Once every coefficient was read the photo is whole: a failure after that is the encoder's.
    return coefficients_read && manager.code == BOOKPIPE_JPEG_ERROR ? BOOKPIPE_JPEG_ENCODE_FAILED : manager.code;
  }
  jpeg_create_decompress(&source);
  jpeg_mem_src(&source, data, (unsigned long)size);
  jpeg_save_markers(&source, JPEG_COM, 0xFFFF);
  for (int marker = 0; marker < 16; marker++) jpeg_save_markers(&source, JPEG_APP0 + marker, 0xFFFF);
  jpeg_read_header(&source, TRUE);
  jvirt_barray_ptr *coefficients = jpeg_read_coefficients(&source);
  coefficients_read = 1;
  target.err = source.err;  // one error manager: a failure in either jumps back here
  jpeg_create_compress(&target);
  target_created = 1;
  jpeg_copy_critical_parameters(&source, &target);
  target.restart_in_rows = 1;
  target.restart_interval = 0;
  // The standard Huffman tables: optimised ones made the copy 4 % smaller and a crop 2 ms faster,
  // but cost 48 ms more per 12 MP photo at import (measured; benchmarks/review/README.md).
  target.optimize_coding = FALSE;
  // The file's own markers (JFIF, Exif with the orientation, ICC, Adobe, comments) are copied as
  // they are, so none is written twice.
  target.write_JFIF_header = FALSE;
  target.write_Adobe_marker = FALSE;
  unsigned char *destination = NULL;
  jpeg_mem_dest(&target, &destination, &buffer_size);
  jpeg_write_coefficients(&target, coefficients);
  for (jpeg_saved_marker_ptr marker = source.marker_list; marker != NULL; marker = marker->next) {
    jpeg_write_marker(&target, marker->marker, marker->data, marker->data_length);
  }
  jpeg_finish_compress(&target);
  buffer = destination;
  jpeg_finish_decompress(&source);
  jpeg_destroy_compress(&target);
  jpeg_destroy_decompress(&source);
  *out = buffer;
  *out_size = (size_t)buffer_size;
  return BOOKPIPE_JPEG_OK;
}

void bookpipe_jpeg_free(unsigned char *bytes) { free(bytes); }

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
  free(decoder->window);
  decoder->window = NULL;
  jpeg_mem_src(cinfo, data, (unsigned long)size);
  jpeg_read_header(cinfo, TRUE);
  // A file with restart markers on MCU-row boundaries (bookpipe's managed photo copies have
  // them): decode only the intervals the region needs, not every row above it.
  if (y >= 0 && height > 0) {
    unsigned char *window = NULL;
    size_t window_size = 0;
    int skipped = 0, window_height = 0;
    if (bookpipe_restart_window(data, size, cinfo, y * scale_denominator, (y + height) * scale_denominator,
                                &window, &window_size, &skipped, &window_height)) {
      decoder->window = window;
      jpeg_abort_decompress(cinfo);
      jpeg_mem_src(cinfo, window, (unsigned long)window_size);
      jpeg_read_header(cinfo, TRUE);
      y -= skipped / scale_denominator;
      expected_height = (window_height + scale_denominator - 1) / scale_denominator;
    }
  }
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
