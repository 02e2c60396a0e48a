#!/usr/bin/env bash
# tests/runtime/run.sh BUILD_DIR: the runtime's CUDA driver layer and GPU
# backend, without a GPU:
#  - driver_test: error names and messages, targets, PTX entry parameters;
#  - *_api_test: libblk.so's GPU backend through blk.h against the stand-in
#    driver BUILD_DIR/tests/runtime/fake/libcuda.so.1 (tests/runtime/fake_cuda.c).
# Each program prints a line per case and last "N passed, N failed"; this
# script adds them up and prints the sums last.
set -u
build=${1:?usage: tests/runtime/run.sh BUILD_DIR}
passed=0
failed=0

run_program() {
	local prog=$1 out status last
	if [ ! -x "$prog" ]; then
		echo "FAIL $(basename "$prog"): not built ($prog)"
		failed=$((failed + 1))
		return
	fi
	out=$("$prog" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			echo "FAIL $(basename "$prog"): exited with status $status"
			failed=$((failed + 1))
		fi
	else
		printf '%s\n' "$last"
		echo "FAIL $(basename "$prog"): crashed or printed no counts (status $status)"
		failed=$((failed + 1))
	fi
}

if [ -f "$build/tests/runtime/fake/libcuda.so.1" ]; then
	echo "ok   the stand-in driver is built"
	passed=$((passed + 1))
else
	echo "FAIL the stand-in driver is built ($build/tests/runtime/fake/libcuda.so.1)"
	failed=$((failed + 1))
fi
for prog in "$build"/tests/runtime/*_test; do
	[ -e "$prog" ] || continue
	run_program "$prog"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
