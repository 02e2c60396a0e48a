#!/usr/bin/env python3
"""test_gpu_path.py: the package's GPU launch path without a GPU or torch.

    python3 tests/python/test_gpu_path.py BUILD/tests/runtime/fake/libcuda.so.1

libblk runs its GPU backend against the stand-in driver of tests/runtime
(which compiles nothing itself but records each launch: the kernel, grid,
stream and every parameter's bytes), and tests/python/fake_torch.py stands
in for torch with two devices. Each case launches through kernel[grid](...)
and reads back what reached cuLaunchKernel: the tensors' addresses, the
scalars, the grid, torch's current stream, the device. The launchers (the
fast path, see python/blk/_plan.py) are taken for every kind of call, and
every bad call that reaches one raises blk.Error naming the parameter.
Prints a line per case and last "N passed, N failed".
"""

import ctypes
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish, raises  # noqa: E402


if len(sys.argv) != 2 or not os.path.exists(sys.argv[1]):
    print(f"skip test_gpu_path.py: no stand-in driver ({sys.argv[1:]})\n0 passed, 0 failed")
    sys.exit(0)
driver = os.path.abspath(sys.argv[1])
os.environ["BLK_CUDA_DRIVER"] = driver
os.environ["BLK_CACHE"] = "0"
os.environ.pop("BLK_BACKEND", None)
os.environ.pop("BLK_TMA", None)
sys.path.insert(0, HERE)
import fake_torch  # noqa: E402

torch = fake_torch.install(driver, devices=2)
import blk  # noqa: E402


def generated(kernel, grid):
    """The generated (Python) launcher kernel[grid] stands for: itself, or
    the one whose version in C it is."""
    f = kernel._recent[grid][0]
    assert kernel[grid] is getattr(f, "fast", f)
    return f

vadd = blk.load(os.path.join(REPO, "examples", "vector_add.tile")).vector_add
f32, f16, i32 = torch.float32, torch.float16, torch.int32


def ptrs(*ts):
    return [t.data_ptr() for t in ts]


def last():
    return fake_torch.last_launch()


def check_launch(args, n, grid, stream=0):
    got = last()
    assert got["name"] == "vector_add", got
    assert got["params"][:3] == ptrs(*args), (got["params"], ptrs(*args))
    assert got["params"][3] == n, got
    assert got["grid"] == grid, got
    assert got["stream"] == stream, got


x, y, out = (torch.empty(1000) for _ in range(3))
a, b = torch.empty(1000), torch.empty(1000)


@case("kernel[grid](...): the tensors' addresses, n and the grid reach cuLaunchKernel, call after call")
def _():
    vadd[(2,)](x, y, out, 1000, BLOCK=512)    # a plan made: the checked path
    check_launch((x, y, out), 1000, (2, 1, 1))
    before = fake_torch.launches()
    for i, (p, q, o, n) in enumerate([(a, b, out, 999), (x, y, a, 1000), (b, a, x, 513)] * 3):
        vadd[(2,)](p, q, o, n, BLOCK=512)     # the launcher
        check_launch((p, q, o), n, (2, 1, 1))
    assert fake_torch.launches() == before + 9
    f = vadd[(2,)]
    assert f is vadd[(2,)], "kernel[grid] keeps the launcher of each grid"
    py = generated(vadd, (2,))
    assert "_blk_launch" in py.source, "the grid's launcher is the generated one"
    if blk._runtime.lib().fast_ext is not None:  # its version in C (python/blk/_fastlaunch.c)
        assert f is py.fast and type(f).__name__ == "builtin_function_or_method", "the C launcher is handed out"
    else:
        assert f is py and not hasattr(py, "fast"), "without the extension, the Python launcher"


@case("the C launcher (where built) launches by itself; anything else goes the slow way")
def _():
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    py = generated(vadd, (2,))
    calls = []
    real = py.__globals__["_blk_launch"]
    py.__globals__["_blk_launch"] = lambda *a: calls.append(1) or real(*a)
    try:
        before = fake_torch.launches()
        for n in (1000, 999, 7):
            vadd[(2,)](x, y, out, n, BLOCK=512)
            check_launch((x, y, out), n, (2, 1, 1))
        c = blk._runtime.lib().fast_ext is not None
        assert fake_torch.launches() == before + 3
        assert len(calls) == (0 if c else 3), (c, len(calls))
        vadd[(2,)](x, y, out, n=5, BLOCK=512)  # n by name: the Python launcher's way
        check_launch((x, y, out), 5, (2, 1, 1))
        raises(lambda: vadd[(2,)](x, y, out, 1.5, BLOCK=512), "n")  # the checked path's error
    finally:
        py.__globals__["_blk_launch"] = real
    return f"launches by {'C' if c else 'Python'}"


