#!/usr/bin/env bash
# tests/run.sh BUILD_DIR [SUITE...]: runs the test suites against a build.
#
# A suite is a folder tests/SUITE with a runner tests/SUITE/run.sh. It is run
# from the repository root as `bash tests/SUITE/run.sh BUILD_DIR` (BUILD_DIR
# absolute), prints a line per case, and ends its standard output with exactly
# one line "N passed, N failed". A runner that exits nonzero, is killed, runs
# past BLK_TEST_TIMEOUT seconds (default 1200) or prints no such line counts
# as failed. This script prints each suite's output, a summary, and last the
# sums, "N passed, N failed"; it exits 1 when anything failed. A suite that
# passed and failed nothing and printed a line "SKIP..." shows in the summary
# as "skipped:" with that line's reason.
# Runners see BLK_BUILD_DIR, BLKC (the compiler) and BLK_SANITIZE in the
# environment.
set -u

if [ $# -lt 1 ]; then
	echo "usage: tests/run.sh BUILD_DIR [SUITE...]" >&2
	exit 2
fi
build=$(cd "$1" 2>/dev/null && pwd) || { echo "tests/run.sh: no build folder '$1'" >&2; exit 2; }
shift
cd "$(dirname "$0")/.." || exit 2

export BLK_BUILD_DIR="$build"
export BLKC="$build/blkc"
# compiled kernels go to a cache of this run, not the user's ~/.cache/blk
if [ -z "${BLK_CACHE_DIR:-}" ]; then
	BLK_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blk-test-cache.XXXXXX")
	export BLK_CACHE_DIR
	own_cache=1
fi
# 1: a SANITIZE=1 build (ASan, UBSan); thread: a SANITIZE=thread build (TSan).
# make sets it.
export BLK_SANITIZE="${BLK_SANITIZE:-0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Under TSan a report is a failure: the program stops with status 66 at the
# first one. tests/tsan.supp names what is not blk's (each entry says why).
if [ "$BLK_SANITIZE" = thread ]; then
	export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}"
fi
timeout_s=${BLK_TEST_TIMEOUT:-1200}

if [ $# -gt 0 ]; then
	suites=("$@")
else
	suites=()
	for r in tests/*/run.sh; do
		[ -f "$r" ] && suites+=("$(basename "$(dirname "$r")")")
	done
fi

log=$(mktemp "${TMPDIR:-/tmp}/blk-test.XXXXXX")
trap 'rm -f "$log"; [ -n "${own_cache:-}" ] && rm -rf "$BLK_CACHE_DIR"' EXIT

total_pass=0
total_fail=0
summary=()
for suite in "${suites[@]}"; do
	runner="tests/$suite/run.sh"
	echo "== $suite"
	if [ ! -f "$runner" ]; then
		echo "FAIL $suite: no $runner"
		summary+=("$(printf '%-10s no runner: counted as 1 failed' "$suite")")
		total_fail=$((total_fail + 1))
		continue
	fi
	timeout --kill-after=10 "$timeout_s" bash "$runner" "$build" </dev/null | tee "$log"
	status=${PIPESTATUS[0]}
	last=$(tail -n 1 "$log")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=${BASH_REMATCH[1]}
		fail=${BASH_REMATCH[2]}
		note=""
		if [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then
			fail=1
			note=" (runner exited with status $status: counted as 1 failed)"
		fi
	else
		pass=0
		fail=1
		case $status in
		124 | 137) why="timed out after ${timeout_s}s" ;;
		0) why="printed no 'N passed, N failed' line" ;;
		*) why="exited with status $status and no 'N passed, N failed' line" ;;
		esac
		echo "FAIL $suite: runner $why"
		note=" (runner $why: counted as 1 failed)"
	fi
	# a suite that ran nothing and said why ("SKIP: no GPU (...)") shows as
	# skipped, with its reason, not as "0 passed, 0 failed"
	skip=$(grep -m 1 '^SKIP' "$log")
	if [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ] && [ -n "$skip" ]; then
		summary+=("$(printf '%-10s skipped: %s' "$suite" "${skip#SKIP}" | sed 's/skipped: *:* */skipped: /')")
	else
		summary+=("$(printf '%-10s %s passed, %s failed%s' "$suite" "$pass" "$fail" "$note")")
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done

echo "== summary"
for line in "${summary[@]+"${summary[@]}"}"; do
	echo "$line"
done
if [ ${#suites[@]} -eq 0 ]; then
	echo "no test suites found (tests/*/run.sh)"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
