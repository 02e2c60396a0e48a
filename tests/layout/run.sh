#!/usr/bin/env bash
# tests/layout: the source tree keeps the shape docs/compiler.md describes.
#  - no source file (lang/, compiler/, runtime/) over 1,500 lines;
#  - no function over 250 lines;
#  - no include loop among the project's headers;
#  - the stages' dependencies go one way: lang/ knows nothing of compiler/,
#    runtime/ or LLVM; compiler/ir, irgen, interp and gpu know nothing of
#    LLVM, the compile driver (compiler/pipeline/) or the runtime; lower/
#    knows nothing of the driver; compiler/ never includes runtime/ headers but
#    blk.h; runtime/driver.c knows only the driver (driver.h);
#  - a folder's internal header (NAME_int.h) is included from that folder alone;
#  - the library's .c files have distinct names (libblk.a's members).
# usage: tests/layout/run.sh [BUILD_DIR]   (the build is not used)
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }

mapfile -t srcs < <(find lang compiler runtime \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.re' \) | LC_ALL=C sort)

# file sizes
big=$(for f in "${srcs[@]}"; do n=$(wc -l <"$f"); [ "$n" -gt 1500 ] && echo "$f ($n lines)"; done)
[ -z "$big" ] && ok "no source file over 1,500 lines (${#srcs[@]} files)" || bad "files over 1,500 lines" "$big"

# function sizes: a function starts at a line in column 0 that ends with
# ') {' or at a '{' alone in column 0, and ends at the next '}' in column 0
long=$(awk '
	FNR == 1 { start = 0 }
	/^[A-Za-z_].*\)[ ]*\{[ ]*$/ && !/^(if|for|while|switch|else|do)\b/ { start = FNR; name = $0; next }
	/^\{/ { if (!start) { start = FNR; name = prev } }
	/^\}/ { if (start) { if (FNR - start > 250) printf "%s:%d: %d lines: %s\n", FILENAME, start, FNR - start, name; start = 0 } }
	{ prev = $0 }' $(printf '%s\n' "${srcs[@]}" | grep '\.c$'))
[ -z "$long" ] && ok "no function over 250 lines" || bad "functions over 250 lines" "$long"

# libblk.a names its members by file name alone: two sources of the library
# with one name would make members that `ar x` or `ar r` confuse
dups=$(printf '%s\n' "${srcs[@]}" | grep '\.c$' | grep -v '^compiler/blkc/' | xargs -n1 basename | sort | uniq -d)
[ -z "$dups" ] && ok "the library's source files have distinct names (libblk.a members)" || bad "source files of one name" "$dups"

# the project's includes: FILE -> the header it names, resolved as the
# compiler does (beside the file, then -Ilang -Icompiler -Iruntime)
resolve() { # includer, name
	local d
	for d in "$(dirname "$1")" lang compiler runtime; do
		[ -f "$d/$2" ] && { realpath --relative-to=. "$d/$2"; return; }
	done
}
edges=$(for f in "${srcs[@]}"; do
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		r=$(resolve "$f" "$h")
		[ -n "$r" ] && echo "$f $r"
	done
done)

# include loops: tsort reports a cycle among the headers
cyc=$(echo "$edges" | grep '\.h [^ ]*\.h$' | tsort 2>&1 >/dev/null)
[ -z "$cyc" ] && ok "no include loop among the headers" || bad "include loop" "$cyc"

# dependencies between stages
viol=$(
	for f in "${srcs[@]}"; do
		case $f in
		lang/*) grep -HnE '#include ("(ir|irgen|interp|gpu|lower|pipeline|blkc)/|"(blk|runtime|driver)\.h"|<llvm-c/)' "$f" ;;
		compiler/ir/* | compiler/irgen/* | compiler/interp/* | compiler/gpu/*)
			grep -HnE '#include ("lower/|"pipeline/|"blkc/|"(runtime|driver)\.h"|<llvm-c/)' "$f" ;;
		compiler/lower/*) grep -HnE '#include ("pipeline/|"blkc/|"(runtime|driver)\.h")' "$f" ;;
		compiler/*) grep -HnE '#include "(runtime|driver)\.h"' "$f" ;;
		runtime/driver.c) grep -HnE '#include "' "$f" | grep -v '"driver\.h"' ;;
		esac
	done
)
[ -z "$viol" ] && ok "stage dependencies go one way (lang, then the LLVM-free stages, then lower, the compile driver, then runtime)" ||
	bad "a stage includes what it must not know" "$viol"

# internal headers stay in their folder
leak=$(echo "$edges" | awk '$2 ~ /_int\.h$/ { d1 = $1; sub(/\/[^\/]*$/, "", d1); d2 = $2; sub(/\/[^\/]*$/, "", d2); if (d1 != d2) print $1 " includes " $2 }')
[ -z "$leak" ] && ok "internal headers (*_int.h) are included from their own folder alone" ||
	bad "an internal header is used outside its folder" "$leak"

# one public header a compiler stage, named after its folder
missing=$(for d in compiler/*/; do
	d=${d%/}
	n=$(basename "$d")
	[ "$n" = blkc ] && continue
	[ -f "$d/$n.h" ] || echo "$d has no $n.h"
done)
[ -z "$missing" ] && ok "each compiler stage has its header (compiler/STAGE/STAGE.h)" || bad "stage headers" "$missing"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