@case("launchers: a data_ptr not an int, a check that raises, a dropped module collected, a launch's arrays not "
      "kept by the plan it made, 66 arguments")
def _():
    import gc
    import weakref
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    odd = torch.empty(1000)
    odd.data_ptr = lambda: "not an address"
    before = fake_torch.launches()
    try:
        vadd[(2,)](odd, y, out, 1000, BLOCK=512)
    except (blk.Error, TypeError, ValueError):
        pass
    assert fake_torch.launches() == before, "a data_ptr that is not an int launches nothing"

    bad = torch.empty(1000)

    def boom():
        raise RuntimeError("get_device failed")
    bad.get_device = boom
    try:
        vadd[(2,)](bad, y, out, 1000, BLOCK=512)
        raise AssertionError("no exception")
    except RuntimeError as e:  # as from the generated launcher's checks: not swallowed
        assert "get_device failed" in str(e), e
    assert fake_torch.launches() == before

    m = blk.load(os.path.join(REPO, "examples", "vector_add.tile"))
    k = m.vector_add
    for n in (1000, 999):
        k[(2,)](x, y, out, n, BLOCK=512)
        check_launch((x, y, out), n, (2, 1, 1))
    gone = weakref.ref(m)
    del m, k
    gc.collect()
    assert gone() is None, "a module dropped after launches is collected (its launchers hold it in cycles)"

    # a plan made by a launch (a new const: a new plan) keeps its launchers, not that launch's arrays
    a, b, c = torch.empty(1000), torch.empty(1000), torch.empty(1000)
    vadd[(2,)](a, b, c, 1000, BLOCK=256)
    check_launch((a, b, c), 1000, (2, 1, 1))
    refs = [weakref.ref(t) for t in (a, b, c)]
    del a, b, c
    gc.collect()
    assert all(r() is None for r in refs), "the arrays of the launch that made a plan are let go"
    vadd[(2,)](x, y, out, 1000, BLOCK=256)   # and the plan still launches (its launcher built from dtypes)
    check_launch((x, y, out), 1000, (2, 1, 1))

    n = 66
    params = ", ".join(f"a{i}: i32" for i in range(n))
    many = blk.load(source=f"kernel many(out: *i32, {params}) grid(1) {{\n    store(out, a0 + a{n - 1});\n}}\n").many
    o = torch.empty(4, dtype=i32)
    before = fake_torch.launches()
    for i in range(3):  # (the stand-in records the first parameters only: the count tells)
        many[(1,)](o, *range(i, i + n))
    assert fake_torch.launches() == before + 3, "a kernel of 67 arguments launches (the C launcher takes 64)"


@case("grids: an int, 2-D, 3-D, a function of the consts, the kernel's grid clause, a list")
def _():
    vadd[3](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (3, 1, 1))
    vadd[(3, 2)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (3, 2, 1))
    vadd[(1, 2, 3)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (1, 2, 3))
    g = lambda meta: (blk.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    for n in (1000, 100, 3000):
        vadd[g](x, y, out, n, BLOCK=256)
        check_launch((x, y, out), n, (blk.cdiv(n, 256), 1, 1))
    for n, block in ((1000, 512), (1000, 128), (77, 64)):
        vadd(x, y, out, n, BLOCK=block)
        check_launch((x, y, out), n, (blk.cdiv(n, block), 1, 1))
    vadd[[5]](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (5, 1, 1))


@case("a grid with a 0 launches nothing (and still checks the arguments); a bad grid is a blk.Error")
def _():
    before = fake_torch.launches()
    vadd[(0,)](x, y, out, 1000, BLOCK=512)
    vadd[lambda meta: (0, 4)](x, y, out, 1000, BLOCK=512)
    assert fake_torch.launches() == before
    raises(lambda: vadd[(0,)](x, y, out, 1.5, BLOCK=512), "n")
    for bad in ((1, 2, 3, 4), (-1,), ("a",), 2**31):
        e = raises(lambda: vadd[bad](x, y, out, 1000, BLOCK=512), None, "grid")
        assert e.kernel == "vector_add"


@case("torch's current stream of the tensors' device, read at every launch; stream= as an option")
def _():
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    fake_torch.set_stream(0x5150)
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (2, 1, 1), stream=0x5150)
    fake_torch.set_stream(0x7170, device=1)  # another device's stream is not this launch's
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (2, 1, 1), stream=0x5150)
    fake_torch.set_stream(0)
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (2, 1, 1), stream=0)
    vadd[(2,)](x, y, out, 1000, BLOCK=512, stream=0x6160)
    check_launch((x, y, out), 1000, (2, 1, 1), stream=0x6160)
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (2, 1, 1), stream=0)
    fake_torch.set_stream(0, device=1)


