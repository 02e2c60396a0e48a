#!/usr/bin/env bash
# tests/gpu/full.sh [tests] [sanitize] [bench [BENCH ARGS...]]: the GPU machine's
# whole check in one call, over a build made elsewhere (nothing is built here).
# Carry build/libblk.so, build/blkc, build/_blkfast.abi3.so (the Python
# package's launchers in C), build/tests, build/examples and build/bench.
#   tests     tests/gpu/run.sh with BLK_GPU_OPS=1: the API tests, every example
#             and tests/ops on the GPU
#   sanitize  tests/gpu/sanitize.sh: compute-sanitizer memcheck, racecheck and
#             synccheck over the examples and gpu_api_test, ncu over the examples
#   bench     bench/run with the arguments that follow
# Logs go to $OUT (when set); failures and the summaries are printed last.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${OUT:-/tmp/blk-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
status=0
nvidia-smi -L 2>/dev/null | head -1
# each step's wall time, so that a later call can be planned under its limit
step_start=$SECONDS
step_done() { echo "== $1: $((SECONDS - step_start)) s"; step_start=$SECONDS; }
while [ $# -gt 0 ]; do
	case $1 in
	tests)
		BLK_GPU_OPS=1 bash tests/gpu/run.sh build >"$out/gpu.log" 2>&1 || status=1
		grep -v '^ok' "$out/gpu.log" | tail -n 60
		step_done tests
		;;
	sanitize)
		bash tests/gpu/sanitize.sh build >"$out/sanitize.log" 2>&1 || status=1
		grep -v '^ok' "$out/sanitize.log" | tail -n 30
		sed -n '/^bank conflicts/,$p' "$out/sanitize.log" | head -n 60
		step_done sanitize
		;;
	bench)
		shift
		bench/run "$@" >"$out/bench.log" 2>&1 || status=1
		grep -E 'FAIL|ERROR' "$out/bench.log" | head -n 20
		sed -n '/^| kernel/,$p' "$out/bench.log" | tail -n 60
		step_done bench
		break
		;;
	*)
		echo "tests/gpu/full.sh: unknown step '$1'" >&2
		exit 2
		;;
	esac
	shift
done
exit $status
