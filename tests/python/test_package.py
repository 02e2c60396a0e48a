#!/usr/bin/env python3
"""test_package.py: the blk Python package on the interpreter, no GPU or torch.

    python3 tests/python/test_package.py      (blk importable: installed, or python/ on PYTHONPATH)

Kernels run on numpy arrays (copied into the interpreter's memory and back)
and are compared with references computed here in numpy, on random inputs,
edges masked (sizes that are no multiple of the block). Every bad call
raises blk.Error naming the parameter. Without numpy only the cases that
need no arrays run (one line says so). Prints a line per case and last
"N passed, N failed"; exit status 1 when one failed.
"""

import os
import sys

import blk

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(REPO, "examples")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, raises  # noqa: E402


# ---- without arrays ------------------------------------------------------------

SCALE_SRC = """
kernel scale(x: *T, out: *T, a: f32, n: i32, BLOCK: const i32 = 128) grid(cdiv(n, BLOCK)) {
    let o = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + o, (load(x + o, mask = o < n).to(f32) * a).to(T), mask = o < n);
}
"""


@case("load a file: kernels and their parameters introspected")
def _():
    m = blk.load(os.path.join(EX, "vector_add.tile"))
    assert m.kernel_names == ["vector_add"], m.kernel_names
    k = m.vector_add
    assert k is m["vector_add"]
    assert [(p.name, p.type, p.is_const) for p in k.params] == [
        ("x", "*f32", False), ("y", "*f32", False), ("out", "*f32", False), ("n", "i32", False),
        ("BLOCK", "const i32", True)], k.params
    assert [p.elem_bytes for p in k.params] == [4, 4, 4, 4, 4]
    assert list(k.const_params) == ["BLOCK"]


@case("a source error: blk.Error with file:line:col and the caret line")
def _():
    e = raises(lambda: blk.load(source="kernel f(x: *f32) {\n    let a = ;\n}\n", name="bad.tile"), None,
               "bad.tile:2:13: error", "^")
    assert e.status_name == "BLK_ERROR_SOURCE", e.status_name


@case("no such kernel, no such file")
def _():
    m = blk.load(os.path.join(EX, "relu.tile"))
    try:
        m["nope"]
        raise AssertionError("no error")
    except blk.Error as e:
        assert "nope" in str(e), str(e)
    try:
        m.nope
        raise AssertionError("no error")
    except AttributeError:
        pass
    e = raises(lambda: blk.load("/nonexistent/x.tile"), None, "/nonexistent/x.tile")
    assert e.status_name == "BLK_ERROR_NOT_FOUND"


@case("bad call: wrong argument count names the missing parameter")
def _():
    k = blk.load(os.path.join(EX, "vector_add.tile")).vector_add
    raises(lambda: k[(1,)](1, 2), "out", "4 arguments expected", "given 2")
    raises(lambda: k[(1,)](1, 2, 3, 4, 5), None, "given 5")


@case("bad call: an unknown keyword, a const that is no number")
def _():
    k = blk.load(os.path.join(EX, "vector_add.tile")).vector_add
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCKK=64), "BLOCKK", "no parameter")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK="big"), "BLOCK", "expected a number")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK=64, tma=2), "tma", "0 or 1", "given 2")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK=64, tma=1.0), "tma", "0 or 1", "given 1.0")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK=64, fp_fusion=-1), "fp_fusion", "0 or 1", "given -1")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK=64, warp_specialize=3), "warp_specialize", "0 or 1", "given 3")
    raises(lambda: k[(1,)](1, 2, 3, 4, BLOCK=64, maxnreg=300), "maxnreg", "an integer in 0..255", "given 300")


@case("the kernel options come from libblk's table (blk_option), not a list of the package's own")
def _():
    table = blk._runtime.lib().options
    assert list(table)[:5] == ["num_warps", "num_stages", "tma", "fp_fusion", "warp_specialize"], list(table)
    nw = table["num_warps"]
    assert (nw.lo, nw.hi, nw.pow2) == (1, 32, True) and nw.error(8) is None and nw.error(64) and nw.error(6)
    assert table["tma"].error(1) is None and table["tma"].error(2) == "0 or 1 (False or True)"
    import blk._kernel as kmod
    assert not hasattr(kmod, "FLAG_OPTIONS"), "no hand-copied list of options"


@case("bad call: a string for a pointer, a float for an i32, an i32 out of range")
def _():
    k = blk.load(os.path.join(EX, "vector_add.tile")).vector_add
    raises(lambda: k[(1,)]("x", 2, 3, 4), "x", "expected a tensor or array")
    raises(lambda: k[(1,)](1, 2, 3, 4.5), "n", "expected an integer")
    raises(lambda: k[(1,)](1, 2, 3, 2**40), "n", "out of range")


