#!/usr/bin/env bash
# tests/ptx: the GPU back end without a GPU.
#  - every example (each kernel of a file with several) compiles to PTX for
#    sm_80 and sm_90, and ptxas (where it is on PATH or in
#    /usr/local/cuda/bin) accepts it;
#  - patterns pin the code generation facts that matter: vector add's memory
#    accesses are 16 bytes wide once its arguments are specialized, softmax
#    reduces across a warp with shfl.sync.bfly, no example spills to local
#    memory (ld.local / st.local), matmul and attention run their dots on
#    tensor cores (mma.sync.aligned.m16n8k16) for sm_80 and sm_90; softmax has
#    no branch (predicated shared stores), matmul feeds ldmatrix words to mma
#    unrepacked, attention's chained dots keep the probabilities in registers;
#  - the TN matmul (A^T @ B) of tests/ops/kernels/matmul_layouts.tile, bf16
#    128x256x64 on sm_90a, pointer tiles and descriptors (--tma): wgmma with
#    transpose-A set, A copied (cp.async / TMA) and never through registers
#    in the K loop;
#  - the GEMM forms (examples/matmul_{splitk,streamk,grouped,batched}.tile)
#    compile in every @autotune config of every kernel, for sm_80 and sm_90a;
#  - tests/ptx/patterns: small kernels whose PTX must or must not match a
#    pattern (see below);
#  - the kernels of blk.nn (stdlib/nn) in the configurations its Python
#    launches at LLM shapes (hidden 4096 to 16384, Llama's heads, a
#    4096-wide vocabulary chunk, and the optimizer's multi-tensor kernels
#    for one dtype and for mixed ones, aligned or not) compile for sm_80 and
#    sm_90a with no local memory, and ptxas accepts them; blk.nn.linear's
#    GEMM (stdlib/nn/linear.tile) in its fast config copies every layout's
#    tiles by TMA into wgmma;
#  - tests/ptx/emu: sort and topk networks (the large ones run as loops)
#    and histograms of many bins (counted in parts)
#    executed on the CPU from the back end's LLVM IR, checked against a
#    stable sort (where the clang of blk's LLVM is installed).
# usage: tests/ptx/run.sh BUILD_DIR
set -u
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
blkc=$build/blkc
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ptxas=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })
[ -n "$ptxas" ] || echo "note: no ptxas here; PTX is emitted and pattern-checked but not assembled"

