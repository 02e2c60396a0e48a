#!/usr/bin/env python3
"""fuzz_python.py: fuzzes the Python front door of blk: blk.load(source=...)
with mutated sources (the repository's .tile files: bytes flipped, spans
cut, pieces of tests/fuzz/fuzz.dict put in, two files spliced, random bytes)
and random arguments (name, include_dirs, defines of every kind), then
compile() and launches on the interpreter with random argument kinds
(numpy arrays of any dtype, byte order, stride, size; numbers; things that
are neither), consts, options and grids.

The only failure a case may raise is blk.Error: any other exception, a
crash (a signal) or a hang (a case running past its time) is a finding,
printed with the command that replays it.

    python3 tests/fuzz/fuzz_python.py [--seconds N] [--seed S]
    python3 tests/fuzz/fuzz_python.py --seed S --case I      (replays one case, in process)

--seconds (default $BLK_FUZZ_PY_SECONDS, else 20): how long to fuzz; the
cases run in child processes of 200 cases each (a crash loses one child,
the parent names the case). Needs blk importable (installed, or python/ on
PYTHONPATH with $BLK_LIB); numpy where installed (else no array
arguments). Last line "N passed, N failed": 1 passed for a run with no
finding, else a failure a child process that found one.
"""

import argparse
import glob
import os
import random
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE_SECONDS = 10          # a case running longer is a hang
CASES_PER_CHILD = 200


def corpus():
    files = []
    for pat in ("examples/*.tile", "stdlib/*.tile", "tests/*/*.tile", "tests/*/*/*.tile", "bench/*.tile",
                "tests/fuzz/corpus/*"):
        files += sorted(glob.glob(os.path.join(REPO, pat)))
    out = []
    for f in files:
        try:
            with open(f, "rb") as fh:
                b = fh.read(1 << 16)
        except OSError:
            continue
        out.append((f, b))
    return out