@case("keyword arguments: other consts take another plan; runtime arguments by name")
def _():
    for block in (512, 256, 512, 1024, 256):
        vadd(x, y, out, 1000, BLOCK=block)
        check_launch((x, y, out), 1000, (blk.cdiv(1000, block), 1, 1))
    vadd[(4,)](x, y, out=a, n=999, BLOCK=256)
    check_launch((x, y, a), 999, (4, 1, 1))
    vadd[(4,)](x=b, y=y, out=a, n=998, BLOCK=256)
    check_launch((b, y, a), 998, (4, 1, 1))
    vadd[(4,)](x, y, out, 1000)       # BLOCK's default
    check_launch((x, y, out), 1000, (4, 1, 1))
    vadd[(4,)](x, y, out, 1000, BLOCK=256, num_warps=8)
    got = last()
    assert got["block"] == (256, 1, 1), got
    check_launch((x, y, out), 1000, (4, 1, 1))


@case("consts that take turns on one grid (a forward and a backward): after the first of each, every launch is "
      "made in C by the grid's launchers, none by the kernel's Python fallback")
def _():
    misses = []
    miss = blk._kernel.Kernel._miss
    blk._kernel.Kernel._miss = lambda self, *a: (misses.append(1), miss(self, *a))[1]
    try:   # a kernel loaded afresh: its launchers' fallback is the counting one
        k = blk.load(os.path.join(REPO, "examples", "vector_add.tile")).vector_add
        for _ in range(2):
            for block in (256, 512, 128):
                k[(4,)](x, y, out, 1000 - block, BLOCK=block)
        before = len(misses)
        for i in range(3):
            for block in (256, 512, 128):
                k[(4,)](x, y, out, 900 + i, BLOCK=block)
                check_launch((x, y, out), 900 + i, (4, 1, 1))
    finally:
        blk._kernel.Kernel._miss = miss
    fast = blk._runtime.lib().fast_ext is not None
    assert len(misses) - before == (0 if fast else 9), (before, len(misses))


@case("bad calls that reach a launcher: blk.Error naming the parameter, nothing launched")
def _():
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    before = fake_torch.launches()
    h = torch.empty(1000, dtype=f16)
    raises(lambda: vadd[(2,)](h, y, out, 1000, BLOCK=512), "x", "f32", "float16")
    raises(lambda: vadd[(2,)](x, y, torch.empty(10, dtype=i32), 1000, BLOCK=512), "out", "f32")
    raises(lambda: vadd[(2,)](x, y, out[::2], 1000, BLOCK=512), "out", "not contiguous")
    raises(lambda: vadd[(2,)](x, y, out, 2**40, BLOCK=512), "n", "out of range")
    raises(lambda: vadd[(2,)](x, y, out, 2**31, BLOCK=512), "n", "out of range")
    raises(lambda: vadd[(2,)](x, y, out, 2**64, BLOCK=512), "n", "out of range")
    raises(lambda: vadd[(2,)](x, y, out, 10.0, BLOCK=512), "n", "integer")
    raises(lambda: vadd[(2,)](x, y, out, x, BLOCK=512), "n", "number")
    raises(lambda: vadd[(2,)](x, y, "out", 1000, BLOCK=512), "out")
    raises(lambda: vadd[(2,)](x, y, out, BLOCK=512), "n", "missing")
    raises(lambda: vadd[(2,)](x, y, out, 1000, 5, BLOCK=512), None, "4 arguments expected")
    raises(lambda: vadd[(2,)](x, y, out, 1000, BLOCK=512, BLOKC=3), "BLOKC", "no parameter")
    raises(lambda: vadd[(2,)](x, y, out, 1000, BLOCK="big"), "BLOCK", "number")
    raises(lambda: vadd[(2,)](x, y, out, 1000, x=x, BLOCK=512), "x", "twice")
    raises(lambda: vadd[(2,)](x, y, torch.empty(8, device="cpu"), 1000, BLOCK=512), "out", "CPU tensor")
    assert fake_torch.launches() == before, "a bad call launched"
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    check_launch((x, y, out), 1000, (2, 1, 1))


