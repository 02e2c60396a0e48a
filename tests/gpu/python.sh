#!/usr/bin/env bash
# tests/gpu/python.sh [BUILD_DIR]: the blk Python package on a GPU, with torch.
#  - every examples/python/NAME.py on the GPU, checked against torch;
#  - tests/gpu/python_gpu.py: CUDA tensors, bad calls, compile(), a blk
#    custom op in torch.compile(fullgraph=True), CUDA-graph capture and
#    replay, launch overhead; with the launchers in C where the package
#    has them (build/_blkfast.abi3.so), then again with BLK_FAST_LAUNCH=0;
#  - tests/gpu/python_multi_gpu.py: tensors on cuda:1, devices by turns and a
#    thread a device, mixed devices refused, the torch.distributed example
#    under torchrun (skipped in one line with fewer than 2 GPUs);
#  - tests/python/test_nn*.py with BLK_NN_DEVICE=cuda: blk.nn's ops on the
#    GPU against torch, at small and LLM shapes.
# The package is python/ of this checkout on BUILD_DIR/libblk.so (default
# build). Where there is no torch or no GPU it says so in one line and
# prints "0 passed, 0 failed". Prints a line per case and last
# "N passed, N failed".
set -u
build=${1:-build}
build=$(cd "$build" && pwd)
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
passed=0
failed=0
py=${PYTHON:-python3}
export BLK_LIB="$build/libblk.so"
export PYTHONPATH="$repo/python${PYTHONPATH:+:$PYTHONPATH}"

why=$("$py" -c 'import torch, numpy
print("" if torch.cuda.is_available() else "torch sees no GPU")' 2>&1 | tail -n 1)
if [ -n "$why" ]; then
	echo "SKIP tests/gpu/python.sh: no torch, numpy or GPU ($why)"
	echo "0 passed, 0 failed"
	exit 0
fi

for f in examples/python/*.py; do
	[ -f "$f" ] || continue
	case $(basename "$f") in _*) continue ;; esac
	name=$(basename "$f" .py)
	out=$(BLK_BACKEND= timeout 600 "$py" "$f" 2>&1)
	if [ $? -eq 0 ]; then
		echo "ok   examples/python/$name.py: $(printf '%s\n' "$out" | tail -n 1)"
		passed=$((passed + 1))
	else
		echo "FAIL examples/python/$name.py"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done

# run_counted SCRIPT FAST: tests/gpu/SCRIPT.py with BLK_FAST_LAUNCH=FAST, its
# counts added
run_counted() {
	local t=$1 out status last
	echo "== tests/gpu/$t.py$([ "$2" = 0 ] && echo " with BLK_FAST_LAUNCH=0")"
	out=$(BLK_FAST_LAUNCH=$2 timeout 600 "$py" "tests/gpu/$t.py" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			echo "FAIL $t.py: exited with status $status"
			failed=$((failed + 1))
		fi
	else
		echo "FAIL $t.py: crashed or printed no counts (status $status)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

run_counted python_gpu 1
run_counted python_multi_gpu 1
# again with the launchers in Python, where the package has them in C
if [ -n "$("$py" -c 'import blk._runtime as r; print(r.lib().fast_ext or "")' 2>/dev/null)" ]; then
	run_counted python_gpu 0
fi
# blk.nn on the GPU: the interpreter's cases of tests/python/test_nn*.py on
# CUDA tensors, and their LLM-shape cases
for t in tests/python/test_nn*.py; do
	echo "== $t with BLK_NN_DEVICE=cuda"
	out=$(BLK_NN_DEVICE=cuda timeout 600 "$py" "$t" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] && { [ $status -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ]; }; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		echo "FAIL $t: crashed or printed no counts (status $status)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
