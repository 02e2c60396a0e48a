"""tests/python/test_triton.py: blk.triton, Triton-syntax kernels translated
to blk and run on the interpreter against numpy. The kernels are written
for these tests in Triton's syntax (import blk.triton as triton,
blk.triton.language as tl); Triton itself is not needed. Also: the
translated source of one kernel against a reviewed golden text, and the
constructs that do not translate raising TranslationError with the line.
Prints a line per case and "N passed, N failed"."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # harness; blk: installed or on PYTHONPATH

from harness import case, counts  # noqa: E402

try:
    import numpy as np
except ImportError:
    print("SKIP tests/python/test_triton.py: no numpy")
    print("0 passed, 0 failed")
    sys.exit(0)

import blk  # noqa: E402
import blk.triton as triton  # noqa: E402
import blk.triton.language as tl  # noqa: E402

blk.set_backend("interpreter")
rng = np.random.default_rng(7)
LOG2E = tl.constexpr(1.4426950408889634)


def close(got, want, tol, what):
    err = float(np.max(np.abs(got.astype(np.float64) - want)) / max(1e-30, float(np.max(np.abs(want)))))
    assert err <= tol, f"{what}: max rel err {err:.3g} > {tol}"
    return f"max rel err {err:.1e}"


# ---- element-wise, masks, grid from the meta-parameters -------------------------

@triton.jit
def _scale_shift(x_ptr, out_ptr, n, alpha, beta: tl.constexpr, BLOCK: tl.constexpr):
    """out = alpha * x + beta (beta a constexpr), masked tail."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, alpha * x + beta, mask=mask)


@case("element-wise: a scalar float argument, a constexpr, masks, grid = lambda meta")
def _():
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    _scale_shift[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, n, 2.5, beta=0.75, BLOCK=128)
    return close(out, 2.5 * x.astype(np.float64) + 0.75, 1e-6, "out")


# ---- a row softmax: reductions, exp, other = -inf, strides ----------------------

@triton.jit
def _softmax(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_y + cols, num / den, mask=mask)


@case("softmax over rows of a strided view: max, sum, exp, other = -inf, reassigned names")
def _():
    big = rng.standard_normal((37, 200)).astype(np.float32)
    x = big[:, :150]   # not contiguous: its row stride is 200
    y = np.zeros((37, 150), np.float32)
    _softmax[(37,)](x, y, 37, 150, x.strides[0] // 4, y.strides[0] // 4, BLOCK=256)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return close(y, e / e.sum(axis=1, keepdims=True), 1e-5, "softmax")


# ---- matmul: dot with an accumulator, a K loop, autotune, pointer increments -------

@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, num_warps=4),
                          triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4)],
                 key=["M", "N", "K"])
@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@case("matmul f16: tl.dot into an f32 accumulator, a K loop, += on pointers, @autotune over two configs")
def _():
    M, N, K = 50, 40, 70
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _matmul[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1)
    return close(c, a.astype(np.float64) @ b.astype(np.float64), 2e-3, "matmul")


# ---- helpers, heuristics, constexpr ifs and None ---------------------------------

@triton.jit
def _gelu(x):
    # the tanh form, as a @jit helper
    return 0.5 * x * (1.0 + tl.math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _bias_act(x_ptr, bias_ptr, out_ptr, n, n_cols, ACT: tl.constexpr, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs % n_cols)
    if ACT == "gelu":
        y = _gelu(x)
    elif ACT == "relu":
        y = tl.maximum(x, 0.0)
    else:
        y = x
    tl.store(out_ptr + offs, y, mask=offs < n)


@case("a @jit helper, @heuristics, a string constexpr and 'is None' tests kept at translation")
def _():
    n_cols = 48
    for n, act, with_bias in ((960, "gelu", True), (1000, "relu", False), (1000, "none", True)):
        x = rng.standard_normal(n).astype(np.float32)
        bias = rng.standard_normal(n_cols).astype(np.float32)
        out = np.zeros(n, np.float32)
        _bias_act[(triton.cdiv(n, 64),)](x, bias if with_bias else None, out, n, n_cols, ACT=act, BLOCK=64)
        v = x.astype(np.float64) + (bias[np.arange(n) % n_cols] if with_bias else 0)
        want = {"gelu": 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))),
                "relu": np.maximum(v, 0), "none": v}[act]
        close(out, want, 1e-5, f"{act} n={n}")
    src = _bias_act.tile_source
    assert "fn _gelu(x)" not in src and "bias_ptr" in src, src  # the last one: ACT none, with a bias
    return "3 specializations"


