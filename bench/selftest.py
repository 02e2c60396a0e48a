#!/usr/bin/env python3
"""selftest.py: checks bench's ctypes layer on the interpreter, no GPU or torch needed.

  python3 bench/selftest.py        (after `make`; uses build/libblk.so or $BLK_LIB)

1. Compiles bench/layout.c against runtime/blk.h (where a C compiler is found)
   and compares every size and field offset with the ctypes mirrors in blkffi.py.
2. On a BLK_BACKEND_INTERPRETER context, with blk_malloc memory, launches every
   kernel the benchmark launches, through the same blk_calls.py functions the
   benchmark uses, at small sizes, and compares with references computed here
   in Python (float64): vector_add, sin4, softmax, layernorm, sum_many (an array
   of device pointers), w4a16_gemv.
3. The runtime benchmark's calls: blk_kernel_compile (a fresh module: phases
   timed, no PTX on the interpreter), blk_time_launch, matmul with a config and
   blk_autotune over examples/matmul.tile's configs (the interpreter takes the
   first; the ones bench.py gives Triton's autotuner are the file's), the
   parser of bench/launch.c's output.
4. Error paths: a wrong argument count, a null pointer, an out-of-bounds launch
   (BLK_ERROR_LAUNCH with its message).
Exit status 0 when everything passed.
"""

import ctypes
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkffi  # noqa: E402  (checks the layout at import)
import blk_calls as bc  # noqa: E402
import runtime_bench  # noqa: E402  (no torch or triton at import)

passed = failed = 0


def expect(cond, what, detail=""):
    global passed, failed
    print(("ok   " if cond else "FAIL ") + what + (f"  ({detail})" if detail else ""))
    if cond:
        passed += 1
    else:
        failed += 1


def check_layout_against_c():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        print("skip layout.c: no C compiler")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "layout")
        subprocess.run([cc, "-std=c17", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(blkffi.REPO, "runtime"),
                        os.path.join(here, "layout.c"), "-o", exe], check=True)
        text = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    from_c = {}
    for line in text.splitlines():
        key, value = line.rsplit(" ", 1)
        from_c[key] = int(value)
    got = blkffi.ctypes_layout()
    diff = [k for k in sorted(set(from_c) | set(got)) if from_c.get(k) != got.get(k)]
    expect(not diff, f"ctypes layout equals blk.h's ({len(from_c)} sizes and offsets from layout.c)",
           "; ".join(f"{k}: C {from_c.get(k)} ctypes {got.get(k)}" for k in diff))
    diff = [k for k in sorted(set(from_c) | set(blkffi.EXPECTED_LAYOUT)) if from_c.get(k) != blkffi.EXPECTED_LAYOUT.get(k)]
    expect(not diff, "blkffi.EXPECTED_LAYOUT equals blk.h's", ", ".join(diff))


# ---- buffers on the interpreter ----

class Buf:
    """A device buffer of `n` elements of ctypes type `ct`, with a host copy."""

    def __init__(self, ctx, ct, values):
        self.ctx, self.ct = ctx, ct
        self.host = (ct * max(1, len(values)))(*values)
        self.n = len(values)
        self.ptr = ctx.malloc(ctypes.sizeof(self.host))
        ctx.to_device(self.ptr, self.host)

    def read(self):
        out = (self.ct * max(1, self.n))()
        self.ctx.from_device(out, self.ptr)
        return list(out)[:self.n]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def max_rel(out, ref):
    """max |out - ref| / max |ref|; inf when anything is NaN."""
    if any(math.isnan(v) for v in out):
        return math.inf
    scale = max(abs(r) for r in ref) or 1.0
    return max(abs(o - r) for o, r in zip(out, ref)) / scale


def matmul_configs_in_file():
    """The @autotune configs of examples/matmul.tile, read from its text."""
    import re
    with open(os.path.join(blkffi.REPO, "examples", "matmul.tile")) as f:
        text = f.read()
    block = text[text.index("@autotune("):text.index("kernel matmul")]
    return [{k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)", body)} for body in re.findall(r"\{([^}]*)\}", block)]


