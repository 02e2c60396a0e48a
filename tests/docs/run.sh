#!/usr/bin/env bash
# tests/docs BUILD_DIR: the documentation says what the code does.
#  - README.md's Status quotes docs/performance.md (check_status.py): each
#    figure in the section it links, the latest run first; and a Status with
#    a figure changed fails that check (so the check can fail);
#  - docs/tutorial.md's `blkc --emit=ptx ... --tma` command, run as written,
#    prints what the tutorial shows (a count of TMA instructions, not 0);
#  - docs/blkc.1: every option of `blkc --help`, `blkc run --help`, `blkc
#    bench --help` and `blkc tune --help` described; groff renders it with
#    no warning (where groff is); `make install` installs it;
#  - `make help` says what `make demo` runs (each example of its recipe);
#    `blkc run --help` says where it runs as the runtime decides (the GPU
#    when one can be used);
#  - docs/language.md documents every builtin of compiler/irgen/builtins.c's
#    table, and calls nothing that exists "planned" or "later milestones";
#  - docs/triton.md is linked from README.md and docs/README.md, and every
#    blk call in its table is a builtin or a standard-library fn;
#  - docs/python.md does not call the package extension-free.
# Prints a line per check and last "N passed, N failed".
set -u
build=${1:?usage: tests/docs/run.sh BUILD_DIR}
build=$(cd "$build" && pwd)
cd "$(dirname "$0")/../.." || exit 2
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 20 | sed 's/^/    /'; fail=$((fail + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/blk-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
blkc=$build/blkc

# ---- README's Status against docs/performance.md ---------------------------
if ! command -v python3 >/dev/null; then
	echo "skip README's Status check: no python3"
else
	if out=$(python3 tests/docs/check_status.py README.md docs/performance.md 2>&1); then
		ok "README.md's Status: every figure is in the docs/performance.md section it links, the latest run first"
	else
		bad "README.md's Status does not match docs/performance.md" "$out"
	fi
	# the check must catch a figure that drifts: 1.02× becomes 1.03× (or a
	# TFLOP/s figure one more) in a copy of README
	python3 - README.md "$tmp/README.md" <<'EOF'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
i = s.index("## Status")
m = re.compile(r"(\d+) TFLOP/s").search(s, i)
s = s[:m.start()] + str(int(m.group(1)) + 10001) + " TFLOP/s" + s[m.end():]
open(sys.argv[2], "w", encoding="utf-8").write(s)
EOF
	if out=$(python3 tests/docs/check_status.py "$tmp/README.md" docs/performance.md 2>&1); then
		bad "check_status.py passed a Status whose TFLOP/s figure is in no section"
	elif printf '%s\n' "$out" | grep -q "TFLOP/s"; then
		ok "check_status.py catches a Status figure that is not in docs/performance.md"
	else
		bad "check_status.py failed a drifted Status for another reason" "$out"
	fi
	# a new run added on top of docs/performance.md makes Status stale
	{ echo "## Latest runs (2099-01-01, session 99, H200)"; echo; cat docs/performance.md; } >"$tmp/perf.md"
	if python3 tests/docs/check_status.py README.md "$tmp/perf.md" >"$tmp/out" 2>&1; then
		bad "check_status.py took a Status that does not quote the latest run"
	elif grep -q "does not quote the latest run" "$tmp/out"; then
		ok "check_status.py asks for the latest run when a new one is added on top"
	else
		bad "check_status.py failed a Status without the latest run for another reason" "$(cat "$tmp/out")"
	fi
fi

# ---- the tutorial's TMA command ------------------------------------------
cmd=$(grep -m 1 '^\$ build/blkc --emit=ptx .*--tma' docs/tutorial.md)
if [ -z "$cmd" ]; then
	bad "docs/tutorial.md has no '\$ build/blkc --emit=ptx ... --tma' command"
else
	want=$(grep -A 1 -F -x -- "$cmd" docs/tutorial.md | sed -n 2p)
	run=${cmd#\$ }
	got=$(cd "$tmp" && ln -sfn "$build" build && ln -sfn "$OLDPWD/examples" examples && bash -c "$run" 2>&1)
	if [ "$got" = "$want" ] && [ "${got:-0}" != 0 ]; then
		ok "docs/tutorial.md's --tma command prints what the tutorial shows ($got TMA instructions)"
	else
		bad "docs/tutorial.md's --tma command: the tutorial shows '$want', it printed '$got'" "$run"
	fi
fi

# ---- the man page ----------------------------------------------------------
man=docs/blkc.1
if [ ! -f "$man" ]; then
	bad "docs/blkc.1: missing"
else
	missing="" nopt=0
	for sub in "" run bench tune; do
		# shellcheck disable=SC2086
		for o in $("$blkc" $sub --help 2>&1 | grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort -u); do
			pat=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
			nopt=$((nopt + 1))
			grep -q -- "$pat" "$man" || missing="$missing ${sub:+$sub }$o"
		done
	done
	if [ -z "$missing" ] && [ "$nopt" -gt 30 ]; then
		ok "docs/blkc.1 describes every option of blkc, blkc run, bench and tune --help ($nopt)"
	else
		bad "docs/blkc.1 lacks options of --help:$missing"
	fi
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
		grep -q "^\.SH \"\?$s\"\?$" "$man" || missing="$missing $s"
	done
	[ -z "$missing" ] && ok "docs/blkc.1 has every section of a man page" || bad "docs/blkc.1 lacks sections:$missing"
	if command -v groff >/dev/null; then
		warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man" 2>&1)
		if [ -z "$warn" ]; then
			ok "groff -man renders docs/blkc.1 with no warning"
		else
			bad "groff -man warns on docs/blkc.1" "$warn"
		fi
	else
		echo "skip groff check of docs/blkc.1: no groff"
	fi
	# the install recipe, read (make -n would rewrite BUILD's flags file
	# when its flags differ, and so rebuild the tree next time)
	recipe=$(sed -n '/^install:/,/^$/p' Makefile)
	if printf '%s\n' "$recipe" | grep -qF 'install -m 644 docs/blkc.1 $(DESTDIR)$(PREFIX)/share/man/man1/blkc.1' &&
		printf '%s\n' "$recipe" | grep -qE '[$][(]PREFIX[)]/share/man/man1( |$)'; then
		ok "make install installs docs/blkc.1 as share/man/man1/blkc.1"
	else
		bad "make install does not install the man page" "$recipe"
	fi
fi

# ---- make help, blkc run --help ---------------------------------------------
demo=$(make -s help 2>/dev/null | sed -n '/^make demo/,/^make [^d]/p' | sed '$d')
runs=$(sed -n '/^demo:/,/^$/p' Makefile | grep -oE 'examples/[a-z_0-9]+$' | sed 's|examples/||')
missing=""
for r in $runs; do
	printf '%s' "$demo" | grep -q "\b$r\b" || missing="$missing $r"
done
if [ -n "$runs" ] && [ -z "$missing" ] && ! printf '%s' "$demo" | grep -q "syntax tree"; then
	ok "make help says what make demo runs ($(echo $runs))"
else
	bad "make help's demo line does not say what make demo runs (missing:${missing:- none})" "$demo"
fi
usage=$("$blkc" run --help 2>&1 | sed -n 3,4p)
if printf '%s' "$usage" | grep -q "GPU when one can be used, else on the interpreter"; then
	ok "blkc run --help: the GPU when one can be used, else the interpreter (as blk_context_create decides)"
else
	bad "blkc run --help misstates where it runs" "$usage"
fi

# ---- docs/language.md ------------------------------------------------------
missing=""
for n in $(grep -oE '^	\{"[a-z_0-9]+",' compiler/irgen/builtins.c | grep -oE '[a-z_0-9]+'); do
	grep -q "\`$n\b\|\b$n(" docs/language.md || missing="$missing $n"
done
nb=$(grep -cE '^	\{"[a-z_0-9]+",' compiler/irgen/builtins.c)
if [ "$nb" -gt 50 ] && [ -z "$missing" ]; then
	ok "docs/language.md documents every builtin of compiler/irgen/builtins.c ($nb)"
else
	bad "docs/language.md does not document these builtins:${missing:- (no builtin table found)}"
fi
stale=$(grep -n -i -E "planned|later milestone" docs/language.md)
[ -z "$stale" ] && ok "docs/language.md calls nothing 'planned' or for 'later milestones'" ||
	bad "docs/language.md: stale words" "$stale"

# ---- docs/triton.md ----------------------------------------------------------
if [ -f docs/triton.md ] && grep -q '(docs/triton.md)' README.md && grep -q '(triton.md)' docs/README.md; then
	ok "docs/triton.md exists, linked from README.md and docs/README.md"
else
	bad "docs/triton.md missing or not linked from README.md and docs/README.md"
fi
known=$(grep -oE '^	\{"[a-z_0-9]+",' compiler/irgen/builtins.c | grep -oE '[a-z_0-9]+'
	grep -ohE '^fn [a-z_0-9]+' stdlib/*.tile | cut -c4-
	printf '%s\n' range autotune heuristics grid)
unknown=""
for n in $(grep '^| ' docs/triton.md | awk -F' \\| ' '{ print $2 }' | grep -oE '`[^`]*`' | sed -E 's/(kernel|fn) [a-z_0-9]+\(//g' | grep -oE '(^|[^.a-z_])[a-z_][a-z_0-9]*\(' | grep -oE '[a-z_0-9]+' | sort -u); do
	printf '%s\n' "$known" | grep -qx "$n" || unknown="$unknown $n"
done
[ -z "$unknown" ] && ok "every blk call in docs/triton.md's table is a builtin or a stdlib fn" ||
	bad "docs/triton.md names calls blk does not have:$unknown"

# ---- docs/python.md --------------------------------------------------------
if grep -q -i "no compiled extension" docs/python.md; then
	bad "docs/python.md says the package has no compiled extension; it has _blkfast.abi3.so" \
		"$(grep -n -i "no compiled extension" docs/python.md)"
else
	ok "docs/python.md does not deny the package's compiled extension (_blkfast)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