# ---- runtime ifs, a while loop, integer division, static_range, atomics -----------

@triton.jit
def _control(x_ptr, out_ptr, hist_ptr, n, BLOCK: tl.constexpr, REPS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if pid % 2 == 0:
        scale = 2
        shift = x // 3
    else:
        scale = 3
        shift = x % 3
    acc = x * scale + shift
    i = 0
    while i < 3:
        acc += i
        i += 1
    for r in tl.static_range(REPS):
        acc = acc + r
    ratio = acc / 4
    tl.store(out_ptr + offs, ratio, mask=mask)
    tl.atomic_add(hist_ptr + (x & 7), 1, mask=mask)


@case("runtime if assigning new names in both branches, while, static_range, // and %, int / as f32, atomics")
def _():
    n, B = 300, 64
    x = rng.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.float32)
    hist = np.zeros(8, np.int32)
    _control[(triton.cdiv(n, B),)](x, out, hist, n, BLOCK=B, REPS=3)
    pid = np.arange(n) // B
    q = np.trunc(x / 3).astype(np.int64)   # C division, as Triton's // on integers
    r = x - 3 * q
    acc = np.where(pid % 2 == 0, x * 2 + q, x * 3 + r) + 3 + 3
    assert np.array_equal(out, (acc / 4).astype(np.float32)), (out[:8], acc[:8] / 4)
    assert np.array_equal(hist, np.bincount(x & 7, minlength=8)), hist
    return "exact"


# ---- cumsum, where, casts, tl.math, libdevice-style names --------------------------

@triton.jit
def _scan_math(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    c = tl.cumsum(x, axis=0)
    y = tl.where(c > 0, tl.math.log1p(tl.abs(c)), -tl.math.exp2(c * LOG2E))
    tl.store(out_ptr + offs, y.to(tl.float64).to(tl.float32))


@case("cumsum, where, tl.math.log1p and exp2, a module-level tl.constexpr, chained .to()")
def _():
    x = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(128, np.float32)
    _scan_math[(1,)](x, out, BLOCK=128)
    c = np.cumsum(x.astype(np.float64))
    return close(out, np.where(c > 0, np.log1p(np.abs(c)), -np.exp(c)), 1e-5, "scan")


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def _max_pair(a_val, a_idx, b_val, b_idx):
    take_b = b_val > a_val
    return tl.where(take_b, b_val, a_val), tl.where(take_b, b_idx, a_idx)


@triton.jit
def _combine_fns(x_ptr, prod_ptr, best_ptr, idx_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(prod_ptr + offs, tl.associative_scan(x, 0, _mul_combine))
    best, where = tl.reduce((x, offs), 0, _max_pair)
    best2, where2 = tl.max(x, axis=0, return_indices=True)
    tl.store(best_ptr, best + 0 * best2)
    tl.store(idx_ptr, where + 0 * where2 + (where2 - where))


@case("associative_scan and reduce with @jit combine functions (a tuple reduce), tl.max with return_indices")
def _():
    x = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    prod, best, idx = np.zeros(64, np.float32), np.zeros(1, np.float32), np.zeros(1, np.int32)
    _combine_fns[(1,)](x, prod, best, idx, BLOCK=64)
    close(prod, np.cumprod(x.astype(np.float64)), 1e-5, "cumprod")
    assert best[0] == x.max() and idx[0] == int(np.argmax(x)), (best, idx)
    return "ok"


@triton.jit
def _matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, 1), offsets=(pid_m * BLOCK_M, 0),
                             block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, 1), (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, [BLOCK_K, 0])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


@case("block pointers (make_block_ptr, advance, boundary_check) and a tensor descriptor's store")
def _():
    M, N, K = 45, 38, 50
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    _matmul_block_ptr[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, K, N, N, BLOCK_M=16,
                                                                 BLOCK_N=16, BLOCK_K=16)
    return close(c, a.astype(np.float64) @ b.astype(np.float64), 1e-5, "matmul")