@case("non-contiguous tensors: refused, whatever the parameters are named; blk.strided(t) passes one "
      "(the Python launcher); a subclass of torch.Tensor works")
def _():
    k = blk.load(source="""
kernel copy_strided(x: *f32, out: *f32, n: i32, x_stride: i32) grid(1) {
    let o = arange(0, 64);
    store(out + o, load(x + o * x_stride, mask = o < n), mask = o < n);
}""").copy_strided
    v = x[::3]
    before = last()
    raises(lambda: k(v, out, 64, 3), "x", "not contiguous", "x.contiguous()", "blk.strided(x)")
    assert last() == before, "the kernel was launched"
    for _ in range(3):
        k(blk.strided(v), out, 64, 3)
        got = last()
        assert got["params"][:2] == [v.data_ptr(), out.data_ptr()], got
    for _ in range(2):  # a plain tensor again, then a strided one: each its own plan
        raises(lambda: k(v, out, 64, 3), "x", "not contiguous")
        k(x, out, 64, 1)
        assert last()["params"][:2] == [x.data_ptr(), out.data_ptr()]
        k(blk.strided(v), out, 64, 3)
        assert last()["params"][:2] == [v.data_ptr(), out.data_ptr()]

    class Param(torch.Tensor):
        pass
    p = Param(a.data_ptr(), (1000,), (1,), f32, a.device)
    for _ in range(3):
        vadd[(2,)](p, y, out, 1000, BLOCK=512)
        check_launch((p, y, out), 1000, (2, 1, 1))


@case("several GPUs: tensors on cuda:1 launch on device 1 (a context of its own, torch's stream there)")
def _():
    x1, y1, o1 = (torch.empty(1000, device="cuda:1") for _ in range(3))
    assert torch.cuda.current_device() == 0
    fake_torch.set_stream(0x1111, device=1)
    for _ in range(3):
        vadd[(2,)](x1, y1, o1, 1000, BLOCK=512)
        check_launch((x1, y1, o1), 1000, (2, 1, 1), stream=0x1111)
    f = generated(vadd, (2,))
    assert f.plan.device == 1 and f.plan.ctx.device == 1, (f.plan.device, f.plan.ctx.device)
    assert f.plan.ctx is blk._runtime.gpu_context(1) and f.plan.ctx is not blk._runtime.gpu_context(0)
    assert torch.cuda.current_device() == 0, "the current device is left as it was"
    # by turns: each device's launcher
    for _ in range(3):
        vadd[(2,)](x, y, out, 1000, BLOCK=512)
        check_launch((x, y, out), 1000, (2, 1, 1), stream=0)
        vadd[(2,)](x1, y1, o1, 999, BLOCK=512)
        check_launch((x1, y1, o1), 999, (2, 1, 1), stream=0x1111)
    fake_torch.set_stream(0, device=1)


@case("several GPUs: arguments on different devices are a blk.Error naming both")
def _():
    x1, o1 = torch.empty(1000, device="cuda:1"), torch.empty(1000, device="cuda:1")
    vadd[(2,)](x, y, out, 1000, BLOCK=512)
    before = fake_torch.launches()
    for call, first, second in [(lambda: vadd[(2,)](x1, y, out, 1000, BLOCK=512), "x", "y"),
                                (lambda: vadd[(2,)](x, y, o1, 1000, BLOCK=512), "x", "out"),
                                (lambda: vadd(x1, y, o1, 1000, BLOCK=512), "x", "y")]:
        e = None
        try:
            call()
        except blk.Error as err:
            e = err
        assert e is not None, "no blk.Error"
        msg = str(e)
        assert f"'{first}'" in msg and f"'{second}'" in msg and "cuda:0" in msg and "cuda:1" in msg, msg
        assert e.param in (first, second), e.param
    assert fake_torch.launches() == before


@case("threads: each thread launches with its own launcher, every launch with its own arguments")
def _():
    tensors = [[torch.empty(64) for _ in range(3)] for _ in range(4)]
    errors = []
    seen = []

    def work(i):
        try:
            p, q, o = tensors[i]
            for _ in range(200):
                vadd[(1,)](p, q, o, 64, BLOCK=64)
                f = vadd[(1,)]
                seen.append(f)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    vadd[(1,)](a, b, out, 64, BLOCK=64)
    check_launch((a, b, out), 64, (1, 1, 1))


