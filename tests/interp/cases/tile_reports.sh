#!/usr/bin/env bash
# tests/interp/cases/tile_reports.sh BUILD_DIR: the interpreter's reports
# from .tile source to the message, through `blkc run`: the line and column
# of the op, the kernel, the program, the element. Also print's lines and a
# clean run. Prints "ok NAME" / "FAIL NAME: why" and last "N passed, N failed".
set -u
build=${1:?usage: tile_reports.sh BUILD_DIR}
blkc=${BLKC:-$build/blkc}
passed=0
failed=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/blk-interp-cases.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# expect NAME STATUS OUTPUT_FILE STRING...: blkc exited with STATUS and its
# output holds every STRING.
expect() {
	local name=$1 want=$2 file=$3 got
	shift 3
	got=$(cat "$file.status")
	if [ "$got" != "$want" ]; then
		fail "$name" "exit status $got, want $want: $(head -c 600 "$file")"
		return
	fi
	for s in "$@"; do
		if ! grep -qF -- "$s" "$file"; then
			fail "$name" "'$s' is not in: $(head -c 600 "$file")"
			return
		fi
	done
	ok "$name"
}

run() { # OUT ARGS...: runs blkc run, output and status to OUT, OUT.status
	local out=$1
	shift
	"$blkc" run "$@" >"$out" 2>&1
	echo $? >"$out.status"
}

if [ ! -x "$blkc" ]; then
	fail "tile_reports" "no blkc at $blkc"
	echo "$passed passed, $failed failed"
	exit 1
fi

# A mask off by one (<= instead of <): program 1's lane 36 reads x[100].
cat >"$tmp/scale.tile" <<'TILE'
kernel scale(x: *f32, out: *f32, n: i32, BLOCK: const i32 = 64) grid(cdiv(n, BLOCK)) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs <= n;
    let v = load(x + offs, mask = mask);
    store(out + offs, 2.0 * v, mask = mask);
}
TILE
run "$tmp/a" "$tmp/scale.tile" x=100:arange out=100 n=100
expect "a mask off by one: the load's line:col, kernel, program, element, buffer" 1 "$tmp/a" \
	"scale.tile:4:13: error: out-of-bounds load in kernel 'scale', program (1, 0, 0), element [36]" \
	"is just past the end of buffer 'x' (400 bytes)" \
	" 4 |     let v = load(x + offs, mask = mask);"
run "$tmp/b" --threads=4 "$tmp/scale.tile" x=101:arange out=100 n=100
expect "the same on 4 threads, with x long enough: the store is out" 1 "$tmp/b" \
	"scale.tile:5:5: error: out-of-bounds store in kernel 'scale', program (1, 0, 0), element [36]" \
	"buffer 'out' (400 bytes)"
run "$tmp/c" "$tmp/scale.tile" x=101:arange out=101 n=100 --print=out:4
expect "with both buffers long enough it runs" 0 "$tmp/c" "out: 0 2 4 6"

# A 2-D tile past the end of a matrix; an assert; division by zero.
cat >"$tmp/tile2d.tile" <<'TILE'
kernel rows(x: *i32, n_rows: i32, ROWS: const i32 = 4, COLS: const i32 = 8) grid(1) {
    let r = arange(0, ROWS);
    let c = arange(0, COLS);
    let v = load(x + r[:, None] * COLS + c[None, :]);
    assert(v < 20, "values stay below 20");
    let q = 100 / (v - 7);
    store(x + r[:, None] * COLS + c[None, :], q);
}
TILE
run "$tmp/d" "$tmp/tile2d.tile" x=30:arange n_rows=4
expect "a 2-D load: the element as [row, column]" 1 "$tmp/d" \
	"tile2d.tile:4:13: error: out-of-bounds load in kernel 'rows', program (0, 0, 0), element [3, 6]" \
	"is just past the end of buffer 'x' (120 bytes)"
run "$tmp/e" "$tmp/tile2d.tile" x=32:arange n_rows=4
expect "assert: its line, message and the first failing element" 1 "$tmp/e" \
	"tile2d.tile:5:5: error: assertion failed in kernel 'rows', program (0, 0, 0), element [2, 4]: values stay below 20"
run "$tmp/f" "$tmp/tile2d.tile" x=32:fill=3 n_rows=4
expect "no assert fires on values below 20: this one divides" 0 "$tmp/f"
run "$tmp/g" "$tmp/tile2d.tile" x=32:fill=7 n_rows=4
expect "integer division by zero: its line and element" 1 "$tmp/g" \
	"tile2d.tile:6:13: error: integer division by zero in kernel 'rows', program (0, 0, 0), element [0, 0]"

# print: a line per element.
cat >"$tmp/show.tile" <<'TILE'
kernel show(x: *f32) grid(2) {
    let v = load(x + program_id(0) * 2 + arange(0, 2));
    print("v =", v);
    print("pid", program_id(0));
}
TILE
run "$tmp/h" "$tmp/show.tile" x=4:arange
cat >"$tmp/h.want" <<'OUT'
pid (0, 0, 0) idx (0) v = 0
pid (0, 0, 0) idx (1) v = 1
pid (0, 0, 0) idx () pid: 0
pid (1, 0, 0) idx (0) v = 2
pid (1, 0, 0) idx (1) v = 3
pid (1, 0, 0) idx () pid: 1
OUT
if [ "$(cat "$tmp/h.status")" = 0 ] && diff -u "$tmp/h.want" "$tmp/h" >"$tmp/h.diff"; then
	ok "print: pid, index and value, a line per element, in program order"
else
	fail "print: pid, index and value, a line per element, in program order" "$(cat "$tmp/h.diff" "$tmp/h")"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
