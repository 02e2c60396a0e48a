#!/usr/bin/env bash
# The issue-34 Liger rows (bench/rows_liger.py) on the lent H200, one device call:
#   run(command="bash gpu_tmp_tbench34.sh",
#       carry=["build/libblk.so", "build/_blkfast.abi3.so", ".whl"], timeout_s=600)
# (.whl: Liger-Kernel 0.8.5's wheel, installed into /tmp/site when not there yet.)
# Expected: 2 to 4 minutes (the self-test, then a worker process a side, each at most 200 s).
# $OUT/bench.md: the table; $OUT/liger_triton.json, $OUT/liger_blk.json: each side's raw results.
set -euo pipefail
cd "$(dirname "$0")"
if ! PYTHONPATH=/tmp/site python3 -c "import liger_kernel" 2>/dev/null; then
	python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
		.whl/liger_kernel-0.8.5-py3-none-any.whl
fi
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
bench/run --only issue34
