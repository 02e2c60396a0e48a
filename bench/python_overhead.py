#!/usr/bin/env python3
"""python_overhead.py: the Python package's own cost of a launch, on the CPU.

    python3 bench/python_overhead.py [--build build] [--reps 7] [--n 20000] [--package DIR] [--gpu] [--stub]

Without --gpu, no GPU and no torch needed: libblk runs its GPU backend against the stand-in
driver of tests/runtime (BUILD/tests/runtime/fake/libcuda.so.1, through
BLK_CUDA_DRIVER), which records launches without running them, and
tests/python/fake_torch.py stands in for torch (tensors in the stand-in's
memory, torch.cuda, the raw-stream getter; its tensor methods are C
builtins, as torch's are, but cheaper than torch's). Times, per launch: the
thread's CPU time (not the wall clock: the machine may be shared), the best
of --reps rounds of --n launches, the paths taking turns round by round:

  C floor     blk_launch through ctypes with the argument array and options
              built once (what the package cannot go below);
  kernel[g]   the plain `vadd[(1,)](x, y, out, 1, BLOCK=1024)`;
  launcher    `l = vadd[(1,)]` kept, `l(x, y, out, 1, BLOCK=1024)`;
  no grid     `vadd(x, y, out, 1, BLOCK=1024)` (the kernel's grid clause);
  blk.triton  the same kernel in Triton's syntax through blk.triton;
  by name     a Triton kernel launched as Liger-Kernel launches its
              _swiglu_forward_kernel, with a runtime argument (n) by name
              and num_warps: `k[(1,)](a, b, c, 16, 1.0, n=16, BLOCK=128,
              num_warps=4)`;
  cuda:1      as kernel[g] with the tensors on the stand-in's device 1;
  by turns    a launch on cuda:0, then one on cuda:1, and so on.

"Python's part" is a path's time less the C floor: on a GPU the C floor is
the real blk_launch (about 3 us of host time on the H100, mostly
cuLaunchKernel) and the Python part adds to it. `--package DIR` times
another version of the package (a checkout's python/) against the same
libblk, for before and after. --gpu: the same paths with real torch on the
real driver, each torch call a launcher makes timed alone beside them (what
the package cannot avoid short of a compiled extension), and Triton's launch
of the same kernel where Triton is. A tool for reading, not a test: nothing
is asserted. --stub: blk_launch replaced by a C function that does
nothing, so that every row is the package's own part.
"""

