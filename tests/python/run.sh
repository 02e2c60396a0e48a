#!/usr/bin/env bash
# tests/python/run.sh BUILD_DIR: the blk Python package (python/), no GPU or torch.
#
# 1. Installs the package from this checkout into a fresh virtual environment
#    with pip (`pip install ./python`; BLK_LIB=BUILD_DIR/libblk.so, so nothing
#    is rebuilt and nothing is downloaded for it). Where python3 has no venv
#    module, the wheel the package's build backend makes is unpacked onto
#    PYTHONPATH instead (one line says so).
# 2. numpy: the system's, else `pip install numpy` into the venv; where
#    neither works, the cases that need arrays are skipped (one line says so).
#    ml_dtypes (numpy bf16/fp8 arrays) the same way; the extras the
#    installed package offers (numpy, ml-dtypes) checked.
# 3. tests/python/test_package.py with the installed package, from outside
#    the checkout: kernels on the interpreter with numpy arrays against numpy
#    references, and every bad call raising blk.Error naming the parameter.
# 4. tests/python/test_gpu_path.py: the GPU launch path (launchers, streams,
#    devices, bad calls) against the stand-in driver of tests/runtime and
#    tests/python/fake_torch.py, no GPU or torch; twice where the package has
#    its launchers in C (python/blk/_fastlaunch.c): with them, and with
#    BLK_FAST_LAUNCH=0 (those in Python).
#    tests/python/test_triton.py: blk.triton (Triton-syntax kernels
#    translated to blk) on the interpreter against numpy.
# 5. tests/fuzz/fuzz_python.py for $BLK_FUZZ_PY_SECONDS (default 20) seconds:
#    the Python front door fuzzed, nothing but blk.Error may come out.
# 6. Each examples/python/NAME.py on the interpreter (small sizes), checked
#    against numpy; train_llama.py (torch training) is skipped there and
#    run by test_nn_patch.py.
# 7. tests/python/test_nn*.py: blk.nn (python/blk/nn, stdlib/nn) with real
#    torch on CPU tensors (the interpreter), the package as its wheel
#    unpacked onto PYTHONPATH. torch is the python's of $BLK_TORCH_PYTHON,
#    else that of a virtual environment kept between runs,
#    $BLK_TORCH_VENV (default ~/.cache/blk/torch-venv), made with
#    `pip install torch` the first time (the CPU build from PyTorch's index
#    where it can be reached, else PyPI's wheel with its CUDA libraries,
#    about 5 GiB; BLK_NO_TORCH_INSTALL=1: never), and transformers into
#    it for test_nn_patch.py. Without torch each file says in one line
#    that it skips (test_nn_patch.py also skips its patch cases without
#    transformers).
# Prints a line per case and last "N passed, N failed". A sanitized build
# (BLK_SANITIZE=1 or thread) is skipped: its libblk.so needs the sanitizer
# runtime loaded first, which python3 is not.
set -u
build=${1:?usage: tests/python/run.sh BUILD_DIR}
build=$(cd "$build" && pwd)
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 30 | sed 's/^/    /'; failed=$((failed + 1)); }

if [ "${BLK_SANITIZE:-0}" != 0 ]; then
	echo "skip tests/python: a sanitized build (BLK_SANITIZE=$BLK_SANITIZE) cannot be loaded into python3"
	echo "0 passed, 0 failed"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "skip tests/python: no python3"
	echo "0 passed, 0 failed"
	exit 0
fi
if [ ! -f "$build/libblk.so" ]; then
	fail "libblk.so: not built ($build/libblk.so)"
	echo "$passed passed, $failed failed"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/blk-python.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export BLK_LIB="$build/libblk.so"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
py=python3
if python3 -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1 && [ -x "$tmp/venv/bin/pip" ]; then
	py=$tmp/venv/bin/python
	if out=$("$py" -m pip install --no-index --no-deps "$repo/python" 2>&1); then
		pass "pip install ./python into a fresh venv (libblk.so and stdlib inside the package)"
	else
		fail "pip install ./python" "$out"
	fi
	unset BLK_LIB  # from here on the package finds its own libblk.so
