#!/usr/bin/env bash
# tools/ptx_snapshot.sh BUILD_DIR OUT_DIR: writes what the compiler makes of
# every .tile file in the tree (tile IR after the GPU passes, LLVM IR, PTX for
# each arch; the diagnostics where a file is refused), one file each, so that
# two builds can be compared with `diff -r`. A refactoring that must not change
# code generation shows no difference.
set -u
build=$(cd "${1:?usage: tools/ptx_snapshot.sh BUILD_DIR OUT_DIR}" && pwd) || exit 2
out=${2:?usage: tools/ptx_snapshot.sh BUILD_DIR OUT_DIR}
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out"
blkc=$build/blkc
# the JIT's usual specialization of matmul and attention (tests/ptx uses these)
mm_assume='a:16,b:16,c:16,M:16,N:16,K:16,stride_am:16,stride_bk:16,stride_cm:16,stride_ak=1,stride_bn=1,stride_cn=1'
n=0
emit() { # name, then blkc arguments
	local name=$1
	shift
	"$blkc" "$@" >"$out/$name" 2>&1
	echo "exit $?" >>"$out/$name"
	n=$((n + 1))
}
while IFS= read -r tile; do
	key=$(echo "$tile" | tr '/' '_')
	emit "$key.check" --emit=check --color=never "$tile"
	emit "$key.ir" --emit=ir --color=never "$tile"
	for arch in sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a; do
		emit "$key.$arch.ptx" --emit=ptx --color=never --arch=$arch "$tile"
	done
	emit "$key.sm_90a.tma.ptx" --emit=ptx --color=never --arch=sm_90a --tma "$tile"
	emit "$key.llvm" --emit=llvm --color=never --arch=sm_90 "$tile"
done < <(find examples tests stdlib bench -name '*.tile' | LC_ALL=C sort)
for arch in sm_80 sm_90 sm_90a; do
	emit "matmul.spec.$arch.ptx" --emit=ptx --arch=$arch -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 \
		-D GROUP_M=8 --assume=$mm_assume examples/matmul.tile
	emit "matmul.spec64.$arch.ptx" --emit=ptx --arch=$arch -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=32 \
		-D GROUP_M=8 --assume=$mm_assume examples/matmul.tile
done
spec=q:16,k:16,v:16,o:16,lse:16,stride_qd=1,stride_kd=1,stride_vd=1,stride_od=1
spec=$spec,stride_qz:16,stride_qh:16,stride_qm:16,stride_kz:16,stride_kh:16,stride_kn:16
spec=$spec,stride_vz:16,stride_vh:16,stride_vn:16,stride_oz:16,stride_oh:16,stride_om:16,N_CTX:16
for arch in sm_80 sm_90 sm_90a; do
	emit "attention.spec.$arch.ptx" --emit=ptx --arch=$arch -D BLOCK_M=128 -D BLOCK_N=128 -D num_warps=8 \
		--assume=$spec -k attention_fwd stdlib/nn/attention.tile
	emit "attention.spec64.$arch.ptx" --emit=ptx --arch=$arch -D BLOCK_M=64 -D BLOCK_N=64 -D num_warps=4 \
		--assume=$spec -k attention_fwd stdlib/nn/attention.tile
done
emit "vector_add.spec.ptx" --emit=ptx --assume=x:16,y:16,out:16,n:16 examples/vector_add.tile
emit "softmax.spec.ptx" --emit=ptx --assume=x:16,out:16,x_row_stride:16,out_row_stride:16 examples/softmax.tile
# the TMA paths as the JIT specializes them: the persistent matmul with and
# without warp specialization, and the descriptor attention
# (a const given twice is an error: BLOCK_N apart)
mp_tiles=(-D BLOCK_M=128 -D BLOCK_K=64 -D GROUP_M=8 -D num_warps=8 -D num_stages=4
	--assume=a:16,b:16,c:16,stride_am:16,stride_bk:16,stride_cm:16 examples/matmul_persistent.tile)
mp=(-D BLOCK_N=128 "${mp_tiles[@]}")
for ws in 0 1; do
	for tma in 0 1; do
		emit "matmul_persistent.tma$tma.ws$ws.ptx" --emit=ptx --arch=sm_90a -D tma=$tma -D warp_specialize=$ws "${mp[@]}"
		emit "attention_desc.tma$tma.ws$ws.ptx" --emit=ptx --arch=sm_90a -D HEAD_DIM=64 -D BLOCK_M=128 \
			-D BLOCK_N=128 -D num_warps=8 -D num_stages=2 -D CAUSAL=true -D tma=$tma -D warp_specialize=$ws \
			--assume=q:16,k:16,v:16,o:16,lse:16 bench/kernels/attention_desc.tile
	done
done
emit "matmul_persistent.256.ptx" --emit=ptx --arch=sm_90a -D tma=1 -D warp_specialize=1 -D BLOCK_N=256 "${mp_tiles[@]}"
emit "matmul_persistent.fp_fusion.ptx" --emit=ptx --arch=sm_90a -D tma=1 -D fp_fusion=1 "${mp[@]}"
echo "$n outputs in $out"
