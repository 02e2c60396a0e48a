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


# ---- issue 12: bench/kernels/matmul_tc.tile, blkc for sm_90, the rows' selection ----

def autotune_configs_by_kernel(path):
    """{kernel name: its @autotune configs} of a .tile file, read from its text."""
    import re
    with open(path) as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"@autotune\((.*?)\]\)\s*kernel\s+(\w+)", text, re.S):
        out[m.group(2)] = [{k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)", body)}
                           for body in re.findall(r"\{([^}]*)\}", m.group(1))]
    return out


def bf16_bits(x):
    """The bf16 of x's f32, truncated (exact for the values used here)."""
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def f8e4m3_value(bits):
    """NVIDIA's e4m3 (finite only, one NaN pattern 0x7F/0xFF): bias 7, 3 mantissa bits."""
    s = -1.0 if bits & 0x80 else 1.0
    e, m = (bits >> 3) & 0xF, bits & 7
    if e == 15 and m == 7:
        return math.nan
    return s * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


# blk type -> (ctypes element, random value (already representable), encode, decode)
def tc_types(rng):
    f8_codes = [b for b in range(256) if (b >> 3) & 0xF <= 9]  # |x| <= 7.5: finite, moderate sums
    return {
        "f16": (ctypes.c_uint16, lambda: f16_value(f16_bits(rng.uniform(-1, 1))), f16_bits, f16_value),
        "bf16": (ctypes.c_uint16, lambda: bf16_value(bf16_bits(rng.uniform(-1, 1))), bf16_bits, bf16_value),
        "f32": (ctypes.c_float, lambda: f32(rng.uniform(-1, 1)), lambda v: v, lambda v: v),
        "f8e4m3": (ctypes.c_uint8, lambda: f8e4m3_value(rng.choice(f8_codes)), None, f8e4m3_value),
        "i8": (ctypes.c_int8, lambda: rng.randrange(-128, 128), lambda v: v, lambda v: v),
        "i32": (ctypes.c_int32, None, lambda v: v, lambda v: v),
    }


def tc_matmul_on_interpreter(ctx, rng):
    """Every kernel of matmul_tc.tile through blk_calls.matmul_tc, as bench.py launches it
    (8-bit and f32 b K-major), on M, N, K that leave a partial tile on every axis, in the
    family's smallest config and in its first, against a float64 reference."""
    path = os.path.join(blkffi.REPO, "bench", "kernels", "matmul_tc.tile")
    in_file = autotune_configs_by_kernel(path)
    for dtype, (plain, fused, _) in bc.MATMUL_TC_KERNELS.items():
        want = bc.MATMUL_TC_CONFIGS[bc.matmul_tc_family(dtype)]
        for name in (plain, fused):
            if name:
                expect(in_file.get(name) == want, f"blk_calls.MATMUL_TC_CONFIGS are {name}'s @autotune configs",
                       repr(in_file.get(name)))
    expect(sorted(in_file) == sorted(n for p, f, _ in bc.MATMUL_TC_KERNELS.values() for n in (p, f) if n),
           "every kernel of matmul_tc.tile is in blk_calls.MATMUL_TC_KERNELS", repr(sorted(in_file)))
    types = tc_types(rng)
    M, N, K = 40, 72, 144
    tol = {"f16": 1e-2, "bf16": 1e-2, "f32": 2e-3, "f8e4m3": 1e-2, "i8": 0.0}
    nan_bits = {"f16": 0x7E00, "bf16": 0x7FC0, "f32": math.nan, "i32": -1}
    for dtype, (plain, fused, out) in bc.MATMUL_TC_KERNELS.items():
        ct, rand, enc, dec = types[dtype]
        oct_, _, oenc, odec = types[out]
        av = [rand() for _ in range(M * K)]
        bv = [rand() for _ in range(K * N)]  # b[k][n] at k * N + n
        k_major = dtype in ("f8e4m3", "i8", "f32")
        codes = {}
        if enc is None:  # f8: the code of each value, from the table
            codes = {f8e4m3_value(b): b for b in range(256) if (b >> 3) & 0xF <= 9 and b != 0x80}
            enc = codes.__getitem__
        a = Buf(ctx, ct, [enc(v) for v in av])
        if k_major:
            b = Buf(ctx, ct, [enc(bv[k * N + n]) for n in range(N) for k in range(K)])
            sb = (1, K)
        else:
            b = Buf(ctx, ct, [enc(v) for v in bv])
            sb = (N, 1)
        prod = [sum(av[i * K + k] * bv[k * N + j] for k in range(K)) for i in range(M) for j in range(N)]
        configs = bc.MATMUL_TC_CONFIGS[bc.matmul_tc_family(dtype)]
        for with_bias in ((False, True) if fused else (False,)):
            if with_bias:
                biasv = [types[out][1]() for _ in range(N)]
                bias = Buf(ctx, oct_, [oenc(v) for v in biasv])
                ref = [max(p + biasv[i % N], 0.0) for i, p in enumerate(prod)]
            else:
                bias, ref = None, prod
            for cfg in (configs[-1], configs[0]):
                c = Buf(ctx, oct_, [nan_bits[out]] * (M * N))
                go = bc.matmul_tc(ctx, dtype, a.ptr, b.ptr, c.ptr, M, N, K, K, 1, *sb, N, 1,
                                  bias=bias.ptr if bias else None, config=cfg)
                blkffi.check_pointer_types(go.kernel, [{"f8e4m3": "float8_e4m3fn", "i8": "int8", "f16": "float16",
                                                        "bf16": "bfloat16", "f32": "float32"}[dtype]] * 2
                                           + [{"f16": "float16", "bf16": "bfloat16", "f32": "float32",
                                               "i32": "int32"}[out]])
                go()
                err = max_rel([odec(v) for v in c.read()], ref)
                expect(err <= tol[dtype], f"{go.kernel.name} {M}x{N}x{K} config {bc.config_text(cfg)}"
                       + (", b K-major" if k_major else ""), f"max rel err {err:.2e}")


