#!/usr/bin/env bash
# tests/interp/cases/pipeline_two_ahead.sh BUILD_DIR: tests/ops' matmul tiles
# (masked matmuls over odd shapes, K under one tile, 1 x 1 x 1, every dtype
# wgmma takes) and dot suite again on the interpreter after pipeline-dots as
# it runs for sm_90a, where the tiles of a wgmma K loop are loaded two
# iterations ahead with num_stages >= 4 (the loop carries both, the loads
# past the last iteration masked off): the pass must keep the kernels'
# meaning.
set -u
build=${1:?usage: pipeline_two_ahead.sh BUILD_DIR}
passed=0 failed=0
for t in matmul_tiles dot; do
	prog=$build/tests/ops/${t}_api_test
	if [ ! -x "$prog" ]; then
		echo "FAIL pipeline two ahead: $prog is not built (make test-bins)"
		failed=$((failed + 1))
		continue
	fi
	out=$(BLK_BACKEND=interp BLK_PASSES_TARGET=sm_90a BLK_PASSES=canonicalize,cse,dce,pipeline-dots,cse,dce "$prog" 2>&1)
	last=$(tail -n 1 <<<"$out")
	if [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] && [ "${BASH_REMATCH[1]}" -gt 50 ]; then
		echo "ok pipeline two ahead ($t, sm_90a): $last"
		passed=$((passed + 1))
	else
		echo "FAIL pipeline two ahead ($t, sm_90a)"
		grep -v '^ok' <<<"$out" | head -20 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
