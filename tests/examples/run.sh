#!/usr/bin/env bash
# tests/examples: the example host programs and the example kernels.
#
#   bash tests/examples/run.sh BUILD_DIR
#
# 1. Each examples/NAME.c, built by `make examples` into BUILD_DIR/examples/NAME,
#    is run (from the repository root, with no argument: it finds
#    examples/NAME.tile itself). It checks its kernel against a reference in C
#    and exits 0 or 1 after one summary line.
# 2. Each kernel that blkc's runner can drive (all but sum_many and
#    matmul_grouped, which need arrays of device pointers, and the split-K
#    kernels with a workspace) is run with `blkc run ... --checksum`, with
#    inputs whose result is known in closed form; the sums are checked.
# This script builds nothing. It prints "ok NAME" or "FAIL NAME" and the
# output, and ends with "N passed, N failed".
set -u
build=${1:-build}
blkc=${BLKC:-$build/blkc}
limit=${BLK_EXAMPLE_TIMEOUT:-120}
passed=0 failed=0

pass() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; printf '%s\n' "$2" | sed 's/^/    /'; failed=$((failed + 1)); }

# ---- 1. the host programs ----------------------------------------------------

# host LABEL PROG [VAR=VALUE ...]: runs PROG with those variables set; it
# passes when it exits 0 and its last line ends in " OK".
host() {
	local label=$1 prog=$2 out status
	shift 2
	out=$(env "$@" timeout "$limit" "$prog" 2>&1)
	status=$?
	if [ $status -eq 0 ] && [[ $(tail -n 1 <<<"$out") == *" OK" ]]; then
		pass "$label: $(tail -n 1 <<<"$out")"
	else
		fail "$label" "$out
(exit status $status)"
	fi
}

