#!/usr/bin/env bash
# tests/diff: differential tests on random kernels from tests/diff/gen.py.
#
#   tests/diff/run.sh BUILD_DIR
#       the suite of `make test` (no GPU needed): BLK_DIFF_COUNT kernels
#       (default 3000; 300 in a SANITIZE=1 build) of seed BLK_DIFF_SEED
#       (default 1), each run on the interpreter (no error, no crash) and
#       compiled to PTX for two of sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a in
#       turn (a thousand kernels each), which ptxas assembles where it
#       is (on PATH or in /usr/local/cuda/bin). A line per case.
#   tests/diff/run.sh BUILD_DIR --gpu [N]
#       N kernels (default 10000) on the interpreter and on the GPU, outputs
#       compared (tolerances: docs/testing.md); a line per mismatch with its
#       reproducer in BLK_DIFF_REPRO (default build/diff-repro). Where no GPU
#       can be used, one line says so and the exit status is 0.
#
# Both end with "N passed, N failed". BLK_DIFF_JOBS sets the parallelism
# (default: the number of cores).
set -u
build=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "tests/diff: no build folder '${1:-build}'"; echo "0 passed, 1 failed"; exit 1; }
shift || true
cd "$(dirname "$0")/../.." || exit 1
blkc=$build/blkc
seed=${BLK_DIFF_SEED:-1}
jobs=${BLK_DIFF_JOBS:-$(nproc 2>/dev/null || echo 2)}
if ! command -v python3 >/dev/null; then
	echo "FAIL tests/diff: python3 is needed"
	echo "0 passed, 1 failed"
	exit 1
fi

if [ "${1:-}" = "--gpu" ]; then
	count=${2:-10000}
	repro=${BLK_DIFF_REPRO:-$build/diff-repro}
	# can this machine run a kernel on the GPU at all?
	probe=$(mktemp -d "${TMPDIR:-/tmp}/blk-diff-probe.XXXXXX")
	trap 'rm -rf "$probe"' EXIT
	printf 'kernel one(x: *i32) grid(1) { store(x + arange(0, 32), arange(0, 32)); }\n' >"$probe/one.tile"
	# BLK_DIFF_SECOND=interpreter compares the interpreter with itself: a
	# check of this script where there is no GPU
	second=${BLK_DIFF_SECOND:-gpu}
	if [ "$second" = gpu ] && ! BLK_BACKEND=gpu "$blkc" run "$probe/one.tile" x=32 >"$probe/out" 2>&1; then
		echo "tests/diff --gpu: no GPU can be used here ($(head -c 200 "$probe/out" | tr '\n' ' ')): nothing compared"
		exit 0
	fi
	# the GPU compiles each kernel once: a cache of this run only
	export BLK_CACHE_DIR=${BLK_CACHE_DIR:-$probe/cache}
	# one process a slice of the kernels, each with one interpreter and one
	# GPU context for all of its kernels (tests/diff/batch.py): a process and
	# a CUDA context a kernel (`blkc run`) cost half a second each
	echo "tests/diff --gpu: $count kernels of seed $seed in $jobs processes; reproducers in $repro"
	start=$(date +%s)
	per=$(((count + jobs - 1) / jobs))
	for ((j = 0; j < jobs; j++)); do
		first=$((j * per))
		n=$((count - first < per ? count - first : per))
		[ "$n" -gt 0 ] || break
		BLK_LIB="$build/libblk.so" python3 tests/diff/batch.py --seed "$seed" --first "$first" --count "$n" \
			--second "$second" --repro "$repro" >"$probe/log.$j" 2>"$probe/err.$j" &
	done
	wait
	passed=0 failed=0
	for f in "$probe"/log.*; do
		grep -v '^[0-9]* passed, [0-9]* failed$' "$f"
		if last=$(tail -n 1 "$f") && [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=$((passed + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
		else
			echo "FAIL ${f##*/}: the process ended early: $(tail -n 3 "${f/log/err}" | tr '\n' ' ')"
			failed=$((failed + 1))
		fi
	done
	echo "tests/diff --gpu: $(($(date +%s) - start)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
fi

if [ "${BLK_SANITIZE:-0}" = 1 ]; then
	count=${BLK_DIFF_COUNT:-300}
else
	count=${BLK_DIFF_COUNT:-3000}
fi
ptxas=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })
if [ -n "$ptxas" ]; then
	echo "note: $count kernels of seed $seed: interpreter, PTX for two archs each (sm_75 to sm_90a in turn), $ptxas"
else
	echo "note: $count kernels of seed $seed: interpreter, PTX for two archs each (sm_75 to sm_90a in turn); no ptxas here, so the PTX is not assembled"
fi
python3 tests/diff/diff.py ci --blkc "$blkc" --seed "$seed" --count "$count" --jobs "$jobs" \
	--ptxas "$ptxas" --repro "$build/diff-repro" --verbose