@case("compile(): the PTX of the variant a launch runs, with shared bytes, registers (the stand-in says 42), spills and phase times")
def _():
    r = vadd.compile(x, y, out, 1000, BLOCK=512)
    assert r.backend == "gpu" and ".entry vector_add" in r.ptx, r
    assert r.spill_bytes == 0 and r.registers == 42 and isinstance(r.warnings, str), r
    assert r.ms >= 0 and set(r.phases) == {"parse", "irgen", "passes", "LLVM", "PTX", "cubin"}, r.phases


ADD1 = """
@autotune(key = [n], configs = [{BLOCK = 128}, {BLOCK = 1024}, {BLOCK = 512, num_warps = 8}])
kernel add1(x: *f32, n: i32, BLOCK: const i32) grid(cdiv(n, BLOCK)) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(x + offs, load(x + offs, mask = offs < n) + 1.0, mask = offs < n);
}
"""


@case("autotune(): BLOCK=1024's 64 programs on the stand-in's 132 SMs are pruned, not timed; TuneResult.pruned says why")
def _():
    k = blk.load(source=ADD1).add1
    t = torch.empty(1 << 16)
    res = k.autotune(t, 1 << 16)
    assert res.pruned == {1: "64 programs on 132 SMs; BLOCK=128 gives 512"}, res.pruned
    assert res.ms[1] is None and res.ms[0] > 0 and res.ms[2] > 0 and res.best == 2, res
    assert "1: - (pruned: 64 programs on 132 SMs; BLOCK=128 gives 512)" in repr(res), repr(res)
    res = k.autotune(t, 1 << 14)  # 128, 16 and 32 programs: none fills the SMs, none pruned
    assert res.pruned == {} and None not in res.ms, res


MM_DESC = """
kernel mm(a: *f16, b: *f16, c: *f32, M: i32, N: i32, K: i32, BM: const i32 = 128, BN: const i32 = 128,
          BK: const i32 = 64) grid(cdiv(M, BM), cdiv(N, BN)) {
    let ad = tensor_desc(a, (M, K), (K, 1), (BM, BK));
    let bd = tensor_desc(b, (K, N), (N, 1), (BK, BN));
    let cd = tensor_desc(c, (M, N), (N, 1), (BM, BN));
    var acc = zeros((BM, BN), f32);
    for k in range(0, K, BK) {
        acc = dot(ad.load((program_id(0) * BM, k)), bd.load((k, program_id(1) * BN)), acc);
    }
    cd.store((program_id(0) * BM, program_id(1) * BN), acc);
}
"""


@case("the option tma: True adds the tensor maps after the six parameters (the stand-in is a 9.0 device), "
      "False and no option (without BLK_TMA) do not")
def _():
    mm = blk.load(source=MM_DESC).mm
    a, b, c = torch.empty(256 * 512, dtype=f16), torch.empty(512 * 256, dtype=f16), torch.empty(256 * 256)
    for tma, n in ((True, 9), (False, 6), (None, 6), (1, 9)):
        kw = {} if tma is None else {"tma": tma}
        mm(a, b, c, 256, 256, 512, **kw)
        got = last()
        assert got["name"] == "mm" and len(got["params"]) == n, (tma, len(got["params"]))
        assert got["params"][:3] == ptrs(a, b, c), got["params"][:3]


# ---- blk.triton's launchers -----------------------------------------------------

import blk.triton as triton  # noqa: E402

TRITON_SCALE = """
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, K: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha + K, mask=mask)
"""
FAST = blk._runtime.lib().fast_ext is not None


def scale_launch(args, n, alpha_bits, grid=(2, 1, 1), stream=0):
    got = last()
    assert got["name"] == "scale_kernel", got
    assert got["params"] == ptrs(*args) + [n, alpha_bits], (got["params"], ptrs(*args), n, alpha_bits)
    assert got["grid"] == grid and got["stream"] == stream, got


def f32_bits(v):
    import struct
    return int.from_bytes(struct.pack("<f", v), "little")


