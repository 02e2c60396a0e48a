#!/usr/bin/env python3
"""tests/diff/diff.py: differential tests of generated kernels (tests/diff/gen.py).

usage:
  diff.py ci  --blkc BLKC [--seed S] [--count N] [--jobs J] [--ptxas PATH] [--repro DIR]
      each kernel: `blkc run` on the interpreter (no error, no crash),
      `blkc --emit=ptx` for sm_80 and sm_90, and ptxas on both where PATH is given
  diff.py gpu --blkc BLKC [--seed S] [--count N] [--jobs J] [--repro DIR]
      each kernel on the interpreter and on the GPU with the same inputs
      (--seed), every output buffer compared (docs/testing.md: tolerances)
  diff.py compare FILE.tile INTERP_DIR GPU_DIR
      compares saved outputs (NAME.bin in each folder) as the gpu mode does

Prints a line per failing case (FAIL NAME: why, then the reproducer), a line
per passing case with --verbose, and last "N passed, N failed". A failing
case's kernel goes into --repro DIR with NAME.cmd, the command that replays it.
Only the standard library is used.
"""
import argparse
import concurrent.futures
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

FMT = {"i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H", "u32": "I", "u64": "Q",
       "f16": "e", "f32": "f", "f64": "d", "bf16": "H"}
SIZE = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8,
        "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
# relative tolerance per class, on top of a few units of the least precise type involved
RTOL = {"approx": 1e-5, "reduce": 1e-4}
TIMEOUT = 120


def header(path):
    with open(path) as f:
        l1 = f.readline()
        l2 = f.readline()
    assert l1.startswith("// blkc run: ") and l2.startswith("// diff: "), path
    args = l1[len("// blkc run: "):].split()
    outs = []
    for w in l2[len("// diff: "):].split():
        name, spec = w.split("=", 1)
        parts = spec.split(":")
        outs.append((name, parts[0], parts[1], parts[2] if len(parts) > 2 else parts[0]))
    return args, outs


def decode(data, t):
    n = len(data) // SIZE[t]
    vals = struct.unpack("<%d%s" % (n, FMT[t]), data[:n * SIZE[t]])
    if t == "bf16":
        vals = [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in vals]
    return vals


def compare(a, b, t, cls, tolt):
    """None when the buffers agree, else a line saying where they differ.
    a: the interpreter's bytes, b: the GPU's."""
    if a == b:
        return None
    if len(a) != len(b):
        return "sizes differ: %d and %d bytes" % (len(a), len(b))
    va, vb = decode(a, t), decode(b, t)
    if t not in EPS:
        for i, (x, y) in enumerate(zip(va, vb)):
            if x != y:
                return "element %d: interpreter %d, gpu %d" % (i, x, y)
        return None
    scale = 0.0
    if cls != "exact":
        finite = [abs(x) for x in va if math.isfinite(x)]
        scale = max(finite) if finite else 0.0
        rtol = RTOL[cls] + 4 * EPS.get(tolt, EPS[t])
    bad = 0
    first = None
    for i, (x, y) in enumerate(zip(va, vb)):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        if cls != "exact" and math.isfinite(x) and math.isfinite(y) and \
                abs(x - y) <= rtol * (abs(x) + scale) + 1e-6:
            continue
        bad += 1
        if first is None:
            first = "element %d: interpreter %r, gpu %r" % (i, x, y)
    if bad:
        return "%s (%d of %d elements differ%s)" % (
            first, bad, len(va), "" if cls == "exact" else ", tolerance %s %s" % (cls, tolt))
    return None


def run(cmd, env=None, timeout=TIMEOUT):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out after %ds" % timeout


def env_for(backend):
    e = dict(os.environ)
    e["BLK_BACKEND"] = backend
    return e


def blkc_run(blkc, tile, args, outs, backend, outdir):
    os.makedirs(outdir, exist_ok=True)
    saves = ["--save=%s:%s" % (n, os.path.join(outdir, n + ".bin")) for n, *_ in outs]
    return run([blkc, "run", tile] + args + saves, env_for(backend))


ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")


def kernel_name(args):
    return args[args.index("-k") + 1]


