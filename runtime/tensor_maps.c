/* tensor_maps.c: the tensor maps a launch passes to a kernel whose
 * descriptor tiles come by TMA (f->tmaps, planned by gpu/tma_plan.c):
 * whether the arguments fit them, and each map encoded from the arguments
 * with cuTensorMapEncodeTiled into the caller's stack (NaN outside the
 * tensor for a map of a descriptor with padding_option = "nan").
 *
 * A map depends only on its base, sizes and row stride (the rest comes
 * from the variant), so each variant keeps the maps of its recent
 * launches (up to 32 distinct ones, struct TmaCache): a launch whose
 * arguments give the same values copies them, under the cache's own lock
 * (launches from several threads), and encodes nothing. A miss encodes
 * outside the lock, then replaces the older launch of its set. */
#include "runtime.h"

#include <string.h>

enum { TMA_CACHE_SETS = 16, TMA_CACHE_WAYS = 2 };

/* One launch's maps: the values each was encoded from (base, rows,
 * columns, row stride in bytes), and the map; n_maps of each. */
typedef struct TmaWay {
	bool used;
	uint64_t (*key)[4];
	CUtensorMap *maps;
} TmaWay;

/* Sets chosen by a hash of the keys, two launches a set (the older
 * replaced): a loop over a model's layers, each with buffers of its own,
 * keeps its maps. */
struct TmaCache {
	pthread_mutex_t lock;
	TmaWay way[TMA_CACHE_SETS][TMA_CACHE_WAYS];
	unsigned char older[TMA_CACHE_SETS]; /* the way of each set a miss replaces */
};

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
	/* the copy engine writes the end of a stored box's row in whole 16-byte
	 * units, past the tensor's last column where a row is not (measured on
	 * an H200: rows of 130 f32, 256 apart, got zeros in columns 130 and
	 * 131); loads stop at the last element. A map a store goes through
	 * needs rows of whole 16-byte units; otherwise the variant without TMA */
	if (m->store && (cols * eb) % 16)
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

bool rt_tma_cache_new(Variant *v, Arena *a)
{
	int n = v->f->n_tmaps;
	if (v->tma_cache || !n)
		return true;
	struct TmaCache *c = arena_alloc(a, sizeof *c);
	/* the maps 64-byte aligned (CUtensorMap): room to round the address up */
	char *raw = arena_alloc(a, (size_t)TMA_CACHE_SETS * TMA_CACHE_WAYS * n * sizeof(CUtensorMap) + 64);
	uint64_t(*keys)[4] = arena_alloc(a, (size_t)TMA_CACHE_SETS * TMA_CACHE_WAYS * n * sizeof *keys);
	if (!c || !raw || !keys)
		return false;
	memset(c, 0, sizeof *c);
	CUtensorMap *maps = (CUtensorMap *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
	for (int s = 0, i = 0; s < TMA_CACHE_SETS; s++)
		for (int w = 0; w < TMA_CACHE_WAYS; w++, i++)
			c->way[s][w] = (TmaWay){.key = keys + (size_t)i * n, .maps = maps + (size_t)i * n};
	if (pthread_mutex_init(&c->lock, NULL) != 0)
		return false;
	v->tma_cache = c;
	return true;
}

void rt_tma_cache_free(Variant *v)
{
	if (v->tma_cache)
		pthread_mutex_destroy(&v->tma_cache->lock);
	v->tma_cache = NULL;
}

static unsigned key_set(int n, uint64_t key[][4])
{
	uint64_t h = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 4; j++)
			h = (h ^ key[i][j]) * 0x100000001b3ull;
	return (unsigned)((h ^ h >> 29 ^ h >> 47) % TMA_CACHE_SETS);
}

/* Copies the maps of a kept launch with these keys into maps: false when
 * none has them. */
static bool cache_find(struct TmaCache *c, int n, uint64_t key[][4], CUtensorMap *maps)
{
	unsigned s = key_set(n, key);
	bool hit = false;
	pthread_mutex_lock(&c->lock);
	for (int w = 0; w < TMA_CACHE_WAYS && !hit; w++) {
		TmaWay *e = &c->way[s][w];
		if (e->used && memcmp(e->key, key, (size_t)n * sizeof key[0]) == 0) {
			memcpy(maps, e->maps, (size_t)n * sizeof maps[0]);
			c->older[s] = (unsigned char)(w ^ 1);
			hit = true;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

static void cache_put(struct TmaCache *c, int n, uint64_t key[][4], const CUtensorMap *maps)
{
	unsigned s = key_set(n, key);
	pthread_mutex_lock(&c->lock);
	int w = c->older[s];
	for (int i = 0; i < TMA_CACHE_WAYS; i++) /* another thread's miss kept them meanwhile */
		if (c->way[s][i].used && memcmp(c->way[s][i].key, key, (size_t)n * sizeof key[0]) == 0)
			w = i;
	TmaWay *e = &c->way[s][w];
	memcpy(e->key, key, (size_t)n * sizeof key[0]);
	memcpy(e->maps, maps, (size_t)n * sizeof maps[0]);
	e->used = true;
	c->older[s] = (unsigned char)(w ^ 1);
	pthread_mutex_unlock(&c->lock);
}

blk_status rt_tma_encode(const blk_context *ctx, Variant *v, const blk_arg *args, CUtensorMap *maps)
{
	int n = v->f->n_tmaps;
	uint64_t key[TMA_MAX_MAPS][4];
	unsigned long long dims[TMA_MAX_MAPS][2], stride[TMA_MAX_MAPS];
	blk_devptr base[TMA_MAX_MAPS];
	for (int i = 0; i < n; i++) {
		if (!describe(&v->f->tmaps[i], args, dims[i], &stride[i], &base[i]))
			return rt_fail(BLK_ERROR_LAUNCH,
			               "blk_launch: kernel '%s': the arguments do not fit tensor map %d (internal error: the "
			               "launch should have taken the variant without TMA)", v->f->name, i);
		key[i][0] = base[i];
		key[i][1] = dims[i][1];
		key[i][2] = dims[i][0];
		key[i][3] = stride[i];
	}
	if (v->tma_cache && cache_find(v->tma_cache, n, key, maps))
		return BLK_SUCCESS;
	for (int i = 0; i < n; i++) {
		const TmaMap *m = &v->f->tmaps[i];
		unsigned box[2] = {(unsigned)m->box[1], (unsigned)m->box[0]}, one[2] = {1, 1};
		int swizzle = m->row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
		              : m->row_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
		                                   : CU_TENSOR_MAP_SWIZZLE_32B;
		CUresult r = ctx->cu->cuTensorMapEncodeTiled(&maps[i], data_type((ScalarKind)m->elem), 2,
		                                             (void *)(uintptr_t)base[i], dims[i], &stride[i], box, one,
		                                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
		                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
		                                             m->nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
		                                                         : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
		if (r != CUDA_SUCCESS) {
			char msg[256];
			return rt_fail(BLK_ERROR_LAUNCH,
			               "blk_launch: kernel '%s': tensor map %d (%llu x %llu elements, rows %llu bytes apart, "
			               "box %u x %u): %s", v->f->name, i, dims[i][1], dims[i][0], stride[i], box[1], box[0],
			               cuda_describe(ctx->cu, r, "cuTensorMapEncodeTiled", msg, sizeof msg));
		}
	}
	if (v->tma_cache)
		cache_put(v->tma_cache, n, key, maps);
	return BLK_SUCCESS;
}