@case("blk.triton: kernel[grid] is a launcher in C from the second launch; each launch reaches cuLaunchKernel")
def _():
    k = triton.from_triton(TRITON_SCALE)
    for _ in range(2):
        k[(2,)](x, out, 1000, 2.0, BLOCK=512, K=1)
        scale_launch((x, out), 1000, f32_bits(2.0))
    launcher = k[(2,)]
    if FAST:
        assert type(launcher).__name__ == "builtin_function_or_method", launcher
    before = fake_torch.launches()
    for i, (p, o, n) in enumerate([(a, b, 999), (x, out, 1000), (b, a, 17)] * 2):
        k[(2,)](p, o, n, 0.5, BLOCK=512, K=1)
        scale_launch((p, o), n, f32_bits(0.5))
    assert fake_torch.launches() == before + 6
    assert k[(2,)] is launcher, "the same launcher: no launch fell back"
    # a launch the driver refuses: blk's error of the launch (not a check of the Triton call as blk's)
    cu = fake_torch._state.cu
    cu.fake_cuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p]
    cu.fake_cuda_fail(b"cuLaunchKernel", 701, 1, None)
    try:
        k[(2,)](x, out, 1000, 2.0, BLOCK=512, K=1)
        raise AssertionError("no error")
    except blk.Error as e:
        assert "blk_launch" in str(e) and "BLOCK" not in str(e), e
    k[(2,)](x, out, 1000, 2.0, BLOCK=512, K=1)
    scale_launch((x, out), 1000, f32_bits(2.0))


@case("blk.triton: a launch of another dtype, int width, scalar kind or constexpr takes its own specialization, "
      "never the launcher of another (and back)")
def _():
    k = triton.from_triton(TRITON_SCALE)
    h, ho = torch.empty(1000, dtype=f16), torch.empty(1000, dtype=f16)
    seen = set()
    calls = [  # (args, kw, what the translation must say, n as launched, alpha's bits)
        ((x, out, 1000, 2.0), {"K": 1}, ["x_ptr: *f32", "n: i32", "alpha: f32", "+ 1)"], 1000, f32_bits(2.0)),
        ((h, ho, 1000, 2.0), {"K": 1}, ["x_ptr: *f16", "n: i32"], 1000, f32_bits(2.0)),
        ((x, out, 2**33, 2.0), {"K": 1}, ["x_ptr: *f32", "n: i64"], 2**33, f32_bits(2.0)),
        ((x, out, 1000, 3), {"K": 1}, ["alpha: i32"], 1000, 3),
        ((x, out, 1000, True), {"K": 1}, ["alpha: i1"], 1000, 1),
        ((x, out, 1000, 2.0), {"K": 1.0}, ["x_ptr: *f32", "alpha: f32", "1.0"], 1000, f32_bits(2.0)),
        ((x, out, -2**31 - 1, 2.0), {"K": 1}, ["n: i64"], 2**64 - 2**31 - 1, f32_bits(2.0)),
    ]
    for _ in range(2):
        for args, kw, says, n, bits in calls:
            for _ in range(2):
                k[(2,)](*args, BLOCK=512, **kw)
                scale_launch(args[:2], n, bits)
                for w in says:
                    assert w in k.tile_source, (args[2:], kw, w, k.tile_source)
            seen.add(k.tile_source)
    assert len(seen) == len(calls) - 1, len(seen)   # the two of n: i64 are one


@case("blk.triton: a non-contiguous tensor goes the checked way (as blk.strided), then a contiguous one the "
      "launcher again; a tensor on another device launches there")
def _():
    k = triton.from_triton(TRITON_SCALE)
    k[(2,)](x, out, 1000, 2.0, BLOCK=512, K=1)
    launcher = k[(2,)]
    view = x[::2]
    assert not view.is_contiguous()
    k[(2,)](view, out, 500, 2.0, BLOCK=512, K=1)
    scale_launch((view, out), 500, f32_bits(2.0))
    k[(2,)](x, out, 1000, 2.0, BLOCK=512, K=1)
    scale_launch((x, out), 1000, f32_bits(2.0))
    x1, o1 = torch.empty(1000, device="cuda:1"), torch.empty(1000, device="cuda:1")
    fake_torch.set_stream(0x2222, device=1)
    for _ in range(3):
        k[(2,)](x1, o1, 1000, 2.0, BLOCK=512, K=1)
        scale_launch((x1, o1), 1000, f32_bits(2.0), stream=0x2222)
        k[(2,)](x, out, 999, 2.0, BLOCK=512, K=1)
        scale_launch((x, out), 999, f32_bits(2.0))
    fake_torch.set_stream(0, device=1)
    if FAST:
        assert k[(2,)] in (launcher, k._recent[(2,)][0][0])