def ci_case(opt, tile, work):
    args, outs = header(tile)
    rc, out = blkc_run(opt.blkc, tile, args, outs, "interpreter", os.path.join(work, "interp"))
    if rc != 0:
        return "interpreter: exit %d" % rc, out
    k = kernel_name(args)
    defs = []
    for i, w in enumerate(args):
        if w == "-D":
            defs += ["-D", args[i + 1]]
    # two of the six targets a kernel, in turn: each is compiled for a
    # thousand of the suite's kernels (sm_75 has no mma.sync: its dots are FMAs)
    i = int(os.path.basename(tile)[1:6])
    for arch in (ARCHS[i % len(ARCHS)], ARCHS[(i + 3) % len(ARCHS)]):
        ptx = os.path.join(work, arch + ".ptx")
        rc, out = run([opt.blkc, "--emit=ptx", "--arch=" + arch, "-k", k] + defs + [tile, "-o", ptx])
        if rc != 0:
            return "blkc --emit=ptx --arch=%s: exit %d" % (arch, rc), out
        if opt.ptxas:
            rc, out = run([opt.ptxas, "-arch=" + arch, ptx, "-o", os.path.join(work, arch + ".cubin")])
            if rc != 0:
                return "ptxas -arch=%s: exit %d" % (arch, rc), out
    return None, ""


def gpu_case(opt, tile, work):
    args, outs = header(tile)
    di, dg = os.path.join(work, "interp"), os.path.join(work, "gpu")
    rc, out = blkc_run(opt.blkc, tile, args, outs, "interpreter", di)
    if rc != 0:
        return "interpreter: exit %d" % rc, out
    rc, out = blkc_run(opt.blkc, tile, args + opt.second_args, outs, opt.second, dg)
    if rc != 0:
        return "%s: exit %d" % (opt.second, rc), out
    return compare_dirs(outs, di, dg), ""


def compare_dirs(outs, di, dg):
    for name, t, cls, tolt in outs:
        with open(os.path.join(di, name + ".bin"), "rb") as f:
            a = f.read()
        with open(os.path.join(dg, name + ".bin"), "rb") as f:
            b = f.read()
        why = compare(a, b, t, cls, tolt)
        if why:
            return "%s (%s, %s): %s" % (name, t, cls, why)
    return None


def one(opt, i, root):
    name = "k%05d" % i
    work = os.path.join(root, name)
    os.makedirs(work)
    tile = os.path.join(work, name + ".tile")
    with open(tile, "w") as f:
        f.write(gen.generate(opt.seed, i))
    why, out = (ci_case if opt.mode == "ci" else gpu_case)(opt, tile, work)
    repro = None
    if why and opt.repro:
        os.makedirs(opt.repro, exist_ok=True)
        repro = os.path.join(opt.repro, name + ".tile")
        shutil.copy(tile, repro)
        args, _ = header(tile)
        cmd = "%s run %s %s" % (opt.blkc, repro, " ".join(args))
        if opt.mode == "gpu":
            cmd = "BLK_BACKEND=interpreter %s --print=%s   # and again with BLK_BACKEND=gpu" % (
                cmd, header(tile)[1][0][0])
        with open(os.path.join(opt.repro, name + ".cmd"), "w") as f:
            f.write(cmd + "\n")
    if not why or not opt.keep:
        shutil.rmtree(work, ignore_errors=True)
    return name, why, out, repro


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ci", "gpu", "compare"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--blkc", default="build/blkc")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ptxas", default="")
    ap.add_argument("--repro", default="")
    ap.add_argument("--keep", action="store_true", help="keep the outputs of failing cases")
    ap.add_argument("--verbose", action="store_true")
    # checks of this script without a GPU: the second run on the interpreter
    ap.add_argument("--second", default="gpu", help=argparse.SUPPRESS)
    ap.add_argument("--second-args", default="", help=argparse.SUPPRESS)
    opt = ap.parse_args()
    if opt.mode == "compare":
        tile, di, dg = opt.files
        why = compare_dirs(header(tile)[1], di, dg)
        print(why or "the outputs agree")
        return 1 if why else 0
    opt.second_args = opt.second_args.split()
    if opt.repro:
        opt.repro = os.path.abspath(opt.repro)
    root = tempfile.mkdtemp(prefix="blk-diff.")
    passed = failed = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=opt.jobs) as ex:
            futs = [ex.submit(one, opt, i, root) for i in range(opt.first, opt.first + opt.count)]
            for fu in futs:
                name, why, out, repro = fu.result()
                if why:
                    failed += 1
                    print("FAIL %s (seed %d): %s" % (name, opt.seed, why))
                    for line in out.strip().splitlines()[:8]:
                        print("    " + line)
                    if repro:
                        print("    reproducer: %s (command in %s)" % (repro, repro[:-5] + ".cmd"))
                else:
                    passed += 1
                    if opt.verbose:
                        print("ok   %s" % name)
                sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
