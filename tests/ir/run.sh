#!/usr/bin/env bash
# tests/ir/run.sh BUILD_DIR: the tile IR's printer, verifier and passes.
#  - print_test, verify_test, passes_test: IR built by hand in C (golden text
#    in the tests themselves);
#  - fold_interp_test: canonicalize against the interpreter on random
#    constant ops of every kind;
#  - layout_test: the GPU IR's encodings as bit maps (blocked against
#    Triton's coordinates, mma against the PTX ISA's fragments), shape ops
#    as bit maps, the axis analysis; gpu_invariants_test: what the layouts
#    and remove-conversions passes promise, on every kernel that compiles;
#    banks_test: shared scratches free of bank conflicts;
#  - cases marked KNOWN BUG (lines "bug  NAME") expose faults not fixed yet:
#    they are not counted unless BLK_KNOWN_BUGS=1, which makes them fail;
#  - golden/NAME.tile: the first line "// blkc: ARGS" gives blkc's arguments
#    (e.g. --emit=ir --dump-after=canonicalize); its standard output and
#    error must equal golden/NAME.expected. BLK_UPDATE_GOLDEN=1 rewrites the
#    .expected files instead of comparing.
# Prints a line per case and last "N passed, N failed".
set -u
build=${1:?usage: tests/ir/run.sh BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 2
blkc=${BLKC:-$build/blkc}
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }

for src in tests/ir/*_test.c; do
	name=$(basename "$src" .c)
	prog="$build/tests/ir/$name"
	if [ ! -x "$prog" ]; then
		fail "$name" "not built ($prog)"
		continue
	fi
	out=$("$prog" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			fail "$name" "exited with status $status"
		fi
	else
		printf '%s\n' "$last"
		fail "$name" "crashed or printed no counts (status $status)"
	fi
done

for tile in tests/ir/golden/*.tile; do
	[ -f "$tile" ] || continue
	name="ir/golden/$(basename "$tile")"
	expected="${tile%.tile}.expected"
	args=$(head -n 1 "$tile" | sed -n 's|^// blkc: ||p')
	if [ -z "$args" ]; then
		fail "$name" "first line is not '// blkc: ARGS'"
		continue
	fi
	if [ ! -x "$blkc" ]; then
		fail "$name" "no blkc ($blkc)"
		continue
	fi
	# shellcheck disable=SC2086 # ARGS are words
	got=$("$blkc" --color=never $args "$tile" 2>&1)
	if [ "${BLK_UPDATE_GOLDEN:-0}" = 1 ]; then
		printf '%s\n' "$got" >"$expected"
		ok "$name (written)"
	elif [ ! -f "$expected" ]; then
		fail "$name" "no $expected"
	elif [ "$got" == "$(cat "$expected")" ]; then
		ok "$name"
	else
		fail "$name" "output differs from $(basename "$expected")"
		diff <(printf '%s\n' "$got") "$expected" | head -n 20
	fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