@case("blk.triton: calls by turns (two dtypes, two devices) take the grid's recent launchers, not the checked way")
def _():
    k = triton.from_triton(TRITON_SCALE)
    h, ho = torch.empty(1000, dtype=f16), torch.empty(1000, dtype=f16)
    x1, o1 = torch.empty(1000, device="cuda:1"), torch.empty(1000, device="cuda:1")
    turns = [(x, out), (h, ho), (x1, o1)]
    for _ in range(2):
        for p, o in turns:
            k[(2,)](p, o, 1000, 2.0, BLOCK=512, K=1)
    slow = []
    run = k.run
    k.run = lambda *a, **kw: (slow.append(1), run(*a, **kw))[1]
    try:
        for _ in range(3):
            for p, o in turns:
                k[(2,)](p, o, 1000, 2.0, BLOCK=512, K=1)
                assert last()["params"][:2] == ptrs(p, o)
    finally:
        del k.run
    assert len(slow) == (0 if FAST else 9), len(slow)


@case("blk.triton: a grid function, positional constexprs and a runtime argument by name still launch right")
def _():
    k = triton.from_triton(TRITON_SCALE)
    for _ in range(2):
        k[lambda m: (triton.cdiv(m["n"], m["BLOCK"]),)](x, out, 1000, 2.0, BLOCK=512, K=1)
        scale_launch((x, out), 1000, f32_bits(2.0))
        k[(2,)](x, out, 1000, 2.0, 512, 1)
        scale_launch((x, out), 1000, f32_bits(2.0))
        k[(2,)](x, out, alpha=2.0, n=999, BLOCK=512, K=1)
        scale_launch((x, out), 999, f32_bits(2.0))
        k[[2]](x, out, 1000, 2.0, BLOCK=512, K=1)
        scale_launch((x, out), 1000, f32_bits(2.0))


def counting_slow(k):
    """k.run counted: the launches that take the checked way."""
    slow = []
    run = k.run
    k.run = lambda *a, **kw: (slow.append(1), run(*a, **kw))[1]
    return slow


@case("blk.triton: runtime arguments by name (in any order) and num_warps take the launcher in C, each call's "
      "values checked and launched")
def _():
    k = triton.from_triton(TRITON_SCALE)
    h = torch.empty(1000, dtype=f16)
    for _ in range(2):
        k[(2,)](x, out, alpha=2.0, n=999, BLOCK=512, K=1, num_warps=2)
        scale_launch((x, out), 999, f32_bits(2.0))
    launcher = k[(2,)]
    if FAST:
        assert type(launcher).__name__ == "builtin_function_or_method", launcher
    slow = counting_slow(k)
    try:
        for p, o, n, alpha in [(a, b, 17, 0.5), (x, out, 2**31 - 1, -1.0), (b, a, -5, 3.5)]:
            k[(2,)](p, o, alpha=alpha, n=n, BLOCK=512, K=1, num_warps=2)
            scale_launch((p, o), n % 2**32, f32_bits(alpha))   # an i32's 4 bytes
            assert last()["block"][0] == 64, last()
            k[(2,)](p, o, n=n, num_warps=2, K=1, alpha=alpha, BLOCK=512)   # the same names in another order
            scale_launch((p, o), n % 2**32, f32_bits(alpha))
        assert k[(2,)] is launcher, "no launch fell back"
        assert len(slow) == (0 if FAST else 6), len(slow)
        # every runtime argument by name: a launcher of its own, made at its first call (the grid has one)
        for i in range(3):
            k[(2,)](x_ptr=b, out_ptr=a, n=100 + i, alpha=1.5, BLOCK=512, K=1, num_warps=2)
            scale_launch((b, a), 100 + i, f32_bits(1.5))
        assert len(slow) == (1 if FAST else 9), len(slow)
    finally:
        del k.run


@case("blk.triton: after a launcher for runtime arguments by name, a call without one, with another name, by "
      "position, of another dtype, width, kind or num_warps each does what the checked way does")
