#!/usr/bin/env bash
# tests/cli: the command line beyond compiling (blkc --time, bench, tune,
# --emit=cubin, --emit=c), without a GPU.
#  - help texts name the commands and options;
#  - --time prints every phase of the compilation it ran;
#  - --emit=cubin writes an ELF cubin where ptxas is found, and a clear error
#    where none is (PATH and CUDA_HOME pointed at nothing);
#  - --emit=c of every example and of tests/cli/kernels compiles with
#    gcc -c -Wall -Werror (and -std=c11 -pedantic -Wextra) with no CUDA header,
#    the header also as C++; the names, const values and checks are right;
#    the C runs against fake_libcuda.c (a stand-in libcuda.so.1: the cubin,
#    the PTX fallback, each parameter's bytes, asserts, unload); the example
#    examples/aot builds;
#  - blkc bench and blkc tune run on the interpreter and write tables, CSV,
#    JSON (python3 -m json.tool parses it) and SVG (python3's XML parser);
#  - on the two-GPU stand-in of tests/runtime: tune --devices, and the
#    configs tune prunes before timing (kernels/prune.tile), --no-prune.
# usage: tests/cli/run.sh BUILD_DIR
set -u
build=${1:-build}
build=$(cd "$build" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
blkc=$build/blkc
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }
check() { # check NAME COMMAND...: ok when the command succeeds
	local name=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then ok "$name"; else bad "$name" "$(head -c 600 "$tmp/check.out")"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BLK_BACKEND=interpreter # bench and tune on the interpreter, even where a GPU is
cc=${CC:-cc}
command -v "$cc" >/dev/null || cc=gcc
ptxas=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })
have_python=0
command -v python3 >/dev/null && have_python=1

# ---- help ------------------------------------------------------------------------
out=$("$blkc" --help)
check "blkc --help: bench, tune, --time, --emit=cubin and c" \
	bash -c 'for w in "blkc bench" "blkc tune" "--time" "cubin" "  c  "; do grep -qF -- "$w" <<<"$1" || { echo "no $w"; exit 1; }; done' _ "$out"
for cmd in run bench tune; do
	if out=$("$blkc" $cmd --help 2>&1) && grep -q "^usage: blkc $cmd" <<<"$out"; then
		ok "blkc $cmd --help"
	else
		bad "blkc $cmd --help" "$out"
	fi
done
grep -q -- "--sweep" <<<"$("$blkc" tune --help)" && grep -q -- "--reps" <<<"$("$blkc" bench --help)" &&
	ok "tune --help names --sweep, bench --help --reps" || bad "tune/bench --help options"

# ---- --time ------------------------------------------------------------------------
phases_ptx=("parse+imports" "irgen" "passes" "llvm lower+opt" "ptx emission" "in process" "wall")
if "$blkc" --time --emit=ptx examples/softmax.tile -o "$tmp/softmax.ptx" 2>"$tmp/time.err" && [ -s "$tmp/softmax.ptx" ]; then
	missing=""
	for p in "${phases_ptx[@]}"; do
		grep -qE "^  $(sed 's/[+]/[+]/g' <<<"$p") +[0-9]+\.[0-9]{3} ms$" "$tmp/time.err" || missing="$missing '$p'"
	done
	[ -z "$missing" ] && grep -q "^blkc: time: examples/softmax.tile, 1 kernel variant, sm_90$" "$tmp/time.err" &&
		ok "--time --emit=ptx: every phase" || bad "--time --emit=ptx: every phase" "missing$missing: $(cat "$tmp/time.err")"
	# the PTX is the same with and without --time
	"$blkc" --emit=ptx examples/softmax.tile -o "$tmp/softmax2.ptx" && cmp -s "$tmp/softmax.ptx" "$tmp/softmax2.ptx" &&
		ok "--time leaves the output alone" || bad "--time leaves the output alone"
else
	bad "--time --emit=ptx" "$(cat "$tmp/time.err")"
fi
# --time=N: N compilations in one process, each phase's median; the output
# written once and the same; diagnostics printed once; a bad N refused
if "$blkc" --time=5 --emit=ptx examples/softmax.tile -o "$tmp/softmax5.ptx" 2>"$tmp/time5.err"; then
	grep -q "^blkc: time: examples/softmax.tile, 1 kernel variant, sm_90, medians of 5 runs$" "$tmp/time5.err" &&
		[ "$(grep -c "^  ptx emission " "$tmp/time5.err")" = 1 ] && cmp -s "$tmp/softmax.ptx" "$tmp/softmax5.ptx" &&
		ok "--time=5: medians of 5 runs, the output once and the same" || bad "--time=5" "$(cat "$tmp/time5.err")"
else
	bad "--time=5 --emit=ptx" "$(cat "$tmp/time5.err")"
fi
printf 'kernel k(x: *f32) {\n    1 + 2;\n    store(x, 1.0);\n}\n' >"$tmp/warn.tile"
"$blkc" --time=3 "$tmp/warn.tile" 2>"$tmp/time3.err"
[ "$(grep -c "warning" "$tmp/time3.err")" = 1 ] &&
	grep -q "medians of 3 runs" "$tmp/time3.err" && ok "--time=3: each diagnostic once" || bad "--time=3 diagnostics" "$(cat "$tmp/time3.err")"
# standard input can be read once: --time=N compiles it once, and the PTX
# is the file's
if "$blkc" --time=3 --emit=ptx - <examples/softmax.tile >"$tmp/stdin.ptx" 2>"$tmp/stdin.err" &&
	grep -q '^\.visible \.entry softmax' "$tmp/stdin.ptx" &&
	grep -q "^blkc: time: -, 1 kernel variant, sm_90$" "$tmp/stdin.err"; then
	ok "--time=3 on standard input: one compilation, its PTX"
else
	bad "--time=3 on standard input" "$(cat "$tmp/stdin.err")"
fi
for bad_n in 0 x -2 3x; do
	if "$blkc" --time=$bad_n examples/softmax.tile 2>"$tmp/badn.err"; then
		bad "--time=$bad_n refused"
	else
		grep -q "expected a number of runs" "$tmp/badn.err" && ok "--time=$bad_n refused" || bad "--time=$bad_n" "$(cat "$tmp/badn.err")"
	fi
done
if "$blkc" --time examples/matmul.tile 2>"$tmp/time.err"; then
	grep -q "^blkc: time: examples/matmul.tile, 4 kernel variants$" "$tmp/time.err" && grep -q "^  passes " "$tmp/time.err" &&
		! grep -q "llvm" "$tmp/time.err" && ok "--time of a check: the front end's phases, every config" ||
		bad "--time of a check" "$(cat "$tmp/time.err")"
else
	bad "--time of a check" "$(cat "$tmp/time.err")"
fi