@triton.jit
def _desc_loop_carried(x_ptr, out_ptr, widths_ptr, M, N, BLOCK_N: tl.constexpr):
    # in_desc moves down a row each iteration with that row's width; out_desc
    # is chosen afresh in a runtime if: even rows to the top half of out,
    # odd ones to the bottom half (Triton's loop-carried descriptors)
    in_desc = tl.make_tensor_descriptor(x_ptr, shape=[1, N], strides=[N, 1], block_shape=[1, BLOCK_N])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BLOCK_N])
    for i in range(0, M):
        row = in_desc.load([0, 0])
        if i % 2 == 1:
            out_desc = tl.make_tensor_descriptor(out_ptr + M * N, shape=[M, N], strides=[N, 1],
                                                 block_shape=[1, BLOCK_N])
        else:
            out_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BLOCK_N])
        out_desc.store([i, 0], row * 2.0)
        w = tl.load(widths_ptr + i + 1)
        in_desc = tl.make_tensor_descriptor(x_ptr + (i + 1) * N, shape=[1, w], strides=[N, 1],
                                            block_shape=[1, BLOCK_N])


@case("tensor descriptors re-made in a loop and chosen in a runtime if inside it (loop-carried)")
def _():
    M, N = 7, 40
    x = rng.standard_normal((M, N)).astype(np.float32)
    widths = np.concatenate([[N], rng.integers(0, N + 1, M)]).astype(np.int32)
    out = np.full((2 * M, N), -1.0, np.float32)
    _desc_loop_carried[(1,)](x, out, widths, M, N, BLOCK_N=64)
    want = np.full((2 * M, N), -1.0)
    for i in range(M):
        r = np.where(np.arange(N) < widths[i], x[i].astype(np.float64) * 2.0, 0.0)
        want[(M if i % 2 else 0) + i] = r
    assert np.array_equal(out, want.astype(np.float32)), (out, want)
    return "ok"


@triton.jit
def _desc_ops(x_ptr, y_ptr, rows_ptr, g_ptr, h_ptr, M, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK],
                                   padding_option="nan")
    t = xd.load([0, 0])
    tl.store(g_ptr + offs[:, None] * BLOCK + offs[None, :], t)
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    yd.atomic_add([0, 0], t)
    rd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BLOCK])
    r = tl.load(rows_ptr + offs)
    tl.store(h_ptr + offs[:, None] * BLOCK + offs[None, :], rd.gather(r, 0))


@case("a tensor descriptor's padding_option=\"nan\", atomic_add and gather")
def _():
    M, N, B = 5, 6, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.ones((M, N), np.float32)
    rows = np.array([4, 0, 7, -1, 2, 2, 9, 1], np.int32)
    g = np.zeros((B, B), np.float32)
    h = np.zeros((B, B), np.float32)
    _desc_ops[(1,)](x, y, rows, g, h, M, N, BLOCK=B)
    want_g = np.full((B, B), np.nan, np.float32)
    want_g[:M, :N] = x
    want_h = np.zeros((B, B), np.float32)
    for i, r in enumerate(rows):
        if 0 <= r < M:
            want_h[i, :N] = x[r]
    assert np.array_equal(g, want_g, equal_nan=True), f"NaN-padded load: {g}"
    assert np.array_equal(y, 1 + x), f"atomic_add: {y}"
    assert np.array_equal(h, want_h), f"gather: {h}"
    return "NaN outside, atomic_add inside only, rows gathered with zeros outside"


# ---- Python names are untyped; stores convert to the pointee type (issue 34) --------

@triton.jit
def _rebind(x_ptr, y_ptr, rows_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)      # f16
    v = v.to(tl.float32)                              # the name now an f32 block
    v = v * 2.0 + 0.0001                              # f32: not representable in f16
    tl.store(y_ptr + offs, v, mask=m)                 # f32 through *f32
    r = tl.arange(0, 4)
    r = r[:, None]                                    # [4] -> [4, 1]
    r = r * BLOCK + offs[None, :]                     # -> [4, BLOCK]
    tl.store(rows_ptr + r, r.to(tl.float16), mask=offs[None, :] < n)


@case("a name assigned again with another dtype or shape (v = v.to(tl.float32), r = r[:, None])")
def _():
    n = 20
    x = rng.standard_normal(n).astype(np.float16)
    y = np.zeros(n, np.float32)
    rows = np.zeros((4, 32), np.float16)
    _rebind[(1,)](x, y, rows, n, BLOCK=32)
    close(y, x.astype(np.float64) * 2.0 + 0.0001, 1e-7, "y")
    want = np.where(np.arange(32)[None, :] < n, np.arange(4)[:, None] * 32 + np.arange(32)[None, :], 0)
    assert np.array_equal(rows, want.astype(np.float16)), rows
    return "ok"


