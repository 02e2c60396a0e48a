#!/usr/bin/env bash
# tests/gpu/run.sh BUILD_DIR: blk on a real GPU.
#  - BUILD_DIR/tests/gpu/gpu_api_test: kernels through blk.h on the GPU
#    backend (tests/gpu/gpu_api_test.c); where no GPU can be used it prints
#    "SKIP: no GPU (reason)" and so does this script, then "0 passed, 0 failed";
#  - print with '%' in its message: the interpreter's lines (print_percent.tile);
#  - BUILD_DIR/tests/gpu/dots_api_test: every kind of dot (f16, bf16, f32 as
#    tf32, tf32x3 and ieee, i8, fp8 e4m3 / e5m2 / mixed) in a masked matmul
#    over odd shapes (tests/gpu/dots_api_test.c);
#  - the matmul layouts (tests/ops/matmul_layouts_api_test with
#    BLK_BACKEND=gpu): NN, NT, TN, TT by pointer tiles and by descriptors
#    (BLK_TMA=1), f16, bf16, f32, fp8 e4m3 and i8, and a training step's fused
#    epilogues, in every tile config (128 x 256 x 64, 8 warps, 3 and 4
#    stages among them), a shard of the cases in each of up to 16 processes;
#  - BUILD_DIR/tests/gpu/multi_gpu_api_test and blkc tune --devices=0,1 on
#    two GPUs (one SKIP line where there are fewer);
#  - every example host program built in BUILD_DIR/examples (make examples),
#    run with BLK_BACKEND=gpu: each checks its kernel against C and exits 0;
#  - TMA (BLK_TMA=1): tests/ops/desc_matmul_api_test, desc_attention_api_test,
#    desc_loop_api_test (loop-carried descriptors beside TMA ones), desc_ops_api_test,
#    desc_api_test (boxes at negative offsets: plain stores)
#    and the persistent matmul example with their descriptor tiles by TMA;
#  - tests/gpu/python.sh: the Python package against torch (where torch is);
#  - tests/gpu/attention_branches.py: attention with branches in its loop;
#  - tests/gpu/attention_bwd.py: attention backward against torch in float64
#    (part attention_bwd; also in the default run);
#  - with BLK_GPU_OPS=1, last, the suite tests/ops with BLK_BACKEND=gpu
#    (its failures printed as they come).
# BLK_GPU_PARTS=print,dots,layouts,gpus,examples,tma,python,attention_bwd,ops picks parts (see want()).
# Prints a line per case and last "N passed, N failed".
set -u
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
cd "$(dirname "$0")/../.." || exit 2
passed=0
failed=0
# "== what: N s" after each part, so that a device call can be planned
t0=$SECONDS
took() { echo "== $1: $((SECONDS - t0)) s"; t0=$SECONDS; }
# BLK_GPU_PARTS=print,dots,layouts,gpus,examples,tma,python,attention_bwd,ops (comma-separated) runs those
# parts only, so that a suite longer than one device call can take two;
# unset, all of them (ops with BLK_GPU_OPS=1). gpu_api_test always runs.
want() { [ -z "${BLK_GPU_PARTS:-}" ] || [[ ",$BLK_GPU_PARTS," == *",$1,"* ]]; }

# ok WHAT / bad WHAT [OUTPUT [LINES]]: one case passed, or failed with the
# last LINES (5) of its output shown
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() {
	echo "FAIL $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n "${3:-5}" | sed 's/^/     /'
	failed=$((failed + 1))
}

# Adds up the counts of a program's output (its last line); prints the rest.
count() {
	local name=$1 out=$2 status=$3 last
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ "$status" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			bad "$name: exited with status $status"
		fi
	else
		printf '%s\n' "$last"
		bad "$name: crashed or printed no counts (status $status)"
	fi
}

prog="$build/tests/gpu/gpu_api_test"
if [ ! -x "$prog" ]; then
	echo "FAIL gpu_api_test: not built ($prog)"
	echo "0 passed, 1 failed"
	exit 1
fi
out=$("$prog" 2>&1)
status=$?
if [[ $(printf '%s\n' "$out" | head -n 1) == SKIP:* ]]; then
	printf '%s\n' "$out" | head -n 1
	echo "0 passed, 0 failed"
	exit 0
fi
count gpu_api_test "$out" $status

took gpu_api_test

