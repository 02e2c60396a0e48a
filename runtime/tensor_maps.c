/* tensor_maps.c: the tensor maps a launch passes to a kernel whose
 * descriptor tiles come by TMA (f->tmaps, planned by gpu/tma_plan.c):
 * whether the arguments fit them, and each map encoded from the arguments
 * with cuTensorMapEncodeTiled, on the caller's stack (no state: launches
 * from several threads share nothing here). */
#include "runtime.h"

#include <string.h>

/* What a size or stride of map m is for these arguments: false when the
 * argument is not an integer. */
static bool dim_value(const TmaDim *d, const blk_arg *args, int64_t *out)
{
	if (d->arg < 0) {
		*out = d->value;
		return true;
	}
	if (args[d->arg].kind != BLK_ARG_INT)
		return false;
	*out = args[d->arg].v.i;
	return true;
}

static int elem_bytes(const TmaMap *m) { return (scalar_bits((ScalarKind)m->elem) + 7) / 8; }

/* The map's description for the copy engine (innermost dimension first):
 * false when the arguments leave it outside what a tensor map can say. */
static bool describe(const TmaMap *m, const blk_arg *args, unsigned long long dims[2],
                     unsigned long long *stride_bytes, blk_devptr *base)
{
	int64_t rows, cols, stride;
	if (args[m->base_arg].kind != BLK_ARG_PTR || !dim_value(&m->dim[0], args, &rows) ||
	    !dim_value(&m->dim[1], args, &cols) || !dim_value(&m->stride[0], args, &stride))
		return false;
	int eb = elem_bytes(m);
	*base = args[m->base_arg].v.ptr;
	/* sizes 1 to 2^31 - 1 (the copy's coordinates are 32-bit); rows that
	 * do not overlap, 16-byte aligned, under 2^40 bytes apart */
	if (!*base || *base % 16 || rows < 1 || cols < 1 || rows > INT32_MAX || cols > INT32_MAX || stride < cols ||
	    stride >= ((int64_t)1 << 40) / eb || (stride * eb) % 16)
		return false;
	dims[0] = (unsigned long long)cols;
	dims[1] = (unsigned long long)rows;
	*stride_bytes = (unsigned long long)(stride * eb);
	return true;
}

bool rt_tma_fits(const Variant *v, const blk_arg *args)
{
	for (int i = 0; i < v->f->n_tmaps; i++) {
		unsigned long long dims[2], stride;
		blk_devptr base;
		if (!describe(&v->f->tmaps[i], args, dims, &stride, &base))
			return false;
	}
	return true;
}

static int data_type(ScalarKind k)
{
	switch (k) {
	case SK_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
	case SK_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
	case SK_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
	case SK_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
	case SK_U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
	case SK_I16: case SK_U16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
	default: return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* i8, u8, fp8: bytes */
	}
}

blk_status rt_tma_encode(const blk_context *ctx, const Variant *v, const blk_arg *args, CUtensorMap *maps)
{
	for (int i = 0; i < v->f->n_tmaps; i++) {
		const TmaMap *m = &v->f->tmaps[i];
		unsigned long long dims[2], stride;
		blk_devptr base;
		if (!describe(m, args, dims, &stride, &base))
			return rt_fail(BLK_ERROR_LAUNCH,
			               "blk_launch: kernel '%s': the arguments do not fit tensor map %d (internal error: the "
			               "launch should have taken the variant without TMA)", v->f->name, i);
		unsigned box[2] = {(unsigned)m->box[1], (unsigned)m->box[0]}, one[2] = {1, 1};
		int swizzle = m->row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
		              : m->row_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
		                                   : CU_TENSOR_MAP_SWIZZLE_32B;
		CUresult r = ctx->cu->cuTensorMapEncodeTiled(&maps[i], data_type((ScalarKind)m->elem), 2,
		                                             (void *)(uintptr_t)base, dims, &stride, box, one,
		                                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
		                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
		                                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
		if (r != CUDA_SUCCESS) {
			char msg[256];
			return rt_fail(BLK_ERROR_LAUNCH,
			               "blk_launch: kernel '%s': tensor map %d (%llu x %llu elements, rows %llu bytes apart, "
			               "box %u x %u): %s", v->f->name, i, dims[1], dims[0], stride, box[1], box[0],
			               cuda_describe(ctx->cu, r, "cuTensorMapEncodeTiled", msg, sizeof msg));
		}
	}
	return BLK_SUCCESS;
}