else
	echo "note: python3 -m venv is not available here (Debian: python3-venv): the wheel is unpacked onto PYTHONPATH"
	if out=$(cd "$tmp" && python3 "$repo/python/_blk_build.py" "$tmp/wheel" 2>&1) &&
		python3 -m zipfile -e "$tmp"/wheel/*.whl "$tmp/site" >/dev/null 2>&1; then
		pass "the wheel of python/_blk_build.py, unpacked"
		export PYTHONPATH="$tmp/site"
		unset BLK_LIB
	else
		fail "building the wheel" "$out"
	fi
fi

# the installed package, its own libblk.so and standard library
if out=$(cd "$tmp" && "$py" -c 'import blk, os
p = blk.library_path()
assert p.endswith(os.path.join("blk", "lib", "libblk.so")), p
assert os.path.isfile(os.path.join(os.path.dirname(blk.__file__), "stdlib", "math.tile"))
assert os.path.isfile(os.path.join(os.path.dirname(blk.__file__), "stdlib", "nn", "rmsnorm.tile"))
assert os.path.isfile(os.path.join(os.path.dirname(blk.__file__), "nn", "__init__.py"))
m = blk.load(source="import \"std/math.tile\";\nkernel f(x: *f32) grid(1) { let o = arange(0, 16); store(x + o, relu(load(x + o))); }")
print(blk.version(), p)' 2>&1); then
	pass "import blk: $out"
else
	fail "import blk (installed)" "$out"
fi

# numpy: the system's, or pip's (PyPI); else the array cases are skipped
if ! (cd "$tmp" && "$py" -c 'import numpy') >/dev/null 2>&1; then
	if [ "$py" != python3 ]; then
		timeout 300 "$py" -m pip install -q numpy >"$tmp/numpy.log" 2>&1 ||
			echo "note: pip install numpy failed (no network?): $(tail -n 1 "$tmp/numpy.log")"
	fi
fi
have_numpy=0
(cd "$tmp" && "$py" -c 'import numpy') >/dev/null 2>&1 && have_numpy=1
# ml_dtypes (numpy bf16 and fp8 arrays), optional in the same way: where it
# cannot be had, test_package.py says it skips that case
if [ $have_numpy = 1 ] && [ "$py" != python3 ] && ! (cd "$tmp" && "$py" -c 'import ml_dtypes') >/dev/null 2>&1; then
	timeout 300 "$py" -m pip install -q ml_dtypes >"$tmp/ml_dtypes.log" 2>&1 ||
		echo "note: pip install ml_dtypes failed (no network?): $(tail -n 1 "$tmp/ml_dtypes.log")"
fi

# the extras the package offers (pip install "./python[numpy]")
if out=$(cd "$tmp" && "$py" -c 'import importlib.metadata as m
x = m.metadata("blk").get_all("Provides-Extra") or []
r = m.requires("blk") or []
assert "numpy" in x and "ml-dtypes" in x, x
assert any(q.startswith("numpy") and "extra == \"numpy\"" in q for q in r), r
assert any(q.startswith("ml_dtypes") and "ml-dtypes" in q for q in r), r
print(", ".join(x))' 2>&1); then
	pass "the installed package offers the extras: $out"
else
	fail "the installed package's extras (pip install \"./python[numpy]\")" "$out"
fi

# the package's cases (each test prints its own lines and counts):
# test_package.py on the interpreter; test_gpu_path.py on the GPU backend
# against the stand-in driver of tests/runtime, with tests/python/fake_torch.py
run_counted() {
	local name=$1 out status last
	shift
	out=$(cd "$tmp" && timeout "${RUN_TIMEOUT:-300}" "$py" "$@" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		[ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && fail "$name exited with status $status"
	else
		fail "$name crashed or printed no counts (status $status)" "$out"
	fi
}
run_counted test_package.py "$repo/tests/python/test_package.py"
if [ $have_numpy = 1 ]; then
	run_counted test_triton.py "$repo/tests/python/test_triton.py"
else
	echo "skip test_triton.py: no numpy"
fi
if [ -f "$build/tests/runtime/fake/libcuda.so.1" ]; then
	run_counted test_gpu_path.py "$repo/tests/python/test_gpu_path.py" "$build/tests/runtime/fake/libcuda.so.1"
	# again with the launchers in Python (where the package has them in C)
	if [ -n "$(cd "$tmp" && "$py" -c 'import blk._runtime as r; print(r.lib().fast_ext or "")' 2>/dev/null)" ]; then
		echo "   (test_gpu_path.py again with BLK_FAST_LAUNCH=0: the launchers in Python)"
		BLK_FAST_LAUNCH=0 run_counted test_gpu_path.py "$repo/tests/python/test_gpu_path.py" \
			"$build/tests/runtime/fake/libcuda.so.1"
	else
		echo "   (the package has no launchers in C: test_gpu_path.py ran with those in Python)"
	fi
else
	fail "test_gpu_path.py: the stand-in driver is not built ($build/tests/runtime/fake/libcuda.so.1)"
fi

# the Python front door fuzzed for a short while (tests/fuzz/fuzz_python.py:
# blk.load(source=...) of mutated sources, random arguments, launches; only
# blk.Error may come out). Longer: BLK_FUZZ_PY_SECONDS=600 tests/python/run.sh
# BUILD, or tests/fuzz/fuzz_python.py --seconds N yourself.
fuzz_s=${BLK_FUZZ_PY_SECONDS:-20}
RUN_TIMEOUT=$((${fuzz_s%.*} + 300)) run_counted fuzz_python.py "$repo/tests/fuzz/fuzz_python.py" --seconds "$fuzz_s"

# every example kernel file has its Python driver
missing=""
for t in "$repo"/examples/*.tile; do
	name=$(basename "$t" .tile)
	[ -f "$repo/examples/python/$name.py" ] || missing="$missing $name"
done
if [ -z "$missing" ]; then
	pass "every examples/*.tile has a driver in examples/python"
else
	fail "examples without a Python driver:$missing"
fi

# the examples' Python drivers, on the interpreter against numpy
if [ $have_numpy = 1 ]; then
	for f in examples/python/*.py; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .py)
		if [ "$name" = train_llama ]; then
			# a torch training loop, not a kernel driver: test_nn_patch.py
			# runs it (--tiny, eager and blk) with torch below
			echo "skip examples/python/train_llama.py here (numpy only): it needs torch; tests/python/test_nn_patch.py runs it"
			continue
		fi
		out=$(cd "$tmp" && BLK_BACKEND=interpreter timeout 300 "$py" "$repo/$f" 2>&1)
		if [ $? -eq 0 ]; then
			pass "examples/python/$name.py (interpreter): $(printf '%s\n' "$out" | tail -n 1)"
		else
			fail "examples/python/$name.py (interpreter)" "$out"
		fi
	done
else
	echo "skip examples/python: no numpy"
fi

# blk.nn with real torch: a python that has it ($BLK_TORCH_PYTHON, or the
# kept venv, installed the first time), the package as its wheel unpacked
torch_py=${BLK_TORCH_PYTHON:-}
if [ -z "$torch_py" ]; then
	tvenv=${BLK_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/blk/torch-venv}
	if ! "$tvenv/bin/python" -c 'import torch' >/dev/null 2>&1 && [ "${BLK_NO_TORCH_INSTALL:-0}" = 0 ]; then
		echo "note: installing torch (pip) into $tvenv for tests/python/test_nn.py, once"
		mkdir -p "$(dirname "$tvenv")"
		if python3 -m venv "$tvenv" >"$tmp/tvenv.log" 2>&1; then
			# the CPU build first (about 200 MB, from PyTorch's own index),
			# else PyPI's (with its CUDA libraries, about 5 GiB)
			timeout 900 "$tvenv/bin/pip" install -q --index-url https://download.pytorch.org/whl/cpu torch \
				>>"$tmp/tvenv.log" 2>&1 ||
				timeout 1500 "$tvenv/bin/pip" install -q torch >>"$tmp/tvenv.log" 2>&1 ||
				echo "note: pip install torch failed: $(tail -n 1 "$tmp/tvenv.log")"
			timeout 300 "$tvenv/bin/pip" install -q numpy >>"$tmp/tvenv.log" 2>&1 || true
		else
			echo "note: python3 -m venv failed: $(tail -n 1 "$tmp/tvenv.log")"
		fi
	fi
	"$tvenv/bin/python" -c 'import torch' >/dev/null 2>&1 && torch_py=$tvenv/bin/python
	# transformers, for test_nn_patch.py (blk.nn.patch on its models); where
	# it cannot be had, that file skips its patch cases in a line
	if [ -n "$torch_py" ] && [ "${BLK_NO_TORCH_INSTALL:-0}" = 0 ] &&
		! "$torch_py" -c 'import transformers' >/dev/null 2>&1; then
		timeout 600 "$tvenv/bin/pip" install -q transformers >"$tmp/transformers.log" 2>&1 ||
			echo "note: pip install transformers failed (no network?): $(tail -n 1 "$tmp/transformers.log")"
	fi
fi
if [ -n "$torch_py" ]; then
	if out=$(cd "$tmp" && BLK_LIB="$build/libblk.so" python3 "$repo/python/_blk_build.py" "$tmp/nnwheel" 2>&1) &&
		python3 -m zipfile -e "$tmp"/nnwheel/*.whl "$tmp/nnsite" >/dev/null 2>&1; then
		echo "   (tests/python/test_nn*.py with $torch_py: torch $("$torch_py" -c 'import torch; print(torch.__version__)'))"
		for t in "$repo"/tests/python/test_nn*.py; do
			py=$torch_py PYTHONPATH="$tmp/nnsite" BLK_LIB="" RUN_TIMEOUT=900 run_counted "$(basename "$t")" "$t"
		done
	else
		fail "building the wheel for test_nn.py" "$out"
	fi
else
	for t in "$repo"/tests/python/test_nn*.py; do
		run_counted "$(basename "$t")" "$t"   # says it skips
	done
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