for src in examples/*.c; do
	name=$(basename "$src" .c)
	prog="$build/examples/$name"
	if [ ! -x "$prog" ]; then
		fail "$name" "$prog is not built (make examples)"
		continue
	fi
	host "$name" "$prog"
done

# ---- 1b. the host programs again, with loads pipelined ------------------------
# The pipeline passes (a loop's loads issued an iteration ahead) are meant to
# keep the kernel's meaning: the examples with loops, on the interpreter.

for pass in pipeline pipeline-dots; do
	for name in matmul matmul_persistent attention attention_backward layernorm layernorm_backward w4a16_gemv sum_many \
		matmul_splitk matmul_streamk matmul_grouped matmul_batched; do
		[ $pass = pipeline-dots ] && [[ $name != matmul* ]] && [ $name != attention ] &&
			[ $name != attention_backward ] && continue
		[ -x "$build/examples/$name" ] || continue
		host "$name with the $pass pass" "$build/examples/$name" BLK_BACKEND=interp \
			BLK_PASSES=canonicalize,cse,dce,$pass,canonicalize,cse,dce
	done
done

# ---- 1c. tensor descriptors expanded as the GPU back end does ------------------
# expand-descriptors (the first GPU pass) turns desc_load / desc_store into
# masked loads and stores: the interpreter runs its output against the same
# reference, then with pipeline-dots after it as on the GPU.

for name in matmul_persistent matmul_streamk matmul_batched; do
	[ -x "$build/examples/$name" ] || continue
	host "$name with expand-descriptors" "$build/examples/$name" BLK_BACKEND=interp \
		BLK_PASSES=canonicalize,cse,dce,expand-descriptors,canonicalize,cse,dce
	host "$name with expand-descriptors and pipeline-dots" "$build/examples/$name" \
		BLK_BACKEND=interp BLK_PASSES=canonicalize,cse,dce,expand-descriptors,pipeline-dots,canonicalize,cse,dce
done

# ---- 2. the kernels through blkc run -----------------------------------------

# cli NAME 'BUFFER=WANT[:TOL] ...' blkc-run-arguments...
# Runs `blkc run ... --checksum` and checks the printed sum of each BUFFER
# against WANT, within TOL relative to max(|WANT|, 1) (default 1e-6).
cli() {
	local name=$1 checks=$2
	shift 2
	local out status
	out=$(timeout "$limit" "$blkc" run "$@" --checksum 2>&1)
	status=$?
	if [ $status -ne 0 ]; then
		fail "cli $name" "blkc run $*
$out
(exit status $status)"
		return
	fi
	local check buf want tol got bad=""
	for check in $checks; do
		buf=${check%%=*} want=${check#*=} tol=1e-6
		if [[ $want == *:* ]]; then tol=${want#*:} want=${want%%:*}; fi
		got=$(awk -v b="$buf:" '$1 == b && $2 == "sum" { print $3 }' <<<"$out")
		if [ -z "$got" ] || ! awk -v g="$got" -v w="$want" -v t="$tol" \
			'BEGIN { d = g - w; if (d < 0) d = -d; m = w < 0 ? -w : w; if (m < 1) m = 1; exit !(d <= t * m) }'; then
			bad+="$buf: sum ${got:-missing}, want $want (tolerance $tol)"$'\n'
		fi
	done
	if [ -z "$bad" ]; then
		pass "cli $name"
	else
		fail "cli $name" "blkc run $*
$out
$bad"
	fi
}

if [ ! -x "$blkc" ]; then
	fail "cli" "$blkc is not built"
else
	n=100003
	# out = 1.5 + i: sum 1.5 n + n (n - 1) / 2
	cli vector_add "out=5000400007.5" examples/vector_add.tile x=$n:fill=1.5 y=$n:arange out=$n n=$n
	# relu of 0, 1, 2, ...: unchanged, sum n (n - 1) / 2
	cli relu "out=5000250003" examples/relu.tile x=$n:arange out=$n n=$n
	# sin4(0) = 0
	cli sin4 "out=0" examples/sin4.tile x=$n:zeros out=$n n=$n
	# every row sums to 1
	cli softmax "out=333:1e-5" examples/softmax.tile x=260073:randn out=260073 \
		x_row_stride=781 out_row_stride=781 n_rows=333 n_cols=781
	# the same, written once over its element type T (rows of 781 T values)
	for T in f16 bf16; do
		cli softmax_generic-$T "out=333:1e-2" examples/softmax_generic.tile -D T=$T x=260073:randn out=260073 \
			x_row_stride=781 out_row_stride=781 n_rows=333 n_cols=781
	done
	# w = 1, b = 0: each row of y sums to 0 (up to f16 rounding)
	cli layernorm "y=0:1" examples/layernorm.tile -D BLOCK=256 \
		x=129000:randn y=129000 w=1000:ones b=1000:zeros mean=129 rstd=129 \
		x_row_stride=1000 y_row_stride=1000 n_rows=129 n_cols=1000 eps=1e-5
	# ones @ ones: every element is K = 70; 150 x 130 of them
	mm="a=10500:ones b=9100:ones c=19500 M=150 N=130 K=70 stride_am=70 stride_ak=1
	    stride_bk=130 stride_bn=1 stride_cm=130 stride_cn=1"
	cli matmul "c=1365000" examples/matmul.tile $mm
	cli matmul-64x64x32 "c=1365000" examples/matmul.tile -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=32 -D GROUP_M=2 $mm
	# the same through tensor descriptors, by a persistent grid (4 programs on the interpreter)
	mmp="a=10500:ones b=9100:ones c=19500 M=150 N=130 K=70 stride_am=70 stride_bk=130 stride_cm=130"
	cli matmul_persistent "c=1365000" examples/matmul_persistent.tile $mmp
	cli matmul_persistent-64x64x32 "c=1365000" examples/matmul_persistent.tile -D BLOCK_M=64 -D BLOCK_N=64 \
		-D BLOCK_K=32 -D GROUP_M=2 $mmp
	# the GEMM forms on ones @ ones (every element K = 70), C zeroed by blkc run
	cli matmul_splitk_atomic "c=1365000" examples/matmul_splitk.tile -k matmul_splitk_atomic $mm
	cli matmul_splitk_atomic-split8 "c=1365000" examples/matmul_splitk.tile -k matmul_splitk_atomic \
		-D BLOCK_M=32 -D BLOCK_N=32 -D BLOCK_K=16 -D GROUP_M=2 -D SPLIT_K=8 $mm
	for k in matmul_streamk matmul_streamk_fixup; do
		# the fixup's workspace: 2 tiles of 64 x 64 for each of the 4 programs
		extra=()
		[ $k = matmul_streamk_fixup ] && extra=(ws=32768 counters=25 ws_elems=32768)
		cli $k "c=1365000" examples/matmul_streamk.tile -k $k $mmp "${extra[@]}"
		cli $k-32x32x16 "c=1365000" examples/matmul_streamk.tile -k $k -D BLOCK_M=32 -D BLOCK_N=32 \
			-D BLOCK_K=16 -D GROUP_M=2 $mmp "${extra[@]}"
	done
	# two products of 150 x 130 x 70, and of 150 x 130 x 0 (zeros)
	mmb="a=21000:ones b=18200:ones c=39000 BATCH=2 M=150 N=130 stride_az=10500 stride_am=70 stride_bz=9100
	     stride_bk=130 stride_cz=19500 stride_cm=130"
	for k in matmul_batched matmul_batched_2d; do
		cli $k "c=2730000" examples/matmul_batched.tile -k $k -D T=f16 -D TO=f32 $mmb K=70
		cli $k-K0 "c=0" examples/matmul_batched.tile -k $k -D T=f16 -D TO=f32 $mmb K=0
	done
	# v = 1: every output is a weighted mean of ones, 1
	att="q=25600:randn k=25600:randn v=25600:ones o=25600 lse=400
	     stride_qz=25600 stride_qh=12800 stride_qm=64 stride_qd=1 stride_kz=25600 stride_kh=12800 stride_kn=64
	     stride_kd=1 stride_vz=25600 stride_vh=12800 stride_vn=64 stride_vd=1 stride_oz=25600 stride_oh=12800
	     stride_om=64 stride_od=1 Z=1 H=2 N_CTX=200 scale=0.125"
	cli attention "o=25600" stdlib/nn/attention.tile -k attention_fwd $att
	cli attention-causal "o=25600" stdlib/nn/attention.tile -k attention_fwd -D CAUSAL=true $att
	# bytes 0x01: weights -7 (even k) and -8 (odd k) times f16(0.01) = 0.010002136; x = 1:
	# y[n] = 256 * -15 * 0.010002136 = -38.408, -38.40625 in f16; 200 rows
	cli w4a16_gemv "y=-7681.25" examples/w4a16_gemv.tile w=51200:ones scales=800:fill=0.01 x=512:ones y=200 \
		N=200 K=512 stride_wn=256 stride_sn=4
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