# A file with several kernels (layernorm_backward) is compiled once for each,
# named NAME/KERNEL. The attention kernels the examples drive live in the
# standard library (stdlib/nn/attention.tile).
for tile in examples/*.tile stdlib/nn/attention.tile; do
	kernels=$(grep -oE '^kernel [A-Za-z_][A-Za-z0-9_]*' "$tile" | cut -d' ' -f2)
	[ "$(wc -w <<<"$kernels")" -gt 1 ] || kernels=-
	for kernel in $kernels; do
		name=$(basename "$tile" .tile)
		pick=()
		[ "$kernel" = - ] || { name=$name/$kernel; pick=(-k "$kernel"); }
		for arch in sm_80 sm_90; do
			out=$tmp/${name//\//.}.$arch.ptx
			if ! "$blkc" --emit=ptx --arch=$arch "${pick[@]}" "$tile" -o "$out" 2>"$tmp/err"; then
				bad "$name $arch: blkc" "$(head -3 "$tmp/err")"
				continue
			fi
			if grep -qE '(ld|st)\.local' "$out"; then
				bad "$name $arch: no local memory" "$(grep -cE '(ld|st)\.local' "$out") local accesses"
				continue
			fi
			ok "$name $arch: no ld.local / st.local"
			case $name in
			matmul | matmul_persistent | attention/attention_fwd | attention/attention_bwd_dkdv | attention/attention_bwd_dq)
				n=$(grep -c 'mma\.sync\.aligned\.m16n8k16' "$out")
				if [ "$n" -gt 0 ]; then
					ok "$name $arch: dots on tensor cores ($n mma.sync.aligned.m16n8k16)"
				else
					bad "$name $arch: dots on tensor cores" "no mma.sync.aligned.m16n8k16"
				fi
				;;
			esac
			if [ -n "$ptxas" ]; then
				if "$ptxas" -arch=$arch "$out" -o "$tmp/${name//\//.}.cubin" 2>"$tmp/err"; then
					ok "$name $arch: ptxas accepts it"
				else
					bad "$name $arch: ptxas" "$(head -3 "$tmp/err")"
				fi
			else
				ok "$name $arch: PTX emitted, no local memory"
			fi
		done
	done
done

# The GEMM forms in every @autotune configuration: --emit=c compiles each
# config of each kernel of the file (and assembles it where ptxas is), so
# one call a file and arch covers them all.
for name in matmul_splitk matmul_streamk matmul_grouped matmul_batched; do
	for arch in sm_80 sm_90a; do
		n=$(grep -cE '^ *\{BLOCK_M' examples/$name.tile)
		if "$blkc" --emit=c --arch=$arch examples/$name.tile -o "$tmp/$name" 2>"$tmp/err" &&
			[ "$(grep -cE '^blk_status [a-z0-9_]+_[0-9]+_launch\(' "$tmp/$name.h")" -eq "$n" ]; then
			ok "$name $arch: all $n @autotune configs compile"
		else
			bad "$name $arch: every @autotune config" "$(grep -v warning "$tmp/err" | head -3)"
		fi
	done
done

# Below sm_80 there is no mma.sync m16n8k16 nor cp.async: matmul's dot uses
# FMAs there, and ptxas takes it.
out=$tmp/matmul.sm_75.ptx
if "$blkc" --emit=ptx --arch=sm_75 examples/matmul.tile -o "$out" 2>"$tmp/err" &&
	! grep -qE 'mma\.sync|cp\.async' "$out" &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_75 "$out" -o "$tmp/m75.cubin" 2>"$tmp/err"; }; then
	ok "matmul sm_75: no mma.sync or cp.async (FMA dot)${ptxas:+, ptxas accepts it}"
else
	bad "matmul sm_75" "$(head -3 "$tmp/err")"
fi
# with the JIT's specialization, sm_80 and up copy matmul's tiles with cp.async
out=$tmp/matmul.async.ptx
if "$blkc" --emit=ptx --arch=sm_80 -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=32 -D GROUP_M=8 \
	--assume=a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bk:16,stride_cm:16,stride_ak=1,stride_bn=1,stride_cn=1 \
	examples/matmul.tile -o "$out" 2>"$tmp/err" && grep -q 'cp\.async\.cg\.shared\.global' "$out" &&
	grep -q 'cp\.async\.wait_group 1' "$out" && grep -q 'ldmatrix' "$out"; then
	ok "matmul sm_80, specialized: tiles by cp.async into shared memory, read by ldmatrix"
else
	bad "matmul sm_80, specialized: cp.async" "$(head -3 "$tmp/err")"
fi

# sm_90a (what the JIT compiles for on an H100): matmul's and attention's dots
# are wgmma (warpgroup MMA from shared-memory descriptors), matmul's K loop
# copies its tiles with cp.async into three stage buffers and leaves one
# group of products in flight (wait_group 1); attention's second dot takes
# the probabilities from registers; no local memory; ptxas takes all of it
# without serializing the wgmmas or injecting waits (its C751x notes).
mm_spec=a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bk:16,stride_cm:16,stride_ak=1,stride_bn=1,stride_cn=1
at_spec=q:16,k:16,v:16,o:16,lse:16,stride_qd=1,stride_kd=1,stride_vd=1,stride_od=1,stride_qz:16,stride_qh:16
at_spec=$at_spec,stride_qm:16,stride_kz:16,stride_kh:16,stride_kn:16,stride_vz:16,stride_vh:16,stride_vn:16
at_spec=$at_spec,stride_oz:16,stride_oh:16,stride_om:16,N_CTX:16
for cfg in "matmul 128 256 64 8" "matmul 128 128 64 8" "matmul 64 64 32 4" "matmul 128 64 16 4" \
	"attention 64 64 0 4" "attention 128 128 0 8"; do
	set -- $cfg
	name=$1 out=$tmp/$1.$2x$3.sm_90a.ptx
	if [ "$name" = matmul ]; then
		args=(-D BLOCK_M=$2 -D BLOCK_N=$3 -D BLOCK_K=$4 -D GROUP_M=8 -D num_warps=$5 --assume=$mm_spec
			examples/matmul.tile)
	else
		args=(-D BLOCK_M=$2 -D BLOCK_N=$3 -D num_warps=$5 --assume=$at_spec -k attention_fwd
			stdlib/nn/attention.tile)
	fi
	what="$name ${2}x${3}$([ "$4" = 0 ] || echo "x$4") sm_90a"
	if ! "$blkc" --emit=ptx --arch=sm_90a "${args[@]}" -o "$out" 2>"$tmp/err"; then
		bad "$what: blkc" "$(head -3 "$tmp/err")"
		continue
	fi
	n=$(grep -c 'wgmma\.mma_async' "$out")
	if [ "$n" -eq 0 ] || grep -q 'mma\.sync' "$out" || grep -qE '(ld|st)\.local' "$out"; then
		bad "$what: wgmma" "$n wgmma.mma_async, $(grep -c 'mma\.sync' "$out") mma.sync"
		continue
	fi
	extra=""
	if [ "$name" = matmul ]; then
		if grep -q 'cp\.async\.cg\.shared\.global' "$out" && grep -q 'wgmma\.wait_group\.sync\.aligned 1' "$out" &&
			grep -q 'fence\.proxy\.async' "$out"; then
			extra=", tiles by cp.async, one group in flight"
		else
			bad "$what: cp.async stages and wgmma in flight"
			continue
		fi
	elif ! grep -qE 'wgmma\.mma_async[^;]*\{[^}]*\}, \{%r' "$out"; then
		bad "$what: the second dot's A from registers"
		continue
	fi
	if [ -n "$ptxas" ]; then
		if ! "$ptxas" -arch=sm_90a "$out" -o "$tmp/wg.cubin" 2>"$tmp/err"; then
			bad "$what: ptxas" "$(head -3 "$tmp/err")"
			continue
		fi
		if grep -qE 'C751[0-9]' "$tmp/err"; then
			bad "$what: ptxas serializes the wgmmas" "$(grep -m1 -oE 'C75[0-9]+[^$]*' "$tmp/err" | cut -c1-120)"
			continue
		fi
	fi
	ok "$what: $n wgmma.mma_async, no local memory$extra${ptxas:+, ptxas takes it}"
done

# num_stages on sm_90a: 3 keeps one iteration's copies in flight
# (cp.async.wait_group 1), 4 and up two (wait_group 2, the tiles loaded two
# iterations ahead)
for s in 3 4; do
	out=$tmp/matmul.stages$s.ptx
	want=$([ $s = 3 ] && echo 1 || echo 2)
	if "$blkc" --emit=ptx --arch=sm_90a -D BLOCK_M=128 -D BLOCK_N=64 -D BLOCK_K=32 -D GROUP_M=8 -D num_warps=4 \
		-D num_stages=$s --assume=$mm_spec examples/matmul.tile -o "$out" 2>"$tmp/err" &&
		grep -q "cp\.async\.wait_group $want;" "$out" && [ "$(grep -c 'cp\.async\.wait_group [12];' "$out")" = 1 ]; then
		ok "matmul sm_90a, num_stages $s: cp.async.wait_group $want in the K loop"
	else
		bad "matmul sm_90a, num_stages $s: cp.async.wait_group $want" "$(head -3 "$tmp/err")"
	fi
done

# The weight gradient's A^T (TN: a is K x M, loaded as (BK, BM) tiles and
# transposed; tests/ops/kernels/matmul_layouts.tile), bf16, by pointer tiles
# and by a tensor descriptor (--tma), specialized as the JIT does: wgmma
# reads A M-major from its copies (transpose-A, the fourth of the trailing
# immediates "scale_d, scale_a, scale_b, tA, tB", is 1 on every wgmma), and
# the K loop (from the label its back edge jumps to, before the first wgmma,
# to that branch) copies both tiles by cp.async (A's 4 16-byte copies a
# thread and B's 8) or cp.async.bulk.tensor, with no ld.global nor
# st.shared (A through registers), nor shfl or prmt (a transposition).
lay=tests/ops/kernels/matmul_layouts.tile
lay_spec=a:16,b:16,c:16,M:16,N:16,K:16,lda:16,ldb:16,ldc:16
# the lines of the K loop around the first wgmma of PTX file $1
k_loop() {
	awk '{ line[NR] = $0 }
		/^\$L__[A-Za-z0-9_]+:/ { lab[substr($1, 1, length($1) - 1)] = NR }
		/wgmma\.mma_async/ && !w { w = NR }
		w && !end && /bra(\.uni)?[ \t]+\$L__/ { t = $NF; sub(/;$/, "", t); if ((t in lab) && lab[t] < w) { start = lab[t]; end = NR } }
		END { for (i = start; end && i <= end; i++) print line[i] }' "$1"
}
for cfg in "mm_tn 3" "mm_tn 4" "desc_tn 3" "desc_tn 4"; do
	# shellcheck disable=SC2086 # $cfg is words: the kernel, then its stages
	set -- $cfg
	out=$tmp/$1.s$2.ptx
	tma=() copy='cp\.async\.cg\.shared\.global' copy_name=cp.async
	[ "$1" = desc_tn ] && tma=(--tma) copy='cp\.async\.bulk\.tensor' copy_name=cp.async.bulk.tensor
	what="$1 bf16 128x256x64 sm_90a, 8 warps, $2 stages${tma:+, --tma}"
	if ! "$blkc" --emit=ptx --arch=sm_90a -k "$1" -D T=bf16 -D BM=128 -D BN=256 -D BK=64 -D num_warps=8 \
		-D num_stages="$2" --assume=$lay_spec "${tma[@]}" $lay -o "$out" 2>"$tmp/err"; then
		bad "$what: blkc" "$(head -3 "$tmp/err")"
		continue
	fi
	n=$(grep -c 'wgmma\.mma_async' "$out")
	not_ta=$(grep 'wgmma\.mma_async' "$out" | grep -cvE ', -?1, -?1, 1, [01];$')
	loop=$(k_loop "$out")
	copies=$(grep -cE "$copy" <<<"$loop")
	if [ "$n" -eq 0 ] || [ "$not_ta" != 0 ]; then
		bad "$what: wgmma with A transposed (tA = 1)" "$not_ta of $n wgmma.mma_async without"
	elif [ -z "$loop" ]; then
		bad "$what: no K loop found around the first wgmma"
	elif [ "$copies" = 0 ] || { [ "$1" = mm_tn ] && [ "$copies" != 12 ]; }; then
		bad "$what: A and B copied in the K loop" "$copies $copy_name in the loop"
	elif grep -qE 'ld\.global|st\.shared|shfl|prmt' <<<"$loop"; then
		bad "$what: no ld.global, st.shared, shfl or prmt in the K loop" \
			"$(grep -oE 'ld\.global[.a-z0-9]*|st\.shared[.a-z0-9]*|shfl[.a-z0-9]*|prmt[.a-z0-9]*' <<<"$loop" | sort | uniq -c | tr '\n' ' ')"
	elif [ -n "$ptxas" ] && ! "$ptxas" -arch=sm_90a "$out" -o "$tmp/tn.cubin" 2>"$tmp/err"; then
		bad "$what: ptxas" "$(head -3 "$tmp/err")"
	else
		ok "$what: $n wgmma with tA = 1, the K loop copies by $copy_name ($copies), no ld.global, st.shared, shfl, prmt${ptxas:+, ptxas takes it}"
	fi
done

# the bench's f32 matmul (bench/kernels/matmul_tc.tile, b K-major as the bench
# stores it, specialized as the JIT does) in each @autotune config: on sm_90a
# wgmma k8 of tf32 (the tensor cores read the f32 tiles truncated), both
# tiles by cp.async, one group of products in flight, no local memory, and
# ptxas takes it without serializing the wgmmas; on sm_80 mma.sync m16n8k8
# of tf32
f32_spec=a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bn:16,stride_cm:16,stride_ak=1,stride_bk=1,stride_cn=1
for cfg in "128 256 32 8 4" "128 128 32 8 4" "128 256 32 8 3" "64 64 32 4 5"; do
	set -- $cfg
	what="matmul_tc f32 ${1}x${2}x${3} w$4 s$5"
	for arch in sm_90a sm_80; do
		out=$tmp/matmul_f32.$arch.ptx
		if ! "$blkc" --emit=ptx --arch=$arch -k matmul_f32 -D BLOCK_M=$1 -D BLOCK_N=$2 -D BLOCK_K=$3 -D GROUP_M=8 \
			-D num_warps=$4 -D num_stages=$5 --assume=$f32_spec bench/kernels/matmul_tc.tile -o "$out" 2>"$tmp/err"; then
			bad "$what $arch: blkc" "$(head -3 "$tmp/err")"
			continue
		fi
		if [ $arch = sm_90a ]; then
			n=$(grep -cE 'wgmma\.mma_async\.sync\.aligned\.m64n[0-9]+k8\.f32\.tf32\.tf32' "$out")
			good=$([ "$n" -gt 0 ] && ! grep -q 'mma\.sync' "$out" && grep -q 'cp\.async\.cg\.shared\.global' "$out" &&
				grep -q 'wgmma\.wait_group\.sync\.aligned 1' "$out" && echo 1)
			have="$n wgmma.mma_async k8 tf32, tiles by cp.async, one group in flight"
		else
			n=$(grep -c 'mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32' "$out")
			good=$([ "$n" -gt 0 ] && ! grep -q 'wgmma' "$out" && echo 1)
			have="$n mma.sync m16n8k8 tf32"
		fi
		if [ "$good" != 1 ] || grep -qE '(ld|st)\.local' "$out"; then
			bad "$what $arch" "want: $have; $(grep -cE '(ld|st)\.local' "$out") local accesses"
			continue
		fi
		if [ -n "$ptxas" ]; then
			if ! "$ptxas" -arch=$arch "$out" -o "$tmp/mf.cubin" 2>"$tmp/err"; then
				bad "$what $arch: ptxas" "$(head -3 "$tmp/err")"
				continue
			fi
			if grep -qE 'C751[0-9]' "$tmp/err"; then
				bad "$what $arch: ptxas serializes the wgmmas" "$(grep -m1 -oE 'C75[0-9]+[^$]*' "$tmp/err" | cut -c1-120)"
				continue
			fi
		fi
		ok "$what $arch: $have, no local memory${ptxas:+, ptxas takes it}"
	done
done

# vector add, specialized as the JIT does (16-byte aligned pointers, n % 16 == 0):
# every global access of the main path is a 16-byte vector
va=$tmp/va.ptx
if "$blkc" --emit=ptx --assume=x:16,y:16,out:16,n:16 examples/vector_add.tile -o "$va"; then
	loads=$(grep -c 'ld\.global' "$va")
	v4=$(grep -c 'ld\.global\.v4\.b32' "$va")
	stores=$(grep -c 'st\.global' "$va")
	sv4=$(grep -c 'st\.global\.v4\.b32' "$va")
	[ "$loads" -gt 0 ] && [ "$loads" = "$v4" ] && ok "vector_add: all $loads global loads are ld.global.v4.b32" ||
		bad "vector_add: 16-byte loads" "$v4 of $loads loads are v4"
	[ "$stores" -gt 0 ] && [ "$stores" = "$sv4" ] && ok "vector_add: all $stores global stores are st.global.v4.b32" ||
		bad "vector_add: 16-byte stores" "$sv4 of $stores stores are v4"
else
	bad "vector_add: specialized PTX"
fi
# without the promise, no vector access may be assumed
if "$blkc" --emit=ptx examples/vector_add.tile -o "$va" && ! grep -q 'ld\.global\.v' "$va"; then
	ok "vector_add: unspecialized accesses stay scalar"
else
	bad "vector_add: unspecialized accesses stay scalar"
fi
sm=$tmp/softmax.ptx
if "$blkc" --emit=ptx examples/softmax.tile -o "$sm" && grep -q 'shfl\.sync\.bfly' "$sm"; then
	ok "softmax: reductions use shfl.sync.bfly"
else
	bad "softmax: reductions use shfl.sync.bfly"
fi
# a reduction's partial results go to shared memory by predicated stores, not
# branches: softmax (specialized) is one basic block with two barriers, which
# the code generator compiles in one piece
sm1=$tmp/softmax.spec.ptx
if "$blkc" --emit=ptx --assume=x:16,out:16,x_row_stride:16,out_row_stride:16,n_cols:16 examples/softmax.tile \
	-o "$sm1" && ! grep -qE '^[[:space:]]*(@%p[0-9]+ )?bra' "$sm1" &&
	[ "$(grep -cE '@%p[0-9]+ st\.shared\.b32' "$sm1")" = 2 ] && [ "$(grep -c 'bar\.sync' "$sm1")" = 2 ]; then
	ok "softmax, specialized: no branch; 2 predicated st.shared, 2 barriers"
else
	bad "softmax, specialized: no branch; 2 predicated st.shared, 2 barriers" \
		"$(grep -cE 'bra' "$sm1") branches, $(grep -cE 'st\.shared' "$sm1") shared stores"
fi
# mma operands read by ldmatrix go into mma.sync as the 32-bit registers
# ldmatrix wrote, not unpacked to halves and packed again: in the LLVM IR the
# only <2 x half> packs left are the epilogue's (fewer than 2 per mma; with
# repacking there were 12 per mma), so LLVM has less to fold
mm=$tmp/matmul.words.ll
if "$blkc" --emit=llvm -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D GROUP_M=8 -D num_warps=8 \
	--assume=a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bk:16,stride_cm:16,stride_ak=1,stride_bn=1,stride_cn=1 \
	examples/matmul.tile -o "$mm" 2>"$tmp/err"; then
	mmas=$(grep -c 'asm "mma\.sync' "$mm")
	packs=$(grep -c 'insertelement <2 x half>' "$mm")
	[ "$mmas" -gt 0 ] && [ "$packs" -lt $((2 * mmas)) ] &&
		ok "matmul: ldmatrix words straight into mma.sync ($mmas mma, $packs half inserts)" ||
		bad "matmul: ldmatrix words straight into mma.sync" "$mmas mma, $packs half inserts"
else
	bad "matmul: --emit=llvm" "$(head -3 "$tmp/err")"
fi
# attention's two dots are chained: warps along M, and the probabilities
# reach the second dot's A operand in registers: inside the loop nothing is
# converted to an A operand (the q tile's conversion is before the loop)
at=$tmp/attention.chain.ir
if "$blkc" --emit=ir --passes=canonicalize,cse,dce,pipeline-dots,layouts,remove-conversions,cse,dce \
	-D BLOCK_M=64 -D BLOCK_N=64 -D num_warps=4 --assume=q:16,k:16,v:16,o:16,stride_qd=1,stride_kd=1,stride_vd=1 \
	-k attention_fwd stdlib/nn/attention.tile -o "$at" 2>"$tmp/err"; then
	a_ops=$(sed -n 's/^\(#dot_op[0-9]*\) = dot_operand<idx = 0,.*/\1/p' "$at")
	in_loop=0
	for e in $a_ops; do
		n=$(grep -cE "^    +%[0-9]+ = convert_layout .* $e\$" "$at")
		in_loop=$((in_loop + n))
	done
	grep -q '^#mma[0-9]* = mma<version = 2, wpc = \[4, 1\]>' "$at" && [ -n "$a_ops" ] && [ $in_loop = 0 ] &&
		ok "attention: chained dots, warps along M, no A-operand conversion in the loop" ||
		bad "attention: chained dots" "$(grep -E '^#mma|convert_layout' "$at" | head -6)"
