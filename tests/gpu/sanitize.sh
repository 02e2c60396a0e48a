#!/usr/bin/env bash
# tests/gpu/sanitize.sh BUILD_DIR: compute-sanitizer memcheck and racecheck
# over every example host program on the GPU, and the shared-memory bank
# conflicts ncu counts for the examples that move data through shared
# memory. Run on the GPU machine; prints a line per check and last
# "N passed, N failed".
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
for prog in "$build"/examples/*; do
	[ -x "$prog" ] || continue
	name=$(basename "$prog")
	for tool in memcheck racecheck; do
		out=$("$cs" --tool $tool --error-exitcode 9 "$prog" 2>&1)
		status=$?
		summary=$(printf '%s\n' "$out" | grep -m1 'SUMMARY' || echo "no summary")
		if [ $status -eq 0 ]; then
			echo "ok   $name $tool: $summary"
			passed=$((passed + 1))
		else
			echo "FAIL $name $tool (status $status): $summary"
			printf '%s\n' "$out" | grep -v '^=========  *$' | head -15 | sed 's/^/     /'
			failed=$((failed + 1))
		fi
	done
done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ -x "$ncu" ]; then
	for name in matmul w4a16_gemv attention; do
		[ -x "$build/examples/$name" ] || continue
		echo "bank conflicts, $name (per kernel launch):"
		"$ncu" --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
			"$build/examples/$name" 2>&1 | grep -E 'bank_conflicts|wavefronts|^  [a-z_0-9]+\(' | head -24 | sed 's/^/     /'
	done
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