try:
    import numpy as np
except ImportError:
    np = None
    print("skip the numpy cases: numpy is not installed (pip install numpy)")

if np is not None:
    rng = np.random.default_rng(16)

    def rand(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)

    def close(got, want, tol):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        err = np.abs(got - want).max() / max(1e-30, np.abs(want).max())
        assert err <= tol, f"max relative error {err:.3g} > {tol}"

    VADD = blk.load(os.path.join(EX, "vector_add.tile")).vector_add

    @case("vector_add on numpy f32: explicit grid, grid clause, grid of the consts (META)")
    def _():
        n = 1000  # no multiple of any block: the last block is masked
        x, y = rand(n), rand(n)
        out = np.full(n, np.nan, np.float32)
        VADD[(blk.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        close(out, x.astype(np.float64) + y, 1e-6)
        out[:] = np.nan
        VADD(x, y, out, n)
        close(out, x.astype(np.float64) + y, 1e-6)
        out[:] = np.nan
        VADD[lambda meta: (blk.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, n, BLOCK=128)
        close(out, x.astype(np.float64) + y, 1e-6)
        out[:] = np.nan
        VADD[(blk.cdiv(n, 512),)](x, y, out=out, n=n, BLOCK=512)  # runtime arguments by name
        close(out, x.astype(np.float64) + y, 1e-6)

    @case("the launch options tma and fp_fusion (True, False, 1, 0) with the consts: the same sums")
    def _():
        n = 777
        x, y = rand(n), rand(n)
        for flag in (True, False, 1, 0):
            for kw in ({"tma": flag}, {"fp_fusion": flag}):
                out = np.full(n, np.nan, np.float32)
                VADD[(blk.cdiv(n, 256),)](x, y, out, n, BLOCK=256, **kw)
                close(out, x.astype(np.float64) + y, 1e-6)

    @case("the same plan, new arrays: results follow the arrays given each call")
    def _():
        for n in (1, 17, 300):
            x, y, out = rand(n), rand(n), np.zeros(n, np.float32)
            VADD[(blk.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
            close(out, x.astype(np.float64) + y, 1e-6)

    @case("views: a slice passes the address of its first element; in place (out is x) works")
    def _():
        n = 300
        base, y = rand(n + 40), rand(n)
        want = base[40:].astype(np.float64) + y
        VADD(base[40:], y, base[40:], n)  # x and out are one view of base
        close(base[40:], want, 1e-6)

    @case("a grid with a zero dimension launches nothing")
    def _():
        x = np.ones(4, np.float32)
        out = np.zeros(4, np.float32)
        VADD[(0,)](x, x, out, 4)
        assert not out.any()

    @case("interpreter errors: out of bounds names the buffer's parameter, file:line:col")
    def _():
        x = rand(100)
        out = np.zeros(100, np.float32)
        e = raises(lambda: VADD[(1,)](x, x, out, 200, BLOCK=256), "x", "vector_add.tile:", "out-of-bounds")
        assert e.status_name == "BLK_ERROR_LAUNCH"

    @case("bad call: float32 array for *i32, non-contiguous, host arrays on the GPU backend")
    def _():
        k = blk.load(source="kernel cp(x: *i32, y: *i32, n: i32) grid(1) "
                            "{ let o = arange(0, 16); store(y + o, load(x + o, mask = o < n), mask = o < n); }").cp
        xi, yi = np.arange(16, dtype=np.int32), np.zeros(16, np.int32)
        raises(lambda: k(rand(16), yi, 16), "x", "i32", "float32")
        raises(lambda: k(xi, np.zeros(32, np.int32)[::2], 16), "y", "not contiguous", ".contiguous()")
        blk.set_backend("gpu")
        try:
            raises(lambda: k(xi, yi, 16), "x", "GPU backend")
        finally:
            blk.set_backend("auto")
        k(xi, yi, 16)
        assert (yi == xi).all()

    @case("bad call: a missing const names it (with the source line)")
    def _():
        k = blk.load(source="kernel g(x: *f32, n: i32, B: const i32) grid(cdiv(n, B)) { let o = program_id(0) * B"
                            " + arange(0, B); store(x + o, load(x + o, mask = o < n) * 2.0, mask = o < n); }").g
        x = rand(40)
        raises(lambda: k(x, 40), "B", "has no value")
        want = x * 2.0
        k(x, 40, B=16)
        close(x, want, 0)

    @case("strided kernels take non-contiguous arrays (softmax over every other column block)")
    def _():
        k = blk.load(os.path.join(EX, "softmax.tile")).softmax
        assert k.takes_strides
        rows, cols = 7, 50
        x = rand(rows, 2 * cols)
        out = np.full((rows, cols), np.nan, np.float32)
        xs = x[:, :cols]  # rows of x, every row strided by 2 * cols
        k[(rows,)](xs, out, x.shape[1], cols, rows, cols, BLOCK=64)
        e = np.exp(xs.astype(np.float64) - xs.max(axis=1, keepdims=True))
        close(out, e / e.sum(axis=1, keepdims=True), 1e-5)

    @case("every dtype: a scale kernel for f16, f32, f64, i8, i32, u8 (source with a define)")
    def _():
        for dt, name, tol in [(np.float16, "f16", 1e-3), (np.float32, "f32", 1e-6), (np.float64, "f64", 1e-6),
                              (np.int8, "i8", 0), (np.int32, "i32", 0), (np.uint8, "u8", 0)]:
            src = SCALE_SRC.replace("kernel scale(x: *T, out: *T", f"kernel scale(x: *{name}, out: *{name}")
            src = src.replace(".to(T)", f".to({name})")
            k = blk.load(source=src, defines={"BLOCK": 64}).scale
            n = 100
            x = (rng.integers(0, 40, n) if dt in (np.int8, np.int32, np.uint8) else rand(n)).astype(dt)
            out = np.zeros(n, dt)
            k(x, out, 3.0, n)
            want = (x.astype(np.float64) * 3.0)
            if dt in (np.int8, np.int32, np.uint8):
                want = want.astype(np.float32).astype(dt)
            close(out, want, tol)

    @case("integer and float scalars of every width (i64, u32, f64 parameters)")
    def _():
        k = blk.load(source="kernel s(out: *f64, a: i64, b: u32, c: f64, d: i1) grid(1) "
                            "{ store(out + arange(0, 16), zeros((16,), f64) + a.to(f64) + b.to(f64) + c + "
                            "d.to(f64)); }").s
        out = np.zeros(16)
        k(out, -(2**40), 4000000000, 0.25, True)
        assert (out == -(2**40) + 4000000000 + 0.25 + 1).all(), out[:2]

    @case("2-D grid and program_id(1): relu of a matrix, row blocks by column blocks")
    def _():
        k = blk.load(source="kernel r(x: *f32, y: *f32, rows: i32, cols: i32, B: const i32) {"
                            " let r = program_id(1); let c = program_id(0) * B + arange(0, B); let m = c < cols;"
                            " store(y + r * cols + c, maximum(load(x + r * cols + c, mask = m), 0.0), mask = m); }").r
        x = rand(5, 70)
        y = np.zeros_like(x)
        k[(blk.cdiv(70, 32), 5)](x, y, 5, 70, B=32)
        close(y, np.maximum(x, 0), 0)
        raises(lambda: k(x, y, 5, 70, B=32), None, "grid")  # no grid clause and no grid

    @case("blk.device_array: an array of pointers (sum_many) on the interpreter")
    def _():
        k = blk.load(os.path.join(EX, "sum_many.tile")).sum_many
        tensors = [rand(n) for n in (1, 100, 1500, 7)]
        devs = [blk.device_array(t) for t in tensors]
        ptrs = np.array([d.ptr for d in devs], np.uint64)
        sizes = np.array([t.size for t in tensors], np.int64)
        out = np.zeros(len(tensors), np.float32)
        k(ptrs, sizes, out, len(tensors), BLOCK=256)
        close(out, [t.astype(np.float64).sum() for t in tensors], 1e-5)
        assert (devs[1].numpy() == tensors[1]).all()
        raises(lambda: k(ptrs.astype(np.float64), sizes, out, 4), "ptrs", "addresses")

    @case("compile(): phases timed, no PTX on the interpreter; time(); autotune on the matmul example")
    def _():
        info = VADD.compile(BLOCK=64, backend="interpreter")
        assert info.ptx is None and info.backend == "interpreter" and info.num_warps > 0
        assert set(info.phases) == {"parse", "irgen", "passes", "LLVM", "PTX", "cubin"}
        x = rand(64)
        out = np.zeros(64, np.float32)
        assert VADD.time(x, x, out, 64, reps=2) > 0
        mm = blk.load(os.path.join(EX, "matmul.tile")).matmul
        M, N, K = 33, 20, 40
        a, b = rand(M, K, dtype=np.float16), rand(K, N, dtype=np.float16)
        c = np.zeros((M, N), np.float16)
        res = mm.autotune(a, b, c, M, N, K, K, 1, N, 1, N, 1)
        assert len(res.ms) == 4 and 0 <= res.best < 4, res
        c[:] = 0
        mm(a, b, c, M, N, K, K, 1, N, 1, N, 1)  # the tuned config, the kernel's grid clause
        close(c, a.astype(np.float64) @ b.astype(np.float64), 2e-2)
        c[:] = 0
        mm(a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
        close(c, a.astype(np.float64) @ b.astype(np.float64), 2e-2)

finish()