else
	bad "attention: --emit=ir" "$(head -3 "$tmp/err")"
fi
# attention's K^T (a B operand whose tile runs along K) is stored K-major:
# 16 bytes a store, read by ldmatrix without .trans (V, stored along N,
# keeps .trans); no 2-byte shared stores are left
ak=$tmp/attention.kmajor.ptx
# the JIT's specialization of the bench's call: aligned pointers, unit
# innermost strides, every other stride and N_CTX multiples of 16
spec=q:16,k:16,v:16,o:16,lse:16,stride_qd=1,stride_kd=1,stride_vd=1,stride_od=1
spec=$spec,stride_qz:16,stride_qh:16,stride_qm:16,stride_kz:16,stride_kh:16,stride_kn:16
spec=$spec,stride_vz:16,stride_vh:16,stride_vn:16,stride_oz:16,stride_oh:16,stride_om:16,N_CTX:16
if "$blkc" --emit=ptx -D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=8 \
	--assume="$spec" \
	-k attention_fwd stdlib/nn/attention.tile -o "$ak" 2>"$tmp/err" && ! grep -q 'st\.shared\.b16' "$ak" &&
	grep -q 'ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16' "$ak" &&
	"$blkc" --emit=ir --passes=canonicalize,cse,dce,pipeline-dots,layouts,remove-conversions,cse,dce \
		-D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=8 \
		--assume="$spec" \
		-k attention_fwd stdlib/nn/attention.tile 2>"$tmp/err" | grep -qE '^#shared[0-9]+ = shared<vec = 8, .*ldmatrix\.kmajor'; then
	ok "attention: K^T stored K-major (no 2-byte shared stores), ldmatrix and ldmatrix.trans"
