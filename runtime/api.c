/* api.c: the entry points of blk.h that do not need a GPU. */
#include "blk.h"
#include "lang.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local StrBuf last_error;

static blk_status fail(blk_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	last_error.len = 0;
	sb_vprintf(&last_error, fmt, ap);
	va_end(ap);
	return status;
}

const char *blk_version(void)
{
#ifdef BLK_VERSION
	return BLK_VERSION;
#else
	return "0.1.0";
#endif
}

const char *blk_last_error(void)
{
	return last_error.data && !last_error.failed ? last_error.data : "";
}

blk_status blk_check_source(const char *name, const char *text, size_t len)
{
	if (!name || (!text && len))
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: %s is NULL", name ? "text" : "name");
	if (len > UINT32_MAX / 2)
		return fail(BLK_ERROR_INVALID_ARGUMENT, "blk_check_source: '%s' is too large (%zu bytes)", name, len);
	Arena arena = {0};
	Diag diag;
	diag_init(&diag);
	Source src;
	source_from_string(&src, name, text ? text : "", len, &arena);
	blk_status status = BLK_SUCCESS;
	if (len && src.len != len) {
		status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory reading '%s'", name);
	} else {
		parse_source(&src, &diag, &arena);
		if (diag.out.failed)
			status = fail(BLK_ERROR_OUT_OF_MEMORY, "blk_check_source: out of memory checking '%s'", name);
		else if (diag.errors)
			status = fail(BLK_ERROR_SOURCE, "%s", diag.out.data ? diag.out.data : "");
	}
	if (status == BLK_SUCCESS)
		last_error.len = 0;
	diag_free(&diag);
	arena_free(&arena);
	return status;
}