# print with '%' in its message (tests/gpu/print_percent.tile): the GPU's
# lines, in any order, are the interpreter's (the message printed as text)
want print && {
	tile=tests/gpu/print_percent.tile
	want_out=$(BLK_BACKEND=interpreter "$build/blkc" run "$tile" x=64:arange 2>&1 | sort)
	got=$(BLK_BACKEND=gpu timeout 120 "$build/blkc" run "$tile" x=64:arange 2>&1)
	status=$?
	if [ $status -eq 0 ] && [ "$(sort <<<"$got")" = "$want_out" ] && [ "$(wc -l <<<"$want_out")" = 64 ]; then
		ok "print(\"50% done %s%s%s%s%s %d\", ...) on the GPU: the interpreter's 64 lines"
	else
		bad "print with '%' in its message on the GPU (status $status)" "$got"
	fi
}
took print

if want dots; then
	# every kind of dot (tensor cores: f16, bf16, tf32, i8, fp8) over odd shapes
	prog="$build/tests/gpu/dots_api_test"
	if [ -x "$prog" ]; then
		out=$("$prog" 2>&1)
		count dots_api_test "$out" $?
	else
		bad "dots_api_test: not built ($prog)"
	fi
fi
took dots_api_test

if want layouts; then
	# every layout of a matmul and the fused epilogues, in every tile config
	# (tests/ops/matmul_layouts_api_test.c), the descriptors' tiles by TMA
	# (BLK_TMA=1), the cases shared among processes (BLK_LAYOUTS_SHARD),
	# whose kernels compile at once; one seed
	prog="$build/tests/ops/matmul_layouts_api_test"
	if [ -x "$prog" ]; then
		dir=$(mktemp -d)
		shards=$(nproc 2>/dev/null || echo 4)
		[ "$shards" -gt 16 ] && shards=16
		seed=${BLK_OPS_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000000 ))}
		echo "layouts: seed $seed (rerun with BLK_OPS_SEED=$seed), $shards processes"
		for ((i = 0; i < shards; i++)); do
			(BLK_BACKEND=gpu BLK_TMA=1 BLK_OPS_SEED=$seed BLK_LAYOUTS_SHARD=$i/$shards timeout 300 "$prog" >"$dir/$i" 2>&1
			 echo $? >"$dir/$i.rc") &
		done
		wait
		for ((i = 0; i < shards; i++)); do
			count "matmul_layouts_api_test, shard $i/$shards" "$(grep -v '^seed ' "$dir/$i")" "$(cat "$dir/$i.rc" 2>/dev/null || echo 1)"
		done
		rm -rf "$dir"
	else
		bad "matmul_layouts_api_test: not built ($prog)"
	fi
fi
took layouts

if want gpus; then
	# two GPUs (tests/gpu/multi_gpu_api_test.c): a context per device, sweeps
	# split across them, and blkc tune --devices=0,1; one SKIP line with fewer
	prog="$build/tests/gpu/multi_gpu_api_test"
	if [ -x "$prog" ]; then
		out=$("$prog" 2>&1)
		status=$?
		if [[ $(printf '%s\n' "$out" | head -n 1) == SKIP:* ]]; then
			printf '%s\n' "$out" | head -n 1
		else
			count multi_gpu_api_test "$out" $status
			out=$("$build/blkc" tune tests/cli/kernels/scale.tile x=1048576:random out=1048576 n=1048576 alpha=2 \
				--reps 20 --sweep BLOCK=128,256,512,1024 --devices=0,1 2>&1)
			status=$?
			if [ $status -eq 0 ] && [ "$(grep -cE '\.\.\. [0-9.]+ ms \(GPU [01]\)$' <<<"$out")" = 4 ]; then
				ok "blkc tune --devices=0,1: 4 configs timed across two GPUs"
			elif [ $status -eq 1 ] && grep -q "one model only" <<<"$out"; then
				ok "blkc tune --devices=0,1 on two models: refused ($(grep -o 'device 1 is .*' <<<"$out"))"
			else
				bad "blkc tune --devices=0,1 (status $status)" "$out" 8
			fi
		fi
	else
		bad "multi_gpu_api_test: not built ($prog)"
	fi
fi
took "two GPUs"