def _():
    k = triton.from_triton(TRITON_SCALE)
    h, ho = torch.empty(1000, dtype=f16), torch.empty(1000, dtype=f16)
    for _ in range(2):
        k[(2,)](x, out, alpha=2.0, n=999, BLOCK=512, K=1, num_warps=2)
    launcher = k[(2,)]
    for args, bad, name in [((x, out), {"alpha": 2.0}, "n"), ((x, out), {"alpha": 2.0, "n": 9, "m": 1}, "m"),
                            ((x, out), {"alpha": 2.0, "N": 9}, "N"), ((x, out), {"alpha": 2.0, "n": [9]}, "n"),
                            ((x, out, 999), {"alpha": 2.0, "n": 9}, "n")]:
        try:
            k[(2,)](*args, **bad, BLOCK=512, K=1, num_warps=2)
            raise AssertionError(f"no error for {bad}")
        except triton.TranslationError as e:
            assert f"'{name}'" in str(e), (bad, e)
    calls = [  # (positional, by name, translation says, n as launched, alpha's bits, threads)
        ((x, out, 1000, 2.0), {"num_warps": 2}, ["x_ptr: *f32", "n: i32"], 1000, f32_bits(2.0), 64),
        ((x, out), {"alpha": 2.0, "n": 998, "num_warps": 2}, ["x_ptr: *f32", "n: i32"], 998, f32_bits(2.0), 64),
        ((x,), {"out_ptr": out, "alpha": 2.0, "n": 997, "num_warps": 2}, ["n: i32"], 997, f32_bits(2.0), 64),
        ((h, ho), {"alpha": 2.0, "n": 996, "num_warps": 2}, ["x_ptr: *f16"], 996, f32_bits(2.0), 64),
        ((h,), {"out_ptr": ho, "alpha": 2.0, "n": 996, "num_warps": 2}, ["x_ptr: *f16"], 996, f32_bits(2.0), 64),
        ((x, out), {"alpha": 2.0, "n": 2**33, "num_warps": 2}, ["n: i64"], 2**33, f32_bits(2.0), 64),
        ((x, out), {"alpha": 3, "n": 995, "num_warps": 2}, ["alpha: i32"], 995, 3, 64),
        ((x, out), {"alpha": True, "n": 994, "num_warps": 2}, ["alpha: i1"], 994, 1, 64),
        ((x, out), {"alpha": 2.0, "n": 993, "num_warps": 8}, ["n: i32"], 993, f32_bits(2.0), 256),
        ((x, out), {"alpha": 2.0, "n": 992}, ["n: i32"], 992, f32_bits(2.0), 128),
    ]
    for _ in range(2):
        for args, kw, says, n, bits, threads in calls:
            k[(2,)](*args, **kw, BLOCK=512, K=1)
            scale_launch((x, out) if args[0] is x else (h, ho), n, bits)
            assert last()["block"][0] == threads, (kw, last())
            for w in says:
                assert w in k.tile_source, (args, kw, w, k.tile_source)
    for n in (999, 998):   # the first may make the launcher anew (a grid keeps its last few)
        k[(2,)](x, out, alpha=2.0, n=n, BLOCK=512, K=1, num_warps=2)
    slow = counting_slow(k)
    try:
        k[(2,)](x, out, alpha=2.0, n=997, BLOCK=512, K=1, num_warps=2)
        scale_launch((x, out), 997, f32_bits(2.0))
        assert len(slow) == (0 if FAST else 1), len(slow)
    finally:
        del k.run


@case("blk.triton: @heuristics and @autotune kernels launch through the kernel's launchers, with each call's "
      "constexprs and the config's options")
def _():
    k = triton.from_triton(TRITON_SCALE)
    h = triton.heuristics({"K": lambda m: 1 if m["n"] % 2 else 2})(k)
    for n in (1000, 999, 1000, 999, 1000):
        h[(2,)](x, out, n, 2.0, BLOCK=512)
        scale_launch((x, out), n, f32_bits(2.0))
        assert ("+ 2)" if n % 2 == 0 else "+ 1)") in k.tile_source, (n, k.tile_source)
    a = triton.autotune([triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=8)],
                        key=["n"])(triton.from_triton(TRITON_SCALE))
    for n in (1000, 1000, 1000, 200, 1000):
        a[(2,)](x, out, n, 2.0, K=1)
        scale_launch((x, out), n, f32_bits(2.0))
        blocks = last()["block"][0]
        assert blocks in (128, 256), blocks
    if FAST:
        assert type(a.fn._grids[(2,)]).__name__ == "builtin_function_or_method"


@case("blk's own launchers: calls by turns between devices take the recent launchers (in C), not the slow path")
def _():
    x1, y1, o1 = (torch.empty(1000, device="cuda:1") for _ in range(3))
    vadd[(3,)](x, y, out, 1000, BLOCK=512)
    vadd[(3,)](x1, y1, o1, 1000, BLOCK=512)
    prepared = []
    prep = vadd._prepare
    vadd._prepare = lambda *a, **kw: (prepared.append(1), prep(*a, **kw))[1]
    try:
        for _ in range(3):
            vadd[(3,)](x, y, out, 1000, BLOCK=512)
            check_launch((x, y, out), 1000, (3, 1, 1))
            vadd[(3,)](x1, y1, o1, 1000, BLOCK=512)
            check_launch((x1, y1, o1), 1000, (3, 1, 1))
    finally:
        del vadd._prepare
    assert not prepared, len(prepared)


finish()