else
	bad "attention: K^T stored K-major" "$(grep -c 'st\.shared\.b16' "$ak") 2-byte stores"
fi
# the persistent matmul reads its tiles through tensor descriptors: once
# expanded, with the JIT's specialization, they are 16-byte cp.async copies
# (sm_80 and sm_90) and C's tile is stored 16 bytes at a time
for arch in sm_80 sm_90; do
	out=$tmp/matmul_persistent.async.$arch.ptx
	if "$blkc" --emit=ptx --arch=$arch -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D GROUP_M=8 \
		--assume=a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bk:16,stride_cm:16 \
		examples/matmul_persistent.tile -o "$out" 2>"$tmp/err" && grep -qE 'cp\.async\.cg\.shared\.global \[%rd?[0-9]+\], \[%rd[0-9]+\], 16' "$out" &&
		grep -q 'st\.global\.v4\.b32' "$out" && grep -q 'mma\.sync\.aligned\.m16n8k16' "$out"; then
		ok "matmul_persistent $arch, specialized: descriptor tiles by 16-byte cp.async, C by st.global.v4"
	else
		bad "matmul_persistent $arch, specialized: cp.async" "$(head -3 "$tmp/err")"
	fi
done
# warp specialization (sm_90a, TMA): a producer warpgroup beside the 8 warps
# (384 threads), registers moved from it to the consumers, the consumers'
# barriers counting 256 threads, buffers given back on empty mbarriers; the
# same kernel without TMA, or for sm_90, is not split, nor is the 128 x 256
# one of five stages, whose buffers and C's scratch outgrow shared memory
# when the buffers stay the loop's for the whole kernel
ws_args=(-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D GROUP_M=8 -D num_warps=8 -D num_stages=4 -D warp_specialize=1
	--assume=a:16,b:16,c:16,stride_am:16,stride_bk:16,stride_cm:16 examples/matmul_persistent.tile)
# ws_args with some values replaced: ws_set NAME=VALUE... (a const given twice is an error)
ws_set() {
	local kv i
	ws_with=("${ws_args[@]}")
	for kv in "$@"; do
		for i in "${!ws_with[@]}"; do
			[[ ${ws_with[$i]} == "${kv%%=*}="* ]] && ws_with[i]=$kv
		done
	done
}
ws=$tmp/ws.ptx
if "$blkc" --emit=ptx --arch=sm_90a -D tma=1 "${ws_args[@]}" -o "$ws" 2>"$tmp/err" &&
	grep -q '^\.maxntid 384, 1, 1' "$ws" && grep -q '^\.maxnreg 168' "$ws" &&
	grep -q 'setmaxnreg\.dec\.sync\.aligned\.u32 40;' "$ws" && grep -q 'setmaxnreg\.inc\.sync\.aligned\.u32 232;' "$ws" &&
	grep -q 'barrier\.sync 	1, 256;' "$ws" && ! grep -qE '^\s*bar\.sync 	0;.*' <(sed -n '/setmaxnreg.inc/,$p' "$ws") &&
	grep -q 'mbarrier\.arrive\.shared\.b64' "$ws" && grep -q 'cp\.async\.bulk\.tensor' "$ws" &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_90a "$ws" -o "$tmp/ws.cubin" 2>"$tmp/err"; }; then
	ok "matmul_persistent sm_90a, tma, warp_specialize: producer warpgroup, setmaxnreg 40/232, consumers' barrier 1"
else
	bad "matmul_persistent sm_90a, warp_specialize" "$(head -3 "$tmp/err")"
fi
# split, 128 x 256 with four stages fits: C's tile goes out a 128 x 64
# atom at a time through two scratches (4 bulk stores, thread 0 waiting
# for each copy's read before the next barrier: 3, and 1 at the end); six stages of 128 x 128 get
# six buffers, each with a full and an empty barrier (24 inits)
ws_set BLOCK_N=256
ws256=("${ws_with[@]}")
ws_set num_stages=6
if "$blkc" --emit=ptx --arch=sm_90a -D tma=1 "${ws256[@]}" -o "$ws" 2>"$tmp/err" &&
	grep -q '^\.maxntid 384, 1, 1' "$ws" && [ "$(grep -c 'cp\.async\.bulk\.tensor\.2d\.global\.shared::cta' "$ws")" = 4 ] &&
	[ "$(grep -c 'cp\.async\.bulk\.wait_group\.read 0;' "$ws")" -ge 4 ] &&
	"$blkc" --emit=ptx --arch=sm_90a -D tma=1 "${ws_with[@]}" -o "$tmp/ws6.ptx" 2>"$tmp/err" &&
	grep -q '^\.maxntid 384, 1, 1' "$tmp/ws6.ptx" && [ "$(grep -c 'mbarrier\.init\.shared\.b64' "$tmp/ws6.ptx")" = 24 ] &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_90a "$ws" -o "$tmp/ws.cubin" 2>"$tmp/err"; }; then
	ok "matmul_persistent sm_90a, warp_specialize: 128 x 256 split, C out an atom at a time; 6 stages, 6 buffers"
else
	bad "matmul_persistent sm_90a, warp_specialize, 128 x 256 / 6 stages" "$(head -3 "$tmp/err")"
fi
# at most 32 buffers a tile (its fill parities are the bits of an i32):
# 40 stages of 64 x 64 x 16 tiles split with 32, a full and an empty barrier
# each for A and B
ws_set BLOCK_M=64 BLOCK_N=64 BLOCK_K=16 num_warps=4 num_stages=40
if "$blkc" --emit=ptx --arch=sm_90a -D tma=1 "${ws_with[@]}" -o "$ws" 2>"$tmp/err" && grep -q '^\.maxntid 256, 1, 1' "$ws" &&
	[ "$(grep -c 'mbarrier\.init\.shared\.b64' "$ws")" = 128 ]; then
	ok "matmul_persistent sm_90a, warp_specialize, 40 stages: 32 buffers a tile"
else
	bad "matmul_persistent sm_90a, warp_specialize, 40 stages" "$(head -3 "$tmp/err")"
fi
for how in "sm_90a 0" "sm_90 1" "sm_90a 1 BLOCK_N=256 num_stages=5"; do
	# shellcheck disable=SC2086 # $how is words: the target, tma, then NAME=VALUE over ws_args
	set -- $how
	ws_set "${@:3}"
	if "$blkc" --emit=ptx --arch="$1" -D tma="$2" "${ws_with[@]}" -o "$ws" 2>"$tmp/err" && grep -q '^\.maxntid 256, 1, 1' "$ws" &&
		! grep -q 'setmaxnreg' "$ws"; then
		ok "matmul_persistent $how, warp_specialize: not split, 256 threads"
	else
		bad "matmul_persistent $how, warp_specialize: not split" "$(head -3 "$tmp/err")"
	fi
