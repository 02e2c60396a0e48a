#!/usr/bin/env bash
# tests/interp/bench.sh [BUILD_DIR] [THREADS]: builds bench_interp against
# BUILD_DIR/libblk.a (default build; run `make` first) with the flags of the
# build, and runs it. The figures go to docs/performance.md ("Interpreter").
set -eu
build=${1:-build}
threads=${2:-1}
cd "$(dirname "$0")/../.."
. <(sed -n 's/^\(LLVM_[A-Z]*\) := \(.*\)/\1="\2"/p' build/config.mk)
out="$build/tests/interp/bench_interp"
mkdir -p "$(dirname "$out")"
${CC:-cc} -std=c17 -D_GNU_SOURCE -O2 -g -Ilang -Icompiler -Iruntime -isystem "$LLVM_INCLUDE" -Wall -Wextra -Werror \
	-o "$out" tests/interp/bench_interp.c "$build/libblk.a" \
	-L"$LLVM_LIBDIR" -lLLVM-19 -Wl,-rpath,"$LLVM_LIBDIR" -lm -lpthread -ldl -lrt
"$out" "$threads"