# run_example PROGRAM WHAT SECONDS [VAR=VALUE...]: an example on the GPU,
# passing when it exits 0 (it checks its own results)
run_example() {
	local ex=$1 what=$2 limit=$3 out status
	shift 3
	out=$(env BLK_BACKEND=gpu "$@" timeout "$limit" "$ex" 2>&1)
	status=$?
	if [ $status -eq 0 ]; then
		ok "$what: $(printf '%s\n' "$out" | tail -n 1)"
	else
		bad "$what (status $status)" "$out"
	fi
}

if want examples; then
	for ex in "$build"/examples/*; do
		[ -f "$ex" ] && [ -x "$ex" ] || continue
		run_example "$ex" "examples/$(basename "$ex") on the GPU" 600
	done
fi
took examples

# TMA (BLK_TMA=1, opt-in until measured): the descriptor matmuls, the
# descriptor atomics (cp.reduce.async.bulk.tensor), NaN padding (a map
# that fills with NaN) and row gather / scatter (desc_ops_api_test), and the
# descriptor attention (bench/kernels/attention_desc.tile) of tests/ops
# with their K loops' tiles by cp.async.bulk.tensor where the row strides are
# multiples of 16 (the others, and the persistent example's rows of 70 and 130
# elements, take the variant without), each under a time limit (a wrong
# mbarrier parity would hang the kernel); the loop-carried descriptors of
# desc_loop_api_test (expanded loads, a K loop's moving A by cp.async beside
# B by TMA); then again warp-specialized (BLK_WARP_SPECIALIZE=1: a producer
# warpgroup issues the copies)
if want tma; then
	for ws in 0 1; do
		for name in desc_api_test desc_matmul_api_test desc_attention_api_test desc_loop_api_test desc_ops_api_test; do
			prog="$build/tests/ops/$name"
			if [ -x "$prog" ]; then
				out=$(BLK_BACKEND=gpu BLK_TMA=1 BLK_WARP_SPECIALIZE=$ws timeout 300 "$prog" 2>&1)
				count "$name with BLK_TMA=1 BLK_WARP_SPECIALIZE=$ws" "$out" $?
			else
				bad "$name: not built ($prog)"
			fi
		done
		[ -x "$build/examples/matmul_persistent" ] &&
			run_example "$build/examples/matmul_persistent" \
				"examples/matmul_persistent on the GPU with BLK_TMA=1 BLK_WARP_SPECIALIZE=$ws" 300 BLK_TMA=1 \
				BLK_WARP_SPECIALIZE=$ws
	done
fi
took TMA

# the Python package with torch (tests/gpu/python.sh; skips itself without
# torch); not with a sanitized libblk, which python3 cannot load
if [ "${BLK_SANITIZE:-0}" = 0 ] && want python; then
	out=$(bash tests/gpu/python.sh "$build" 2>&1)
	count "tests/gpu/python.sh" "$out" $?
	# attention with runtime branches in its loop (skips itself without torch)
	out=$(BLK_LIB="$(cd "$build" && pwd)/libblk.so" timeout 600 python3 tests/gpu/attention_branches.py 2>&1)
	count "tests/gpu/attention_branches.py" "$out" $?
fi

took Python

# attention backward (stdlib/nn/attention.tile) against torch's
# float64 SDPA and autograd (skips itself without torch); not with a
# sanitized libblk, which python3 cannot load
if [ "${BLK_SANITIZE:-0}" = 0 ] && want attention_bwd; then
	out=$(BLK_LIB="$(cd "$build" && pwd)/libblk.so" timeout 300 python3 tests/gpu/attention_bwd.py 2>&1)
	count "tests/gpu/attention_bwd.py" "$out" $?
fi
took "attention backward"

# last, and its lines as they come (tee): the longest part, which a run cut
# off at a time limit still shows up to where it got
if { [ "${BLK_GPU_OPS:-0}" = 1 ] || [ -n "${BLK_GPU_PARTS:-}" ]; } && want ops; then
	log=$(mktemp)
	BLK_BACKEND=gpu BLK_OPS_JOBS=${BLK_OPS_JOBS:-12} bash tests/ops/run.sh "$build" 2>&1 | tee "$log" | grep -v '^ok'
	status=${PIPESTATUS[0]}
	out=$(tail -n 1 "$log")
	rm -f "$log"
	count "tests/ops on the GPU" "$out" "$status"
	took tests/ops
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
