#!/usr/bin/env bash
# tests/interp/run.sh BUILD_DIR: the CPU interpreter and the float conversions.
#
# Runs, in this order, and adds up their counts:
#  - every test program BUILD_DIR/tests/interp/*_test (built by `make test-bins`
#    from tests/interp/*_test.c): IR built by hand, run by interp_run, checked
#    against references computed in C;
#  - every script tests/interp/cases/*.sh, if any, as `bash SCRIPT BUILD_DIR`
#    (for tests that start from .tile source, through blkc). A script follows
#    the same contract as a program: a line per case ("ok NAME" or
#    "FAIL NAME: why"), and last exactly "N passed, N failed"; it exits
#    nonzero only when something failed.
# A program or script that crashes, exits nonzero with no failure counted, or
# prints no count line counts as one failure. Prints "N passed, N failed" last.
# bench_interp.c (speed) is not a *_test and is never run here.
set -u
build=${1:?usage: tests/interp/run.sh BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 2
passed=0
failed=0

# Runs a command that prints its own counts; adds them up.
run_counted() {
	local name=$1 out status last
	shift
	out=$("$@" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			echo "FAIL $name: exited with status $status"
			failed=$((failed + 1))
		fi
	else
		printf '%s\n' "$last"
		echo "FAIL $name: crashed or printed no counts (status $status)"
		failed=$((failed + 1))
	fi
}

found=0
for prog in "$build"/tests/interp/*_test; do
	[ -x "$prog" ] || continue
	found=1
	run_counted "$(basename "$prog")" "$prog"
done
if [ $found -eq 0 ]; then
	echo "FAIL interp: no test programs in $build/tests/interp (run make test-bins)"
	failed=$((failed + 1))
fi

for script in tests/interp/cases/*.sh; do
	[ -f "$script" ] || continue
	run_counted "$(basename "$script")" bash "$script" "$build"
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