def runtime_calls(ctx, rng):
    nan = float("nan")
    # blk_kernel_compile on a fresh module: the phases this compilation ran
    rows, cols = 3, 64
    xs = [f32(rng.gauss(0, 1)) for _ in range(rows * cols)]
    x = Buf(ctx, ctypes.c_float, xs)
    out = Buf(ctx, ctypes.c_float, [nan] * (rows * cols))
    old = bc.fresh(ctx, "softmax")
    go = bc.softmax(ctx, x.ptr, out.ptr, rows, cols)
    expect(old is not None and go.kernel is not old, "blk_calls.fresh: the next call loads the module anew")
    info = go.compile()
    expect(info["ptx"] is None and info["ms_parse"] > 0 and info["ms_irgen"] > 0 and info["ms_llvm"] == 0
           and info["ms_cubin"] == 0 and not info["from_disk_cache"] and info["num_warps"] == 4,
           "blk_kernel_compile on the interpreter: no PTX, parse and irgen timed",
           ", ".join(f"{k} {v}" for k, v in info.items() if k != "ptx"))
    info2 = go.compile()
    expect(info2["ms_irgen"] == 0 and info2["ms_parse"] == 0, "blk_kernel_compile again: nothing compiled anew")
    ms = go.time(reps=3)
    expect(ms > 0, "blk_time_launch on the interpreter", f"{ms:.3g} ms")
    ref = []
    for r in range(rows):
        row = xs[r * cols:(r + 1) * cols]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        ref += [v / sum(e) for v in e]
    err = max_rel(out.read(), ref)
    expect(err < 1e-5, "... its runs computed the softmax", f"max rel err {err:.2e}")

    # matmul: the file's configs are the benchmark's
    in_file = matmul_configs_in_file()
    expect(in_file == bc.MATMUL_CONFIGS, "blk_calls.MATMUL_CONFIGS are examples/matmul.tile's @autotune configs",
           repr(in_file))
    M, N, K = 48, 40, 72
    av = [f16_value(f16_bits(rng.uniform(-1, 1))) for _ in range(M * K)]
    bv = [f16_value(f16_bits(rng.uniform(-1, 1))) for _ in range(K * N)]
    a = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in av])
    b = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in bv])
    ref = [sum(av[i * K + k] * bv[k * N + j] for k in range(K)) for i in range(M) for j in range(N)]
    strides = (K, 1, N, 1, N, 1)
    c = Buf(ctx, ctypes.c_uint16, [0x7E00] * (M * N))
    go = bc.matmul(ctx, a.ptr, b.ptr, c.ptr, M, N, K, *strides, config=bc.MATMUL_CONFIGS[3])
    expect(go.opts.num_warps == 4 and go.opts.num_stages == 5 and go.opts.n_consts == 4,
           "matmul with config 3: 4 consts, 4 warps, 5 stages")
    go()
    err = max_rel([f16_value(v) for v in c.read()], ref)
    expect(err < 1e-2, f"matmul {M}x{N}x{K} (f16) with config 3", f"max rel err {err:.2e}")
    c = Buf(ctx, ctypes.c_uint16, [0x7E00] * (M * N))
    go = bc.matmul(ctx, a.ptr, b.ptr, c.ptr, M, N, K, *strides)
    res = go.autotune()
    expect(res["best"] == 0 and len(res["ms"]) == 4 and res["ms"][0] == 0
           and all("not timed" in n for n in res["notes"][1:]),
           "blk_autotune of matmul on the interpreter: 4 configs, the first taken", repr(res))
    expect(all(v == 0x7E00 for v in c.read()), "... and nothing written")
    go()
    err = max_rel([f16_value(v) for v in c.read()], ref)
    expect(err < 1e-2, "matmul launched with its consts open: the tuned config", f"max rel err {err:.2e}")

    # bench.py's reading of bench/launch.c's output
    text = ("launch: NVIDIA H100\nRESULT args=3 raw_us=2.0000 blk_us=2.2000 ratio=1.1000 raw_row_us=2.1 "
            "blk_row_us=2.3 raw_row_sync_us=2.2 blk_row_sync_us=2.4 timer_ns=20.0 launches=10000\n"
            "RESULT args=20 raw_us=2.5 blk_us=2.6 ratio=1.04 raw_row_us=2.5 blk_row_us=2.7 raw_row_sync_us=2.6 "
            "blk_row_sync_us=2.8 timer_ns=20.0 launches=10000\n")
    got = runtime_bench.parse_launch_output(text)
    expect(len(got) == 2 and got[0]["args"] == 3 and got[0]["blk_us"] == 2.2 and got[1]["args"] == 20
           and got[1]["launches"] == 10000, "parse_launch_output reads bench/launch's RESULT lines", repr(got))
    expect(runtime_bench.parse_launch_output("launch: no GPU: no CUDA driver\n") == [],
           "parse_launch_output: no GPU, no rows")


