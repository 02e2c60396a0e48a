#!/usr/bin/env bash
# tests/lang: front-end golden tests.
#
# Each case is NAME.tile beside one or more expected outputs:
#   NAME.tokens  stdout of `blkc --emit=tokens NAME.tile`
#   NAME.ast     stdout of `blkc --emit=ast NAME.tile`
#   NAME.err     stderr of `blkc NAME.tile` (diagnostics); blkc must exit 1,
#                unless the file holds only warnings, when it must exit 0
# Paths in the output are relative to the repository root.
#
# usage: tests/lang/run.sh [BUILD_DIR]      (UPDATE=1 rewrites expectations:
#        review every changed file with `git diff` before committing)
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
blkc=$build/blkc
if [ ! -x "$blkc" ]; then
	echo "tests/lang: $blkc not found; run make first"
	echo "0 passed, 1 failed"
	exit 1
fi
export NO_COLOR=1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name kind expected actual
	if cmp -s "$3" "$4"; then
		return 0
	fi
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$4" "$3"
		echo "UPDATED $1 ($2)"
		return 0
	fi
	echo "FAIL $1 ($2)"
	diff -u "$3" "$4" | head -40 | sed 's/^/    /'
	return 1
}

for tile in tests/lang/*.tile; do
	name=${tile%.tile}
	ok=1 ran=0
	for kind in tokens ast; do
		[ -f "$name.$kind" ] || continue
		ran=1
		"$blkc" --emit=$kind "$tile" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL $name ($kind): blkc exited $rc"
			sed 's/^/    /' "$tmp/err" | head -20
			ok=0
			continue
		fi
		check "$name" "$kind" "$name.$kind" "$tmp/out" || ok=0
	done
	if [ -f "$name.err" ]; then
		ran=1
		"$blkc" "$tile" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		want=1
		grep -q ': error: ' "$name.err" || want=0
		if [ $rc -ne $want ]; then
			echo "FAIL $name (err): blkc exited $rc, expected $want"
			ok=0
		elif [ $rc -gt 1 ]; then
			echo "FAIL $name (err): blkc crashed (status $rc)"
			ok=0
		fi
		check "$name" "err" "$name.err" "$tmp/err" || ok=0
	fi
	if [ $ran = 0 ]; then
		echo "FAIL $name: no expected output (.tokens, .ast or .err) beside it"
		ok=0
	fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
# Every example parses cleanly: no error and no warning (and the attention
# kernels the examples drive, in the standard library).
for tile in examples/*.tile stdlib/nn/attention.tile; do
	if "$blkc" --emit=ast "$tile" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && [ -s "$tmp/out" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL $tile: does not parse cleanly"
		sed 's/^/    /' "$tmp/err" | head -20
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
