/* tests/ptx/emu/hist_harness.c: runs the kernel k(x, out) of
 *     out[0 .. BINS) = histogram(x[0 .. N), BINS, mask = (offs % 3) != 0)
 * (its GPU LLVM IR made CPU IR by to_cpu.py) on T threads and checks the
 * counts against a count written here. -DN -DBINS -DT. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

char blk_smem[256 * 1024] __attribute__((aligned(16)));
static __thread int my_tid;
static pthread_barrier_t block_bar;

int emu_tid(void) { return my_tid; }
void emu_bar(void) { pthread_barrier_wait(&block_bar); }
void emu_red_add1(bool c, uint32_t *p)
{
	if (c)
		__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}
void emu_sst32(bool c, uint32_t *p, uint32_t v)
{
	if (c)
		*p = v;
}
void emu_st32(uint32_t *p, bool c, uint32_t v)
{
	if (c)
		*p = v;
}

void k(int32_t *x, int32_t *out);
static int32_t *X, *OUT;

static void *thread_main(void *a)
{
	my_tid = (int)(intptr_t)a;
	k(X, OUT);
	return NULL;
}

int main(void)
{
	srand(11);
	X = malloc(N * sizeof *X);
	OUT = calloc(BINS, sizeof *OUT);
	int32_t *want = calloc(BINS, sizeof *want);
	for (int i = 0; i < N; i++) {
		/* in the bins, in every part of them, and out of range both ways */
		X[i] = rand() % 8 ? rand() % BINS : rand() % 2 ? -1 - rand() % 5 : BINS + rand() % 5;
		if (i % 3 && X[i] >= 0 && X[i] < BINS)
			want[X[i]]++;
	}
	pthread_barrier_init(&block_bar, NULL, T);
	pthread_t th[T];
	for (int t = 0; t < T; t++)
		pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
	for (int t = 0; t < T; t++)
		pthread_join(th[t], NULL);
	int bad = 0;
	for (int b = 0; b < BINS; b++)
		if (OUT[b] != want[b] && bad++ < 5)
			printf("bin %d: want %d, got %d\n", b, want[b], OUT[b]);
	printf("%s: %d of %d bins wrong\n", bad ? "FAIL" : "ok", bad, BINS);
	return bad != 0;
}
