/* replay_test.c: the fuzz harness without libFuzzer, for `make test`.
 *
 * `replay_test FILE...` runs LLVMFuzzerTestOneInput (tests/fuzz/fuzz_parse.c,
 * included below) once on each file. A violated invariant aborts, as under
 * libFuzzer; with SANITIZE=1, ASan, UBSan and LeakSanitizer watch the run.
 * tests/fuzz/run.sh calls it once per file of the seed corpus and of the
 * regressions, so the crashes the fuzzer once found stay fixed on every
 * compiler the project builds with, not only under clang-19. */
#include "fuzz_parse.c"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: replay_test FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "replay_test: cannot open '%s'\n", argv[i]);
			return 2;
		}
		StrBuf buf = {0};
		char chunk[65536];
		size_t n;
		while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
			sb_putn(&buf, chunk, n);
		bool bad = ferror(f) || buf.failed;
		fclose(f);
		if (bad) {
			fprintf(stderr, "replay_test: cannot read '%s'\n", argv[i]);
			sb_free(&buf);
			return 2;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)(buf.data ? buf.data : ""), buf.len);
		sb_free(&buf);
	}
	return 0;
}