done
# the option maxnreg (Triton's): .maxnreg N on the kernel; none by default;
# warp specialization keeps its own, with a warning
if "$blkc" --emit=ptx -D maxnreg=128 examples/vector_add.tile -o "$tmp/nreg.ptx" 2>"$tmp/err" &&
	grep -q '^\.maxnreg 128$' "$tmp/nreg.ptx" && grep -q '^\.maxntid 128, 1, 1' "$tmp/nreg.ptx" &&
	"$blkc" --emit=ptx examples/vector_add.tile -o "$tmp/nreg0.ptx" && ! grep -q 'maxnreg' "$tmp/nreg0.ptx" &&
	{ [ -z "$ptxas" ] || "$ptxas" -arch=sm_90 "$tmp/nreg.ptx" -o "$tmp/nreg.cubin" 2>"$tmp/err"; }; then
	ok "-D maxnreg=128: .maxnreg 128 (none without it)"
else
	bad "-D maxnreg=128" "$(head -3 "$tmp/err")"
fi
if "$blkc" --emit=ptx --arch=sm_90a -D tma=1 -D maxnreg=128 "${ws_args[@]}" -o "$ws" 2>"$tmp/err" &&
	grep -q '^\.maxnreg 168$' "$ws" && grep -q "maxnreg 128 is not applied: warp specialization sets .maxnreg 168" "$tmp/err"
then
	ok "-D maxnreg=128 with warp specialization: its .maxnreg 168 kept, a warning says so"
else
	bad "-D maxnreg=128 with warp specialization" "$(head -3 "$tmp/err")"
fi
# attention: its K and V tiles by TMA, the producer walks the same K loop
if "$blkc" --emit=ptx --arch=sm_90a -D HEAD_DIM=64 -D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=8 -D num_stages=2 \
	-D CAUSAL=true -D tma=1 -D warp_specialize=1 --assume=q:16,k:16,v:16,o:16,lse:16 \
	bench/kernels/attention_desc.tile -o "$ws" 2>"$tmp/err" && grep -q '^\.maxntid 384, 1, 1' "$ws" &&
	grep -q 'setmaxnreg\.inc' "$ws" && { [ -z "$ptxas" ] || "$ptxas" -arch=sm_90a "$ws" -o "$tmp/ws.cubin" 2>"$tmp/err"; }; then
	ok "attention_desc d64 causal sm_90a, tma, warp_specialize: 384 threads, setmaxnreg"
else
	bad "attention_desc warp_specialize" "$(head -3 "$tmp/err")"
fi
# line tables: .loc to the .tile lines, but no DWARF sections, which would
# make ptxas treat the PTX as a debug build (and crash on f16 atomics)
lt=$tmp/lines.ptx
if "$blkc" --emit=ptx examples/softmax.tile -o "$lt" && grep -q '^	\.file	1 "examples/softmax.tile"' "$lt" &&
	grep -q '\.loc	1 ' "$lt" && ! grep -q '\.target sm_90, debug' "$lt" && ! grep -q 'debug_info' "$lt"; then
	ok "softmax: .loc lines into the .tile, no debug target"
else
	bad "softmax: .loc lines into the .tile, no debug target"
fi
# patterns/NAME.tile: the first line "// blkc: ARGS" gives blkc's arguments,
# then "// require: REGEX" lines (each must match) or "// forbid: REGEX"
# (grep -E) on the PTX, which ptxas (where there is one) must accept. A file
# that says KNOWN BUG exposes a fault not fixed yet: while its pattern fails
# it prints "bug  NAME" and is not counted, unless BLK_KNOWN_BUGS=1.
for tile in tests/ptx/patterns/*.tile; do
	[ -f "$tile" ] || continue
	name="patterns/$(basename "$tile" .tile)"
	args=$(sed -n '1s|^// blkc: ||p' "$tile")
	req=$(sed -n 's|^// require: ||p' "$tile")
	forbid=$(sed -n 's|^// forbid: ||p' "$tile")
	out=$tmp/pattern.ptx
	# shellcheck disable=SC2086 # ARGS are words
	if ! "$blkc" $args "$tile" -o "$out" 2>"$tmp/err"; then
		bad "$name: blkc" "$(head -3 "$tmp/err")"
		continue
	fi
	target=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$out")
	if [ -n "$ptxas" ] && [ -n "$target" ] && ! "$ptxas" -arch="$target" "$out" -o "$tmp/pattern.cubin" 2>"$tmp/err"; then
		bad "$name: ptxas ($target)" "$(head -3 "$tmp/err")"
		continue
	fi
	good=1 what=""
	if [ -n "$req" ]; then
		what="has /$(echo "$req" | paste -sd '&' | sed 's|&|/ and /|g')/"
		while IFS= read -r re; do
			grep -qE "$re" "$out" || good=0
		done <<<"$req"
	fi
	if [ -n "$forbid" ]; then
		what="${what:+$what, }has no /$(echo "$forbid" | paste -sd '&' | sed 's|&|/ nor /|g')/"
		! grep -qE "$forbid" "$out" || good=0
	fi
	if [ $good = 1 ]; then
		ok "$name: PTX $what"
	elif grep -q 'KNOWN BUG' "$tile" && [ "${BLK_KNOWN_BUGS:-0}" != 1 ]; then
		echo "bug  $name: PTX $what (KNOWN BUG, not counted; BLK_KNOWN_BUGS=1 counts it)"
	else
		bad "$name: PTX $what"
	fi
done
# tf32x3 is three mma.sync where tf32 is one: the same 16 x 16 x 16 dot
# a histogram of 65536 bins takes 64 KiB of shared memory (16384 bins at a
# time), not 256 KiB: the shared bytes of its --emit=c launch table
"$blkc" --emit=c --arch=sm_90 tests/ptx/patterns/histogram_parts.tile -o "$tmp/hist" 2>"$tmp/err"
hbytes=$(sed -n 's/^\t{"hist", [^,]*, [^,]*, [^,]*, \([0-9]*\), 128,.*/\1/p' "$tmp/hist.c" 2>/dev/null)
[ "$hbytes" = 65536 ] && ok "histogram of 65536 bins: 64 KiB of shared memory (in parts)" ||
	bad "histogram of 65536 bins: shared memory" "${hbytes:-none} bytes; $(head -3 "$tmp/err")"
n1=$("$blkc" --emit=ptx --arch=sm_80 -Dnum_warps=1 tests/ptx/patterns/dot_tf32_count.tile -o - 2>"$tmp/err" |
	grep -c 'mma\.sync\.aligned\.m16n8k8')
n3=$("$blkc" --emit=ptx --arch=sm_80 -Dnum_warps=1 tests/ptx/patterns/dot_tf32x3_sm80.tile -o - 2>>"$tmp/err" |
	grep -c 'mma\.sync\.aligned\.m16n8k8')
if [ "$n1" = 4 ] && [ "$n3" = 12 ]; then
	ok "dot f32 16 x 16 x 16 on one warp: tf32 4 mma.sync m16n8k8, tf32x3 12 (three a step)"
else
	bad "dot tf32 / tf32x3 mma.sync counts" "$n1 and $n3, want 4 and 12 $(head -2 "$tmp/err")"
fi
# atan2 of f32 divides once an element (min / max), on one warp one element a thread
nd=$("$blkc" --emit=ptx --arch=sm_90a -Dnum_warps=1 tests/ptx/patterns/atan2_f32_count.tile -o - 2>"$tmp/err" |
	grep -c 'div\.rn\.f32')
if [ "$nd" = 1 ]; then
	ok "atan2 f32, one element a thread: one div.rn.f32"
else
	bad "atan2 f32 division count" "$nd div.rn.f32, want 1 $(head -2 "$tmp/err")"
fi
# and on sm_90a (wgmma k8): the 64 x 64 x 32 dot on one warpgroup is 4
# wgmma with tf32, 12 with tf32x3
n1=$("$blkc" --emit=ptx --arch=sm_90a tests/ptx/patterns/dot_tf32_sm90a.tile -o - 2>"$tmp/err" |
	grep -c 'wgmma\.mma_async\.sync\.aligned\.m64n64k8\.f32\.tf32\.tf32')
