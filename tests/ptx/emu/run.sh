#!/usr/bin/env bash
# tests/ptx/emu/run.sh BUILD_DIR: sort and topk networks, and histograms of
# many bins, as the GPU back end emits them, run on this machine's CPU. Each case's kernel is compiled to
# LLVM IR (blkc --emit=llvm), made CPU IR by to_cpu.py, compiled by the
# clang of the LLVM that blk is built with, and run by sort_harness.c with
# one thread a GPU thread (shuffles and barriers emulated), its results
# checked against a stable sort. The cases are networks too large to unroll
# (lower/sort.c runs them as loops over local memory), one unrolled one as
# a check of the harness; the histograms count in parts of the bins
# (hist_harness.c). Only the NVPTX code generation is not covered.
# A line per case ("ok" or "FAIL"), then "N passed, N failed"; where there
# is no clang or opt of that LLVM, one line says so and nothing is counted.
set -u
build=$(cd "${1:-build}" && pwd) || exit 2
cd "$(dirname "$0")" || exit 2
libdir=$(sed -n 's/^LLVM_LIBDIR := //p' "$build/config.mk" 2>/dev/null)
bin=${libdir%/lib}/bin
if [ ! -x "$bin/clang" ] || [ ! -x "$bin/opt" ] || ! command -v python3 >/dev/null; then
	echo "note: no clang and opt in '$bin' (or no python3): the sort networks are not run on the CPU"
	echo "0 passed, 0 failed"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
# TYPE CTYPE ROWS COLS AXIS DESCENDING K(0 sort with indices, -1 values alone, else topk) WARPS LOOPS(1: must loop)
while read -r tn ct rows cols axis desc kk warps loops; do
	what="$tn $([ "$rows" = 0 ] && echo "[$cols]" || echo "[$rows, $cols] axis $axis") $([ "$kk" -gt 0 ] && echo "topk $kk" || echo "sort$([ "$desc" = true ] && echo ' descending')$([ "$kk" = -1 ] && echo ', values alone')") on $warps warp(s)"
	if [ "$rows" = 0 ]; then offs="arange(0, $cols)"; else offs="arange(0, $rows)[:, None] * $cols + arange(0, $cols)[None, :]"; fi
	if [ "$kk" = 0 ]; then
		body="let (s, i) = sort(load(x + offs), $axis, $desc, return_indices = true);
    store(v + offs, s);
    store(vi + offs, i);"
	elif [ "$kk" = -1 ]; then
		body="store(v + offs, sort(load(x + offs), $axis, $desc));"
	else
		if [ "$rows" = 0 ]; then ro="arange(0, $kk)"
		elif [ "$axis" = 0 ]; then ro="arange(0, $kk)[:, None] * $cols + arange(0, $cols)[None, :]"
		else ro="arange(0, $rows)[:, None] * $kk + arange(0, $kk)[None, :]"; fi
		body="let (t, i) = topk(load(x + offs), $kk, axis = $axis);
    let ro = $ro;
    store(v + ro, t);
    store(vi + ro, i);"
	fi
	printf 'kernel k(x: *%s, v: *%s, vi: *i32) {\n    let offs = %s;\n    %s\n}\n' "$tn" "$tn" "$offs" "$body" >"$tmp/k.tile"
	if ! "$build/blkc" --emit=llvm -D num_warps="$warps" "$tmp/k.tile" -o "$tmp/k.ll" 2>"$tmp/err"; then
		echo "FAIL $what: blkc: $(head -3 "$tmp/err")"
		fail=$((fail + 1))
		continue
	fi
	if [ "$(grep -c 'runs as loops' "$tmp/err")" != "$loops" ]; then
		echo "FAIL $what: the network should $([ "$loops" = 1 ] || echo 'not ')run as loops: $(head -c 300 "$tmp/err")"
		fail=$((fail + 1))
		continue
	fi
	if ! python3 to_cpu.py "$tmp/k.ll" "$tmp/cpu.ll" 2>"$tmp/err" ||
		! "$bin/opt" -strip-debug -S "$tmp/cpu.ll" -o "$tmp/cpu2.ll" 2>>"$tmp/err" ||
		! "$bin/clang" -O1 -Wno-override-module -c "$tmp/cpu2.ll" -o "$tmp/k.o" 2>>"$tmp/err" ||
		! ${CC:-cc} -O1 -DTY="$ct" -DR="$rows" -DC="$cols" -DAXIS="$axis" -DDESC="$([ "$desc" = true ] && echo 1 || echo 0)" \
			-DK="$kk" -DT=$((32 * warps)) sort_harness.c "$tmp/k.o" -lpthread -o "$tmp/h" 2>>"$tmp/err"; then
		echo "FAIL $what: building it for the CPU: $(head -3 "$tmp/err")"
		fail=$((fail + 1))
		continue
	fi
	out=$("$tmp/h" 2>&1)
	if [ $? -eq 0 ]; then
		echo "ok   $what$([ "$loops" = 1 ] && echo ' (loops)' || echo ' (unrolled)'): $out"
		pass=$((pass + 1))
	else
		echo "FAIL $what: $(echo "$out" | head -6 | tr '\n' ' ')"
		fail=$((fail + 1))
	fi
done <<'EOF'
f32 float 0 1024 0 true 0 2 0
f32 float 0 8192 0 true 0 2 1
f32 float 0 8192 0 false -1 2 1
f64 double 0 4096 0 false 0 1 1
u16 uint16_t 2 8192 1 false 0 2 1
i32 int32_t 2048 8 0 true 0 2 1
f32 float 0 32768 0 true 64 4 1
i32 int32_t 16384 4 0 false 64 4 1
EOF
# histograms of more bins than shared memory counts at once (in parts)
for spec in "4096 65536 4" "1024 131072 4" "512 32768 2"; do
	read -r n bins warps <<<"$spec"
	what="histogram of $n i32 into $bins bins on $warps warp(s)"
	printf 'kernel k(x: *i32, out: *i32) {\n    let offs = arange(0, %s);\n    let h = histogram(load(x + offs), %s, mask = (offs %% 3) != 0);\n    store(out + arange(0, %s), h);\n}\n' \
		"$n" "$bins" "$bins" >"$tmp/h.tile"
	if ! "$build/blkc" --emit=llvm -D num_warps="$warps" "$tmp/h.tile" -o "$tmp/h.ll" 2>"$tmp/err" ||
		! python3 to_cpu.py "$tmp/h.ll" "$tmp/hc.ll" 2>>"$tmp/err" ||
		! "$bin/opt" -strip-debug -S "$tmp/hc.ll" -o "$tmp/hc2.ll" 2>>"$tmp/err" ||
		! "$bin/clang" -O1 -Wno-override-module -c "$tmp/hc2.ll" -o "$tmp/h.o" 2>>"$tmp/err" ||
		! ${CC:-cc} -O1 -DN="$n" -DBINS="$bins" -DT=$((32 * warps)) hist_harness.c "$tmp/h.o" -lpthread -o "$tmp/hh" 2>>"$tmp/err"; then
		echo "FAIL $what: building it for the CPU: $(head -3 "$tmp/err")"
		fail=$((fail + 1))
		continue
	fi
	out=$("$tmp/hh" 2>&1)
	if [ $? -eq 0 ]; then
		echo "ok   $what: $out"
		pass=$((pass + 1))
	else
		echo "FAIL $what: $(echo "$out" | head -6 | tr '\n' ' ')"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
