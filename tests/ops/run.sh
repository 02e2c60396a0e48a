#!/usr/bin/env bash
# tests/ops/run.sh BUILD_DIR: every operation of the language on every element
# type it takes, as .tile kernels through blk.h (libblk.so), against
# references written in C (tests/ops/ops.h).
#
# Runs every program BUILD_DIR/tests/ops/*_api_test (built by `make
# test-bins` from tests/ops/*_api_test.c) and adds up their counts. Each
# prints a line per case and ends with "N passed, N failed"; a program that
# crashes, exits nonzero with no failure counted, or prints no count line
# counts as one failure. The inputs are random: each program prints its seed
# first, and BLK_OPS_SEED=N reruns with the same inputs. BLK_BACKEND=gpu runs
# the same programs on a GPU. BLK_OPS_JOBS=N runs N programs at once (their
# output still comes in order: a GPU machine's CPUs compile the kernels).
# Prints "N passed, N failed" last.
set -u
build=${1:?usage: tests/ops/run.sh BUILD_DIR}
passed=0
failed=0
found=0
jobs=${BLK_OPS_JOBS:-1}
tmp=
if [ "$jobs" -gt 1 ]; then
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	for prog in "$build"/tests/ops/*_api_test; do
		[ -x "$prog" ] && printf '%s\0' "$prog"
	done | xargs -0 -r -P "$jobs" -I{} sh -c '"$1" >"$2/$(basename "$1").out" 2>&1; echo $? >"$2/$(basename "$1").rc"' _ {} "$tmp"
fi
for prog in "$build"/tests/ops/*_api_test; do
	[ -x "$prog" ] || continue
	found=1
	if [ -n "$tmp" ]; then
		out=$(cat "$tmp/$(basename "$prog").out" 2>/dev/null)
		status=$(cat "$tmp/$(basename "$prog").rc" 2>/dev/null || echo 1)
	else
		out=$("$prog" 2>&1)
		status=$?
	fi
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
		echo "FAIL $(basename "$prog"): crashed or printed no count (status $status)"
		failed=$((failed + 1))
	fi
done
if [ $found -eq 0 ]; then
	echo "FAIL ops: no test programs in $build/tests/ops (run make test-bins)"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
