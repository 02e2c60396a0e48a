#!/usr/bin/env python3
"""tests/diff/batch.py: the GPU mode of the differential tests, in process.

usage: batch.py --seed S --first I --count N [--repro DIR] [--lib PATH]

Generates kernels I .. I+N-1 of seed S (tests/diff/gen.py) and runs each on
an interpreter context and on a GPU context of one process, through libblk
(bench/blkffi.py): one CUDA context for all of them, where `blkc run` made a
context and a process a kernel. Both backends get the same input bytes,
made here from the kernel's first line (COUNT:INIT as `blkc run` reads it).
Outputs are compared as tests/diff/diff.py compares them. A mismatch prints
a FAIL line and, with --repro, writes the kernel there; the last line is
"N passed, N failed". Progress goes to standard error every 250 kernels.
"""
import argparse
import ctypes
import math
import os
import random
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import blkffi  # noqa: E402
import diff  # noqa: E402
import gen  # noqa: E402

INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64, "i1": 8}


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def encode(t, v):
    """The bytes of value v as element type t (rounded as blk rounds)."""
    if t in INT_BITS:
        bits = INT_BITS[t]
        n = int(v) if math.isfinite(v) else 0
        if t == "i1":
            n = 1 if n else 0
        return (n & ((1 << bits) - 1)).to_bytes(bits // 8, "little")
    if t == "f64":
        return struct.pack("<d", v)
    if t == "f32":
        return struct.pack("<f", v)
    if t == "f16":
        try:
            return struct.pack("<e", v)
        except OverflowError:
            return struct.pack("<H", 0xFC00 if v < 0 else 0x7C00)
    if t == "bf16":
        b = f32_bits(v)
        return struct.pack("<H", ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF)
    if t in ("f8e4m3", "f8e5m2"):
        return bytes([fp8_code(t, v)])
    raise ValueError("no encoding for type " + t)


FP8 = {}


def fp8_code(t, v):
    """The fp8 code nearest v (ties to the even code), saturating at the
    largest finite value, as blk converts to fp8."""
    if t not in FP8:
        eb, mb = (4, 3) if t == "f8e4m3" else (5, 2)
        bias = (1 << (eb - 1)) - 1
        codes = []
        for c in range(128):
            e, m = c >> mb, c & ((1 << mb) - 1)
            if t == "f8e4m3" and c == 0x7F or t == "f8e5m2" and e == 31:
                continue  # NaN, and e5m2's infinities
            val = (1 + m / (1 << mb)) * 2.0 ** (e - bias) if e else m / (1 << mb) * 2.0 ** (1 - bias)
            codes.append((val, c))
        FP8[t] = codes
    best = min(FP8[t], key=lambda vc: (abs(abs(v) - vc[0]), vc[1] & 1))
    return best[1] | (0x80 if v < 0 else 0)


def fill(t, count, init, rng):
    """What `blkc run` puts in a buffer of COUNT[:INIT] (other random numbers)."""
    is_int = t in INT_BITS
    out = bytearray()
    for i in range(count):
        if init.startswith("fill="):
            v = float(init[5:])
        elif init == "ones":
            v = 1.0
        elif init == "arange":
            v = float(i)
        elif init == "random":
            u = rng.uniform(-1.0, 1.0)
            v = math.floor((u + 1) * 64) if is_int else u
        elif init == "randn":
            v = rng.gauss(0.0, 1.0)
        else:
            v = 0.0
        out += encode(t, v)
    return bytes(out)


class Case:
    """A kernel's launch from its `// blkc run:` line, its inputs made once."""

    def __init__(self, tile, seed):
        self.args, self.outs = diff.header(tile)
        self.kernel, self.consts, self.specs, self.grid = None, {}, {}, (0, 0, 0)
        words = list(self.args)
        while words:
            w = words.pop(0)
            if w == "-k":
                self.kernel = words.pop(0)
            elif w == "-D":
                name, value = words.pop(0).split("=", 1)
                self.consts[name] = float(value) if "." in value else int(value)
            elif w.startswith("--grid="):
                g = [int(x) for x in w[7:].split(",")]
                self.grid = tuple(g + [1] * (3 - len(g)))
            elif w.startswith("--seed="):
                seed = int(w[7:])
            elif "=" in w:
                name, spec = w.split("=", 1)
                self.specs[name] = spec
        self.rng = random.Random(seed)
        self.data = {}

    def inputs(self, kernel):
        """Bytes of each pointer argument, and each scalar, by parameter."""
        vals = []
        for p in kernel.runtime_params:
            spec = self.specs[p.name]
            if p.kind == blkffi.PARAM_POINTER:
                if p.name not in self.data:
                    count, _, init = spec.partition(":")
                    self.data[p.name] = fill(p.type.lstrip("*"), int(count), init or "zeros", self.rng)
                vals.append(self.data[p.name])
            else:
                vals.append(float(spec) if p.kind != blkffi.PARAM_INT else int(float(spec)))
        return vals


def run_on(ctx, tile, case):
    """Launches the case on ctx; the output buffers' bytes by name."""
    m = ctx.load(tile)
    try:
        k = m.kernel(case.kernel)
        vals = case.inputs(k)
        args, ptrs = [], {}
        for p, v in zip(k.runtime_params, vals):
            if p.kind == blkffi.PARAM_POINTER:
                ptr = ctx.malloc(max(1, len(v)))
                ctx.to_device(ptr, v) if v else None
                ptrs[p.name] = (ptr, len(v))
                args.append(ptr)
            else:
                args.append(v)
        try:
            k.launch(args, consts=case.consts, grid=case.grid)
            ctx.synchronize()
            out = {}
            for name, *_ in case.outs:
                ptr, n = ptrs[name]
                buf = (ctypes.c_char * max(1, n))()
                ctx.from_device(buf, ptr)
                out[name] = bytes(buf)[:n]
            return out
        finally:
            for ptr, _ in ptrs.values():
                ctx.free(ptr)
    finally:
        m.destroy()
        ctx.modules.remove(m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--repro", default="")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--second", default="gpu", choices=["gpu", "interpreter"],
                    help="the backend compared with the interpreter (interpreter: a check of this script)")
    opt = ap.parse_args()
    blk = blkffi.Blk(opt.lib)
    interp = blk.context(blkffi.BACKEND_INTERPRETER)
    second = blk.context(blkffi.BACKEND_GPU if opt.second == "gpu" else blkffi.BACKEND_INTERPRETER)
    root = tempfile.mkdtemp(prefix="blk-diff-batch.")
    passed = failed = 0
    try:
        for i in range(opt.first, opt.first + opt.count):
            name = "k%05d" % i
            tile = os.path.join(root, name + ".tile")
            with open(tile, "w") as f:
                f.write(gen.generate(opt.seed, i))
            why = None
            try:
                case = Case(tile, opt.seed)
                a = run_on(interp, tile, case)
                b = run_on(second, tile, case)
                for oname, t, cls, tolt in case.outs:
                    why = diff.compare(a[oname], b[oname], t, cls, tolt)
                    if why:
                        why = "%s (%s, %s): %s" % (oname, t, cls, why)
                        break
            except (blkffi.BlkError, ValueError, KeyError) as e:
                why = "%s: %s" % (type(e).__name__, e)
            if why:
                failed += 1
                print("FAIL %s (seed %d): %s" % (name, opt.seed, why), flush=True)
                if opt.repro:
                    os.makedirs(opt.repro, exist_ok=True)
                    shutil.copy(tile, os.path.join(opt.repro, name + ".tile"))
                    print("    reproducer: %s" % os.path.join(opt.repro, name + ".tile"), flush=True)
                if "CUDA_ERROR" in why and "sticky" in why:
                    break
            else:
                passed += 1
            if (i - opt.first + 1) % 250 == 0:
                print("  %d of %d: %d failed" % (i - opt.first + 1, opt.count, failed), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
