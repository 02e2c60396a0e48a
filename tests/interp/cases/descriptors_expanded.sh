#!/usr/bin/env bash
# tests/interp/cases/descriptors_expanded.sh BUILD_DIR: tests/ops/desc_api_test
# (tensor descriptor loads and stores against C references) and
# desc_loop_api_test (descriptors that change in loops and runtime ifs) and
# desc_ops_api_test (atomics, NaN padding, row gather and scatter through
# descriptors) again, with the desc ops expanded by expand-descriptors into
# the masked loads, stores and atomics the GPU back end compiles, then
# pipeline-dots after it as on the GPU: the pass must keep the ops' meaning
# (bounds, zeros or NaN, negative offsets, ranks, rows, atomics, loop-carried
# bases, sizes and strides).
set -u
build=${1:?usage: descriptors_expanded.sh BUILD_DIR}
passed=0 failed=0
# test, the least number of cases it has
for test in desc_api_test:50 desc_loop_api_test:25 desc_ops_api_test:50; do
	prog=$build/tests/ops/${test%:*}
	if [ ! -x "$prog" ]; then
		echo "FAIL descriptors_expanded: $prog is not built (make test-bins)"
		failed=$((failed + 1))
		continue
	fi
	for passes in canonicalize,cse,dce,expand-descriptors,canonicalize,cse,dce \
		canonicalize,cse,dce,expand-descriptors,pipeline-dots,cse,dce; do
		out=$(BLK_BACKEND=interp BLK_PASSES=$passes "$prog" 2>&1)
		last=$(tail -n 1 <<<"$out")
		if [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] && [ "${BASH_REMATCH[1]}" -gt "${test#*:}" ]; then
			echo "ok ${test%:*} expanded ($passes): $last"
			passed=$((passed + 1))
		else
			echo "FAIL ${test%:*} expanded ($passes)"
			grep -v '^ok' <<<"$out" | head -20 | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