def tc_persistent_on_interpreter(ctx, rng, quick=False):
    """bench/kernels/matmul_persistent_tc.tile through blk_calls.matmul_persistent_tc, as the
    16-bit matmul rows launch it: its @autotune configs are PERSISTENT_CONFIGS with tma = 1;
    f16 and bf16, with and without the bias + relu epilogue, on M, N, K that leave a partial
    tile on every axis, in a small config and the first (the interpreter runs no TMA: the
    descriptors' bounds and the epilogue are what it checks), against a float64 reference;
    and with --arch=sm_90a the first config's PTX copies by TMA and multiplies with wgmma."""
    path = os.path.join(blkffi.REPO, "bench", "kernels", "matmul_persistent_tc.tile")
    in_file = autotune_configs_by_kernel(path).get("matmul_persistent_tc")
    expect(in_file == [dict(c, tma=1) for c in bc.PERSISTENT_CONFIGS],
           "matmul_persistent_tc's @autotune configs are blk_calls.PERSISTENT_CONFIGS with tma = 1", repr(in_file))
    types = tc_types(rng)
    M, N, K = 40, 72, 144
    small = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "num_warps": 4, "num_stages": 3,
             "kernel": "persistent"}
    for dtype in ("f16", "bf16"):
        ct, rand, enc, dec = types[dtype]
        av = [rand() for _ in range(M * K)]
        bv = [rand() for _ in range(K * N)]
        a, b = Buf(ctx, ct, [enc(v) for v in av]), Buf(ctx, ct, [enc(v) for v in bv])
        prod = [sum(av[i * K + k] * bv[k * N + j] for k in range(K)) for i in range(M) for j in range(N)]
        for with_bias in (False, True):
            biasv = [rand() for _ in range(N)]
            bias = Buf(ctx, ct, [enc(v) for v in biasv]) if with_bias else None
            ref = [max(p + biasv[i % N], 0.0) for i, p in enumerate(prod)] if with_bias else prod
            for cfg in (small,) if quick else (small, bc.PERSISTENT_CONFIGS[0]):
                c = Buf(ctx, ct, [0x7E00 if dtype == "f16" else 0x7FC0] * (M * N))
                go = bc.matmul_persistent_tc(ctx, dtype, a.ptr, b.ptr, c.ptr, M, N, K, K, N, N,
                                             bias=bias.ptr if bias else None, config=cfg)
                torch_name = {"f16": "float16", "bf16": "bfloat16"}[dtype]
                blkffi.check_pointer_types(go.kernel, [torch_name] * 4, types={"T": dtype})
                try:
                    blkffi.check_pointer_types(go.kernel, ["float32"] + [torch_name] * 3, types={"T": dtype})
                    expect(False, f"check_pointer_types refuses f32 for *T = {dtype}", "accepted")
                except ValueError:
                    pass
                go()
                err = max_rel([dec(v) for v in c.read()], ref)
                expect(err <= 1e-2, f"matmul_persistent_tc {dtype}{' + bias + relu' if with_bias else ''} "
                       f"{M}x{N}x{K} config {bc.config_text(cfg)}", f"max rel err {err:.2e}")
    blkc = os.path.join(blkffi.REPO, "build", "blkc")
    if not os.path.exists(blkc):
        return
    cfg = bc.PERSISTENT_CONFIGS[0]
    defs = [f"-D{k}={v}" for k, v in cfg.items()] + ["-DT=bf16", "-DBIAS=true", "-Dtma=1",
                                                     "--assume=a:16,b:16,c:16,stride_am:16,stride_bk:16,stride_cm:16"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        p = subprocess.run([blkc, "--emit=ptx", "--arch=sm_90a", "-o", out, path] + defs, capture_output=True,
                           text=True)
        ptx = open(out).read() if p.returncode == 0 and os.path.exists(out) else ""
        expect("cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx,
               f"blkc sm_90a: matmul_persistent_tc bf16 + bias + relu {bc.config_text(cfg)}, tma = 1: "
               "cp.async.bulk.tensor and wgmma", (p.stderr.strip().splitlines() or [""])[0][:200])


def gemm_on_interpreter(ctx, rng, quick=False):
    """bench/kernels/gemm.tile as rows_gemm.py launches it: the data-parallel configs of the rows
    are @autotune configs of the file (with tma = 1); on the interpreter, each layout (NN, NT,
    TN, TT) with and without split-K and with and without BETA, f16 inputs and f32 output,
    on M, N, K that leave a partial tile on every axis, against a float64 reference (split-K:
    the tile counters left at zero); and for sm_90a a TN product reads A through wgmma's
    transpose bit with its tiles by TMA."""
    import rows_gemm
    path = os.path.join(blkffi.REPO, "bench", "kernels", "gemm.tile")
    in_file = autotune_configs_by_kernel(path).get("gemm", [])
    for c in rows_gemm.DP_CONFIGS:
        expect(dict(c, tma=1) in in_file, f"rows_gemm config {rows_gemm.cfg_text(c)} is an @autotune config of "
               "gemm.tile", "" if dict(c, tma=1) in in_file else repr(in_file))
    types = tc_types(rng)
    ct, rand, enc, dec = types["f16"]
    M, N, K = 40, 24, 72
    k = bc.bench_kernel(ctx, "gemm")
    for ta in (False, True):
        for tb in (False, True):
            av = [rand() for _ in range(M * K)]  # A (M x K) row-major
            bv = [rand() for _ in range(K * N)]
            a_st = [av[m * K + kk] for kk in range(K) for m in range(M)] if ta else av
            b_st = [bv[kk * N + n] for n in range(N) for kk in range(K)] if tb else bv
            a, b = Buf(ctx, ct, [enc(v) for v in a_st]), Buf(ctx, ct, [enc(v) for v in b_st])
            prod = [sum(av[i * K + kk] * bv[kk * N + j] for kk in range(K)) for i in range(M) for j in range(N)]
            for split in ((1,) if quick else (1, 3)):
                for beta in (False, True):
                    c0 = [rng.uniform(-1, 1) for _ in range(M * N)]
                    c = Buf(ctx, ctypes.c_float, c0)
                    ws = Buf(ctx, ctypes.c_float, [0.0] * (split * 48 * N))
                    cnt = Buf(ctx, ctypes.c_int32, [0] * 16)
                    k.prepare([a.ptr, b.ptr, c.ptr, ws.ptr, cnt.ptr, M, N, K, M if ta else K, K if tb else N, N],
                              consts={"T": "f16", "OUT": "f32", "TRANS_A": ta, "TRANS_B": tb, "BETA": beta,
                                      "SPLIT_K": split, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2},
                              num_warps=4, num_stages=3)()
                    ref = [p + (c0[i] if beta else 0.0) for i, p in enumerate(prod)]
                    err = max_rel(c.read(), ref)
                    lay = ("T" if ta else "N") + ("T" if tb else "N")
                    expect(err <= 1e-5 and not any(cnt.read()), f"gemm {lay} split {split}{' beta' if beta else ''} "
                           f"{M}x{N}x{K}", f"max rel err {err:.2e}, counters {cnt.read()[:4]}")
    blkc = os.path.join(blkffi.REPO, "build", "blkc")
    if not os.path.exists(blkc):
        return
    cfg = rows_gemm.DP_CONFIGS[0]
    defs = [f"-D{k}={v}" for k, v in cfg.items()] + ["-DTRANS_A=1", "-Dtma=1",
                                                     "--assume=a:16,b:16,c:16,stride_a:16,stride_b:16,stride_c:16"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        p = subprocess.run([blkc, "--emit=ptx", "--arch=sm_90a", "-o", out, path] + defs, capture_output=True,
                           text=True)
        ptx = open(out).read() if p.returncode == 0 and os.path.exists(out) else ""
        import re
        tails = set(re.findall(r"wgmma\.mma_async[^;]*?, (\d+), 1, 1, (\d), (\d);", ptx))
        expect("cp.async.bulk.tensor" in ptx and tails and all(t[1] == "1" for t in tails),
               f"blkc sm_90a: gemm TN {rows_gemm.cfg_text(cfg)}, tma = 1: TMA copies and wgmma with A transposed",
               f"{sorted(tails)} {(p.stderr.strip().splitlines() or [''])[0][:200]}")



def gemm_more_checks(ctx):
    """rows_gemm_more.py's blk launches (group issue28_more) on the interpreter: gemm.tile in fp8
    e4m3 NT with a bf16 output, bench/kernels/gemm_grouped.tile (W stored N x K and K x N) and
    examples/matmul_grouped.tile as the rows launch them, an expert with no token; and, where
    build/blkc is, both kernels compiled for sm_90a as the rows run them: TMA copies and wgmma."""
    import rows_gemm_more as gm
    for what, e, tol in gm.interpreter_check(ctx):
        expect(e <= tol, f"rows_gemm_more {what}", f"max rel err {e:.2e}")
    blkc = os.path.join(blkffi.REPO, "build", "blkc")
    if not os.path.exists(blkc):
        return
    fp8 = dict(gm.FP8_CONFIGS[0], SPLIT_K=1, T="f8e4m3", OUT="bf16", TRANS_B=1, tma=1)
    grouped = dict(gm.GROUPED_CONFIGS[0], TRANS_B=1, tma=1)
    for name, cfg, want, ptrs in (("gemm", fp8, "e4m3.e4m3", ("a", "b", "c")),
                                  ("gemm_grouped", grouped, "bf16.bf16", ("x", "w", "c"))):
        path = os.path.join(blkffi.REPO, "bench", "kernels", name + ".tile")
        # the pointers and row strides 16-byte aligned, as the rows' tensors are (the JIT's TMA variant)
        defs = [f"-D{k}={v}" for k, v in cfg.items()] + [
            "--assume=" + ",".join(f"{p}:16,stride_{p}:16" for p in ptrs)]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "k.ptx")
            p = subprocess.run([blkc, "--emit=ptx", "--arch=sm_90a", "-o", out, path] + defs, capture_output=True,
                               text=True)
            ptx = open(out).read() if p.returncode == 0 and os.path.exists(out) else ""
            expect("cp.async.bulk.tensor" in ptx and f"f32.{want}" in ptx,
                   f"blkc sm_90a: {name} {gm.cfg_text(cfg)} T {cfg.get('T', 'bf16')} TRANS_B, tma = 1: TMA copies "
                   f"and wgmma {want}", (p.stderr.strip().splitlines() or [""])[0][:200])


def attention_bwd_reference(q, k, v, do, Z, H, HKV, N, D, scale, causal):
    """o, lse and the gradients of sum(o * do) in float64, for lists laid out as the kernels
    read them (q, do: Z x H x N x D; k, v: Z x HKV x N x D)."""
    G = H // HKV
    o, lse = [0.0] * (Z * H * N * D), [0.0] * (Z * H * N)
    dq, dk, dv = [0.0] * (Z * H * N * D), [0.0] * (Z * HKV * N * D), [0.0] * (Z * HKV * N * D)
    for z in range(Z):
        for h in range(H):
            qb, kb = ((z * H + h) * N) * D, ((z * HKV + h // G) * N) * D
            for i in range(N):
                keys = i + 1 if causal else N
                s = [scale * sum(q[qb + i * D + d] * k[kb + j * D + d] for d in range(D)) for j in range(keys)]
                m = max(s)
                l = sum(math.exp(x - m) for x in s)
                p = [math.exp(x - m) / l for x in s]
                lse[(z * H + h) * N + i] = m + math.log(l)
                for d in range(D):
                    o[qb + i * D + d] = sum(p[j] * v[kb + j * D + d] for j in range(keys))
                dp = [sum(do[qb + i * D + d] * v[kb + j * D + d] for d in range(D)) for j in range(keys)]
                delta = sum(pj * dpj for pj, dpj in zip(p, dp))
                for j in range(keys):
                    ds = p[j] * (dp[j] - delta)
                    for d in range(D):
                        dq[qb + i * D + d] += scale * ds * k[kb + j * D + d]
                        dk[kb + j * D + d] += scale * ds * q[qb + i * D + d]
                        dv[kb + j * D + d] += p[j] * do[qb + i * D + d]
    return o, lse, dq, dk, dv


def mxgemm_on_interpreter(ctx, rng):
    """bench/kernels/mxgemm.tile as rows_dot_scaled.py launches it, on the interpreter: e4m3
    bytes times e2m1 pairs with random e8m0 scales, 32 x 48 x 64 in 16 x 16 x 32 blocks, against
    a float64 reference that decodes both operands itself."""
    e2m1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]
    codes = [b for b in range(256) if b & 0x7F != 0x7F]
    M, N, K = 32, 48, 64
    av = [rng.choice(codes) for _ in range(M * K)]
    bp = [rng.randrange(256) for _ in range(K // 2 * N)]
    sa = [rng.randrange(120, 134) for _ in range(M * K // 32)]
    sb = [rng.randrange(120, 134) for _ in range(N * K // 32)]
    A = [[f8e4m3_value(av[i * K + k]) * 2.0 ** (sa[i * (K // 32) + k // 32] - 127) for k in range(K)]
         for i in range(M)]
    B = [[e2m1[(bp[k // 2 * N + j] >> (4 * (k % 2))) & 15] * 2.0 ** (sb[j * (K // 32) + k // 32] - 127)
          for j in range(N)] for k in range(K)]
    ref = [sum(A[i][k] * B[k][j] for k in range(K)) for i in range(M) for j in range(N)]
    bufs = [Buf(ctx, ctypes.c_uint8, v) for v in (av, sa, bp, sb)]
    c = Buf(ctx, ctypes.c_uint16, [0x7FC0] * (M * N))
    k = bc.bench_kernel(ctx, "mxgemm")
    k.prepare([bufs[0].ptr, bufs[1].ptr, bufs[2].ptr, bufs[3].ptr, c.ptr, M, N, K],
              consts={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 2}, num_warps=4, num_stages=3)()
    got = [bf16_value(v) for v in c.read()]
    err = max(abs(g - r) / max(abs(r), 1e-3) for g, r in zip(got, ref))
    expect(err <= 2 ** -7, f"mxgemm e4m3 x e2m1 {M}x{N}x{K} (bf16 out)", f"max rel err {err:.2e}")


def attention_bwd_on_interpreter(ctx, rng, quick=False):
    """stdlib/nn/attention.tile's backward as rows_attention_bwd.py launches it (blk_calls.attention_backward
    after blk_calls.attention), in every config of blk_calls.ATTENTION_BWD_CONFIGS (--quick: the
    first and the first atomic one), causal and not, f16, Z=1 H=2 N=40 HEAD_DIM=16 (N a multiple of
    no block), against float64; then grouped-query (H_KV 1) through the backward alone."""
    Z, H, N, D = 1, 2, 40, 16
    scale = 1 / math.sqrt(D)
    vals = {name: [f16_value(f16_bits(rng.uniform(-2 if name in "qk" else -1, 2 if name in "qk" else 1)))
                   for _ in range(Z * H * N * D)] for name in ("q", "k", "v", "do")}
    bufs = {name: Buf(ctx, ctypes.c_uint16, [f16_bits(x) for x in xs]) for name, xs in vals.items()}
    configs = bc.ATTENTION_BWD_CONFIGS
    if quick:
        configs = [configs[0], next(c for c in configs if c["ATOMIC_DQ"])]
    nan16 = [0x7E00] * (Z * H * N * D)
    for HKV in (H, 1):
        kv_n = Z * HKV * N * D
        kv = {name: Buf(ctx, ctypes.c_uint16, [f16_bits(x) for x in vals[name][:kv_n]]) for name in "kv"}
        for causal in (False, True):
            o_ref, lse_ref, *grads = attention_bwd_reference(vals["q"], vals["k"][:kv_n], vals["v"][:kv_n], vals["do"],
                                                             Z, H, HKV, N, D, scale, causal)
            o, lse = Buf(ctx, ctypes.c_uint16, nan16), Buf(ctx, ctypes.c_float, [math.nan] * (Z * H * N))
            if HKV == H:  # the forward as bench.py launches it (no grouped-query there)
                strides = (H * N * D, N * D, D, 1)
                bc.attention(ctx, bufs["q"].ptr, kv["k"].ptr, kv["v"].ptr, o.ptr, lse.ptr, Z, H, N, D, strides,
                             strides, strides, strides, scale, BLOCK_M=32, BLOCK_N=16, causal=causal)()
                err = max(max_rel([f16_value(x) for x in o.read()], o_ref), max_rel(lse.read(), lse_ref))
                expect(err <= 2e-3, f"attention_fwd f16 {Z}x{H}x{N}x{D}{' causal' if causal else ''}",
                       f"max rel err {err:.2e}")
            else:  # the reference's o and lse, rounded as the forward stores them
                o, lse = Buf(ctx, ctypes.c_uint16, [f16_bits(x) for x in o_ref]), Buf(ctx, ctypes.c_float, lse_ref)
            for cfg in (configs if HKV == H else configs[:1]):
                out = {name: Buf(ctx, ctypes.c_uint16, nan16[:kv_n if name != "dq" else len(nan16)])
                       for name in ("dq", "dk", "dv")}
                delta = Buf(ctx, ctypes.c_float, [math.nan] * (Z * H * N))
                dq_acc = Buf(ctx, ctypes.c_float, [math.nan] * (Z * H * N * D))
                bc.attention_backward(ctx, bufs["q"].ptr, kv["k"].ptr, kv["v"].ptr, o.ptr, bufs["do"].ptr, lse.ptr,
                                      delta.ptr, out["dq"].ptr, out["dk"].ptr, out["dv"].ptr, dq_acc.ptr, Z, H, HKV, N,
                                      D, scale, cfg, causal=causal)()
                errs = [max_rel([f16_value(x) for x in out[name].read()], ref)
                        for name, ref in zip(("dq", "dk", "dv"), grads)]
                expect(max(errs) <= 5e-3, f"attention_backward {bc.attention_bwd_config_text(cfg)} f16 "
                       f"{Z}x{H}x{N}x{D} H_KV {HKV}{' causal' if causal else ''}",
                       "max rel err dq {:.1e} dk {:.1e} dv {:.1e}".format(*errs))


def blkc_attention_bwd_sm90a(quick=False):
    """build/blkc --emit=ptx --arch=sm_90a of the backward's dK/dV and dQ kernels (in bf16: the
    rows launch f16, which the interpreter ran above) in every config of
    blk_calls.ATTENTION_BWD_CONFIGS (--quick: the first), HEAD_DIM 64 and 128, causal and not:
    each compiles, and its products run on wgmma."""
    blkc = os.path.join(blkffi.REPO, "build", "blkc")
    if not os.path.exists(blkc):
        print("skip blkc for sm_90a: no build/blkc (the library alone was carried)")
        return
    tile = os.path.join(blkffi.REPO, "stdlib", "nn", "attention.tile")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        for cfg in bc.ATTENTION_BWD_CONFIGS[:1] if quick else bc.ATTENTION_BWD_CONFIGS:
            for d in (64, 128):
                for causal in ("false", "true"):
                    jobs = [("attention_bwd_dkdv", cfg["KV_M"], cfg["KV_N"], [f"-DATOMIC_DQ={int(cfg['ATOMIC_DQ'])}"])]
                    if not cfg["ATOMIC_DQ"]:
                        jobs.append(("attention_bwd_dq", cfg["Q_M"], cfg["Q_N"], []))
                    for name, bm, bn, extra in jobs:
                        args = [tile, "-k", name, "-DT=bf16", f"-DHEAD_DIM={d}", f"-DBLOCK_M={bm}", f"-DBLOCK_N={bn}",
                                f"-DCAUSAL={causal}", f"-Dnum_warps={cfg['num_warps']}",
                                f"-Dnum_stages={cfg['num_stages']}"] + extra
                        p = subprocess.run([blkc, "--emit=ptx", "--arch=sm_90a", "-o", out] + args, capture_output=True,
                                           text=True)
                        ptx = open(out).read() if p.returncode == 0 and os.path.exists(out) else ""
                        expect(".entry" in ptx and "wgmma.mma_async" in ptx,
                               f"blkc sm_90a: {name} d{d} causal={causal} {bc.attention_bwd_config_text(cfg)} (wgmma)",
                               (p.stderr.strip().splitlines() or [""])[0][:200] if p.returncode else "")
                        if os.path.exists(out):
                            os.remove(out)

def blkc_sm90(quick=False):
    """build/blkc --emit=ptx --arch=sm_90 of every config the issue-12 rows launch: each kernel
    of matmul_tc.tile in each @autotune config (f16 and bf16 must use mma), and
    stdlib/nn/attention.tile's attention_fwd at HEAD_DIM 64 and 128, causal and not, in every config of
    blk_calls.ATTENTION_CONFIGS (num_warps bound with -D as the launch binds it)."""
    blkc = os.path.join(blkffi.REPO, "build", "blkc")
    if not os.path.exists(blkc):
        print("skip blkc for sm_90: no build/blkc (the library alone was carried)")
        return
    tile = os.path.join(blkffi.REPO, "bench", "kernels", "matmul_tc.tile")
    jobs = []
    for dtype, (plain, fused, _) in bc.MATMUL_TC_KERNELS.items():
        configs = bc.MATMUL_TC_CONFIGS[bc.matmul_tc_family(dtype)]
        for name in (plain, fused):
            for cfg in (configs[:1] if quick else configs) if name else ():
                defs = [f"-D{k}={v}" for k, v in cfg.items() if k not in ("num_warps", "num_stages")]
                jobs.append((f"blkc sm_90: {name} {bc.config_text(cfg)}", [tile, "-k", name] + defs,
                             dtype in ("f16", "bf16")))
    attn = os.path.join(blkffi.REPO, "stdlib", "nn", "attention.tile")
    for d in (64, 128):
        for causal in ("false", "true"):
            for cfg in (bc.ATTENTION_CONFIGS[:1] if quick else bc.ATTENTION_CONFIGS):
                jobs.append((f"blkc sm_90: attention_fwd d{d} causal={causal} {cfg['BLOCK_M']}x{cfg['BLOCK_N']} "
                             f"w{cfg['num_warps']}", [attn, "-k", "attention_fwd", f"-DHEAD_DIM={d}",
                                                      f"-DBLOCK_M={cfg['BLOCK_M']}", f"-DBLOCK_N={cfg['BLOCK_N']}",
                                                      f"-DCAUSAL={causal}", f"-Dnum_warps={cfg['num_warps']}"],
                             True))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        for what, args, want_mma in jobs:
            p = subprocess.run([blkc, "--emit=ptx", "--arch=sm_90", "-o", out] + args, capture_output=True, text=True)
            ptx = open(out).read() if p.returncode == 0 and os.path.exists(out) else ""
            ok = p.returncode == 0 and ".entry" in ptx and (not want_mma or "mma.sync" in ptx)
            expect(ok, what + (" (mma.sync)" if want_mma else ""),
                   (p.stderr.strip().splitlines() or [""])[0][:200] if p.returncode else
                   ("" if ok else "no mma.sync in the PTX"))
            if os.path.exists(out):
                os.remove(out)


def liger_rows():
    """rows_liger.py (issue 34): its rows in a table of their own, and the table's geometric means
    made from two workers' results (no torch, no GPU: the results are written here)."""
    import bench
    import rows_liger as rl
    keys = [r[0] for r in bench.select_rows("issue34")]
    expect(len(keys) == len(rl.OPS) + 1 and keys[-1] == "liger_launch" and
           all(bench.SECTIONS.get(k) is rl.SECTION for k in keys),
           f"--only issue34: {len(rl.OPS)} Liger ops and the launch row, in rows_liger.SECTION's table", repr(keys))

    def op(ms, compile_ms, diff):
        return {"size": "8×8", "input_sum": 1.0, "fwd_ms": ms, "fwdbwd_ms": 2 * ms, "compile_fwd_ms": compile_ms,
                "compile_ms": compile_ms, "diff": diff, "n_out": 1, "fwd_gpu_ms": ms / 2, "fwdbwd_gpu_ms": ms,
                "fwd_gpu_ops": 1, "fwdbwd_gpu_ops": 3}
    same = {"out0": [0.0, 1.0], "dx": [0.01, 1.0]}
    res = {"triton": {"ops": {"swiglu": op(4.0, 400.0, None), "geglu": op(1.0, 400.0, None),
                              "rms_norm": op(1.0, 400.0, None)},
                      "launch": {"wall_us": 12.0, "host_us": 11.0, "max_abs_err": 0.0}, "errors": {}},
           "blk": {"ops": {"swiglu": op(2.0, 20.0, same), "geglu": op(2.0, 40.0, same),
                           "rms_norm": op(1.0, 20.0, {"out0": [0.5, 1.0], "dx": [0.0, 1.0]})},
                   "launch": {"wall_us": 3.0, "host_us": 2.0, "max_abs_err": 0.0}, "errors": {}}}
    rows = rl.make_rows(bench, ["swiglu", "geglu", "rms_norm", "jsd"], res)
    saved, rl.SECTION.rows = rl.SECTION.rows, rows
    try:
        md = bench.table(rows, "env", [])
    finally:
        rl.SECTION.rows = saved
    expect("| swiglu fwd | 8×8 | 2 | 4 | 2.00 | 2.00 | 20 | 400 | 20.00 | out0 0 (1) |" in md,
           "rows_liger: a row's cells (times, ratio, compile, difference)", md.splitlines()[4][:200])
    expect("| rms_norm fwd | 8×8 | FAIL |" in md and "| jsd (beta 0.5) fwd | LLM shape | ERROR | ERROR |" in md,
           "rows_liger: a difference past tolerance is FAIL, an op no side ran ERROR")
    expect("| launch overhead, one Liger kernel from Python | 10000 launches | 3 µs | 12 µs | 4.00 |" in md,
           "rows_liger: the launch row in µs")
    # fwd: swiglu 2, geglu 0.5 (rms_norm's output FAIL): 1.00 over 2; fwd+bwd: 2, 0.5 and rms_norm's 1 (its
    # gradients agree); the profiler's GPU times the same ratios; compile: 20, 10, 20; launch 4
    want = (f"kernel time (events) fwd 1.00× over 2 (target ≥ 1×: met), fwd+bwd 1.00× over 3 (target ≥ 1×: met); "
            f"GPU time (profiler) fwd 1.00× over 2 (target ≥ 1×: met), fwd+bwd 1.00× over 3 (target ≥ 1×: met); cold compile {(20 * 10 * 20) ** (1 / 3):.2f}× over 3 (target ≥ 10×: met); launch overhead "
            "4.00× over 1 (target ≥ 3×: met)")
    expect(want in md, "rows_liger: the footer's geometric means and targets",
           next((ln for ln in md.splitlines() if "Geometric" in ln), "no footer")[:400])


def issue12_selection():
    """bench.py's --only: the rows of ROWS keep their names and selections; issue12 and the new names."""
    import bench
    def keys(only):
        return [r[0] for r in bench.select_rows(only)]
    old = [r[0] for r in bench.ROWS]
    expect(keys(None) == old, "no --only: the rows of ROWS, no issue-12 row", repr(keys(None)))
    expect(keys("matmul") == ["matmul"], "--only matmul: the matmul row alone, as before", repr(keys("matmul")))
    expect(keys("attention") == ["attention", "attention_causal"], "--only attention: both attention rows, as before",
           repr(keys("attention")))
    expect(keys("softmax") == ["softmax_1024", "softmax_4096", "softmax_8192"], "--only softmax: three rows")
    i12 = keys("issue12")
    expect(len(i12) == 15 and i12 == [r[0] for r in bench.ISSUE12_ROWS], "--only issue12: the 15 issue-12 rows",
           repr(i12))
    expect(keys("matmul_f16") == ["matmul_f16_4096", "matmul_f16_8192", "matmul_f16_bias_relu_4096",
                                  "matmul_f16_bias_relu_8192"], "--only matmul_f16: its four rows",
           repr(keys("matmul_f16")))
    expect(keys("attention_d128_causal") == ["attention_d128_causal"], "--only attention_d128_causal: one row")
    expect(keys("matmul_fp8,matmul_i8,matmul_f32") == ["matmul_fp8", "matmul_f32", "matmul_i8"],
           "--only matmul_fp8,matmul_i8,matmul_f32")
    expect(runtime_bench.selected("issue12") == ["compile"] and runtime_bench.selected("matmul") == [],
           "Runtime parts: issue12 selects compile; matmul none, as before")
    expect(blkffi.blk_type("torch.float8_e4m3fn") == "f8e4m3" and blkffi.blk_type("int8") == "i8"
           and blkffi.blk_type("torch.bfloat16") == "bf16", "blkffi.blk_type maps torch's dtype names")


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
    tc_matmul_on_interpreter(ctx, rng)
    tc_persistent_on_interpreter(ctx, rng, quick="--quick" in sys.argv)
    gemm_on_interpreter(ctx, rng, quick="--quick" in sys.argv)
    mxgemm_on_interpreter(ctx, rng)
    gemm_more_checks(ctx)
    attention_bwd_on_interpreter(ctx, rng, quick="--quick" in sys.argv)
    blkc_attention_bwd_sm90a(quick="--quick" in sys.argv)
    issue12_selection()
    import rows_math  # the GeGLU row's launches of stdlib/nn/glu.tile (group issue31)
    for name, e, tol in rows_math.interpreter_check():
        expect(e <= tol, f"rows_math {name}: bf16, 1000 elements, blocks of 256", f"max rel err {e:.2e}")
    import bench
    expect("bias_gelu" in bench.GROUPS["issue31"] and "geglu_fwd_bwd" in bench.GROUPS["issue31"],
           "--only issue31: the GeGLU row and issue 14's bias + GELU row", repr(bench.GROUPS["issue31"]))
    nn_keys = [r[0] for r in bench.select_rows("issue30")]
    expect(len(nn_keys) == 13 and all(bench.SECTIONS.get(k) is not None for k in nn_keys),
           "--only issue30: the 13 blk.nn rows, in a table of their own (rows_nn.SECTION)", repr(nn_keys))
    more = [r[0] for r in bench.select_rows("issue30_shapes")]
    expect(len(more) == 22 and all(bench.SECTIONS.get(k) is bench.SECTIONS[nn_keys[0]] for k in more)
           and not set(more) & set(nn_keys),
           "--only issue30_shapes: the 11 ops at Llama-3-70B-like shapes and in f32, in issue30's table",
           repr(more))
    lin = [r[0] for r in bench.select_rows("issue30_linear")]
    expect(lin == ["linear_qo", "linear_up_silu", "linear_down_res"]
           and all(bench.SECTIONS.get(k) is not None and bench.SECTIONS[k] is not bench.SECTIONS[nn_keys[0]]
                   for k in lin),
           "--only issue30_linear: blk.nn.linear's 3 Llama-3-8B projections, in a table of their own "
           "(rows_linear.SECTION)", repr(lin))
    probe = bench.Row("lin fwd", "1×1", flop=2e9, section=bench.SECTIONS[lin[0]])
    probe.ms.update({"blk": 1.0, "torch": 1.5, "torch.compile": 2.0})
    md = bench.table([probe], "env", [])
    expect("| lin fwd | 1×1 | 1 | 1.5 | 2 | 2 | 1.50 | 2.00 |" in md, "rows_linear's cells: blk TFLOP/s, ratios "
           "torch/blk and torch.compile/blk",
           next((ln for ln in md.splitlines() if ln.startswith("| lin fwd")), md))
    probe = bench.Row("op fwd", "1×1", section=bench.SECTIONS[nn_keys[0]])
    probe.ms.update({"blk": 1.0, "Liger": 1.5, "torch.compile": 2.0})
    md = bench.table([probe], "env", [])
    expect("| op fwd | 1×1 | 1 | 1.5 | — | 2 | 1.50 | 2.00 | — |" in md, "a section row's cells: ratios Liger/blk and "
           "torch.compile/blk", md.splitlines()[4] if len(md.splitlines()) > 4 else md)
    liger_rows()
    blkc_sm90(quick="--quick" in sys.argv)

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
