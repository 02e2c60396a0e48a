#!/usr/bin/env bash
# tests/layout: the source tree keeps the shape docs/compiler.md describes.
#  - no source file (lang/, compiler/, runtime/, blkc/) over 1,500 lines;
#  - no function over 250 lines;
#  - no include loop among the project's headers;
#  - the stages' dependencies go one way: lang/ knows nothing of compiler/,
#    runtime/ or LLVM; compiler/ir, irgen, interp and gpu know nothing of
#    LLVM, the compile driver (compiler/pipeline/) or the runtime; lower/
#    knows nothing of the driver; compiler/ never includes runtime/ headers but
#    blk.h; runtime/driver.c knows only the driver (driver.h);
#  - the stages stand in order: a file includes headers of its own stage and
#    of the stages before it alone, by this order (a stage, then what it may
#    include):
#      lang:     lang
#      ir:       lang ir                  (so ir/ never includes gpu/ or lower/)
#      irgen:    lang ir irgen
#      interp:   lang ir irgen interp
#      gpu:      lang ir gpu
#      lower:    lang ir gpu lower
#      pipeline: lang ir irgen interp gpu lower pipeline
#      runtime:  every stage above, and runtime
#      blkc:     every stage
#    (a header's stage is its folder: lang/, compiler/STAGE/, runtime/, blkc/:
#    the command line, a client of the runtime);
#  - a folder's internal header (NAME_int.h) is included from that folder alone;
#  - the library's .c files have distinct names (libblk.a's members), but for
#    the interpreter's files named as lowering's on purpose (interp/X.c beside
#    lower/X.c: one op family, two back ends); libblk.a is made afresh
#    (Makefile: rm -f, then ar rcs), so those members do not replace each other;
#  - docs/compiler.md's map names every source file: each file DIR/NAME of
#    lang/, compiler/*/, runtime/ and blkc/ (.c, .h, .y, .re) appears as `NAME`, in
#    backticks, in the map table's row whose first cell is `DIR/`.
# usage: tests/layout/run.sh [BUILD_DIR]   (the build is not used)
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }

mapfile -t srcs < <(find lang compiler runtime blkc \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.re' \) | LC_ALL=C sort)

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
dups=$(printf '%s\n' "${srcs[@]}" | grep '\.c$' | grep -v '^blkc/' |
	awk '{ n = $0; sub(/.*\//, "", n); print n, $0 }' | sort |
	awk '{ if ($1 == p) print pf " and " $2; p = $1; pf = $2 }' |
	grep -vE '^compiler/interp/([a-z_]+)\.c and compiler/lower/\1\.c$')
[ -z "$dups" ] && ok "the library's source files have distinct names (libblk.a members; interp/X.c mirrors lower/X.c)" ||
	bad "source files of one name" "$dups"
grep -A1 -F '$(BUILD)/libblk.a:' Makefile | grep -q 'rm -f \$@' && ok "libblk.a is made afresh (members of one name all kept)" ||
	bad "libblk.a" "the Makefile's rule does not remove the archive before ar rcs"

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

# the stages in order: each stage, then the stages it may include
stage_of() { # a path: its stage (lang, ir, ..., runtime, blkc)
	case $1 in
	lang/*) echo lang ;;
	compiler/*/*) d=${1#compiler/}; echo "${d%%/*}" ;;
	runtime/*) echo runtime ;;
	blkc/*) echo blkc ;;
	esac
}
may_include() { # a stage: the stages it may include
	case $1 in
	lang) echo lang ;;
	ir) echo lang ir ;;
	irgen) echo lang ir irgen ;;
	interp) echo lang ir irgen interp ;;
	gpu) echo lang ir gpu ;;
	lower) echo lang ir gpu lower ;;
	pipeline) echo lang ir irgen interp gpu lower pipeline ;;
	runtime) echo lang ir irgen interp gpu lower pipeline runtime ;;
	blkc) echo lang ir irgen interp gpu lower pipeline runtime blkc ;;
	*) echo "?" ;;
	esac
}
order=$(echo "$edges" | while read -r f h; do
	[ -n "$f" ] || continue
	sf=$(stage_of "$f") sh=$(stage_of "$h")
	[ -n "$sh" ] || continue
	case " $(may_include "$sf") " in
	*" $sh "*) ;;
	*) echo "$f ($sf) includes $h ($sh)" ;;
	esac
done)
[ -z "$order" ] && ok "the stages stand in order (ir before irgen before interp; ir before gpu before lower before pipeline, runtime, blkc)" ||
	bad "a stage includes a later one" "$order"

# docs/compiler.md's map names every source file in its folder's row
map=$(awk '/^## The map/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' docs/compiler.md)
unnamed=$(for f in "${srcs[@]}"; do
	d=${f%/*}/ n=${f##*/}
	row=$(echo "$map" | grep -F "| \`$d\` |")
	if [ -z "$row" ]; then
		echo "$f: no row for \`$d\`"
	elif ! echo "$row" | grep -qF "\`$n\`"; then
		echo "$f: not in \`$d\`'s row"
	fi
done)
[ -z "$unnamed" ] && ok "docs/compiler.md's map names every source file (${#srcs[@]})" || bad "files the map does not name" "$unnamed"

# internal headers stay in their folder
leak=$(echo "$edges" | awk '$2 ~ /_int\.h$/ { d1 = $1; sub(/\/[^\/]*$/, "", d1); d2 = $2; sub(/\/[^\/]*$/, "", d2); if (d1 != d2) print $1 " includes " $2 }')
[ -z "$leak" ] && ok "internal headers (*_int.h) are included from their own folder alone" ||
	bad "an internal header is used outside its folder" "$leak"

# one public header a compiler stage, named after its folder
missing=$(for d in compiler/*/; do
	d=${d%/}
	n=$(basename "$d")
	[ -f "$d/$n.h" ] || echo "$d has no $n.h"
done)
[ -z "$missing" ] && ok "each compiler stage has its header (compiler/STAGE/STAGE.h)" || bad "stage headers" "$missing"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