n3=$("$blkc" --emit=ptx --arch=sm_90a tests/ptx/patterns/dot_tf32x3_sm90a.tile -o - 2>>"$tmp/err" |
	grep -c 'wgmma\.mma_async\.sync\.aligned\.m64n64k8\.f32\.tf32\.tf32')
if [ "$n1" = 4 ] && [ "$n3" = 12 ]; then
	ok "dot f32 64 x 64 x 32 on a warpgroup (sm_90a): tf32 4 wgmma k8, tf32x3 12 (three a step)"
else
	bad "dot tf32 / tf32x3 wgmma counts" "$n1 and $n3, want 4 and 12 $(head -2 "$tmp/err")"
fi
# range(..., unroll = 4) repeats the loop body: more loads than without the hint
u4=$("$blkc" --emit=ptx --arch=sm_90 tests/ptx/patterns/loop_unroll.tile -o - 2>"$tmp/err" | grep -c 'ld\.global')
u1=$(sed 's/, unroll = 4//' tests/ptx/patterns/loop_unroll.tile | "$blkc" --emit=ptx --arch=sm_90 - -o - 2>>"$tmp/err" |
	grep -c 'ld\.global')
if [ "$u4" -ge 4 ] && [ "$u1" = 1 ]; then
	ok "range(..., unroll = 4): $u4 loads of the body, 1 without the hint"
else
	bad "range(..., unroll = 4) unrolls" "$u4 loads with the hint and $u1 without, want 4 or more and 1 $(head -2 "$tmp/err")"
fi
if "$blkc" --emit=ptx --arch=sm_99 examples/relu.tile -o /dev/null 2>"$tmp/err"; then
	bad "an unknown --arch is refused"
elif grep -q "unknown GPU target 'sm_99'" "$tmp/err"; then
	ok "an unknown --arch is refused with its name"
else
	bad "an unknown --arch is refused with its name" "$(head -2 "$tmp/err")"
fi
# blk.nn's kernels as python/blk/nn launches them (FILE KERNEL -D values;
# num_warps as python/blk/nn/_kernels.py's warps() gives for the block), at
# LLM shapes: cross-entropy and JSD rows of 128256 (linear_cross_entropy's
# chunks with SCALE), KL over 8192 x 128256 elements
while read -r file kernel defs; do
	[ -n "$file" ] || continue
	d=()
	for x in $defs; do d+=(-D "$x"); done
	for arch in sm_80 sm_90a; do
		what="stdlib/nn/$file $kernel $defs $arch"
		out=$tmp/nn.ptx
		if ! "$blkc" --emit=ptx --arch=$arch -k "$kernel" "${d[@]}" "stdlib/nn/$file" -o "$out" 2>"$tmp/err"; then
			bad "$what: blkc" "$(head -3 "$tmp/err")"
		elif grep -qE '(ld|st)\.local' "$out"; then
			bad "$what: no local memory" "$(grep -cE '(ld|st)\.local' "$out") local accesses"
		elif [ -n "$ptxas" ] && ! "$ptxas" -arch=$arch "$out" -o "$tmp/nn.cubin" 2>"$tmp/err"; then
			bad "$what: ptxas" "$(head -3 "$tmp/err")"
		else
			ok "$what: PTX${ptxas:+, ptxas}, no local memory"
		fi
	done
done <<'EOF'
rmsnorm.tile rmsnorm_fwd T=bf16 C=f32 RESIDUAL=false BLOCK=4096 num_warps=8
rmsnorm.tile rmsnorm_fwd T=bf16 C=f32 RESIDUAL=true BLOCK=8192 num_warps=16
rmsnorm.tile rmsnorm_fwd T=f32 C=f32 RESIDUAL=true BLOCK=16384 num_warps=32
rmsnorm.tile rmsnorm_bwd T=bf16 C=f32 RESIDUAL=false BLOCK=4096 num_warps=8
rmsnorm.tile rmsnorm_bwd T=bf16 C=f32 RESIDUAL=true BLOCK=8192 num_warps=16
rmsnorm.tile rmsnorm_bwd T=f32 C=f32 RESIDUAL=true BLOCK=4096 num_warps=8
rmsnorm.tile rmsnorm_bwd_dw T=bf16 C=f32 BLOCK_M=32 BLOCK_N=128
glu.tile glu_fwd T=bf16 C=f32 GELU=false BLOCK=1024
glu.tile glu_bwd T=bf16 C=f32 GELU=false BLOCK=1024
glu.tile glu_fwd T=bf16 C=f32 GELU=true BLOCK=1024
glu.tile glu_bwd T=bf16 C=f32 GELU=true BLOCK=1024
glu.tile glu_bwd T=f32 C=f32 GELU=true BLOCK=1024
rope.tile rope T=bf16 C=f32 BACKWARD=false BLOCK_QH=32 BLOCK_KH=8 BLOCK_D=64 num_warps=8
rope.tile rope T=bf16 C=f32 BACKWARD=true BLOCK_QH=64 BLOCK_KH=8 BLOCK_D=64 num_warps=8
rope.tile rope T=f32 C=f32 BACKWARD=false BLOCK_QH=32 BLOCK_KH=8 BLOCK_D=64 num_warps=8
cross_entropy.tile cross_entropy_fwd_bwd T=bf16 C=f32 BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_fwd_bwd T=f32 C=f32 BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_fwd_bwd T=bf16 C=f32 SOFTCAP=true BLOCK=4096 num_warps=8
layernorm.tile layernorm_fwd T=bf16 C=f32 HAS_W=true HAS_B=true BLOCK=4096 num_warps=8
layernorm.tile layernorm_fwd T=bf16 C=f32 HAS_W=true HAS_B=false BLOCK=8192 num_warps=16
layernorm.tile layernorm_fwd T=f32 C=f32 HAS_W=false HAS_B=false BLOCK=16384 num_warps=32
layernorm.tile layernorm_bwd T=bf16 C=f32 HAS_W=true HAS_B=true BLOCK=4096 num_warps=8
layernorm.tile layernorm_bwd T=bf16 C=f32 HAS_W=true HAS_B=false BLOCK=8192 num_warps=16
layernorm.tile layernorm_bwd T=f32 C=f32 HAS_W=true HAS_B=true BLOCK=4096 num_warps=8
rmsnorm.tile rmsnorm_bwd_dw T=f32 C=f32 BLOCK_M=32 BLOCK_N=128
embedding.tile embedding_fwd T=bf16 I=i64 BLOCK_D=1024 num_warps=4
embedding.tile embedding_fwd T=bf16 I=i32 BLOCK_D=1024 num_warps=4
embedding.tile embedding_bwd T=bf16 C=f32 I=i64 BLOCK_D=1024 num_warps=4
embedding.tile embedding_bwd T=f32 C=f32 I=i32 BLOCK_D=1024 num_warps=4
optim.tile adamw F32=false BF16=true MASTER=true ALIGNED=true BLOCK=1024 num_warps=4
optim.tile adamw F32=true ALIGNED=true BLOCK=1024 num_warps=4
optim.tile adamw F32=true BF16=true F16=true F64=true MASTER=true ALIGNED=false BLOCK=1024 num_warps=4
optim.tile grad_norm C=f32 NORM=2 F32=false BF16=true ALIGNED=true BLOCK=1024
optim.tile grad_norm C=f32 NORM=0 F32=true BF16=true F16=true ALIGNED=false BLOCK=1024
optim.tile grad_norm C=f64 NORM=3 F32=true F64=true ALIGNED=true BLOCK=1024
optim.tile grad_scale C=f32 F32=false BF16=true ALIGNED=true BLOCK=1024
optim.tile grad_scale C=f64 F32=true F16=true F64=true ALIGNED=false BLOCK=1024
cross_entropy.tile cross_entropy_fwd_bwd T=bf16 C=f32 SCALE=1 BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_fwd_bwd T=bf16 C=f32 SOFTCAP=true SCALE=2 BLOCK=4096 num_warps=8
distill.tile kl_div_fwd T=bf16 C=f32 LOG_TARGET=false POINTWISE=false BLOCK=1024
distill.tile kl_div_fwd T=bf16 C=f32 LOG_TARGET=true POINTWISE=true BLOCK=1024
distill.tile kl_div_bwd T=bf16 C=f32 LOG_TARGET=false POINTWISE=false TARGET_GRAD=false BLOCK=1024
distill.tile kl_div_bwd T=f32 C=f32 LOG_TARGET=true POINTWISE=true TARGET_GRAD=true BLOCK=1024
distill.tile jsd_fwd_bwd T=bf16 C=f32 MODE=0 HAS_LABELS=true TEACHER_GRAD=false BLOCK=4096 num_warps=8
distill.tile jsd_fwd_bwd T=bf16 C=f32 MODE=1 HAS_LABELS=true TEACHER_GRAD=false BLOCK=4096 num_warps=8
distill.tile jsd_fwd_bwd T=bf16 C=f32 MODE=2 HAS_LABELS=true TEACHER_GRAD=false BLOCK=4096 num_warps=8
distill.tile jsd_fwd_bwd T=bf16 C=f32 MODE=2 HAS_LABELS=false TEACHER_GRAD=true BLOCK=4096 num_warps=8
distill.tile jsd_fwd_bwd T=f32 C=f32 MODE=0 HAS_LABELS=true TEACHER_GRAD=true BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_loss T=bf16 C=f32 BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_loss T=bf16 C=f32 SOFTCAP=true SMOOTH=true BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_loss T=f32 C=f32 SMOOTH=true BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_grad T=bf16 C=f32 BLOCK=4096 num_warps=4
cross_entropy.tile cross_entropy_grad T=bf16 C=f32 SOFTCAP=true BLOCK=4096 num_warps=4
embedding.tile embedding_rank I=i64 K=i32 BLOCK_I=16 BLOCK_J=128 num_warps=8
embedding.tile embedding_rank I=i32 K=i64 BLOCK_I=16 BLOCK_J=128 num_warps=8
embedding.tile embedding_zero_rows T=bf16 BLOCK_R=8 BLOCK_D=1024 num_warps=4
linear.tile linear_act_bwd T=bf16 OUT=bf16 PT=bf16 ACT=3 STORE_G=true HAS_BIAS=true BLOCK_M=32 BLOCK_N=128 num_warps=4
linear.tile linear_act_bwd T=bf16 OUT=f32 PT=f32 ACT=2 STORE_G=true HAS_BIAS=false BLOCK_M=32 BLOCK_N=128 num_warps=4
linear.tile linear T=bf16 OUT=bf16 HAS_BIAS=true ACT=3 HAS_RES=true SAVE_PRE=true BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 GROUP_M=8 num_warps=8 num_stages=4
linear.tile linear T=bf16 OUT=f32 TRANS_A=true TRANS_B=false BETA=true BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 GROUP_M=8 num_warps=8 num_stages=4
linear.tile linear_splitk T=bf16 OUT=bf16 HAS_BIAS=true ACT=2 SPLIT_K=4 BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 GROUP_M=8 num_warps=8 num_stages=4
linear.tile linear T=f32 OUT=f32 BT=f32 RT=f32 PT=f32 PREC=1 HAS_BIAS=true ACT=2 HAS_RES=true SAVE_PRE=true BLOCK_M=128 BLOCK_N=128 BLOCK_K=32 GROUP_M=8 num_warps=8 num_stages=3
EOF

