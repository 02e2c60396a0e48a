#!/usr/bin/env bash
# tests/llvm/run.sh BUILD_DIR: the PTX back end and the shape of libblk.so.
#  - emit_ptx_test: llvm_emit_ptx for sm_80/86/90/90a, checked by ptxas where present;
#  - version_api_test: libblk.so's LLVM answers through its exported API;
#  - libblk.so exports blk_* only, needs nothing beyond libc, fits the size limit;
#  - blkc and libblk.so copied elsewhere still run (rpath $ORIGIN).
# Prints a line per case and last "N passed, N failed".
set -u
build=${1:?usage: tests/llvm/run.sh BUILD_DIR}
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
# Command and a name: passes when it exits 0.
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }

# Test programs that print their own counts: add them up.
run_program() {
	local prog=$1 out status last
	if [ ! -x "$prog" ]; then
		fail "$(basename "$prog")" "not built ($prog)"
		return
	fi
	out=$("$prog" 2>&1)
	status=$?
	printf '%s\n' "$out" | sed '$d'
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			fail "$(basename "$prog")" "exited with status $status"
		fi
	else
		printf '%s\n' "$last"
		fail "$(basename "$prog")" "crashed or printed no counts (status $status)"
	fi
}

# ptxas from the CUDA toolkit, where it is installed but not on PATH.
if ! command -v ptxas >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/ptxas ]; then
	export PATH="$PATH:/usr/local/cuda/bin"
fi

run_program "$build/tests/llvm/emit_ptx_test"
run_program "$build/tests/llvm/version_api_test"

so="$build/libblk.so"
sanitized=0 # 1 in a sanitized build of either kind (BLK_SANITIZE 1 or thread)
case ${BLK_SANITIZE:-0} in 1 | thread) sanitized=1 ;; esac

# Exported: blk_* functions only (and nothing of LLVM or libstdc++).
exports=$(nm -D --defined-only "$so" | awk '{ print $NF }' | grep -v '^blk_' | head -5)
if [ -z "$exports" ]; then ok "libblk.so exports blk_* only"
else fail "libblk.so exports blk_* only" "also $(echo $exports)"; fi

# Needed: the C library's parts only (sanitizer runtimes in a sanitized build).
allowed='^(libc|libm|libpthread|libdl|librt|ld-linux-x86-64)\.so'
[ $sanitized = 1 ] && allowed='^(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libasan|libubsan|libtsan|libgcc_s|libstdc\+\+)\.so'
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
extra=$(printf '%s\n' $needed | grep -Ev "$allowed")
if [ -z "$extra" ]; then ok "libblk.so needs only libc ($(echo $needed))"
else fail "libblk.so needs only libc" "also needs $(echo $extra)"; fi

# Size: what a GPU run carries (a sanitized build never travels).
limit=${SIZE_LIMIT:-50331648}
total=$(( $(stat -c %s "$so") + $(stat -c %s "$build/blkc") ))
if [ $sanitized = 1 ]; then ok "libblk.so + blkc = $((total / 1048576)) MiB (sanitized: no limit)"
elif [ $total -le $limit ]; then ok "libblk.so + blkc = $((total / 1048576)) MiB <= $((limit / 1048576)) MiB"
else fail "libblk.so + blkc within $((limit / 1048576)) MiB" "$((total / 1048576)) MiB"; fi

# Relocatable: blkc finds libblk.so beside it ($ORIGIN), and in ../lib.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/blk-llvm-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/flat" "$tmp/prefix/bin" "$tmp/prefix/lib"
cp "$build/blkc" "$so" "$tmp/flat/"
cp "$build/blkc" "$tmp/prefix/bin/" && cp "$so" "$tmp/prefix/lib/"
runs() { env -u LD_LIBRARY_PATH "$1" --version >/dev/null; }
check "blkc runs from a copied folder" runs "$tmp/flat/blkc"
check "blkc runs from PREFIX/bin with PREFIX/lib" runs "$tmp/prefix/bin/blkc"

echo "$passed passed, $failed failed"
