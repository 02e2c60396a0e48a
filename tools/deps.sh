#!/usr/bin/env bash
# tools/deps.sh: checks that what the build needs is installed, installs what
# is missing (Debian 12 packages, when run as root), and records the build
# configuration. The Makefile runs it once, through its outputs:
#
#   tools/deps.sh build build/config.mk   compiler, LLVM 19, re2c, bison, zlib,
#                                          zstd, xxHash; writes the make fragment
#   tools/deps.sh fuzz build/.deps-fuzz    clang-19 with libFuzzer; touches the stamp
#
# BLK_NO_INSTALL=1 only reports what is missing. CC names the C compiler to
# check (default cc).
set -euo pipefail

what=${1:?usage: tools/deps.sh build|fuzz OUTPUT}
out=${2:?usage: tools/deps.sh build|fuzz OUTPUT}
cc=${CC:-cc}
llvm_prefix=/usr/lib/llvm-19
llvm_config=llvm-config-19
# The LLVM libraries libblk.so holds: the NVPTX back end and what
# LLVMRunPasses("default<O3>") and LLVMTargetMachineEmitToMemoryBuffer need.
llvm_components="nvptxcodegen nvptxdesc nvptxinfo passes target core analysis"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/blk-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

missing=()   # Debian packages to install
need() { missing+=("$@"); }
have() { command -v "$1" >/dev/null 2>&1; }

# Compiles and links a small C program: compiles "$1" with flags "${@:2}".
try_cc() {
	local src=$1; shift
	printf '%s\n' "$src" >"$tmp/t.c"
	"$cc" "$tmp/t.c" -o "$tmp/t.out" "$@" >"$tmp/log" 2>&1
}

check_build() {
	if ! have "$cc"; then
		need gcc libc6-dev
	elif ! try_cc 'int main(void) { return 0; }'; then
		need libc6-dev
	fi
	# libblk.so carries LLVM and libstdc++ inside it.
	if have "$cc" && [ "$("$cc" -print-file-name=libstdc++.a)" = libstdc++.a ]; then
		need g++
	fi
	if ! have "$llvm_config" || [ ! -f "$llvm_prefix/lib/libLLVMNVPTXCodeGen.a" ] ||
	   [ ! -f "$llvm_prefix/include/llvm-c/Core.h" ]; then
		need llvm-19-dev
	fi
	have re2c || need re2c
	have bison || need bison
	[ -f /usr/include/zlib.h ] || need zlib1g-dev
	[ -f /usr/include/zstd.h ] || need libzstd-dev
	# libblk's disk cache hashes with xxHash, header-only (XXH_INLINE_ALL).
	[ -f /usr/include/xxhash.h ] || need libxxhash-dev
	# Python's headers, for the Python package's launchers in C (where
	# python3 is 3.10 or newer; the package runs without them)
	local pyinc
	pyinc=$(python3 -c 'import sys, sysconfig; sys.version_info >= (3, 10) and print(sysconfig.get_paths()["include"])' 2>/dev/null)
	if [ -n "$pyinc" ] && [ ! -f "$pyinc/Python.h" ] && [ "$pyinc" = "${pyinc#/usr/local}" ]; then
		need python3-dev
	fi
}

check_fuzz() {
	have clang-19 || need clang-19
	# libFuzzer comes with the compiler-rt runtimes.
	if have clang-19; then
		printf '%s\n' '#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$tmp/f.c"
		clang-19 -fsanitize=fuzzer,address,undefined "$tmp/f.c" -o "$tmp/f.out" >"$tmp/log" 2>&1 ||
			need libclang-rt-19-dev
	else
		need libclang-rt-19-dev
	fi
}

install_missing() {
	[ ${#missing[@]} -eq 0 ] && return 0
	# Unique, in order.
	local pkgs=() p q seen
	for p in "${missing[@]}"; do
		seen=0
		for q in "${pkgs[@]+"${pkgs[@]}"}"; do [ "$p" = "$q" ] && seen=1; done
		[ $seen = 1 ] || pkgs+=("$p")
	done
	local cmd="apt-get update && apt-get install -y --no-install-recommends ${pkgs[*]}"
	if [ "$(id -u)" != 0 ] || [ "${BLK_NO_INSTALL:-0}" = 1 ] || ! have apt-get; then
		echo "blk: missing build dependencies: ${pkgs[*]}" >&2
		if [ "$(id -u)" != 0 ]; then
			echo "blk: install them with: sudo sh -c '$cmd'" >&2
		else
			echo "blk: install them with: $cmd" >&2
		fi
		exit 1
	fi
	echo "blk: installing ${pkgs[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${pkgs[@]}"
	missing=()
}

# zlib and zstd go into libblk.so statically when their archives are
# position-independent, so that the library needs only libc on the GPU host.
# (Linked as libblk.so is: their symbols made local by --exclude-libs.)
static_libs_pic() {
	printf '%s\n' '#include <zlib.h>
#include <zstd.h>
unsigned long f(void) { return crc32(0, 0, 0) + ZSTD_compressBound(1); }' >"$tmp/z.c"
	"$cc" -shared -fPIC "$tmp/z.c" -o "$tmp/z.so" -Wl,-z,defs -Wl,--exclude-libs,ALL \
		-Wl,-Bstatic -lz -lzstd -Wl,-Bdynamic >"$tmp/log" 2>&1
}

write_config() {
	local libs syslibs
	libs=$("$llvm_config" --link-static --libs $llvm_components)
	if static_libs_pic; then
		syslibs="-Wl,-Bstatic -lz -lzstd -Wl,-Bdynamic"
	else
		echo "blk: note: libz.a/libzstd.a are not PIC; libblk.so will need libz.so.1 and libzstd.so.1" >&2
		syslibs="-lz -lzstd"
	fi
	mkdir -p "$(dirname "$out")"
	{
		echo "# Written by tools/deps.sh; delete it (or make clean) to check again."
		echo "LLVM_VERSION := $("$llvm_config" --version)"
		echo "LLVM_INCLUDE := $("$llvm_config" --includedir)"
		echo "LLVM_LIBDIR := $("$llvm_config" --libdir)"
		echo "LLVM_COMPONENTS := $llvm_components"
		echo "LLVM_LIBS := $libs"
		echo "LLVM_SHARED_LIBS := $("$llvm_config" --link-shared --libs $llvm_components)"
		echo "LLVM_SYSLIBS := $syslibs"
		echo "LLVM_SYSLIBS_PC := -lz -lzstd"
		echo "RE2C := $(command -v re2c)"
		echo "BISON := $(command -v bison)"
	} >"$out.tmp"
	mv "$out.tmp" "$out"
}

case $what in
build)
	check_build
	install_missing
	check_build
	if [ ${#missing[@]} -ne 0 ]; then
		echo "blk: still missing after installing: ${missing[*]}" >&2
		exit 1
	fi
	write_config
	;;
fuzz)
	check_fuzz
	install_missing
	check_fuzz
	if [ ${#missing[@]} -ne 0 ]; then
		echo "blk: clang-19 cannot build a libFuzzer target:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
	mkdir -p "$(dirname "$out")"
	touch "$out"
	;;
*)
	echo "usage: tools/deps.sh build|fuzz OUTPUT" >&2
	exit 2
	;;
esac
