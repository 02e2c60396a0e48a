#!/usr/bin/env python3
"""tests/fuzz/stress.py: large and deep inputs the fuzzer's short ones never reach.

usage: python3 tests/fuzz/stress.py HARNESS [--mb N] [--limit SECONDS] [--keep DIR] [NAME...]

HARNESS runs one input file a process: build/fuzz/fuzz_parse (libFuzzer runs
the files given to it once) or BUILD/tests/fuzz/replay_test. Each input is
written to a temporary folder (or DIR) and run with a time limit; a case
fails when the harness crashes, reports a sanitizer error or a violated
invariant, or runs past the limit. NAMEs pick some cases. Prints a line per
case with its size and time, and last "N passed, N failed".

The cases: megabytes of random bytes, of invalid UTF-8, of valid code; nesting
far past the limits (parentheses, braces, brackets, unary minus, if, else-if
chains, ternaries, postfix chains); long operator chains; huge tuples, lists,
argument and parameter lists, attributes; long lines full of errors or
warnings; unterminated strings and comments at the end of a long file; long
literals and identifiers; NUL bytes.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time


def cases(mb):
    n = mb << 20
    deep = 10_000
    rnd = random.Random(1)
    stmt = b"    let v = load(x + offs[:, None] * stride, mask = m & (offs < n), other = 0.0) * 2 + f(a, b)[1:2];\n"
    fn = b"fn f%d(a, b) -> i32 { if a < b { return a; } else { return b; } }\n"
    bad_utf8 = [0x80, 0xBF, 0xC0, 0xC1, 0xF5, 0xFF, 0xED, 0xE0, 0xF4]
    return {
        "random_bytes": lambda: rnd.randbytes(n),
        "invalid_utf8": lambda: bytes(rnd.choice(bad_utf8) for _ in range(n)),
        "valid_statements": lambda: b"kernel k(x: *f32, n: i32) {\n" + stmt * (n // len(stmt)) + b"}\n",
        "valid_functions": lambda: b"".join(fn % i for i in range(n // 64)),
        "deep_parens": lambda: b"const A = " + b"(" * deep + b"1" + b")" * deep + b";\n",
        "deep_braces": lambda: b"fn f() " + b"{" * deep + b"}" * deep + b"\n",
        "deep_brackets": lambda: b"const A = " + b"[" * deep + b"]" * deep + b";\n",
        "deep_unary": lambda: b"const A = " + b"-" * (10 * deep) + b"a;\n",
        "deep_if": lambda: b"fn f() {\n" + b"if x { " * deep + b"}" * deep + b"\n}\n",
        "deep_if_unclosed": lambda: b"fn f() {\n" + b"if x { " * deep,
        "else_if_chain": lambda: b"fn f() {\n" + b"if a { } else " * (10 * deep) + b"{ }\n}\n",
        "ternary_chain": lambda: b"const A = " + b"a ? b : " * deep + b"c;\n",
        "plus_chain": lambda: b"const A = " + b"+".join([b"a"] * (n // 2)) + b";\n",
        "field_call_index_chain": lambda: b"const A = a" + b".b()[0]" * deep + b";\n",
        "pointer_type_chain": lambda: b"const A: " + b"*" * deep + b"f32 = 1;\n",
        "big_tuple": lambda: b"const A = (" + b"1, " * (n // 3) + b"1);\n",
        "big_list_nested": lambda: b"const A = " + b"[" * 250 + b"1,\n" * (n // 3) + b"1" + b"]" * 250 + b";\n",
        "big_call_nested": lambda: b"const A = " + b"f(" * 250 + b"1,\n" * (n // 3) + b"1" + b")" * 250 + b";\n",
        "big_block_nested": lambda: b"fn f() {\n" + b"if a {\n" * 250 + b"x = 1;\n" * (n // 28) + b"}\n" * 250 + b"}\n",
        "many_params": lambda: b"fn f(" + b"".join(b"p%d, " % i for i in range(n // 9)) + b") {}\n",
        "many_named_args": lambda: b"const A = f(" + b"".join(b"a%d = 1, " % i for i in range(n // 12)) + b");\n",
        "many_attrs": lambda: b"@a " * (n // 3) + b"fn f() {}\n",
        "many_redefinitions": lambda: b"fn f() {}\n" * (n // 10),
        "errors_one_line": lambda: b"fn f(x) {" + b"let = ;" * (n // 7) + b"}\n",
        "warnings_many_lines": lambda: b"fn f(x) {\n" + b"x;\n" * (n // 30) + b"}\n",
        "warnings_one_line": lambda: b"fn f(x) {" + b"x;" * (n // 40) + b"}\n",
        "lex_errors": lambda: b"$" * n,
        "unterminated_string": lambda: b'const A = "' + b"a" * n,
        "unterminated_comment": lambda: b"/*" + b"a\n" * (n // 2),
        "unterminated_comment_nuls": lambda: b"/*" + b"\x00\n" * (n // 2),
        "line_comment_to_eof": lambda: b"//" + b"a" * n,
        "string_escapes": lambda: b'const A = "' + b"\\x41\\q" * (n // 7) + b'";\n',
        "long_identifier": lambda: b"const " + b"a" * n + b" = 1;\n",
        "long_integer": lambda: b"const A = " + b"1" * n + b";\n",
        "long_float": lambda: b"const A = 0." + b"1" * n + b";\n",
        "long_suffix": lambda: b"const A = 1" + b"x" * n + b";\n",
        "continuation_bytes": lambda: b"$" + b"\x80" * n,
        "nul_bytes": lambda: b"\x00" * n,
        "newlines": lambda: b"\n" * n,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("harness")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--mb", type=int, default=10, help="size of the large inputs (default 10)")
    ap.add_argument("--limit", type=float, default=60, help="seconds a case may take (default 60)")
    ap.add_argument("--keep", help="write the inputs here and keep them")
    args = ap.parse_args()
    all_cases = cases(args.mb)
    names = args.names or list(all_cases)
    for name in names:
        if name not in all_cases:
            sys.exit(f"stress.py: no case '{name}' (cases: {' '.join(all_cases)})")
    folder = args.keep or tempfile.mkdtemp(prefix="blk-stress.")
    os.makedirs(folder, exist_ok=True)
    env = dict(os.environ)
    # big inputs make big outputs: let libFuzzer's malloc limit follow
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    passed = failed = 0
    for name in names:
        path = os.path.join(folder, name + ".tile")
        data = all_cases[name]()
        with open(path, "wb") as f:
            f.write(data)
        cmd = [args.harness, path]
        if os.path.basename(args.harness).startswith("fuzz_parse"):
            cmd[1:1] = ["-rss_limit_mb=8192", "-malloc_limit_mb=8192"]
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.limit, env=env)
            took = time.monotonic() - start
            out = p.stdout.decode(errors="replace")
            bad = p.returncode != 0 or "ERROR" in out or "invariant violated" in out
            why = f"exit status {p.returncode}" if bad else ""
        except subprocess.TimeoutExpired:
            took, bad, why, out = args.limit, True, f"over {args.limit:g} s", ""
        if bad:
            failed += 1
            print(f"FAIL {name:28} {len(data):>10} bytes {took:7.2f} s  {why}")
            for line in [l for l in out.splitlines() if "ERROR" in l or "invariant" in l or "SUMMARY" in l][:5]:
                print("    " + line)
        else:
            passed += 1
            print(f"ok   {name:28} {len(data):>10} bytes {took:7.2f} s")
        if not args.keep:
            os.remove(path)
    if not args.keep:
        os.rmdir(folder)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
