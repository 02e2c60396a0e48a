/* blk.h: the public interface of libblk.
 *
 * Every function returns a status; when it is not BLK_SUCCESS,
 * blk_last_error() says what went wrong and where. The library never prints
 * and never exits. Functions are safe to call from several threads; the last
 * error is kept per thread. */
#ifndef BLK_H
#define BLK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BLK_EXPORT __attribute__((visibility("default")))
#else
#define BLK_EXPORT
#endif

typedef enum blk_status {
	BLK_SUCCESS = 0,
	BLK_ERROR_INVALID_ARGUMENT, /* a null pointer, a size out of range */
	BLK_ERROR_SOURCE,           /* the .tile source has errors (diagnostics in blk_last_error) */
	BLK_ERROR_OUT_OF_MEMORY,
} blk_status;

/* "0.1.0" */
BLK_EXPORT const char *blk_version(void);

/* The message of the last failed call on this thread ("" if none). The
 * string stays valid until the next call into libblk on this thread. */
BLK_EXPORT const char *blk_last_error(void);

/* Parses a .tile source and checks its structure. `name` is used in
 * diagnostics ("file:line:col: error: ..."). On BLK_ERROR_SOURCE the
 * diagnostics, caret lines included, are in blk_last_error(). Warnings alone
 * leave the status BLK_SUCCESS. */
BLK_EXPORT blk_status blk_check_source(const char *name, const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
