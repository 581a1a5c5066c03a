// libjpeg reports fatal errors by calling error_exit, which by default prints and exits; Swift cannot unwind a
// longjmp, so the decoder lives in this small C file, which turns errors into a status.
#include "coffer_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
#include <jerror.h>

struct coffer_error {
    struct jpeg_error_mgr base;
    jmp_buf escape;
    int ended_early;
};

static void coffer_error_exit(j_common_ptr info) {
    struct coffer_error *error = (struct coffer_error *)info->err;
    longjmp(error->escape, 1);
}

// Messages could name file contents; none are printed.
static void coffer_output_message(j_common_ptr info) { (void)info; }

static void coffer_emit_message(j_common_ptr info, int level) {
    struct coffer_error *error = (struct coffer_error *)info->err;
    if (level < 0 && error->base.msg_code == JWRN_JPEG_EOF) error->ended_early = 1;
}

static coffer_jpeg_status decode(const uint8_t *data, size_t size, size_t max_pixels, int header_only, uint8_t **out,
                                 uint32_t *width, uint32_t *height) {
    struct jpeg_decompress_struct info;
    struct coffer_error error;
    uint8_t *volatile pixels = NULL;
    volatile coffer_jpeg_status status = COFFER_JPEG_DAMAGED;
    if (size == 0 || size > (size_t)0xFFFFFFFFu) return COFFER_JPEG_DAMAGED;
    info.err = jpeg_std_error(&error.base);
    error.ended_early = 0;
    error.base.error_exit = coffer_error_exit;
    error.base.output_message = coffer_output_message;
    error.base.emit_message = coffer_emit_message;
    if (setjmp(error.escape)) {
        jpeg_destroy_decompress(&info);
        free(pixels);
        return status;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    *width = info.image_width;
    *height = info.image_height;
    if (info.image_width == 0 || info.image_height == 0) longjmp(error.escape, 1);
    if ((size_t)info.image_width > max_pixels / (size_t)info.image_height) {
        status = COFFER_JPEG_TOO_LARGE;
        longjmp(error.escape, 1);
    }
    if (header_only) {
        jpeg_destroy_decompress(&info);
        return COFFER_JPEG_OK;
    }
    info.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&info);
    if (info.output_components != 1) longjmp(error.escape, 1);
    pixels = malloc((size_t)info.output_width * info.output_height);
    if (pixels == NULL) {
        status = COFFER_JPEG_OUT_OF_MEMORY;
        longjmp(error.escape, 1);
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t)info.output_scanline * info.output_width;
        jpeg_read_scanlines(&info, &row, 1);
    }
    if (error.ended_early) {
        status = COFFER_JPEG_TRUNCATED;
        longjmp(error.escape, 1);
    }
    jpeg_finish_decompress(&info);
    *width = info.output_width;
    *height = info.output_height;
    jpeg_destroy_decompress(&info);
    *out = pixels;
    return COFFER_JPEG_OK;
}

coffer_jpeg_status coffer_jpeg_size(const uint8_t *data, size_t size, uint32_t *width, uint32_t *height) {
    return decode(data, size, (size_t)-1, 1, NULL, width, height);
}

coffer_jpeg_status coffer_jpeg_gray(const uint8_t *data, size_t size, size_t max_pixels, uint8_t **out,
                                    uint32_t *width, uint32_t *height) {
    return decode(data, size, max_pixels, 0, out, width, height);
}

void coffer_jpeg_free(uint8_t *pixels) { free(pixels); }
