#!/usr/bin/env bash
# tests/gpu/sanitize.sh BUILD_DIR: compute-sanitizer memcheck, racecheck and
# synccheck over every example host program and over the GPU API test
# (BUILD_DIR/tests/gpu/gpu_api_test), the matmul tiles of tests/ops
# (BUILD_DIR/tests/ops/matmul_tiles_api_test) and its descriptor matmuls and
# attention with their tiles by TMA (BLK_TMA=1), with and without warp
# specialization, then the shared-memory bank conflicts
# ncu counts for the examples that move data through shared memory. Run on
# the GPU machine; prints a line per check as it goes and last "N passed, N
# failed". Where there is no compute-sanitizer it prints one SKIP line and
# "0 passed, 0 failed". BLK_SANITIZE_ONLY=tma runs only the TMA checks,
# BLK_SANITIZE_TIMEOUT (300) is each TMA check's limit in seconds.
#
# The API test runs with BLK_GPU_TEST_NO_FAULT=1 (its last case is a kernel
# that stores out of bounds on purpose, which memcheck would report) and
# BLK_GPU_TEST_NO_TIMING=1 (a sanitizer slows every launch, so its
# launch-overhead target cannot hold), and with --report-api-errors no: it
# provokes driver errors on purpose (a 1 TiB cuMemAlloc, a launch over the
# shared-memory limit) and checks that blk reports them. A check passes when
# the sanitizer finds nothing and the program itself passes.
set -u
build=${1:?usage: tests/gpu/sanitize.sh BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 2
export BLK_BACKEND=gpu
passed=0 failed=0
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ ! -x "$cs" ]; then
	echo "SKIP: no compute-sanitizer"
	echo "0 passed, 0 failed"
	exit 0
fi
tools="memcheck racecheck synccheck"
all=true
limit=${BLK_SANITIZE_TIMEOUT:-300} # seconds a TMA check may take
[ "${BLK_SANITIZE_ONLY:-}" = tma ] && all=false

# check NAME TOOL COMMAND...: one sanitizer run, one line.
check() {
	local name=$1 tool=$2
	shift 2
	local out status summary count
	out=$("$cs" --tool "$tool" --error-exitcode 9 "$@" 2>&1)
	status=$?
	summary=$(printf '%s\n' "$out" | grep -m1 'SUMMARY' || echo "no summary")
	count=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ $status -eq 0 ]; then
		echo "ok   $name $tool: $summary${count:+ ($count)}"
		passed=$((passed + 1))
	else
		echo "FAIL $name $tool (status $status): $summary${count:+ ($count)}"
		printf '%s\n' "$out" | grep -v -e '^=========  *$' -e '^ok ' | head -20 | sed 's/^/     /'
		failed=$((failed + 1))
	fi
}

for prog in "$build"/examples/*; do
	if ! $all || [ ! -x "$prog" ]; then continue; fi
	for tool in $tools; do
		check "$(basename "$prog")" "$tool" "$prog"
	done
done

api="$build/tests/gpu/gpu_api_test"
if ! $all; then
	:
elif [ -x "$api" ]; then
	for tool in $tools; do
		BLK_GPU_TEST_NO_FAULT=1 BLK_GPU_TEST_NO_TIMING=1 check gpu_api_test "$tool" --report-api-errors no "$api"
	done
else
	echo "FAIL gpu_api_test: not built ($api; run make test-bins)"
	failed=$((failed + 1))
fi

# the tensor-core tiles (tests/ops/matmul_tiles: on an H100 wgmma from
# cp.async stage buffers, products in flight across iterations): the
# buffers' reuse is what racecheck and synccheck look at
tiles="$build/tests/ops/matmul_tiles_api_test"
if $all && [ -x "$tiles" ]; then
	for tool in $tools; do
		check matmul_tiles "$tool" "$tiles"
	done
fi

# the descriptor matmuls with their tiles by TMA (BLK_TMA=1: thread 0's
# bulk copies completing on mbarriers, every thread waiting for the parity,
# the drain at each K loop's exit), under a time limit: a wrong parity hangs
# the hang; each with and without warp specialization (a producer
# warpgroup issuing the copies, consumers giving buffers back on empty
# mbarriers, C's tile stored an atom at a time), and the persistent example
# split the same way
for ws in 1 0; do
	how="TMA"
	[ $ws = 1 ] && how="TMA, warp-specialized"
	for name in desc_matmul desc_attention; do
		prog="$build/tests/ops/${name}_api_test"
		[ -x "$prog" ] || continue
		for tool in $tools; do
			BLK_TMA=1 BLK_WARP_SPECIALIZE=$ws check "$name ($how)" "$tool" timeout "$limit" "$prog"
		done
	done
done
if [ -x "$build/examples/matmul_persistent" ]; then
	for tool in $tools; do
		BLK_WARP_SPECIALIZE=1 check "matmul_persistent (warp-specialized)" "$tool" timeout "$limit" \
			"$build/examples/matmul_persistent"
	done
fi

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if $all && [ -x "$ncu" ]; then
	for name in matmul w4a16_gemv attention; do
		[ -x "$build/examples/$name" ] || continue
		echo "bank conflicts, $name (per kernel launch):"
		"$ncu" --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
			"$build/examples/$name" 2>&1 | grep -E 'bank_conflicts|wavefronts|^  [a-z_0-9]+\(' | head -24 | sed 's/^/     /'
	done
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