# blk.nn.linear's GEMM in the first (fast) config of its @autotune list, with
# the JIT's promises at LLM shapes: every layout a training step multiplies in
# (NT forward with its epilogue, NN dx, TN dW accumulated into f32) has its
# operand tiles copied by TMA and multiplied by wgmma
lin_assume=a:16,b:16,c:16,stride_a:16,stride_b:16,stride_c:16,M:16,N:16,K:16
while read -r kernel defs; do
	d=()
	for x in $defs; do d+=(-D "$x"); done
	what="stdlib/nn/linear.tile $kernel $defs (TMA, sm_90a)"
	if ! "$blkc" --emit=ptx --arch=sm_90a --tma -k "$kernel" --assume="$lin_assume" "${d[@]}" stdlib/nn/linear.tile \
		-o "$tmp/lin.ptx" 2>"$tmp/err"; then
		bad "$what: blkc" "$(head -3 "$tmp/err")"
	elif ! grep -q 'cp\.async\.bulk\.tensor' "$tmp/lin.ptx" || ! grep -q 'wgmma\.mma_async' "$tmp/lin.ptx"; then
		bad "$what: TMA and wgmma" "$(grep -c 'cp\.async\.bulk\.tensor' "$tmp/lin.ptx") bulk copies, $(grep -c 'wgmma\.mma_async' "$tmp/lin.ptx") wgmma"
	elif [ -n "$ptxas" ] && ! "$ptxas" -arch=sm_90a "$tmp/lin.ptx" -o "$tmp/lin.cubin" 2>"$tmp/err"; then
		bad "$what: ptxas" "$(head -3 "$tmp/err")"
	else
		ok "$what: TMA tiles, wgmma${ptxas:+, ptxas}"
	fi
done <<'EOF'
linear HAS_BIAS=true ACT=3 HAS_RES=true SAVE_PRE=true
linear TRANS_B=false
linear TRANS_A=true TRANS_B=false BETA=true OUT=f32
linear_splitk ACT=2
EOF

# the memory-bound blk.nn kernels with the JIT's promises at the benchmark's
# shapes (16-byte aligned pointers, strides multiples of 16): 16-byte loads
# of the rows, and rope with no barrier (cos/sin loaded in the tiles' own
# layout, not moved through shared memory between its loads)
ce_assume=logits:16,lse:16,target:16,row_stride:16,n_cols:16
rope_assume=q:16,k:16,cos:16,sin:16,q_out:16,k_out:16,q_sb:16,q_ss:16,q_sh:16,k_sb:16,k_ss:16,k_sh:16
rope_assume=$rope_assume,qo_sb:16,qo_ss:16,qo_sh:16,ko_sb:16,ko_ss:16,ko_sh:16,c_sb:16,c_ss:16,half:16
while read -r file kernel assume defs; do
	d=()
	for x in $defs; do d+=(-D "$x"); done
	what="stdlib/nn/$file $kernel $defs (aligned, sm_90a)"
	if ! "$blkc" --emit=ptx --arch=sm_90a -k "$kernel" --assume="$assume" "${d[@]}" "stdlib/nn/$file" \
		-o "$tmp/nnv.ptx" 2>"$tmp/err"; then
		bad "$what: blkc" "$(head -3 "$tmp/err")"
	elif ! grep -qE 'ld\.global(\.[a-z]+)*\.v4\.b32' "$tmp/nnv.ptx"; then
		bad "$what: 16-byte loads" "$(grep -oE 'ld\.global[.a-z0-9]*' "$tmp/nnv.ptx" | sort | uniq -c | tr '\n' ' ')"
	elif [ "$kernel" = rope ] && grep -q 'bar\.sync' "$tmp/nnv.ptx"; then
		bad "$what: no barrier" "$(grep -c 'bar\.sync' "$tmp/nnv.ptx") bar.sync"
	else
		ok "$what: 16-byte loads$([ "$kernel" = rope ] && echo ', no barrier')"
	fi
done <<EOF
cross_entropy.tile cross_entropy_loss $ce_assume,loss:16 T=bf16 C=f32 BLOCK=4096 num_warps=8
cross_entropy.tile cross_entropy_grad $ce_assume,dlogits:16,dloss:16 T=bf16 C=f32 BLOCK=4096 num_warps=4
rope.tile rope $rope_assume T=bf16 C=f32 BLOCK_QH=32 BLOCK_KH=8 BLOCK_D=64 num_warps=8
rope.tile rope $rope_assume T=bf16 C=f32 BACKWARD=true BLOCK_QH=32 BLOCK_KH=8 BLOCK_D=64 num_warps=8
EOF

