#!/usr/bin/env bash
# bench/tc_sweeps.sh [BUILD] [ws]: blkc tune over the tensor-core kernels' configs
# on the GPU (f16, 4096^3 matmuls; attention 4 x 16 x 4096, d64 and d128,
# causal and not): tile shapes, num_stages, num_warps, and tma (TMA or
# cp.async for descriptor tiles). A tool for choosing configs and finding
# where TMA pays; bench/run is the comparison with Triton. Each sweep
# prints its table as it ends. With `ws`: only the TMA configs, with and
# without warp specialization (a producer warpgroup issuing the copies;
# split, num_stages is the number of buffers, so the deeper configs only
# differ there).
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 2
export BLK_BACKEND=gpu
tune() { "$build/blkc" tune --reps 30 "$@" 2>/dev/null | sed -n '/configs, median/,$p'; }
mm="a=16777216:randn b=16777216:randn c=16777216 M=4096 N=4096 K=4096"

if [ "${2:-}" = ws ]; then
	for n in 4096 8192; do
		echo "== matmul (descriptors, persistent, TMA), examples/matmul_persistent.tile, ${n}^3"
		e=$((n * n))
		tune examples/matmul_persistent.tile a=$e:randn b=$e:randn c=$e M=$n N=$n K=$n stride_am=$n stride_bk=$n \
			stride_cm=$n -D GROUP_M=8 -D tma=1 --config=BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,num_warps=8,num_stages=4 \
			--config=BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=4 \
			--config=BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=5 \
			--config=BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=6 \
			--config=BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_warps=8,num_stages=6 \
			--config=BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_warps=8,num_stages=8 --sweep=warp_specialize=0,1
	done
	for d in 64 128; do
		for causal in false true; do
			echo "== attention (descriptors, TMA), bench/kernels/attention_desc.tile, 4 x 16 x 4096 x $d, causal $causal"
			n=$((64 * 4096 * d))
			tune bench/kernels/attention_desc.tile q=$n:randn k=$n:randn v=$n:randn o=$n lse=262144 ZH=64 N_CTX=4096 \
				rows=262144 scale=0.125 -D HEAD_DIM=$d -D CAUSAL=$causal -D BLOCK_M=128 -D tma=1 \
				--sweep=BLOCK_N=64,128 --sweep=num_warps=8 --sweep=num_stages=2,3,4 --sweep=warp_specialize=0,1
		done
	done
	exit 0
fi

echo "== matmul (pointers), examples/matmul.tile, 4096^3"
tune examples/matmul.tile $mm stride_am=4096 stride_ak=1 stride_bk=4096 stride_bn=1 stride_cm=4096 stride_cn=1 \
	-D GROUP_M=8 --config=BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,num_warps=8 \
	--config=BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8 --sweep=num_stages=3,4

echo "== matmul (descriptors, persistent), examples/matmul_persistent.tile, 4096^3"
tune examples/matmul_persistent.tile $mm stride_am=4096 stride_bk=4096 stride_cm=4096 \
	-D GROUP_M=8 --config=BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,num_warps=8 \
	--config=BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8 --sweep=num_stages=3,4 --sweep=tma=0,1

for d in 64 128; do
	for causal in false true; do
		echo "== attention (descriptors), bench/kernels/attention_desc.tile, 4 x 16 x 4096 x $d, causal $causal"
		n=$((64 * 4096 * d))
		tune bench/kernels/attention_desc.tile q=$n:randn k=$n:randn v=$n:randn o=$n lse=262144 ZH=64 N_CTX=4096 \
			rows=262144 scale=0.125 -D HEAD_DIM=$d -D CAUSAL=$causal -D BLOCK_M=128 \
			--sweep=BLOCK_N=64,128 --sweep=num_warps=4,8 --sweep=num_stages=2,3,4 --sweep=tma=0,1
	done
done