@triton.jit
def _carried(x_ptr, out_ptr, half_ptr, count_ptr, n_rows, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.zeros((BLOCK,), tl.float32)
    count = 0.0
    for i in range(0, n_rows):
        acc += tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
        x_ptr += n                                    # a parameter carried through the loop
        t = 1
        count, t = count + 1.0, t * 2                 # one name carried, one of this body
        t = t.to(tl.float32)
        count += t
    tl.store(count_ptr, count)
    acc = acc.to(tl.float16)                          # after the loop: declared again
    acc = acc * 2
    tl.store(half_ptr + offs, acc, mask=m)
    acc = acc.to(tl.float32)
    tl.store(out_ptr + offs, acc, mask=m)


@case("a loop-carried accumulator converted after the loop; a parameter advanced in the loop")
def _():
    R, n = 5, 24
    x = rng.standard_normal((R, n)).astype(np.float32)
    out, half, count = np.zeros(n, np.float32), np.zeros(n, np.float16), np.zeros(1, np.float32)
    _carried[(1,)](x, out, half, count, R, n, BLOCK=32)
    assert count[0] == 3.0 * R, count
    want = (x.astype(np.float32).sum(axis=0, dtype=np.float32).astype(np.float16) * np.float16(2))
    assert np.array_equal(half, want), (half, want)
    assert np.array_equal(out, want.astype(np.float32)), out
    return "ok"


@triton.jit
def _store_convert(x_ptr, h_ptr, i_ptr, s_ptr, b_ptr, d_ptr, w_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)      # f32
    tl.store(h_ptr + offs, x * 3.0, mask=m)           # f32 -> f16
    tl.store(i_ptr + offs, x * 10.0, mask=m)          # f32 -> i32 (toward zero)
    tl.store(s_ptr, tl.sum(x, axis=0))                # an f32 scalar -> f16
    bp = tl.make_block_ptr(b_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(bp, x, boundary_check=(0,))              # a block pointer: f32 -> f16
    desc = tl.make_tensor_descriptor(d_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    desc.store([0], x + 1.0)                          # a tensor descriptor: f32 -> f16
    h = tl.load(h_ptr + offs, mask=m, other=float("-inf"))  # other converts to f16 (Triton's too)
    tl.store(w_ptr + offs, tl.where(m, h, x), mask=m)        # where(f16, f32): f32


@case("stores convert the value to the pointee type: f16, i32, a scalar, a block pointer, a descriptor")
def _():
    n = 28
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    h, i, s = np.zeros(n, np.float16), np.zeros(n, np.int32), np.zeros(1, np.float16)
    b, d, w = np.zeros(n, np.float16), np.zeros(n, np.float16), np.zeros(n, np.float32)
    _store_convert[(1,)](x, h, i, s, b, d, w, n, BLOCK=32)
    assert np.array_equal(h, (x * np.float32(3.0)).astype(np.float16)), h
    assert np.array_equal(i, np.trunc(x * np.float32(10.0)).astype(np.int32)), i
    assert s[0] == np.float16(x.sum(dtype=np.float32)) or abs(float(s[0]) - float(x.sum())) < 1e-2, s
    assert np.array_equal(b, x.astype(np.float16)), b
    assert np.array_equal(d, (x + np.float32(1.0)).astype(np.float16)), d
    assert np.array_equal(w, h.astype(np.float32)), w
    return "ok"


@case("a name carried through a loop changing its dtype: an error naming it (Triton refuses it too)")
def _():
    src = ("def k(x_ptr, n, BLOCK: tl.constexpr):\n"
           "    offs = tl.arange(0, BLOCK)\n"
           "    v = tl.load(x_ptr + offs)\n"
           "    for i in range(0, n):\n"
           "        v = v.to(tl.float32) * 2.0\n"
           "    tl.store(x_ptr + offs, v)\n")
    k = triton.from_triton(src, globals={"tl": tl})
    try:
        k[(1,)](np.zeros(16, np.float16), 3, BLOCK=16)
    except (triton.TranslationError, blk.Error) as e:
        msg = str(e)
        assert "'v'" in msg and ":5:" in msg, msg
        return msg.splitlines()[0][:90]
    raise AssertionError("no error")


# ---- the translated source, reviewed --------------------------------------------

GOLDEN = """kernel _scale_shift(x_ptr: *f32, out_ptr: *f32, n: i32, alpha: f32) {
    let pid = program_id(0);
    let offs = ((pid * 128) + arange(0, 128));
    let mask = (offs < n);
    let x = load((x_ptr + offs), mask = mask, other = 0.0);
    store((out_ptr + offs), __tt_to_pointee((out_ptr + offs), ((alpha * x) + 0.75)), mask = mask);
}
"""


@case("golden: the translation of _scale_shift (f32 pointers, BLOCK 128, beta 0.75)")
def _():
    x, out = np.zeros(10, np.float32), np.zeros(10, np.float32)
    _scale_shift[(1,)](x, out, 10, 1.0, beta=0.75, BLOCK=128)
    src = _scale_shift.tile_source
    kernel = src[src.index("kernel _scale_shift"):]
    assert kernel == GOLDEN, kernel
    return "same text"


# ---- what does not translate ----------------------------------------------------

def expect_error(src, args, *words):
    k = triton.from_triton(src, globals={"tl": tl, "triton": triton})
    try:
        k[(1,)](*args)
    except triton.TranslationError as e:
        msg = str(e)
        assert all(w in msg for w in words), msg
        return msg.splitlines()[0]
    raise AssertionError("no TranslationError")


@case("untranslatable constructs: an error naming the construct and the line")
def _():
    x = np.zeros(16, np.float32)
    msgs = [
        expect_error("def k(x):\n    for i in [1, 2]:\n        pass\n", (x,), "for loop over other than range",
                     ":2:"),
        expect_error("def k(x):\n    y = tl.no_such_op(x)\n", (x,), "tl.no_such_op", ":2:"),
        expect_error("def k(x):\n    a = 1\n    if tl.program_id(0) > 0:\n        b = 2\n    tl.store(x, b)\n",
                     (x,), "'b' is first assigned inside a runtime if", ":3:"),
        expect_error("def k(x):\n    tl.store(x, tl.load(x)[1:4])\n", (x,), "a slice with bounds", ":2:"),
    ]
    return "; ".join(m.split(": ", 1)[1][:40] for m in msgs)


@case("from_triton of source text: the same kernel as @jit, tile_source kept")
def _():
    src = ("def twice(x_ptr, n, BLOCK: tl.constexpr):\n"
           "    offs = tl.arange(0, BLOCK)\n"
           "    m = offs < n\n"
           "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)\n")
    k = triton.from_triton(src, globals={"tl": tl})
    x = np.arange(20, dtype=np.int64)
    k[(1,)](x, 20, BLOCK=32)
    assert np.array_equal(x, 2 * np.arange(20)), x
    assert "kernel twice(x_ptr: *i64, n: i32)" in k.tile_source
    return "ok"


@case("install(): a module written for Triton (import triton, triton.language, libdevice) runs unchanged")
def _():
    import subprocess
    code = (
        "import sys, numpy as np, blk, blk.triton\n"
        "blk.triton.install()\n"
        "import triton, triton.language as tl\n"
        "from triton.language.extra.libdevice import tanh\n"
        "from triton.tools.tensor_descriptor import TensorDescriptor\n"
        "assert triton is blk.triton and triton.__version__\n"
        "@triton.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    m = o < n\n"
        "    tl.store(x_ptr + o, tanh(tl.load(x_ptr + o, mask=m)), mask=m)\n"
        "blk.set_backend('interpreter')\n"
        "x = np.linspace(-3, 3, 50).astype(np.float32)\n"
        "w = np.tanh(x.astype(np.float64))\n"
        "k[(1,)](x, 50, BLOCK=64)\n"
        "print(float(np.abs(x - w).max()))\n")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)  # @jit reads the function's source: a file, not -c
    try:
        r = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stdout + r.stderr
    err = float(r.stdout.strip().splitlines()[-1])
    assert err < 1e-6, err
    return f"tanh through triton.language.extra.libdevice, max err {err:.1e}"


print(f"{counts['passed']} passed, {counts['failed']} failed")
sys.exit(1 if counts["failed"] else 0)
