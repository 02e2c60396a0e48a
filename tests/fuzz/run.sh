#!/usr/bin/env bash
# tests/fuzz: replays the fuzz target's seed corpus (tests/fuzz/corpus) and
# every crash the fuzzer found (tests/fuzz/regressions) through the harness
# (tests/fuzz/fuzz_parse.c, built without libFuzzer as BUILD/tests/fuzz/replay_test).
# A case passes when the harness returns: no invariant violated, and with
# SANITIZE=1 no ASan, UBSan or leak report. Fuzzing itself is `make fuzz`.
# Prints a line per case and last "N passed, N failed".
set -u
build=${1:-build}
replay=$build/tests/fuzz/replay_test
cd "$(dirname "$0")/../.." || exit 1
if [ ! -x "$replay" ]; then
	echo "tests/fuzz: $replay not found; run make test-bins first"
	echo "0 passed, 1 failed"
	exit 1
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
pass=0 fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in tests/fuzz/corpus/* tests/fuzz/regressions/*; do
	[ -f "$f" ] || continue
	if timeout 60 "$replay" "$f" >"$tmp" 2>&1; then
		pass=$((pass + 1))
	else
		echo "FAIL $f"
		head -20 "$tmp" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