def main():
    check_layout_against_c()
    blk = blkffi.Blk()
    print(f"libblk {blk.version()} from {blk.path}")
    ctx = blk.context(blkffi.BACKEND_INTERPRETER)
    expect(ctx.backend == blkffi.BACKEND_INTERPRETER, "interpreter context")
    rng = random.Random(1234)
    nan = float("nan")

    # vector_add: a masked tail, the explicit grid and the grid clause
    n = 3000
    xs = [f32(rng.uniform(-2, 2)) for _ in range(n)]
    ys = [f32(rng.uniform(-2, 2)) for _ in range(n)]
    x, y = Buf(ctx, ctypes.c_float, xs), Buf(ctx, ctypes.c_float, ys)
    out = Buf(ctx, ctypes.c_float, [nan] * n)
    k = bc.kernel(ctx, "vector_add")
    expect([repr(p) for p in k.params] == ["x: *f32", "y: *f32", "out: *f32", "n: i32", "BLOCK: const i32"],
           "vector_add's parameters through blk_kernel_param", repr(k.params))
    go = bc.vector_add(ctx, x.ptr, y.ptr, out.ptr, n)
    expect(go.grid == (3, 1, 1), "vector_add grid cdiv(3000, 1024)", repr(go.grid))
    go()
    ref = [f32(a + b) for a, b in zip(xs, ys)]
    expect(out.read() == ref, "vector_add n=3000 BLOCK=1024, explicit grid: exact")
    ctx.to_device(out.ptr, out.host)
    k.prepare([x.ptr, y.ptr, out.ptr, n], consts={"BLOCK": 256})()
    expect(out.read() == ref, "vector_add BLOCK=256 through the kernel's grid clause: exact")
    # the prepared launch is reusable: poison, launch again
    ctx.to_device(out.ptr, (ctypes.c_float * n)(*([nan] * n)))
    go()
    expect(out.read() == ref, "a prepared Launch called twice")

    # sin4
    n = 1000
    xs = [f32(rng.gauss(0, 2)) for _ in range(n)]
    x = Buf(ctx, ctypes.c_float, xs)
    out = Buf(ctx, ctypes.c_float, [nan] * n)
    bc.sin4(ctx, x.ptr, out.ptr, n, BLOCK=512)()
    ref = [math.sin(math.sin(math.sin(math.sin(v)))) for v in xs]
    err = max_rel(out.read(), ref)
    expect(err < 1e-5, "sin4 n=1000 BLOCK=512", f"max rel err {err:.2e}")

    # softmax: 5 rows of 100 (BLOCK 128: a masked row end)
    rows, cols = 5, 100
    xs = [f32(rng.gauss(0, 3)) for _ in range(rows * cols)]
    x = Buf(ctx, ctypes.c_float, xs)
    out = Buf(ctx, ctypes.c_float, [nan] * (rows * cols))
    go = bc.softmax(ctx, x.ptr, out.ptr, rows, cols)
    expect(go.opts.num_warps == 4 and go.grid == (5, 1, 1), "softmax: 4 warps, one program a row")
    go()
    ref = []
    for r in range(rows):
        row = xs[r * cols:(r + 1) * cols]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        ref += [v / s for v in e]
    err = max_rel(out.read(), ref)
    expect(err < 1e-5, "softmax 5x100 BLOCK=128", f"max rel err {err:.2e}")

    # layernorm: f16, 4 rows of 300 in chunks of 128 (three chunks, the last masked)
    rows, cols, eps = 4, 300, 1e-5
    xv = [f16_value(f16_bits(rng.gauss(0, 1))) for _ in range(rows * cols)]
    wv = [f16_value(f16_bits(rng.uniform(0.5, 1.5))) for _ in range(cols)]
    bv = [f16_value(f16_bits(rng.uniform(-0.5, 0.5))) for _ in range(cols)]
    x = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in xv])
    w = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in wv])
    b = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in bv])
    y = Buf(ctx, ctypes.c_uint16, [0x7E00] * (rows * cols))  # f16 NaN
    mean = Buf(ctx, ctypes.c_float, [nan] * rows)
    rstd = Buf(ctx, ctypes.c_float, [nan] * rows)
    go = bc.layernorm(ctx, x.ptr, y.ptr, w.ptr, b.ptr, mean.ptr, rstd.ptr, rows, cols, eps, BLOCK=128)
    go()
    ref_y, ref_m, ref_r = [], [], []
    for r in range(rows):
        row = xv[r * cols:(r + 1) * cols]
        mu = sum(row) / cols
        var = sum((v - mu) ** 2 for v in row) / cols
        rs = 1 / math.sqrt(var + eps)
        ref_m.append(mu)
        ref_r.append(rs)
        ref_y += [(v - mu) * rs * wv[c] + bv[c] for c, v in enumerate(row)]
    err = max_rel([f16_value(v) for v in y.read()], ref_y)
    expect(err < 1e-2, "layernorm f16 4x300 BLOCK=128: y", f"max rel err {err:.2e}")
    err = max(max_rel(mean.read(), ref_m), max_rel(rstd.read(), ref_r))
    expect(err < 1e-4, "layernorm: mean and rstd", f"max rel err {err:.2e}")
    cfg = bc.layernorm_config(8192)
    expect(cfg == (8192, 8), "layernorm config for 8192 columns: BLOCK 8192, 8 warps", repr(cfg))

    # sum_many: tensors anywhere, their addresses in a device array
    sizes = [1, 1000, 3000, 17, 2048, 1024]
    tensors = [Buf(ctx, ctypes.c_float, [f32(rng.random()) for _ in range(s)]) for s in sizes]
    ptrs = Buf(ctx, ctypes.c_uint64, [t.ptr for t in tensors])
    sz = Buf(ctx, ctypes.c_int64, sizes)
    out = Buf(ctx, ctypes.c_float, [nan] * len(sizes))
    bc.sum_many(ctx, ptrs.ptr, sz.ptr, out.ptr, len(sizes), BLOCK=512)()
    got = out.read()
    ref = [sum(t.host[:t.n]) for t in tensors]
    err = max(abs(g - r) / abs(r) for g, r in zip(got, ref)) if not any(map(math.isnan, got)) else math.inf
    expect(err < 1e-5, f"sum_many of {len(sizes)} tensors through a pointer array", f"max rel err {err:.2e}")

    # w4a16_gemv: N=16, K=256, GROUP=128, two block shapes
    N, K, G = 16, 256, 128
    packed = [rng.randrange(256) for _ in range(N * K // 2)]
    sv = [f16_value(f16_bits(rng.uniform(0.001, 0.02))) for _ in range(N * K // G)]
    xv = [f16_value(f16_bits(rng.gauss(0, 1))) for _ in range(K)]
    wbuf = Buf(ctx, ctypes.c_uint8, packed)
    s = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in sv])
    x = Buf(ctx, ctypes.c_uint16, [f16_bits(v) for v in xv])
    ref = []
    for nn in range(N):
        acc = 0.0
        for kk in range(K):
            byte = packed[nn * K // 2 + kk // 2]
            q = (byte >> 4) if kk % 2 else (byte & 0xF)
            acc += (q - 8) * sv[nn * (K // G) + kk // G] * xv[kk]
        ref.append(acc)
    for bn, bk, warps in [(8, 128, 4), (4, 64, 2)]:
        y = Buf(ctx, ctypes.c_uint16, [0x7E00] * N)
        bc.w4a16_gemv(ctx, wbuf.ptr, s.ptr, x.ptr, y.ptr, N, K, GROUP=G, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)()
        err = max_rel([f16_value(v) for v in y.read()], ref)
        expect(err < 1e-2, f"w4a16_gemv N=16 K=256 BLOCK_N={bn} BLOCK_K={bk}", f"max rel err {err:.2e}")

    runtime_calls(ctx, rng)

    # error paths
    k = bc.kernel(ctx, "vector_add")
    try:
        k.prepare([1, 2, 3])
        expect(False, "three arguments for four: ValueError")
    except ValueError as e:
        expect("4 arguments expected" in str(e), "three arguments for four: ValueError", str(e))
    try:
        k.prepare([0, 1, 2, 3])
        expect(False, "a null pointer: ValueError")
    except ValueError as e:
        expect("non-null" in str(e), "a null pointer: ValueError")
    small = Buf(ctx, ctypes.c_float, [0.0] * 16)
    try:
        bc.vector_add(ctx, small.ptr, small.ptr, small.ptr, 64, BLOCK=64)()
        expect(False, "out-of-bounds launch raises BlkError")
    except blkffi.BlkError as e:
        expect(e.status == 6 and "vector_add" in str(e), "out-of-bounds launch raises BLK_ERROR_LAUNCH",
               str(e).splitlines()[0][:120])

    ctx.destroy()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
