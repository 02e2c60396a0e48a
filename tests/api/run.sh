#!/usr/bin/env bash
# tests/api: the public C API of libblk (blk.h), through libblk.so.
# Each *_api_test program prints a line per case and ends with "N passed, N failed".
set -u
build=${1:-build}
passed=0 failed=0
for prog in "$build"/tests/api/*_api_test; do
	[ -x "$prog" ] || continue
	out=$("$prog" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] && [ $status -eq 0 -o "${BASH_REMATCH[2]}" != 0 ]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		echo "FAIL $(basename "$prog"): crashed or printed no count (status $status)"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