import argparse
import ctypes
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def per_call_ns(fn, n):
    t = time.thread_time_ns()
    for _ in range(n // 10):
        fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702
    return (time.thread_time_ns() - t) / (n // 10 * 10)


def best_ns(paths, n, reps):
    """The best of `reps` rounds, every path timed once a round (rounds take
    turns between paths, so that a busy moment of the machine does not fall
    on one path alone)."""
    best = [float("inf")] * len(paths)
    for _ in range(reps):
        for i, (_, fn, calls) in enumerate(paths):
            best[i] = min(best[i], per_call_ns(fn, n // calls) / calls)
    return best


TRITON_ADD = """
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""

# Liger-Kernel's _swiglu_forward_kernel's shape (its column count a runtime argument here, passed by name)
TRITON_GLU = """
@triton.jit
def glu_kernel(a_ptr, b_ptr, c_ptr, stride, mult, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    a = tl.load(a_ptr + row * stride + cols, mask=mask)
    b = tl.load(b_ptr + row * stride + cols, mask=mask)
    tl.store(c_ptr + row * stride + cols, a * tl.sigmoid(a) * b * mult, mask=mask)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--package", help="the folder that holds the blk package (default: python/ of this checkout), "
                                      "to time another version of it")
    ap.add_argument("--gpu", action="store_true", help="real torch on the real driver (the GPU machine)")
    ap.add_argument("--stub", action="store_true", help="blk_launch replaced by a function that does nothing "
                    "(built with cc): the package's own part alone")
    a = ap.parse_args()
    os.environ.setdefault("BLK_LIB", os.path.join(os.path.abspath(a.build), "libblk.so"))
    sys.path.insert(0, a.package or os.path.join(REPO, "python"))
    if a.gpu:
        import torch
        devices = torch.cuda.device_count()
    else:
        driver = os.path.join(os.path.abspath(a.build), "tests", "runtime", "fake", "libcuda.so.1")
        if not os.path.exists(driver):
            sys.exit(f"python_overhead: no stand-in driver at {driver} (make builds it)")
        os.environ["BLK_CUDA_DRIVER"] = driver
        sys.path.insert(0, os.path.join(REPO, "tests", "python"))
        import fake_torch
        torch = fake_torch.install(driver, devices=2)
        devices = 2
    import blk
    from blk import _runtime
    if a.stub:
        stub_launch(_runtime.lib())

    vadd = blk.load(os.path.join(REPO, "examples", "vector_add.tile")).vector_add
    x, y, out = (torch.empty(16, device="cuda") for _ in range(3))
    vadd[(1,)](x, y, out, 1, BLOCK=1024)  # compiles, makes the plan
    vadd[(1,)](x, y, out, 1, BLOCK=1024)  # the fast path: fills the plan's argument array
    # the C floor: blk_launch through ctypes (untyped, as the package calls
    # it) with an argument array and options built here once
    from blk import _ffi
    L = _runtime.lib()
    K = vadd._handle(_runtime.gpu_context(0))
    A = (_ffi.BlkArg * 4)()
    for arg, t in zip(A, (x, y, out)):
        arg.kind, arg.v.ptr = _ffi.ARG_PTR, t.data_ptr()
    A[3].kind, A[3].v.i = _ffi.ARG_INT, 1
    blk_const = (_ffi.BlkConst * 1)()
    blk_const[0].name, blk_const[0].i = b"BLOCK", 1024
    opts = _ffi.BlkLaunchOptions()
    opts.grid[:] = (1, 1, 1)
    opts.consts, opts.n_consts = ctypes.cast(blk_const, ctypes.POINTER(_ffi.BlkConst)), 1
    NA, PO, launch = 4, ctypes.byref(opts), L.launch_fast
    assert launch(K, A, NA, PO) == 0, L.last_error()

    launcher = vadd[(1,)]
    paths = [
        ("C floor (blk_launch, args built once)", lambda: launch(K, A, NA, PO), 1),
        ("kernel[(1,)](x, y, out, 1, BLOCK=1024)", lambda: vadd[(1,)](x, y, out, 1, BLOCK=1024), 1),
        ("launcher = kernel[(1,)] kept; launcher(...)", lambda: launcher(x, y, out, 1, BLOCK=1024), 1),
        ("kernel(x, y, out, 1, BLOCK=1024) (grid clause)", lambda: vadd(x, y, out, 1, BLOCK=1024), 1),
    ]
    # the same kernel in Triton's syntax through blk.triton (its launcher made at the second launch)
    import blk.triton as btriton
    tadd = btriton.from_triton(TRITON_ADD)
    for _ in range(2):
        tadd[(1,)](x, y, out, 1, BLOCK=1024)
    paths.append(("blk.triton: add_kernel[(1,)](x, y, out, 1, BLOCK=1024)",
                  lambda: tadd[(1,)](x, y, out, 1, BLOCK=1024), 1))
    tglu = btriton.from_triton(TRITON_GLU)
    for _ in range(2):
        tglu[(1,)](x, y, out, 16, 1.0, n=16, BLOCK=128, num_warps=4)
    paths.append(("blk.triton: glu[(1,)](x, y, out, 16, 1.0, n=16, BLOCK=128, num_warps=4)",
                  lambda: tglu[(1,)](x, y, out, 16, 1.0, n=16, BLOCK=128, num_warps=4), 1))
    if devices > 1:
        x1, y1, o1 = (torch.empty(16, device="cuda:1") for _ in range(3))
        vadd[(1,)](x1, y1, o1, 1, BLOCK=1024)

        def two_devices():
            vadd[(1,)](x, y, out, 1, BLOCK=1024)
            vadd[(1,)](x1, y1, o1, 1, BLOCK=1024)
        paths += [("kernel[(1,)](...) on cuda:1", lambda: vadd[(1,)](x1, y1, o1, 1, BLOCK=1024), 1),
                  ("cuda:0 and cuda:1 by turns (a launch)", two_devices, 2)]
    if a.gpu:
        paths += gpu_paths(torch, x, y, out)
    print(f"python {sys.version.split()[0]}, libblk {blk.version()}, "
          f"{'the real driver and torch ' + torch.__version__ if a.gpu else 'stand-in driver'}; best of {a.reps} "
          f"rounds of {a.n} launches, ns a launch")
    times = best_ns(paths, a.n, a.reps)
    floor = times[0]
    for (name, _, _), ns in zip(paths, times):
        extra = f"   Python's part {ns - floor:6.0f} ns" if ns is not floor else ""
        print(f"  {name:72s} {ns:8.0f} ns{extra}")
    print("  (the grid clause: blk_launch also works out the grid, in C)")
    if a.gpu:
        # the same with the GPU's queue kept short: a synchronize (not
        # timed) every 256 launches, so that no launch waits for room in it
        print("  with a synchronize (not timed) every 256 launches:")
        for name, fn, calls in [p for p in paths if not p[0].startswith("  ")]:
            if calls == 1:
                print(f"  {name:72s} {batched_ns(torch, fn, a.n, a.reps):8.0f} ns")
        torch.cuda.synchronize()


def stub_launch(L):
    """Every launcher made from now on calls a C function that returns 0 in
    place of blk_launch (the launchers in C call it through
    L.launch_address, those in Python through L.launch_fast)."""
    import subprocess
    import tempfile
    d = tempfile.mkdtemp(prefix="blk-stub-")
    src, lib = os.path.join(d, "stub.c"), os.path.join(d, "stub.so")
    with open(src, "w") as f:
        f.write("int stub_launch(void *k, void *a, int n, void *o) { (void)k; (void)a; (void)n; (void)o; "
                "return 0; }\n")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
    fn = ctypes.PyDLL(lib)["stub_launch"]
    fn.restype = ctypes.c_int
    L.launch_fast, L.launch_address = fn, ctypes.cast(fn, ctypes.c_void_p).value
    L.stub_keep = fn


def batched_ns(torch, fn, n, reps, batch=256):
    """ns a call of fn, the best of reps rounds of n calls in batches, a
    synchronize between batches outside the timed part."""
    best = float("inf")
    for _ in range(reps):
        total = 0
        for _ in range(max(1, n // batch)):
            torch.cuda.synchronize()
            t = time.thread_time_ns()
            for _ in range(batch // 8):
                fn(); fn(); fn(); fn(); fn(); fn(); fn(); fn()  # noqa: E702
            total += time.thread_time_ns() - t
        best = min(best, total / (max(1, n // batch) * (batch // 8 * 8)))
    return best


def gpu_paths(torch, x, y, out):
    """The torch calls a launcher makes, each alone (ns a call), and
    Triton's launch of the same kernel where Triton is."""
    getstream = torch._C._cuda_getCurrentRawStream
    paths = [("  torch: x.dtype", lambda: x.dtype, 1),
             ("  torch: x.get_device()", lambda: x.get_device(), 1),
             ("  torch: x.is_contiguous()", lambda: x.is_contiguous(), 1),
             ("  torch: x.data_ptr()", lambda: x.data_ptr(), 1),
             ("  torch: isinstance(x, torch.Tensor)", lambda: isinstance(x, torch.Tensor), 1),
             ("  torch: x.is_cuda", lambda: x.is_cuda, 1),
             ("  torch: x.device", lambda: x.device, 1),
             ("  torch: _cuda_getCurrentRawStream(0)", lambda: getstream(0), 1),
             ("  torch.add(x1, y1, out=o1)", lambda: torch.add(x[:1], y[:1], out=out[:1]), 1)]
    try:
        sys.path.insert(0, os.path.join(REPO, "bench"))
        import triton_kernels as tk
        tk._add[(1,)](x, y, out, 1, BLOCK=1024)
        paths.append(("Triton: _add[(1,)](x, y, out, 1, BLOCK=1024)",
                      lambda: tk._add[(1,)](x, y, out, 1, BLOCK=1024), 1))
    except Exception as e:  # no Triton here: its row is left out
        print(f"python_overhead: Triton's launch not timed ({type(e).__name__}: {e})")
    return paths

if __name__ == "__main__":
    main()