def dictionary():
    words = []
    try:
        with open(os.path.join(REPO, "tests/fuzz/fuzz.dict"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                line = line.strip()
                if line.startswith('"') and line.endswith('"') and len(line) > 2:
                    w = line[1:-1]
                    try:
                        words.append(w.encode("latin-1").decode("unicode_escape").encode("latin-1"))
                    except (UnicodeError, ValueError):
                        words.append(w.encode())
    except OSError:
        pass
    return words or [b"kernel", b"(", b")", b"{", b"}", b"let", b"=", b";", b"*f32"]


# ---- sources -----------------------------------------------------------------------

def mutate(rng, files, words):
    """(source bytes, the file it came from, mutated?)."""
    path, src = rng.choice(files)
    if rng.random() < 0.2:
        return src, path, False
    b = bytearray(src)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        i = rng.randint(0, len(b))
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            del b[i:i + rng.randint(1, 40)]
        elif op == 2:
            b[i:i] = rng.choice(words)
        elif op == 3:
            other = rng.choice(files)[1]
            j = rng.randint(0, len(other))
            b[i:] = other[j:j + rng.randint(0, 400)]
        elif op == 4:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:  # a number changed
            b[i:i] = str(rng.choice([0, 1, -1, 3, 1 << 20, 1 << 31, 1 << 63, 65536])).encode()
    if rng.random() < 0.03:
        b = bytearray(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    return bytes(b), path, True


def weird(rng):
    return rng.choice([None, 0, -1, 1.5, float("nan"), "", "x", "a\0b", b"x", [], (), {}, object(), 2**70, True,
                       [None], {"k": 1}, "/nonexistent", "\udcff"])


def load_kwargs(rng, path):
    kw = {}
    if rng.random() < 0.3:
        kw["name"] = rng.choice(["k.tile", os.path.basename(path), "", "a\0b", "<source>", weird(rng)])
    if rng.random() < 0.3:
        kw["include_dirs"] = rng.choice([[os.path.dirname(path)], os.path.dirname(path), [REPO + "/stdlib"], (),
                                         None, "/tmp", ["/tmp\0x"], [weird(rng)], weird(rng)])
    if rng.random() < 0.3:
        bad_key = rng.choice([None, 0, 1.5, "", "a\0b", b"x", (), "x y", "\udcff"])
        kw["defines"] = rng.choice([{"BLOCK": rng.choice([1, 16, 128, 3, 0, -1, 2**40])}, {"BLOCK": weird(rng)},
                                    {bad_key: 1}, {"T": "f16"}, {"tma": 1}, [("BLOCK", 64)], weird(rng), {}])
    return kw


# ---- arguments ------------------------------------------------------------------------

SMALL_INTS = [0, 1, 2, 3, 5, 8, 16, 33, 64, -1]
DTYPES = ["float32", "float16", "float64", "int32", "int64", "uint8", "int8", "uint64", "bool", ">f4", ">i4",
          "<f4", "complex64", "int16"]


def array(rng, np):
    dt = rng.choice(DTYPES)
    n = rng.choice([0, 1, 4, 16, 64, 100, 256])
    shape = rng.choice([(n,), (max(1, n // 4), 4), (2, 2, max(1, n // 4))])
    a = np.zeros(shape, dtype=dt)
    if a.dtype.kind == "f":
        a[...] = np.linspace(-2, 2, a.size).reshape(shape)
    k = rng.randrange(7)
    if k == 0 and a.ndim > 1:
        a = a.T
    elif k == 1:
        a = a.reshape(-1)[::rng.choice([2, -1])]
    elif k == 2:
        a = a.reshape(-1)[rng.randint(0, max(0, a.size - 1)):]
    elif k == 3:
        a.flags.writeable = False
    elif k == 4 and a.size:
        a = np.broadcast_to(a.reshape(-1)[:1], (rng.choice([1, 8]),))
    return a


def argument(rng, np, param):
    r = rng.random()
    if param.kind == 0 and np is not None and r < 0.75:  # a pointer
        a = array(rng, np)
        if rng.random() < 0.2:  # given as strided: the kernel's word that it takes any layout
            import blk
            return blk.strided(a)
        return a
    if r < 0.85:
        if param.type in ("i64", "u64") and rng.random() < 0.9:
            return rng.choice(SMALL_INTS)
        return rng.choice(SMALL_INTS + [2**40, -2**63, 2**64, 0.5, float("inf")])
    return weird(rng)


def consts(rng, kernel):
    kw = {}
    for name, p in kernel.const_params.items():
        if rng.random() < 0.5:
            if p.is_type:
                kw[name] = rng.choice(["f16", "f32", "i32", "bf16", "float32", "nope", 3])
            else:
                kw[name] = rng.choice([1, 2, 4, 16, 32, 64, 128, 3, 0, -8, 2**40, 1.5, "x", None, True])
    if rng.random() < 0.2:
        kw[rng.choice(["num_warps", "num_stages", "threads", "stream", "tma", "nope", "x"])] = \
            rng.choice([0, 1, 2, 4, -1, 5000, 2.5, "s", None])
    return kw


def grid(rng):
    return rng.choice([None, None, (1,), (2,), 1, (1, 1, 1), (0,), (-1,), (1, 2, 3, 4), "g", [1], (2**31,),
                       lambda meta: (1,), lambda meta: 1, 1.5])


# ---- one case -----------------------------------------------------------------------

class CaseTimeout(Exception):
    pass


def run_case(blk, np, files, words, seed, index):
    """One case, deterministic in (seed, index). Raises what blk raised when it
    is not a blk.Error."""
    rng = random.Random(f"{seed}:{index}")
    src, path, mutated = mutate(rng, files, words)
    source = src if rng.random() < 0.5 else src.decode("utf-8", errors=rng.choice(["replace", "ignore",
                                                                                    "surrogateescape"]))
    try:
        m = blk.load(source=source, **load_kwargs(rng, path))
    except blk.Error:
        return
    names = m.kernel_names[:3]
    for name in names + ([rng.choice(["nope", "", "a\0b"])] if rng.random() < 0.2 else []):
        try:
            k = m[name]
        except blk.Error:
            continue
        try:
            k.compile(backend="interpreter", **consts(rng, k))
        except blk.Error:
            pass
        # launches only for sources as written: a mutated number can make a
        # kernel loop for minutes, which is no finding
        if mutated:
            continue
        for _ in range(rng.randint(1, 3)):
            args = [argument(rng, np, p) for p in k.runtime_params]
            if rng.random() < 0.1 and args:
                args = args[:-1] if rng.random() < 0.5 else args + [1]
            kw = consts(rng, k)
            try:
                g = grid(rng)
                if rng.random() < 0.2:
                    k.compile(*args, backend=rng.choice(["interpreter", "gpu", "tpu", None]), **kw)
                elif g is None:
                    k(*args, **kw)
                else:
                    k[g](*args, **kw)
            except blk.Error:
                pass


def child(seed, first, count, only):
    import blk
    try:
        import numpy as np
    except ImportError:
        np = None
    blk.set_backend("interpreter")
    files, words = corpus(), dictionary()

    def on_alarm(*_):
        raise CaseTimeout(f"case ran past {CASE_SECONDS} s")
    signal.signal(signal.SIGALRM, on_alarm)
    for i in range(first, first + count):
        print(f"case {i}", flush=True)  # the parent names the last one if this process dies
        signal.alarm(CASE_SECONDS)
        try:
            run_case(blk, np, files, words, seed, i)
        except BaseException as e:  # noqa: B902  anything but blk.Error is a finding
            signal.alarm(0)
            import traceback
            traceback.print_exc(file=sys.stdout)
            print(f"FINDING {type(e).__name__} in case {i} (seed {seed}): replay with\n"
                  f"    python3 {os.path.relpath(__file__, REPO)} --seed {seed} --case {i}", flush=True)
            return 1
        signal.alarm(0)
        if only:
            print(f"case {i}: only blk.Error")
    return 0


def parent(seconds, seed):
    deadline = time.monotonic() + seconds
    failed = cases = 0
    first = 0
    while time.monotonic() < deadline:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--seed", str(seed), "--first", str(first),
               "--count", str(CASES_PER_CHILD)]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=max(60, CASE_SECONDS * 3) + 2 * CASES_PER_CHILD)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
            rc = "timeout"
        last = [ln for ln in out.splitlines() if ln.startswith("case ")]
        done = len(last)
        cases += done
        if rc != 0:
            failed += 1
            where = last[-1].split()[1] if last else str(first)
            print(f"FAIL child (seed {seed}, cases {first}..): exit {rc} in case {where}")
            print("\n".join("    " + ln for ln in out.splitlines()[-40:] if not ln.startswith("case ")))
            print(f"    replay: python3 {os.path.relpath(__file__, REPO)} --seed {seed} --case {where}")
        first += CASES_PER_CHILD
    print(f"fuzz_python: {cases} cases in {seconds} s from seed {seed} "
          f"(longer: BLK_FUZZ_PY_SECONDS=N or --seconds N; another seed: --seed S)")
    # the run counts as one case of the suite that runs it, each finding a failure
    print(f"{0 if failed else 1} passed, {failed} failed")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("BLK_FUZZ_PY_SECONDS", "20")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--case", type=int, default=None, help="replay this one case in this process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=CASES_PER_CHILD, help=argparse.SUPPRESS)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(os.environ.get("BLK_FUZZ_PY_SEED", str(int(time.time()))))
    if a.case is not None:
        return child(seed, a.case, 1, True)
    if a.child:
        return child(seed, a.first, a.count, False)
    return parent(a.seconds, seed)


if __name__ == "__main__":
    sys.exit(main())