# ---- --emit=cubin ------------------------------------------------------------------------
if [ -n "$ptxas" ]; then
	if "$blkc" --time --emit=cubin --arch=sm_90 examples/vector_add.tile -o "$tmp/va.cubin" 2>"$tmp/time.err" &&
		[ "$(head -c 4 "$tmp/va.cubin" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		ok "--emit=cubin: an ELF file from ptxas"
	else
		bad "--emit=cubin" "$(cat "$tmp/time.err")"
	fi
	grep -qE "^  cubin \(ptxas\) +[0-9.]+ ms$" "$tmp/time.err" && ok "--time --emit=cubin: the ptxas phase" ||
		bad "--time --emit=cubin: the ptxas phase" "$(cat "$tmp/time.err")"
else
	echo "note: no ptxas here: --emit=cubin's success is not tested"
fi
# No ptxas: PATH has none, and CUDA_HOME (set) replaces /usr/local/cuda.
if PATH=/nonexistent CUDA_HOME=/nonexistent "$blkc" --emit=cubin examples/vector_add.tile -o "$tmp/none.cubin" 2>"$tmp/err"; then
	bad "--emit=cubin without ptxas fails"
else
	st=$?
	grep -q "^blkc: error: --emit=cubin needs ptxas, the CUDA toolkit's PTX assembler, and there is none on PATH or in /nonexistent/bin$" "$tmp/err" &&
		[ $st -eq 1 ] && ok "--emit=cubin without ptxas: a clear error" || bad "--emit=cubin without ptxas" "status $st: $(cat "$tmp/err")"
fi

# ---- inline_asm_elementwise's pack: each thread's elements a multiple of it -----------------
want="tests/cli/asm/pack_short.tile:5:20: error: inline_asm_elementwise with pack = 4: a thread holds 2 elements of the block, not a multiple of the pack (a larger block, fewer warps or a smaller pack)"
if "$blkc" --emit=ptx --arch=sm_90 --color=never tests/cli/asm/pack_short.tile -o "$tmp/asm.ptx" 2>"$tmp/err"; then
	bad "inline_asm pack 4 over 2 elements a thread is an error"
elif [ "$(head -1 "$tmp/err")" = "$want" ]; then
	ok "inline_asm pack 4 over 2 elements a thread: an error naming both and what to do"
else
	bad "inline_asm pack 4 over 2 elements a thread" "$(cat "$tmp/err")"
fi
"$blkc" --emit=ptx --arch=sm_90 --color=never -D num_warps=1 tests/cli/asm/pack_short.tile -o "$tmp/asm.ptx" 2>"$tmp/err" &&
	[ "$(grep -c 'add.f16x2' "$tmp/asm.ptx")" = 2 ] && ok "... on 1 warp (8 elements a thread): two instances of pack 4" ||
	bad "pack 4 on 1 warp" "$(cat "$tmp/err")"

# ---- resources: blocks too large for registers, register spills -------------------------
# A block needing over 4 x 255 registers a thread lives in local memory: a
# warning naming the kernel, the block, the registers and the cost, and the
# PTX. Past 4096 (ptxas would take minutes), and for a sort network past
# 4 x 255, an error before LLVM runs.
want="tests/cli/resources/too_big.tile:8:16: warning: kernel 'transpose_big': this block (f32[1024, 1024], from load) needs 4096 registers a thread on 8 warps (1048576 elements over 256 threads); a thread has 255: it lives in local memory (about 16 KiB a thread, 4096 KiB a program, spilled by ptxas): correct but slower, and slower to compile; a smaller block or more warps (num_warps) keeps it in registers"
if ! "$blkc" --emit=ptx --arch=sm_90a --color=never -D num_warps=8 tests/cli/resources/too_big.tile -o "$tmp/big.ptx" 2>"$tmp/err"; then
	bad "a block past the registers compiles" "$(cat "$tmp/err")"
elif [ "$(head -1 "$tmp/err")" = "$want" ] && grep -q "ld.global" "$tmp/big.ptx"; then
	ok "a block past the registers: PTX, and a warning naming the kernel, the block and its cost"
else
	bad "a block past the registers" "$(cat "$tmp/err")"
fi
"$blkc" --emit=ptx --arch=sm_90a --color=never -D num_warps=32 tests/cli/resources/too_big.tile -o "$tmp/big.ptx" 2>"$tmp/err"
grep -q "warning: .*needs 1024 registers a thread on 32 warps" "$tmp/err" && ok "... on 32 warps too (1024 a thread)" ||
	bad "too_big on 32 warps" "$(cat "$tmp/err")"
want="tests/cli/resources/too_big.tile:8:16: error: kernel 'transpose_big': this block (f32[1024, 1024], from load) needs 8192 registers a thread on 4 warps (1048576 elements over 128 threads); a thread has 255: past 4096 the compiler would spend minutes spilling it to memory: use a smaller block or more warps (num_warps)"
if "$blkc" --emit=ptx --arch=sm_90a --color=never tests/cli/resources/too_big.tile -o "$tmp/big.ptx" 2>"$tmp/err"; then
	bad "a block far too large for registers is an error"
elif [ "$(head -1 "$tmp/err")" = "$want" ]; then
	ok "on 4 warps (8192 a thread): an error naming the kernel, the block and what to do"
else
	bad "a block far too large for registers" "$(cat "$tmp/err")"
fi
"$blkc" --emit=ptx --arch=sm_90a --color=never -D num_warps=1 tests/cli/resources/too_big.tile -o "$tmp/big.ptx" 2>"$tmp/err"
grep -q "error: .*needs 32768 registers a thread on 1 warp (" "$tmp/err" && ok "... on 1 warp (32768 a thread): the error" ||
	bad "too_big on 1 warp" "$(cat "$tmp/err")"
want="tests/cli/resources/sort_big.tile:7:18: warning: kernel 'sort_big': this sort of a block (i32[262144]) on 4 warps is a network of 350208 word comparisons a thread, which unrolled would take the compiler minutes: it runs as loops over the block in local memory (16 KiB a thread, 2048 KiB a program) and shared memory: correct but slower than in registers; a smaller block or more warps (num_warps) keeps it in registers"
if ! "$blkc" --emit=ptx --arch=sm_90a --color=never tests/cli/resources/sort_big.tile -o "$tmp/big.ptx" 2>"$tmp/err"; then
	bad "a sort network too large to unroll compiles" "$(cat "$tmp/err")"
elif grep -qxF "$want" "$tmp/err" && grep -q 'pragma "nounroll"' "$tmp/big.ptx" && [ "$(grep -c 'shfl.sync' "$tmp/big.ptx")" -lt 100 ]; then
	ok "a sort of 2048 registers a thread: loops (nounroll), and a warning naming the kernel, the block and its cost"
else
	bad "a sort network too large to unroll" "$(cat "$tmp/err")"
fi
if [ -n "$ptxas" ]; then
	if "$blkc" --emit=cubin --arch=sm_90a --color=never tests/cli/resources/spills.tile -o "$tmp/sp.cubin" 2>"$tmp/err" &&
		grep -qE "^warning: kernel 'transpose_256' spills registers for sm_90a: [1-9][0-9]* bytes of spill stores and [1-9][0-9]* bytes of spill loads a thread; a smaller block or more warps \(num_warps\) keeps its values in registers$" "$tmp/err"; then
		ok "--emit=cubin of a kernel that spills: a warning with the kernel and the bytes"
	else
		bad "--emit=cubin spill warning" "$(cat "$tmp/err")"
	fi
	"$blkc" --emit=cubin --arch=sm_90a examples/vector_add.tile -o "$tmp/va.cubin" 2>"$tmp/err"
	[ ! -s "$tmp/err" ] && ok "--emit=cubin of a kernel that does not spill: no warning" ||
		bad "--emit=cubin without spills warns" "$(cat "$tmp/err")"
fi

# ---- --emit=c ------------------------------------------------------------------------
cflags=(-c -Wall -Werror)
strict=(-c -std=c11 -pedantic -Wall -Wextra -Werror)
for tile in examples/*.tile stdlib/nn/attention.tile tests/cli/kernels/*.tile; do
	name=$(basename "$tile" .tile)
	mkdir -p "$tmp/c"
	if ! "$blkc" --emit=c -o "$tmp/c/$name" "$tile" 2>"$tmp/err"; then
		bad "--emit=c $name" "$(head -5 "$tmp/err")"
		continue
	fi
	if grep -qE '#include <cuda' "$tmp/c/$name.c" "$tmp/c/$name.h"; then
		bad "--emit=c $name: no CUDA header"
	elif sed -n '1,/\*\//p' "$tmp/c/$name.c" | grep '%s' >"$tmp/err"; then
		bad "--emit=c $name: a format's %s left in the opening comment" "$(head -3 "$tmp/err")"
	elif ! (cd "$tmp/c" && gcc "${cflags[@]}" "$name.c" -o "$name.o") 2>"$tmp/err"; then
		bad "--emit=c $name: gcc -c -Wall -Werror" "$(head -5 "$tmp/err")"
	elif ! (cd "$tmp/c" && gcc "${strict[@]}" "$name.c" -o "$name.o") 2>"$tmp/err"; then
		bad "--emit=c $name: gcc -std=c11 -pedantic -Wextra -Werror" "$(head -5 "$tmp/err")"
	elif command -v g++ >/dev/null && ! (cd "$tmp/c" && printf '#include "%s.h"\n' "$name" | g++ -x c++ -fsyntax-only -Wall -Werror -) 2>"$tmp/err"; then
		bad "--emit=c $name: the header in C++" "$(head -5 "$tmp/err")"
	else
		ok "--emit=c $name: compiles with gcc -Wall -Werror, no CUDA headers"
	fi
done
h=$tmp/c
grep -q "^blk_status vector_add_launch(CUstream stream, unsigned gx, unsigned gy, unsigned gz,$" "$h/vector_add.h" &&
	grep -q "^blk_status vector_add_load(void);$" "$h/vector_add.h" && grep -q "^void vector_add_unload(void);$" "$h/vector_add.h" &&
	grep -q "^/\* vector_add: BLOCK = 1024$" "$h/vector_add.h" &&
	ok "--emit=c: one kernel is NAME_launch, NAME_load, NAME_unload; its const values shown" ||
	bad "--emit=c: vector_add's names" "$(grep -n 'launch\|load' "$h/vector_add.h")"
n=$(grep -c "^blk_status matmul_[0-3]_launch(" "$h/matmul.h")
[ "$n" = 4 ] && grep -q "^/\* matmul, @autotune config 2: BLOCK_M = 128, BLOCK_N = 64, BLOCK_K = 32, GROUP_M = 8$" "$h/matmul.h" &&
	ok "--emit=c: an @autotune kernel gives NAME_N_launch for each config" || bad "--emit=c: matmul's configs" "$n launch functions"
grep -q "^blk_status types_mix_launch(" "$h/types.h" && grep -q "^blk_status types_fill_launch(" "$h/types.h" &&
	grep -q "^blk_status types_mix_check(CUstream stream);$" "$h/types.h" && ! grep -q "types_fill_check" "$h/types.h" &&
	grep -q "int32_t stream_,$" "$h/types.h" && grep -q "int32_t int_,$" "$h/types.h" && grep -q "float default_);$" "$h/types.h" &&
	ok "--emit=c: several kernels are NAME_KERNEL_launch; _check where asserts are; names C keeps are renamed" ||
	bad "--emit=c: types' names" "$(grep -n 'blk_status' "$h/types.h")"
if "$blkc" --emit=c -D BLOCK=256 --assume=x:16,n:16 -o "$tmp/c/va16" examples/vector_add.tile &&
	grep -q "^/\* vector_add: BLOCK = 256$" "$tmp/c/va16.h" && grep -q "x: \*f32 as CUdeviceptr, a multiple of 16 bytes" "$tmp/c/va16.h" &&
	grep -q 'if ((uint64_t)n % 16u != 0)' "$tmp/c/va16.c" && (cd "$tmp/c" && gcc "${cflags[@]}" va16.c -o va16.o); then
	ok "--emit=c with -D and --assume: the values, the promises checked"
else
	bad "--emit=c with -D and --assume"
fi
# NAME=1: the constant in the kernel, and the launch refuses any other value
if "$blkc" --emit=c -D BLOCK=256 --assume=n=1 -o "$tmp/c/va1" examples/vector_add.tile &&
	grep -q "n: i32 as int32_t, equal to 1" "$tmp/c/va1.h" && grep -q 'if (n != 1)' "$tmp/c/va1.c" &&
	(cd "$tmp/c" && gcc "${cflags[@]}" va1.c -o va1.o); then
	ok "--emit=c with --assume=NAME=1: the launch checks the argument is 1"
else
	bad "--emit=c with --assume=NAME=1"
fi
if ! "$blkc" --assume=n=2 examples/vector_add.tile 2>"$tmp/c/assume2.err" &&
	grep -q "expects NAME:N (a multiple of N, a power of two) or NAME=1, got 'n=2'" "$tmp/c/assume2.err"; then
	ok "--assume=NAME=2 is refused with what it takes"
else
	bad "--assume=NAME=2" "$(cat "$tmp/c/assume2.err")"
fi
if [ -n "$ptxas" ]; then
	grep -q "blk_cubin_0" "$h/vector_add.c" && grep -q "blk_ptx_0" "$h/vector_add.c" &&
		ok "--emit=c with ptxas: the cubin and the PTX embedded" || bad "--emit=c with ptxas: the cubin and the PTX embedded"
fi
if PATH=/nonexistent CUDA_HOME=/nonexistent "$blkc" --emit=c -o "$tmp/c/noptxas" examples/vector_add.tile 2>"$tmp/err" &&
	grep -q "^blkc: note: no ptxas on PATH or in /nonexistent/bin: the C embeds PTX only" "$tmp/err" &&
	! grep -q "blk_cubin_" "$tmp/c/noptxas.c" && (cd "$tmp/c" && gcc "${cflags[@]}" noptxas.c -o noptxas.o); then
	ok "--emit=c without ptxas: PTX only, with a note"
else
	bad "--emit=c without ptxas" "$(cat "$tmp/err")"
fi
"$blkc" --emit=c examples/vector_add.tile 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "give -o NAME" "$tmp/err" && ok "--emit=c without -o: a usage error" || bad "--emit=c without -o" "$(cat "$tmp/err")"
"$blkc" --emit=c -o "$tmp/c/two" examples/vector_add.tile examples/relu.tile 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "one .tile file" "$tmp/err" && ok "--emit=c of two files: a usage error" || bad "--emit=c of two files" "$(cat "$tmp/err")"

# the generated C, run against a stand-in driver
mkdir -p "$tmp/fake"
if ! gcc -shared -fPIC -O1 -Wall -Werror -o "$tmp/fake/libcuda.so.1" tests/cli/fake_libcuda.c 2>"$tmp/err"; then
	bad "fake_libcuda.c builds" "$(head -5 "$tmp/err")"
elif ! gcc -std=c11 -O1 -Wall -Wextra -Werror -I"$h" -o "$tmp/aot_host" tests/cli/aot_host.c "$h/types.c" -ldl -lpthread -lm 2>"$tmp/err"; then
	bad "aot_host.c builds with the generated C" "$(head -5 "$tmp/err")"
else
	modes=("ptx" "assert")
	[ -n "$ptxas" ] && modes=("cubin" "${modes[@]}")
	for mode in "${modes[@]}"; do
		env=(LD_LIBRARY_PATH="$tmp/fake")
		[ "$mode" != cubin ] && env+=(FAKE_CUDA_REJECT_CUBIN=1)
		[ "$mode" = assert ] && env+=(FAKE_CUDA_ASSERT=1)
		env "${env[@]}" "$tmp/aot_host" "$mode" >"$tmp/host.out" 2>&1
		st=$?
		while IFS= read -r line; do
			case $line in
			"ok   "*) ok "${line#ok   } ($mode)" ;;
			"FAIL "*) bad "${line#FAIL } ($mode)" ;;
			*) echo "$line" ;;
			esac
		done <"$tmp/host.out"
		if [ $st -ne 0 ] && ! grep -q "^FAIL" "$tmp/host.out"; then
			bad "aot_host $mode" "exited with status $st"
		fi
	done
fi
# without a driver: a clear error, no crash (only where no real libcuda.so.1 is found)
if ! ldconfig -p 2>/dev/null | grep -q "libcuda.so.1 " && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
	LD_LIBRARY_PATH=/nonexistent "$tmp/aot_host" ptx >"$tmp/host.out" 2>&1
	grep -q "FAIL aot: the fake driver is not the libcuda.so.1 found" "$tmp/host.out" && ok "no driver: the host sees none" ||
		bad "no driver" "$(cat "$tmp/host.out")"
	printf '#include "vector_add.h"\n#include <stdio.h>\n#include <string.h>\nint main(void) { blk_status s = vector_add_load(); puts(vector_add_error()); return !(s == BLK_ERROR_NO_DEVICE && strstr(vector_add_error(), "no CUDA driver")); }\n' >"$tmp/nodrv.c"
	if gcc -std=c11 -Wall -Werror -I"$h" -o "$tmp/nodrv" "$tmp/nodrv.c" "$h/vector_add.c" -ldl -lpthread 2>"$tmp/err" &&
		LD_LIBRARY_PATH=/nonexistent "$tmp/nodrv" >"$tmp/host.out" 2>&1; then
		ok "no driver: NAME_load is BLK_ERROR_NO_DEVICE, NAME_error says why"
	else
		bad "no driver: NAME_load" "$(cat "$tmp/err" "$tmp/host.out")"
	fi
fi
# examples/aot builds (running it needs a GPU)
if make -s -C examples/aot BUILD="$build" OUT="$tmp/aot" >"$tmp/err" 2>&1 && [ -x "$tmp/aot/vadd_demo" ]; then
	ok "examples/aot: blkc --emit=c and cc build vadd_demo"
	LD_LIBRARY_PATH="$tmp/fake" "$tmp/aot/vadd_demo" 1000 >"$tmp/host.out" 2>&1
	grep -q "^vector_add loaded from " "$tmp/host.out" && ok "examples/aot: vadd_demo loads its kernel (stand-in driver: not run)" ||
		bad "examples/aot: vadd_demo loads" "$(cat "$tmp/host.out")"
else
	bad "examples/aot builds" "$(tail -5 "$tmp/err")"
fi

# ---- blkc bench ------------------------------------------------------------------------
args=(tests/cli/kernels/scale.tile x=4096:random out=4096 n=4096 alpha=2)
if out=$("$blkc" bench "${args[@]}" --reps 5 2>"$tmp/err") &&
	grep -qE "^scale: [0-9]+\.[0-9]{4} ms \(median of 5 on interpreter\), 32\.77 kB moved: [0-9]+\.[0-9]{2} GB/s$" <<<"$out"; then
	ok "bench: the median and GB/s"
else
	bad "bench" "$out $(cat "$tmp/err")"
fi
out=$("$blkc" bench "${args[@]}" --reps 3 --bytes 2M --format=csv 2>"$tmp/err")
[ "$(head -1 <<<"$out")" = "kernel,backend,reps,ms,bytes,gbps" ] && grep -qE "^scale,interpreter,3,[0-9.e-]+,2000000,[0-9.e+-]+$" <<<"$out" &&
	ok "bench --format=csv --bytes=2M" || bad "bench --format=csv" "$out $(cat "$tmp/err")"
if [ $have_python = 1 ]; then
	"$blkc" bench "${args[@]}" --reps 3 --format=json >"$tmp/bench.json" 2>"$tmp/err" &&
		python3 -m json.tool "$tmp/bench.json" >/dev/null &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kernel"]=="scale" and d["reps"]==3 and d["bytes"]==32768 and d["ms"]>=0 and d["backend"]=="interpreter"' "$tmp/bench.json" &&
		ok "bench --format=json parses" || bad "bench --format=json" "$(cat "$tmp/bench.json" "$tmp/err")"
fi
"$blkc" bench "${args[@]}" --reps 3 -D BLOCK=3 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "power of two" "$tmp/err" && ok "bench: a kernel that cannot run is an error" || bad "bench: error" "$(cat "$tmp/err")"

# ---- blkc tune ------------------------------------------------------------------------
if "$blkc" tune "${args[@]}" --reps 3 --svg "$tmp/tune.svg" >"$tmp/tune.txt" 2>"$tmp/tune.err"; then
	progress=$(grep -cE '^\[[1-3]/3\] BLOCK=(64|128|256) num_warps=[124] \.\.\. [0-9]+\.[0-9]{4} ms$' "$tmp/tune.err")
	rows=$(grep -cE '^ +[1-3] +(64|128|256) +[124] +[0-9.]+ +[0-9.]+' "$tmp/tune.txt")
	stars=$(grep -cE ' \*$' "$tmp/tune.txt")
	[ "$progress" = 3 ] && [ "$rows" = 3 ] && [ "$stars" = 1 ] && grep -q "^\* fastest: BLOCK=" "$tmp/tune.txt" &&
		ok "tune: the @autotune configs, progress on stderr, the table with the fastest marked" ||
		bad "tune: table" "progress $progress rows $rows stars $stars: $(cat "$tmp/tune.err" "$tmp/tune.txt")"
else
	bad "tune" "$(cat "$tmp/tune.err")"
fi
if [ $have_python = 1 ]; then
	python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert r.tag == ns + "svg", r.tag
bars = [e for e in r.iter(ns + "rect") if e.find(ns + "title") is not None]
texts = " ".join(t.text or "" for t in r.iter(ns + "text"))
assert len(bars) == 3, len(bars)
assert "median time (ms)" in texts and "configuration" in texts and "BLOCK=64 num_warps=1" in texts, texts' "$tmp/tune.svg" 2>"$tmp/err" &&
		ok "tune --svg: well-formed XML, a bar a config, labelled axes" || bad "tune --svg" "$(cat "$tmp/err")"
fi
out=$("$blkc" tune "${args[@]}" --reps 2 --sweep BLOCK=64,128 --sweep num_warps=1,2 --format=csv 2>"$tmp/err")
want="config,BLOCK,num_warps,ms,gbps,best,error"
cfgs=$(sed 1d <<<"$out" | cut -d, -f1-3 | tr '\n' ' ')
best=$(sed 1d <<<"$out" | awk -F, '$6 == 1' | wc -l)
[ "$(head -1 <<<"$out")" = "$want" ] && [ "$cfgs" = "1,64,1 2,64,2 3,128,1 4,128,2 " ] && [ "$best" = 1 ] &&
	ok "tune --sweep x --sweep: every combination, first sweep slowest (CSV)" || bad "tune --sweep" "$out $(cat "$tmp/err")"
if [ $have_python = 1 ]; then
	"$blkc" tune "${args[@]}" --reps 2 --config BLOCK=64,num_warps=2 --config BLOCK=3 --config BLOCK=128 --format=json \
		>"$tmp/tune.json" 2>"$tmp/err"
	st=$?
	[ $st -eq 0 ] && python3 -m json.tool "$tmp/tune.json" >/dev/null && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = d["configs"]
assert d["kernel"] == "scale" and d["backend"] == "interpreter" and d["reps"] == 2 and len(c) == 3
assert c[0]["consts"] == {"BLOCK": 64, "num_warps": 2} and c[2]["consts"] == {"BLOCK": 128}
assert c[1]["ms"] is None and "power of two" in c[1]["error"] and not c[1]["best"]
assert sum(x["best"] for x in c) == 1 and c[d["best"]]["best"] and d["best"] in (0, 2)' "$tmp/tune.json" &&
		grep -q "^\[2/3\] BLOCK=3 \.\.\. failed: .*power of two" "$tmp/err" &&
		ok "tune --config, one failing: JSON parses, the failure noted, the best of the others" ||
		bad "tune --config --format=json" "status $st: $(cat "$tmp/tune.json" "$tmp/err")"
fi
"$blkc" tune "${args[@]}" --reps 2 --config BLOCK=3 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "no config ran" "$tmp/out" && ok "tune: exit 1 when no config ran" || bad "tune: none ran" "$(cat "$tmp/out" "$tmp/err")"
"$blkc" tune examples/vector_add.tile x=64 y=64 out=64 n=64 --reps 2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "kernel 'vector_add' has no @autotune configs: give --config or --sweep" "$tmp/err" &&
	ok "tune of a kernel without @autotune and no --config: an error" || bad "tune without configs" "$(cat "$tmp/err")"
"$blkc" tune examples/vector_add.tile x=64 y=64 out=64 n=64 --reps 2 --sweep BLOCK=32,64 >"$tmp/out" 2>"$tmp/err" &&
	[ "$(grep -c '^ *[12] ' "$tmp/out")" = 2 ] && ok "tune --sweep of a kernel without @autotune" || bad "tune --sweep vector_add" "$(cat "$tmp/out" "$tmp/err")"

# ---- blkc tune --devices, on the two-GPU stand-in of tests/runtime ------------------------
fake_two="$build/tests/runtime/fake/libcuda.so.1"
if [ -f "$fake_two" ]; then
	denv=(env BLK_CUDA_DRIVER="$fake_two" BLK_CACHE=0 BLK_BACKEND=gpu)
	sweep=(--reps 3 --sweep BLOCK=64,128,256,512 --format=csv)
	one=$("${denv[@]}" "$blkc" tune "${args[@]}" "${sweep[@]}" 2>"$tmp/err1")
	two=$("${denv[@]}" "$blkc" tune "${args[@]}" "${sweep[@]}" --devices=0,1 2>"$tmp/err")
	st=$?
	on=$(grep -cE '^\[[1-4]/4\] BLOCK=[0-9]+ \.\.\. [0-9.]+ ms \(GPU [01]\)$' "$tmp/err")
	alt=$(grep -oE '\(GPU [01]\)$' "$tmp/err" | tr -d '\n')
	[ $st -eq 0 ] && [ "$(sed 1d <<<"$two" | wc -l)" = 4 ] && [ "$two" = "$one" ] && [ "$on" = 4 ] &&
		[ "$alt" = "(GPU 0)(GPU 1)(GPU 0)(GPU 1)" ] &&
		ok "tune --devices=0,1: the configs split across two GPUs, the table as on one" ||
		bad "tune --devices=0,1" "status $st on=$on alt=$alt: $one / $two $(cat "$tmp/err1" "$tmp/err")"
	FAKE_CUDA_OTHER_MODEL=1 "${denv[@]}" "$blkc" tune "${args[@]}" "${sweep[@]}" --devices=0,1 >/dev/null 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "device 1 is a Fake GPU B (compute capability 9.0) and device 0, the kernel's, a Fake GPU" "$tmp/err" &&
		ok "tune --devices over two models: refused, both named" || bad "tune --devices, two models" "$(cat "$tmp/err")"
	"${denv[@]}" "$blkc" tune "${args[@]}" "${sweep[@]}" --devices=0,5 >/dev/null 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "no CUDA device 5 (there are 2: 0 to 1)" "$tmp/err" &&
		ok "tune --devices naming a GPU that does not exist: refused with the count" || bad "tune --devices=0,5" "$(cat "$tmp/err")"
	# pruning before timing (runtime/prune.c): B = 128's 64 programs on the 132 SMs while B = 16
	# gives 4096; B = 256's 256 KiB of shared memory over the 227 KiB a program may have
	pargs=(tests/cli/kernels/prune.tile x=1048576 out=1048576 n=1048576 --reps 2)
	"${denv[@]}" "$blkc" tune "${pargs[@]}" >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ $st -eq 0 ] && grep -q "^tile on gpu: 4 configs (2 pruned), " "$tmp/out" &&
		grep -qE '^ +3 +128 +- +- +pruned: 64 programs on 132 SMs; B=16 gives 4096$' "$tmp/out" &&
		grep -qE '^ +4 +256 +- +- +pruned: 256 KiB shared memory > 227 KiB$' "$tmp/out" &&
		grep -qE '^ +[12] +(16|64) +[0-9.]+ +[0-9.]+' "$tmp/out" &&
		grep -qx '\[3/4\] B=128 \.\.\. pruned: 64 programs on 132 SMs; B=16 gives 4096' "$tmp/err" &&
		grep -qx '\[4/4\] B=256 \.\.\. pruned: 256 KiB shared memory > 227 KiB' "$tmp/err" &&
		ok "tune on a GPU: configs that leave most SMs idle or cannot fit are pruned, each with the reason" ||
		bad "tune: pruning" "status $st: $(cat "$tmp/out" "$tmp/err")"
	if [ $have_python = 1 ]; then
		"${denv[@]}" "$blkc" tune "${pargs[@]}" --format=json >"$tmp/prune.json" 2>"$tmp/err" && python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["configs"]
assert c[2]["pruned"] == "64 programs on 132 SMs; B=16 gives 4096" and c[2]["ms"] is None and "error" not in c[2], c[2]
assert c[3]["pruned"] == "256 KiB shared memory > 227 KiB" and not c[3]["best"], c[3]
assert "pruned" not in c[0] and "pruned" not in c[1] and c[0]["ms"] > 0 and c[1]["ms"] > 0' "$tmp/prune.json" &&
			ok "tune --format=json: a pruned config has \"pruned\": why, and no time" ||
			bad "tune --format=json pruned" "$(cat "$tmp/prune.json" "$tmp/err")"
	fi
	out=$("${denv[@]}" "$blkc" tune "${pargs[@]}" --format=csv 2>"$tmp/err")
	grep -qx '3,128,,,0,"pruned: 64 programs on 132 SMs; B=16 gives 4096"' <<<"$out" &&
		ok "tune --format=csv: the reason in the error column" || bad "tune csv pruned" "$out $(cat "$tmp/err")"
	"${denv[@]}" "$blkc" tune "${pargs[@]}" --no-prune >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ $st -eq 0 ] && ! grep -q pruned "$tmp/out" && grep -qE '^ +3 +128 +[0-9.]+ ' "$tmp/out" &&
		grep -qE '^ +4 +256 +- +- +failed: .*shared memory' "$tmp/out" &&
		ok "tune --no-prune: every config timed (B = 256 then fails for its shared memory)" ||
		bad "tune --no-prune" "status $st: $(cat "$tmp/out" "$tmp/err")"
	"${denv[@]}" "$blkc" tune "${pargs[@]}" --sweep B=16,128,256 >"$tmp/out" 2>"$tmp/err"
	grep -qE '^ +2 +128 +[0-9.]+ ' "$tmp/out" && grep -qE '^ +3 +256 +- +- +pruned: 256 KiB shared memory' "$tmp/out" &&
		ok "tune --sweep: the user's configs are pruned only when they cannot fit" ||
		bad "tune --sweep pruned" "$(cat "$tmp/out" "$tmp/err")"
	one=$("${denv[@]}" "$blkc" tune "${pargs[@]}" --format=csv 2>/dev/null | cut -d, -f1,2,7)
	two=$("${denv[@]}" "$blkc" tune "${pargs[@]}" --format=csv --devices=0,1 2>"$tmp/err" | cut -d, -f1,2,7)
	[ -n "$one" ] && [ "$one" = "$two" ] && grep -q '^2 configs on 2 GPUs' "$tmp/err" &&
		grep -qx '\[3/4\] B=128 \.\.\. pruned: 64 programs on 132 SMs; B=16 gives 4096' "$tmp/err" &&
		ok "tune --devices=0,1: the same configs pruned, the others split across the GPUs" ||
		bad "tune --devices pruned" "$one / $two $(cat "$tmp/err")"
else
	bad "tune --devices" "the stand-in driver $fake_two is not built (make test-bins)"
fi

# ---- usage errors, and blkc run unchanged ----------------------------------------------
usage() { # usage NAME EXPECTED-TEXT COMMAND...: exit status 2 and the text on stderr
	local name=$1 text=$2
	shift 2
	"$@" >/dev/null 2>"$tmp/err"
	local st=$?
	[ $st -eq 2 ] && grep -qF -- "$text" "$tmp/err" && ok "$name" || bad "$name" "status $st: $(cat "$tmp/err")"
}
usage "bench --svg: not an option of bench" "--svg is an option of blkc tune" "$blkc" bench --svg x.svg "${args[@]}"
usage "run --reps: not an option of run" "--reps is an option of blkc bench and blkc tune" "$blkc" run --reps 5 "${args[@]}"
usage "tune --print: not an option of tune" "--print is an option of blkc run" "$blkc" tune --print out "${args[@]}"
usage "tune --format=xml" "--format expects table, csv or json" "$blkc" tune --format=xml "${args[@]}"
usage "tune --devices=0,x" "--devices expects GPU numbers such as 0,1" "$blkc" tune --devices=0,x "${args[@]}"
usage "bench --devices: an option of tune" "--devices is an option of blkc tune" "$blkc" bench --devices=0 "${args[@]}"
usage "bench --no-prune: an option of tune" "--no-prune is an option of blkc tune" "$blkc" bench --no-prune "${args[@]}"
usage "bench --reps=0" "--reps expects a count" "$blkc" bench --reps 0 "${args[@]}"
usage "tune --sweep without values" "--sweep expects NAME=V1" "$blkc" tune --sweep BLOCK= "${args[@]}"
usage "tune --config not NAME=V" "--config expects NAME=VALUE" "$blkc" tune --config BLOCK "${args[@]}"
usage "bench without a file" "blkc bench needs a .tile file" "$blkc" bench
# option values out of the table's ranges, and a const given twice, are
# errors that name them (not the default, not the first value silently)
refused() { # refused NAME EXPECTED-TEXT BLKC-ARGS...: exit status 1 and the text on stderr
	local name=$1 text=$2
	shift 2
	"$blkc" "$@" >/dev/null 2>"$tmp/err"
	local st=$?
	[ $st -eq 1 ] && grep -qF -- "$text" "$tmp/err" && ok "$name" || bad "$name" "status $st: $(head -3 "$tmp/err")"
}
va=(--emit=ptx examples/vector_add.tile -o "$tmp/va.ptx")
refused "-D num_warps=64 (2048 threads)" "error: the option num_warps is a power of two in 1..32, found 64" \
	-D num_warps=64 "${va[@]}"
refused "-D num_warps=2^30" "num_warps is a power of two in 1..32, found 1073741824" -D num_warps=1073741824 "${va[@]}"
refused "-D num_warps=-4" "num_warps is a power of two in 1..32, found -4" -D num_warps=-4 "${va[@]}"
refused "-D num_stages=-1" "the option num_stages is an integer in 1..64, found -1" -D num_stages=-1 "${va[@]}"
refused "-D num_stages=65" "num_stages is an integer in 1..64, found 65" -D num_stages=65 "${va[@]}"
refused "-D BLOCK twice" "error: const 'BLOCK' given twice" -D BLOCK=64 -D BLOCK=128 "${va[@]}"
"$blkc" -D num_warps=32 -D num_stages=64 "${va[@]}" 2>"$tmp/err" && grep -q '^\.maxntid 1024, 1, 1' "$tmp/va.ptx" &&
	ok "-D num_warps=32 -D num_stages=64: the largest values, 1024 threads" || bad "-D num_warps=32" "$(head -3 "$tmp/err")"
out=$("$blkc" tune --config=BLOCK=256,num_warps=-4 --config=BLOCK=512 examples/vector_add.tile x=64 y=64 out=64 n=64 2>&1)
grep -q "failed: error: the option num_warps is a power of two in 1..32, found -4" <<<"$out" &&
	ok "tune --config=...,num_warps=-4: that config fails, saying why" || bad "tune num_warps=-4" "$out"
out=$("$blkc" --help)
grep -q "^  warp_specialize  0 or 1 (false or true) (default 0; the JIT's: \$BLK_WARP_SPECIALIZE)" <<<"$out" &&
	grep -q "^  num_warps        a power of two in 1..32 (default 4)" <<<"$out" &&
	ok "blkc --help lists the options from the table" || bad "blkc --help options" "$(tail -12 <<<"$out")"

out=$("$blkc" run tests/cli/kernels/scale.tile x=8:arange out=8 n=8 alpha=2 --print=out 2>&1)
[ "$out" = "out: 0 2 4 6 8 10 12 14" ] && ok "blkc run as before" || bad "blkc run" "$out"

# ---- a long chain of contractions (fuzz_python's seed 1001): 65,536 fmas compile in
# well under a second; the pass that made them was quadratic (minutes). The
# limit is a hang guard, far above the time it takes.
timeout 60 "$blkc" --emit=ir --passes=canonicalize,contract tests/fuzz/regressions/contract_chain_quadratic.tile >"$tmp/chain.ir" 2>"$tmp/err"
st=$?
[ $st -eq 0 ] && [ "$(grep -c ' fma ' "$tmp/chain.ir")" -ge 65536 ] &&
	ok "65,536 products contracted into fmas without a quadratic pass" ||
	bad "a long chain of contractions" "status $st, $(grep -c ' fma ' "$tmp/chain.ir") fmas: $(head -c 300 "$tmp/err")"

# ---- inputs that are not regular files ------------------------------------------------
mkfifo "$tmp/fifo.tile"
timeout 10 "$blkc" --emit=ptx "$tmp/fifo.tile" -o "$tmp/fifo.ptx" >/dev/null 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && grep -qF "cannot read '$tmp/fifo.tile': it is not a regular file" "$tmp/err" &&
	ok "blkc on a FIFO: refused at once, naming the path" || bad "blkc on a FIFO" "status $st: $(cat "$tmp/err")"
timeout 10 "$blkc" --emit=ptx "$tmp" -o "$tmp/dir.ptx" >/dev/null 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && grep -qF "it is not a regular file" "$tmp/err" &&
	ok "blkc on a folder: refused, naming the path" || bad "blkc on a folder" "status $st: $(cat "$tmp/err")"

# ---- outputs: every write checked, an input never overwritten ---------------------------
if [ -w /dev/full ]; then
	"$blkc" --emit=ptx examples/vector_add.tile -o /dev/full >/dev/null 2>"$tmp/err"
	st=$?
	[ $st -ne 0 ] && grep -qF "cannot write '/dev/full': No space left on device" "$tmp/err" &&
		ok "--emit=ptx -o /dev/full: an error naming the path and the reason" || bad "-o /dev/full" "status $st: $(cat "$tmp/err")"
fi
mkdir -p "$tmp/w" "$tmp/w/out.h"
"$blkc" --emit=c examples/vector_add.tile -o "$tmp/w/out" >/dev/null 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && grep -qF "cannot write '$tmp/w/out.h'" "$tmp/err" &&
	ok "--emit=c to a header path that is a folder: an error naming it" || bad "--emit=c unwritable" "status $st: $(cat "$tmp/err")"
cp examples/vector_add.tile "$tmp/w/same.tile"
"$blkc" --emit=ptx "$tmp/w/same.tile" -o "$tmp/w/same.tile" >/dev/null 2>"$tmp/err"
st=$?
[ $st -ne 0 ] && grep -qF "the output '$tmp/w/same.tile' is the input" "$tmp/err" && cmp -s examples/vector_add.tile "$tmp/w/same.tile" &&
	ok "-o naming the input: refused, the source untouched" || bad "-o the input" "status $st: $(cat "$tmp/err")"
[ $st -eq 2 ] && grep -qF -- "-o: " "$tmp/err" && ok "-o naming the input: exit 2, the flag named" ||
	bad "-o the input: exit 2 naming -o" "status $st: $(cat "$tmp/err")"
# every output flag against every file the compile reads (the input and
# its imports), by device and inode: a hard link to an import counts
mkdir -p "$tmp/imp"
printf 'fn twice(x: f32) -> f32 { return x * 2.0; }\n' >"$tmp/imp/lib.tile"
cp "$tmp/imp/lib.tile" "$tmp/imp/lib.orig"
ln "$tmp/imp/lib.tile" "$tmp/imp/hard.ptx"
printf 'import "lib.tile";\nkernel k(x: *f32, n: i32) grid(1) {\n    let o = arange(0, 16);\n    store(x + o, twice(load(x + o, mask = o < n)), mask = o < n);\n}\n' \
	>"$tmp/imp/main.tile"
refused() { # refused NAME FLAG FILE COMMAND...: exit 2 naming FLAG and FILE, the import untouched
	local name=$1 flag=$2 file=$3 st
	shift 3
	"$@" >/dev/null 2>"$tmp/err"
	st=$?
	[ $st -eq 2 ] && grep -qF -- "$flag: the output '$file'" "$tmp/err" && grep -qF "lib.tile" "$tmp/err" &&
		cmp -s "$tmp/imp/lib.tile" "$tmp/imp/lib.orig" && ok "$name" || bad "$name" "status $st: $(cat "$tmp/err")"
}
refused "-o onto an imported file: refused (exit 2), the import untouched" -o "$tmp/imp/lib.tile" \
	"$blkc" --emit=ptx "$tmp/imp/main.tile" -o "$tmp/imp/lib.tile"
refused "-o onto a hard link of an imported file: refused" -o "$tmp/imp/hard.ptx" \
	"$blkc" --emit=ptx "$tmp/imp/main.tile" -o "$tmp/imp/hard.ptx"
refused "--emit=c whose NAME.c is an imported file: refused" -o "$tmp/imp/lib.c" \
	bash -c 'ln -f "$1/lib.tile" "$1/lib.c" && exec "$2" --emit=c "$1/main.tile" -o "$1/lib"' _ "$tmp/imp" "$blkc"
refused "blkc run --save onto an imported file: refused, nothing run" --save "$tmp/imp/lib.tile" \
	"$blkc" run "$tmp/imp/main.tile" x=16:ones n=16 --save=x:"$tmp/imp/lib.tile"
(cd "$tmp/imp" && "$blkc" run - x=16:ones n=16 --save=x:hard.ptx <main.tile >/dev/null 2>"$tmp/err")
[ $? -eq 2 ] && cmp -s "$tmp/imp/lib.tile" "$tmp/imp/lib.orig" && ok "blkc run - --save onto an import of standard input: refused" ||
	bad "blkc run - --save onto an import" "$(cat "$tmp/err")"
cp examples/vector_add.tile "$tmp/imp/va.tile"
"$blkc" tune "$tmp/imp/va.tile" x=256 y=256 out=256 n=256 --config BLOCK=128 --reps=1 --svg="$tmp/imp/va.tile" \
	>/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -qF -- "--svg: the output '$tmp/imp/va.tile' is the input" "$tmp/err" &&
	cmp -s examples/vector_add.tile "$tmp/imp/va.tile" && ok "blkc tune --svg onto the input: refused (exit 2)" ||
	bad "tune --svg onto the input" "status $st: $(cat "$tmp/err")"
"$blkc" run "$tmp/imp/va.tile" x=256:ones y=256:ones out=256 n=256 --save=out:"$tmp/imp/va.tile" >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && cmp -s examples/vector_add.tile "$tmp/imp/va.tile" && ok "blkc run --save onto the input: refused (exit 2)" ||
	bad "run --save onto the input" "status $st: $(cat "$tmp/err")"
"$blkc" run "$tmp/imp/main.tile" x=16:ones n=16 --save=x:"$tmp/imp/x.bin" >/dev/null 2>"$tmp/err" &&
	[ "$(stat -c %s "$tmp/imp/x.bin")" = 64 ] && ok "blkc run --save to a new file: written" || bad "run --save" "$(cat "$tmp/err")"
# blkc run, bench and tune read the program from standard input with FILE "-"
out=$(cd "$tmp/imp" && "$blkc" run - x=16:ones n=16 --print=x:4 <main.tile 2>&1)
[ "$out" = "x: 2 2 2 2" ] && ok "blkc run - reads the program (and its imports beside the working folder) from standard input" ||
	bad "blkc run -" "$out"
out=$("$blkc" bench - x=256 y=256 out=256 n=256 --reps=1 <examples/vector_add.tile 2>&1)
[ $? -eq 0 ] && grep -qF "vector_add:" <<<"$out" && ok "blkc bench - reads standard input" || bad "blkc bench -" "$out"
out=$("$blkc" tune - x=256 y=256 out=256 n=256 --reps=1 --config BLOCK=64 --config BLOCK=128 <examples/vector_add.tile 2>&1)
[ $? -eq 0 ] && grep -qF "fastest" <<<"$out" && ok "blkc tune - reads standard input" || bad "blkc tune -" "$out"
ln -s same.tile "$tmp/w/link.ptx"
"$blkc" --emit=ptx "$tmp/w/same.tile" -o "$tmp/w/link.ptx" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && cmp -s examples/vector_add.tile "$tmp/w/same.tile" &&
	ok "-o a link to the input: refused, the source untouched" || bad "-o a link to the input" "$(cat "$tmp/err")"
cp examples/vector_add.tile "$tmp/w/k.c"
"$blkc" --emit=c "$tmp/w/k.c" -o "$tmp/w/k" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && cmp -s examples/vector_add.tile "$tmp/w/k.c" &&
	ok "--emit=c whose NAME.c is the input: refused, the source untouched" || bad "--emit=c over the input" "$(cat "$tmp/err")"
printf 'old\n' >"$tmp/w/keep.ptx"
printf 'kernel k(x: *f32) { let a = ; }\n' >"$tmp/w/broken.tile"
"$blkc" --emit=ptx "$tmp/w/broken.tile" -o "$tmp/w/keep.ptx" >/dev/null 2>&1
[ $? -ne 0 ] && [ "$(cat "$tmp/w/keep.ptx")" = old ] && [ -z "$(ls "$tmp/w" | grep '\.tmp\.')" ] &&
	ok "a failed compile leaves the old output and no temporary file" || bad "a failed compile's output" "$(ls "$tmp/w")"

# many parameters: NAME N TYPE writes a kernel of out: *TYPE and N more
# parameters of TYPE, each stored to out
many_params() {
	local i
	{
		printf 'kernel %s(out: *%s' "$1" "$3"
		for ((i = 0; i < $2; i++)); do printf ', a%d: %s' "$i" "$3"; done
		printf ') grid(1) {\n'
		for ((i = 0; i < $2; i++)); do printf '    store(out + %d, a%d);\n' "$i" "$i"; done
		printf '}\n'
	} >"$tmp/$1.tile"
}
# 300 i32 parameters (more than the 256 lowering once had room for): PTX
# with all of them, which ptxas (where there is one) accepts
many_params many300 300 i32
if "$blkc" --emit=ptx "$tmp/many300.tile" -o "$tmp/many300.ptx" 2>"$tmp/err" &&
	[ "$(grep -cE '^\s*\.param \.(u32|b32|u64|b64) many300_param_[0-9]+' "$tmp/many300.ptx")" = 301 ] &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_90 "$tmp/many300.ptx" -o "$tmp/many300.cubin" 2>>"$tmp/err"; }; then
	ok "a kernel of 301 parameters: PTX with all of them"
else
	bad "a kernel of 301 parameters" "$(head -3 "$tmp/err")"
fi
# 543 i64 and a pointer fill the 4352 bytes of parameter space PTX 8.0
# gives a kernel; one more is an error naming the kernel, the count, the bytes
many_params fits 543 i64
many_params over 544 i64
if "$blkc" --emit=ptx "$tmp/fits.tile" -o "$tmp/fits.ptx" 2>"$tmp/err" &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_90 "$tmp/fits.ptx" -o "$tmp/fits.cubin" 2>>"$tmp/err"; } &&
	! "$blkc" --emit=ptx "$tmp/over.tile" -o "$tmp/over.ptx" 2>"$tmp/err" &&
	grep -qF "kernel 'over': its 545 parameters take 4360 bytes, more than the 4352 bytes" "$tmp/err" &&
	! grep -q "out of memory" "$tmp/err"; then
	ok "parameters: 4352 bytes compile, 4360 an error naming the kernel, the count and the limit"
else
	bad "parameter space limit" "$(head -3 "$tmp/err")"
fi

# ---- a first day's mistakes (issue 33) ----------------------------------------------
# an unknown short option is named by its letter and word, never by argv[0]
"$blkc" -Wall examples/softmax.tile >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -qF "unknown option '-W' (in '-Wall')" "$tmp/err" && ! grep -qF "$blkc'" "$tmp/err" &&
	ok "-Wall: unknown option '-W', exit 2" || bad "-Wall" "rc $rc: $(cat "$tmp/err")"
"$blkc" --emt=ptx examples/softmax.tile >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -qF "unknown option '--emt=ptx'; did you mean '--emit'?" "$tmp/err" &&
	ok "--emt: did you mean --emit" || bad "--emt" "rc $rc: $(cat "$tmp/err")"
"$blkc" run --kernal=k examples/softmax.tile >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -qF "did you mean '--kernel'?" "$tmp/err" &&
	ok "run --kernal: did you mean --kernel" || bad "run --kernal" "rc $rc: $(cat "$tmp/err")"
# several kernels: listed, and -k named; no C function's name in blkc run's words
printf 'kernel a(x: *f32) { store(x, 1.0); }\nkernel b(x: *f32) { store(x, 2.0); }\nkernel c(x: *f32) { store(x, 3.0); }\n' >"$tmp/three.tile"
"$blkc" --emit=ptx "$tmp/three.tile" -o "$tmp/three.ptx" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qF "3 kernels in this file (a, b, c); name one with -k NAME" "$tmp/err" &&
	ok "three kernels: listed, -k named" || bad "three kernels" "rc $rc: $(cat "$tmp/err")"
"$blkc" run --grid=1 "$tmp/three.tile" x=4 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qF "blkc run: error: '$tmp/three.tile' has 3 kernels (a, b, c); name one with -k NAME" "$tmp/err" &&
	! grep -q "blk_kernel_get" "$tmp/err" && ok "run, three kernels: listed, -k named, no C name" ||
	bad "run, three kernels" "rc $rc: $(cat "$tmp/err")"
printf 'kernel k(x: *T, n: i32, T: const type = f16) {\n    let o = arange(0, 4);\n    store(x + o, (o * n).to(T));\n}\n' >"$tmp/tdef.tile"
# libblk's errors in blkc run's words: no C function's name
"$blkc" run "$tmp/tdef.tile" x=4 n=3 >"$tmp/out" 2>"$tmp/err" || true
"$blkc" run "$tmp/nosuch.tile" x=4 >>"$tmp/out" 2>>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qx "blkc run: error: kernel 'k' has no grid(...) clause: give the grid explicitly" "$tmp/err" &&
	grep -qx "blkc run: error: cannot open '$tmp/nosuch.tile': No such file or directory" "$tmp/err" &&
	! grep -q "blk_" "$tmp/err" && ok "run: libblk's errors without the C function's name" ||
	bad "run: libblk's errors" "rc $rc: $(cat "$tmp/err")"
# a type parameter's default is what blkc run makes the buffers of; -D still wins
out=$("$blkc" run --grid=1 "$tmp/tdef.tile" x=4 n=3 --print=x --save=x:"$tmp/x.bin" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = "x: 0 3 6 9" ] && [ "$(stat -c %s "$tmp/x.bin")" = 8 ] &&
	ok "run: a type parameter's default (f16)" || bad "run: type parameter default" "rc $rc: $out"
out=$("$blkc" run --grid=1 -D T=f64 "$tmp/tdef.tile" x=4 n=3 --save=x:"$tmp/x.bin" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$(stat -c %s "$tmp/x.bin")" = 32 ] && ok "run: -D T=f64 over the default" || bad "run -D T over default" "rc $rc: $out"
# a value that is not a number is a command-line mistake: exit 2
"$blkc" run --grid=1 "$tmp/tdef.tile" x=4 n=abc >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -qF "'n' (i32) needs an integer, got 'abc'" "$tmp/err" && ok "run n=abc: exit 2" ||
	bad "run n=abc" "rc $rc: $(cat "$tmp/err")"
"$blkc" run --grid=1 "$tmp/tdef.tile" x=zero n=1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && ok "run x=zero: exit 2" || bad "run x=zero" "rc $rc: $(cat "$tmp/err")"
# a misspelt -D: the nearest const parameter or option
"$blkc" -D BLOK=64 -D num_warp=4 tests/cli/kernels/scale.tile >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -qF "no kernel of 'tests/cli/kernels/scale.tile' has a const parameter 'BLOK'; did you mean 'BLOCK'?" "$tmp/err" &&
	grep -qF "'num_warp'; did you mean 'num_warps'?" "$tmp/err" && ok "-D BLOK: did you mean BLOCK" ||
	bad "-D BLOK" "rc $rc: $(cat "$tmp/err")"
# tests/run.sh: a suite that skips itself shows as skipped, with its reason, in the summary
mkdir -p "$tmp/rt/tests/skips" "$tmp/rt/tests/runs"
cp tests/run.sh "$tmp/rt/tests/"
printf 'echo "SKIP: no GPU (no libcuda.so.1)"\necho "0 passed, 0 failed"\n' >"$tmp/rt/tests/skips/run.sh"
printf 'echo "2 passed, 0 failed"\n' >"$tmp/rt/tests/runs/run.sh"
out=$(bash "$tmp/rt/tests/run.sh" "$build" 2>&1 | sed -n '/^== summary/,$p')
grep -qx "skips      skipped: no GPU (no libcuda.so.1)" <<<"$out" && grep -qx "runs       2 passed, 0 failed" <<<"$out" &&
	ok "tests/run.sh: a skipped suite in the summary" || bad "tests/run.sh skipped suite" "$out"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
