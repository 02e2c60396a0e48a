#!/usr/bin/env bash
# tests/limits: compiling hostile source ends quickly with an error naming
# what was too big, and imports cannot read files outside their folders
# (issue 27, items 3, 4, 5 and 10). Each compile runs under `timeout 20`: a
# case that runs past it (status 124) fails.
#  - shapes whose element count overflows 64 bits (tests/lang/
#    err_sema_shape_overflow_*.tile) through check, --emit=ptx and run;
#  - an import diamond 40 levels deep (generated here), which a lookup that
#    walks every path takes 2^40 steps over;
#  - an inlining bomb (fns calling fns 4 times, each unrolling a loop), a
#    static_range nest that makes no IR, one that eats memory: each stops at
#    its limit (IR ops, source nodes, compiler memory) with a message naming
#    the fn or kernel and the limit;
#  - import confinement: "..", absolute paths, links leading out, a local
#    std/ folder, a file that is not .tile; blkc --allow-any-import.
# usage: tests/limits/run.sh BUILD_DIR
set -u
build=${1:-build}
build=$(cd "$build" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
blkc=$build/blkc
export NO_COLOR=1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }

# expect NAME RC NEEDLE COMMAND...: COMMAND (under timeout 20) exits RC and
# its stderr holds NEEDLE (a fixed string; empty: anything)
expect() {
	local name=$1 want=$2 needle=$3
	shift 3
	timeout 20 "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		bad "$name" "ran past 20 s"
	elif [ $rc != "$want" ]; then
		bad "$name" "exited $rc, expected $want: $(head -c 600 "$tmp/err")"
	elif [ -n "$needle" ] && ! grep -qF -- "$needle" "$tmp/err"; then
		bad "$name" "no '$needle' in: $(head -c 600 "$tmp/err")"
	else
		ok "$name"
	fi
}

# ---- shapes --------------------------------------------------------------------------
for f in tests/lang/err_sema_shape_overflow_*.tile; do
	n=$(basename "$f" .tile)
	msg="has 18446744073709551616 elements; the limit is 1048576"
	expect "$n: check" 1 "$msg" "$blkc" "$f"
	expect "$n: --emit=ptx" 1 "$msg" "$blkc" --emit=ptx -o "$tmp/o.ptx" "$f"
	expect "$n: run" 1 "$msg" "$blkc" run "$f" x=16
done

# ---- an import diamond ------------------------------------------------------------------
# level i has a$i and b$i, each importing a$((i+1)) and b$((i+1)); the last
# level declares fa and fb. Every name the kernel uses that is not declared
# (store, load: builtins) is looked up through all of it.
diamond() { # DIR N
	mkdir -p "$1"
	for i in $(seq 1 "$2"); do
		for s in a b; do
			if [ "$i" = "$2" ]; then
				printf 'fn f%s(x: f32) -> f32 { return x; }\n' $s >"$1/$s$i.tile"
			else
				printf 'import "a%d.tile";\nimport "b%d.tile";\n' $((i + 1)) $((i + 1)) >"$1/$s$i.tile"
			fi
		done
	done
	printf 'import "a1.tile";\nimport "b1.tile";\nkernel k(x: *f32) {\n    store(x, fa(load(x)) + fb(2.0));\n}\n' >"$1/main.tile"
	printf 'import "a1.tile";\nkernel k(x: *f32) {\n    store(x, fc(1.0));\n}\n' >"$1/missing.tile"
}
diamond "$tmp/diamond" 40
expect "import diamond 40 deep: check" 0 "" "$blkc" "$tmp/diamond/main.tile"
expect "import diamond 40 deep: --emit=ptx" 0 "" "$blkc" --emit=ptx -o "$tmp/d.ptx" "$tmp/diamond/main.tile"
expect "import diamond 40 deep: an undeclared name" 1 "call to undeclared function 'fc'" "$blkc" "$tmp/diamond/missing.tile"

# ---- inlining and unrolling -------------------------------------------------------------
# f0 unrolls 4096 steps; f$i calls f$((i-1)) 4 times: 4^6 calls of f0 (the
# call limit, 16384 calls, is not what stops it)
{
	printf 'fn f0(x) {\n    var y = x;\n    for i in static_range(0, 4096) {\n        y = y * 1.5 + 0.25;\n    }\n    return y;\n}\n'
	for i in 1 2 3 4 5 6; do
		j=$((i - 1))
		printf 'fn f%d(x) {\n    return f%d(x) + f%d(x) + f%d(x) + f%d(x);\n}\n' $i $j $j $j $j
	done
	printf 'kernel k(out: *f32, n: f32) {\n    store(out, f6(n));\n}\n'
} >"$tmp/bomb.tile"
msg="inlining 'f6' (with the fns it calls and the static_range loops it unrolls) goes over the limit of 500000 IR ops in one kernel"
expect "inlining bomb: check" 1 "$msg" "$blkc" "$tmp/bomb.tile"
expect "inlining bomb: --emit=ptx" 1 "$msg" "$blkc" --emit=ptx -o "$tmp/b.ptx" "$tmp/bomb.tile"
expect "inlining bomb: the call it was inlined for" 1 "note: in this call of 'f6'" "$blkc" "$tmp/bomb.tile"

# 4096^3 iterations of constant code: no IR, but source nodes
{
	printf 'kernel k(out: *i32) {\n'
	printf '    for i in static_range(0, 4096) {\n        for j in static_range(0, 4096) {\n'
	printf '            for l in static_range(0, 4096) {\n'
	printf '                static_assert(1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 == 16, "x");\n'
	printf '            }\n        }\n    }\n    store(out, 1);\n}\n'
} >"$tmp/nodes.tile"
expect "static_range nest: the source-node limit" 1 \
	"the kernel 'k' goes over the limit of 2000000 source nodes generated into one kernel" "$blkc" "$tmp/nodes.tile"
