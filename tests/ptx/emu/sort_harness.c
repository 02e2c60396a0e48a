/* tests/ptx/emu/sort_harness.c: runs the kernel k of a sort or topk (its
 * GPU LLVM IR made CPU IR by to_cpu.py) on T threads, one a GPU thread,
 * and checks its results against a stable sort written here.
 *
 * Built with -DTY=<C type> -DR=<rows, 0: 1-D> -DC=<columns> -DAXIS -DDESC
 * -DK (0: sort with indices; -1: sort, values alone; else topk(k)) -DT.
 * The kernel is k(x, v, vi): x the block, v the values, vi the positions
 * (not written for values alone). The GPU's thread index, butterfly
 * shuffle and barrier are emu_tid, emu_shfl and emu_bar here: a shuffle is
 * a write of the lane's word, a barrier of its warp, the partner's word
 * read, and a barrier again. Prints "ok ..." or the first differences. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char blk_smem[256 * 1024] __attribute__((aligned(16)));
static __thread int my_tid;
static pthread_barrier_t block_bar, warp_bar[(T + 31) / 32];
static volatile uint32_t lane_word[T];

int emu_tid(void) { return my_tid; }
void emu_bar(void) { pthread_barrier_wait(&block_bar); }
uint32_t emu_shfl(uint32_t mask, uint32_t v, uint32_t lanes, uint32_t clamp)
{
	(void)mask;
	(void)clamp;
	lane_word[my_tid] = v;
	pthread_barrier_wait(&warp_bar[my_tid / 32]);
	uint32_t r = lane_word[(my_tid & ~31) | ((my_tid & 31) ^ (int)lanes)];
	pthread_barrier_wait(&warp_bar[my_tid / 32]);
	return r;
}
void emu_st32(uint32_t *p, bool c, uint32_t v)
{
	if (c)
		*p = v;
}
void emu_st64(uint64_t *p, bool c, uint64_t v)
{
	if (c)
		*p = v;
}

void k(TY *x, TY *v, int32_t *vi);

enum { ROWS = R ? R : 1, NUMEL = ROWS * C, LEN = R && AXIS == 0 ? R : C, LINES = NUMEL / LEN, KK = K > 0 ? K : LEN };
static TY *X, *V;
static int32_t *VI;
static int line;

static void *thread_main(void *a)
{
	my_tid = (int)(intptr_t)a;
	k(X, V, VI);
	return NULL;
}

/* Element index of position j of line o, the axis len long. */
static int at(int o, int j, int len)
{
	if (!R)
		return j;
	return AXIS == 1 ? o * len + j : j * C + o;
}

/* Whether position i of the line comes before position j (no NaN here). */
static bool before(int i, int j)
{
	TY a = X[at(line, i, LEN)], b = X[at(line, j, LEN)];
	bool desc = DESC || K > 0;
	if (a != b)
		return desc ? a > b : a < b;
	return i < j;
}

/* idx: 0 .. LEN - 1 in the stable order (merges of runs). */
static void ref_order(int *idx, int *tmp)
{
	for (int i = 0; i < LEN; i++)
		idx[i] = i;
	for (int w = 1; w < LEN; w *= 2)
		for (int lo = 0; lo < LEN; lo += 2 * w) {
			int mid = lo + w < LEN ? lo + w : LEN, end = lo + 2 * w < LEN ? lo + 2 * w : LEN;
			int a = lo, b = mid, o = lo;
			while (a < mid && b < end)
				tmp[o++] = before(idx[b], idx[a]) ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[o++] = idx[a++];
			while (b < end)
				tmp[o++] = idx[b++];
			memcpy(idx + lo, tmp + lo, (size_t)(end - lo) * sizeof *idx);
		}
}

int main(void)
{
	srand(7);
	X = malloc(NUMEL * sizeof *X);
	V = calloc(LINES * KK, sizeof *V);
	VI = calloc(LINES * KK, sizeof *VI);
	/* few distinct values: many ties */
	for (int i = 0; i < NUMEL; i++)
		X[i] = (TY)((rand() % 4001) - 2000) / (TY)(rand() % 2 ? 1 : 4);
	pthread_barrier_init(&block_bar, NULL, T);
	for (int w = 0; w < (T + 31) / 32; w++)
		pthread_barrier_init(&warp_bar[w], NULL, 32);
	pthread_t th[T];
	for (int t = 0; t < T; t++)
		if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t)) {
			printf("FAIL: no thread %d\n", t);
			return 1;
		}
	for (int t = 0; t < T; t++)
		pthread_join(th[t], NULL);
	int *idx = malloc(LEN * sizeof *idx), *tmp = malloc(LEN * sizeof *tmp), bad = 0;
	for (line = 0; line < LINES; line++) {
		ref_order(idx, tmp);
		for (int j = 0; j < KK; j++) {
			int r = at(line, j, KK), want = idx[j];
			TY wv = X[at(line, want, LEN)];
			if (V[r] != wv || (K >= 0 && VI[r] != want))
				if (bad++ < 5)
					printf("line %d rank %d: want %g (position %d), got %g (%d)\n", line, j, (double)wv, want,
					       (double)V[r], VI[r]);
		}
	}
	printf("%s: %d of %d results wrong\n", bad ? "FAIL" : "ok", bad, LINES * KK);
	return bad != 0;
}
