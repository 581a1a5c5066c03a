#ifndef COFFER_JPEG_H
#define COFFER_JPEG_H

#include <stddef.h>
#include <stdint.h>

/// What coffer_jpeg_gray reports.
typedef enum {
    COFFER_JPEG_OK = 0,
    /// libjpeg refused the data (not a JPEG, damaged, cut short, or a colour space with no grey conversion).
    COFFER_JPEG_DAMAGED = 1,
    /// The header's size is over the caller's pixel cap: nothing was decoded.
    COFFER_JPEG_TOO_LARGE = 2,
    COFFER_JPEG_OUT_OF_MEMORY = 3,
    /// The data ends before the image does.
    COFFER_JPEG_TRUNCATED = 4,
} coffer_jpeg_status;

/// Reads a JPEG's size from its header only.
coffer_jpeg_status coffer_jpeg_size(const uint8_t *data, size_t size, uint32_t *width, uint32_t *height);

/// Decodes a JPEG to 8-bit luminance, one byte a pixel, row-major, into `out` (malloc'd; the caller frees it).
/// The size is checked against `max_pixels` from the header, before any pixel is decoded. libjpeg's fatal errors
/// come back as COFFER_JPEG_DAMAGED (its default handler would exit the process); of its warnings, the one for data
/// that ends early comes back as COFFER_JPEG_TRUNCATED, and the others (stray bytes between segments) are ignored.
coffer_jpeg_status coffer_jpeg_gray(const uint8_t *data, size_t size, size_t max_pixels, uint8_t **out,
                                    uint32_t *width, uint32_t *height);

/// Frees what coffer_jpeg_gray decoded.
void coffer_jpeg_free(uint8_t *pixels);

#endif