# a variable carried through 4096^3 constant iterations: memory
{
	printf 'kernel k(out: *i32) {\n    var c = 0;\n'
	printf '    for i in static_range(0, 4096) {\n        for j in static_range(0, 4096) {\n'
	printf '            for l in static_range(0, 4096) {\n                c = c + 1;\n            }\n        }\n    }\n'
	printf '    store(out, c);\n}\n'
} >"$tmp/memory.tile"
expect "static_range nest: the memory limit" 1 \
	"the kernel 'k' goes over the limit of 512 MiB of compiler memory for one kernel" "$blkc" "$tmp/memory.tile"
# the same through a fn names the fn
sed 's/^kernel k(out: \*i32) {$/fn grow() -> i32 {/; s/    store(out, c);/    return c;/' "$tmp/memory.tile" >"$tmp/memory_fn.tile"
printf 'kernel k(out: *i32) {\n    store(out, grow());\n}\n' >>"$tmp/memory_fn.tile"
expect "memory limit inside a fn names it" 1 "inlining 'grow' (with the fns it calls" "$blkc" "$tmp/memory_fn.tile"

# a grid clause calling a fn that unrolls 4096^3 constant steps
{
	printf 'fn blocks() -> i32 {\n    var c = 0;\n'
	printf '    for i in static_range(0, 4096) {\n        for j in static_range(0, 4096) {\n'
	printf '            for l in static_range(0, 4096) {\n                c = c + 1;\n            }\n        }\n    }\n'
	printf '    return c;\n}\n'
	printf 'kernel k(out: *i32) grid(blocks()) {\n    store(out, 1);\n}\n'
} >"$tmp/grid.tile"
expect "a grid clause inlining a fn that goes over" 1 "inlining 'blocks' (with the fns it calls" \
	"$blkc" run "$tmp/grid.tile" out=1

# ---- import confinement -----------------------------------------------------------------
p=$tmp/conf/proj
mkdir -p "$p/std" "$p/lib" "$tmp/conf/inc"
printf 'fn outside() -> f32 { return 1.0; }\n' >"$tmp/conf/secret.tile"
printf 'fn local_marker() -> f32 { return 1.0; }\n' >"$p/std/math.tile"
printf 'fn in_lib() -> f32 { return 2.0; }\n' >"$p/lib/util.tile"
printf 'fn from_inc() -> f32 { return 3.0; }\n' >"$tmp/conf/inc/inc.tile"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$tmp/conf/passwd"
ln -s ../secret.tile "$p/link.tile"
use() { # NAME IMPORT CALL: a file importing IMPORT, its kernel storing CALL
	printf 'import "%s";\nkernel k(x: *f32) {\n    store(x, %s);\n}\n' "$2" "$3" >"$p/t_$1.tile"
}
use up "../secret.tile" "outside()"
use link "link.tile" "outside()"
use abs "$tmp/conf/secret.tile" "outside()"
use passwd "../passwd" "1.0"
use passwd_abs "$tmp/conf/passwd" "1.0"
use std_local "std/math.tile" "local_marker()"
use std_lib "std/math.tile" "softmax(zeros((4, 4), f32), 1)[0, 0]"
use inside "lib/../lib/util.tile" "in_lib()"
use inc "inc.tile" "from_inc()"
leave="leads outside the folders imports may read"
expect "import '../x.tile' leaving the folder is refused" 1 "$leave" "$blkc" "$p/t_up.tile"
expect "import of a link leading out is refused" 1 "$leave" "$blkc" "$p/t_link.tile"
expect "absolute import is refused" 1 "is absolute: imports are relative" "$blkc" "$p/t_abs.tile"
expect "import of a file that is not .tile" 1 "cannot import '../passwd': only .tile files can be imported" \
	"$blkc" "$p/t_passwd.tile"
if grep -q "root:" "$tmp/err"; then bad "the non-.tile file's lines are not shown" "$(cat "$tmp/err")"; else ok "the non-.tile file's lines are not shown"; fi
expect "absolute non-.tile import, even with --allow-any-import" 1 "only .tile files can be imported" \
	"$blkc" --allow-any-import "$p/t_passwd_abs.tile"
if grep -q "root:" "$tmp/err"; then bad "... and its lines are not shown" "$(cat "$tmp/err")"; else ok "... and its lines are not shown"; fi
expect "std/ is the standard library, not a local std/ folder" 1 "call to undeclared function 'local_marker'" \
	"$blkc" "$p/t_std_local.tile"
expect "std/math.tile beside a local std/ folder" 0 "" "$blkc" "$p/t_std_lib.tile"
expect "'..' staying inside the folder" 0 "" "$blkc" "$p/t_inside.tile"
expect "a -I folder" 0 "" "$blkc" -I "$tmp/conf/inc" "$p/t_inc.tile"
expect "'..' leaving a -I folder is refused too" 1 "$leave" "$blkc" -I "$tmp/conf/inc" "$p/t_up.tile"
for n in up link abs; do
	expect "--allow-any-import: $n" 0 "" "$blkc" --allow-any-import "$p/t_$n.tile"
done
grep -q -- "--allow-any-import" <<<"$("$blkc" --help)" && ok "blkc --help names --allow-any-import" ||
	bad "blkc --help names --allow-any-import"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