# the persistent GEMM with C += A @ B (bench/kernels/gemm.tile, bf16 128 x 256 x 64, 4 stages, TMA, M N K
# multiples of 16): the epilogue's scratch addresses are made where it stores (a few xors and constant
# offsets), not hoisted before the tile loop as a register each (64 of them, live through the K loop,
# spilled 320 bytes); ptxas, where it is, keeps the kernel in registers
gemm_args=(--emit=ptx --arch=sm_90a --tma -D BETA=true -D BLOCK_M=128 -D BLOCK_N=256 -D BLOCK_K=64 -D num_stages=4
	-D GROUP_M=8 -D num_warps=8 -D tma=1 --assume=stride_a:16,stride_b:16,stride_c:16,a:16,b:16,c:16,M:16,N:16,K:16)
if "$blkc" "${gemm_args[@]}" bench/kernels/gemm.tile -o "$tmp/gemm_beta.ptx" 2>"$tmp/err"; then
	pre=$(awk '/^\$L__BB0_[0-9]+:/{exit} {print}' "$tmp/gemm_beta.ptx" | grep -cE 'xor\.b32|add\.s64')
	spill=""
	if [ -n "$ptxas" ]; then
		spill=$("$ptxas" -arch=sm_90a -v "$tmp/gemm_beta.ptx" -o "$tmp/gemm_beta.cubin" 2>&1 |
			awk '/spill stores/{print $5}')
	fi
	if [ "$pre" -le 16 ] && { [ -z "$ptxas" ] || [ "$spill" = 0 ]; }; then
		ok "persistent GEMM, C += A @ B: $pre address ops before the tile loop${ptxas:+, ptxas: no spill}"
	else
		bad "persistent GEMM, C += A @ B: epilogue addresses" "$pre xor/add.s64 before the tile loop (16 at most), spill stores '${spill:-not assembled}'"
	fi
else
	bad "persistent GEMM, C += A @ B compiles" "$(head -2 "$tmp/err")"
fi

# sort and topk networks as the back end emits them, run on the CPU
# (tests/ptx/emu/run.sh: the LLVM IR with the GPU's shuffles and barriers
# emulated over threads), against a stable sort
emu=$(bash tests/ptx/emu/run.sh "$build" 2>&1)
printf '%s\n' "$emu" | sed '$d'
if [[ $(printf '%s\n' "$emu" | tail -n 1) =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
else
	bad "tests/ptx/emu" "$(printf '%s\n' "$emu" | tail -n 3)"
fi

# blk.nn.attention's launches (python/blk/nn/_attention.py's GPU configs)
# as the JIT specializes them (16-byte aligned pointers, the forward's
# strides multiples of 16 and its last ones 1): each compiles
# (pipeline-dots once read the axis facts of values it had made itself,
# past the end of its table: blkc crashed on the dK/dV kernel), its dots
# run on tensor cores, and up to d128 in 16-bit types with the
# deterministic dQ ptxas spills nothing (but dK/dV with SOFTCAP at d128:
# 48 bytes)
at_fwd=q:16,k:16,v:16,o:16,lse:16,stride_qd=1,stride_kd=1,stride_vd=1,stride_od=1,stride_qz:16,stride_qh:16
at_fwd=$at_fwd,stride_qm:16,stride_kz:16,stride_kh:16,stride_kn:16,stride_vz:16,stride_vh:16,stride_vn:16
at_fwd=$at_fwd,stride_oz:16,stride_oh:16,stride_om:16
at_kv=q:16,k:16,v:16,dout:16,lse:16,delta:16,dk:16,dv:16,dq_acc:16
at_dq=q:16,k:16,v:16,dout:16,lse:16,delta:16,dq:16
while read -r kernel assume defs; do
	[ -n "$kernel" ] || continue
	d=()
	for x in $defs; do d+=(-D "$x"); done
	what="stdlib/nn/attention.tile $kernel $defs (aligned, sm_90a)"
	spills=$([[ $defs == *HEAD_DIM=256* || $defs == *T=f32* || $defs == *ATOMIC_DQ=true* ||
		$kernel$defs == attention_bwd_dkdv*SOFTCAP* ]] && echo some || echo none)
	if ! "$blkc" --emit=ptx --arch=sm_90a -k "$kernel" --assume="$assume" "${d[@]}" stdlib/nn/attention.tile \
		-o "$tmp/nna.ptx" 2>"$tmp/err"; then
		bad "$what: blkc" "$(head -3 "$tmp/err")"
	elif ! grep -qE 'wgmma\.mma_async|mma\.sync' "$tmp/nna.ptx" || grep -qE '(ld|st)\.local' "$tmp/nna.ptx"; then
		bad "$what: tensor cores, no local memory" "$(grep -cE 'wgmma\.mma_async|mma\.sync' "$tmp/nna.ptx") mma"
	elif [ -n "$ptxas" ] && ! "$ptxas" -arch=sm_90a -v "$tmp/nna.ptx" -o "$tmp/nna.cubin" 2>"$tmp/err"; then
		bad "$what: ptxas" "$(head -3 "$tmp/err")"
	elif [ -n "$ptxas" ] && [ $spills = none ] && ! grep -q ' 0 bytes spill stores' "$tmp/err"; then
		bad "$what: no spills" "$(grep -m1 -o '[0-9]* bytes spill stores' "$tmp/err")"
	else
		ok "$what: tensor cores${ptxas:+, ptxas$([ $spills = none ] && echo ', no spills')}"
	fi
done <<EOF
attention_fwd $at_fwd T=bf16 HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=true CHECK_SCALE=false num_warps=4 num_stages=3
attention_fwd $at_fwd T=bf16 HEAD_DIM=128 BLOCK_M=128 BLOCK_N=64 CAUSAL=true CHECK_SCALE=false num_warps=8 num_stages=3
attention_fwd $at_fwd T=f16 HEAD_DIM=256 BLOCK_M=128 BLOCK_N=32 CHECK_SCALE=false num_warps=8 num_stages=2
attention_fwd $at_fwd T=f32 HEAD_DIM=128 BLOCK_M=64 BLOCK_N=32 CAUSAL=true CHECK_SCALE=false num_warps=4 num_stages=2
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=64 BLOCK_M=32 BLOCK_N=64 CAUSAL=true GROUP=4 num_warps=4 num_stages=3
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=128 BLOCK_M=32 BLOCK_N=64 CAUSAL=true num_warps=4 num_stages=3
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=128 BLOCK_M=32 BLOCK_N=64 ATOMIC_DQ=true num_warps=4 num_stages=3
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=256 BLOCK_M=32 BLOCK_N=64 CAUSAL=true num_warps=8 num_stages=1
attention_bwd_dkdv $at_kv T=f32 HEAD_DIM=64 BLOCK_M=16 BLOCK_N=32 CAUSAL=true num_warps=4 num_stages=2
attention_bwd_dq $at_dq T=bf16 HEAD_DIM=64 BLOCK_M=64 BLOCK_N=32 CAUSAL=true GROUP=4 num_warps=4 num_stages=3
attention_bwd_dq $at_dq T=f16 HEAD_DIM=128 BLOCK_M=64 BLOCK_N=32 num_warps=4 num_stages=3
attention_bwd_dq $at_dq T=bf16 HEAD_DIM=256 BLOCK_M=64 BLOCK_N=16 CAUSAL=true num_warps=4 num_stages=1
attention_fwd $at_fwd T=bf16 HEAD_DIM=128 BLOCK_M=128 BLOCK_N=64 CAUSAL=true WINDOW=512 SOFTCAP=50.0 CHECK_SCALE=false num_warps=8 num_stages=3
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=64 BLOCK_M=32 BLOCK_N=64 CAUSAL=true WINDOW=4096 num_warps=4 num_stages=3
attention_bwd_dkdv $at_kv T=bf16 HEAD_DIM=128 BLOCK_M=32 BLOCK_N=64 CAUSAL=true WINDOW=512 SOFTCAP=50.0 num_warps=4 num_stages=3
attention_bwd_dq $at_dq T=bf16 HEAD_DIM=128 BLOCK_M=64 BLOCK_N=32 CAUSAL=true WINDOW=512 SOFTCAP=50.0 num_warps=4 num_stages=3
EOF

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
