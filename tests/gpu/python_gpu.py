#!/usr/bin/env python3
"""python_gpu.py: the blk package with torch on a GPU (tests/gpu/python.sh runs it).

  - launches on CUDA tensors: results against torch, on torch's current stream
    (a side stream too), a float tensor for *i32 / a CPU tensor / a
    non-contiguous tensor refused naming the parameter;
  - kernel.compile(): PTX, shared bytes, phase times;
  - a blk custom op (blk.torch_op, with its fake function) inside
    torch.compile(fullgraph=True), results against torch;
  - launches captured in a CUDA graph (torch.cuda.graph) and replayed on new
    inputs copied into the captured tensors;
  - launch overhead of kernel[grid](...) (printed; the bench row compares with Triton).
Prints a line per case and last "N passed, N failed".
"""

import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import blk
except ImportError:
    sys.path.insert(0, os.path.join(REPO, "python"))
    import blk
import torch



sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from harness import case, finish  # noqa: E402


def raises(fn, param, *words):
    try:
        fn()
    except blk.Error as e:
        assert e.param == param and all(w in str(e) for w in words), f"param {e.param!r}: {e}"
        return
    raise AssertionError("no blk.Error")


m = blk.load(os.path.join(REPO, "examples", "vector_add.tile"))
vadd = m.vector_add
dev = "cuda"


@case("vector_add on CUDA tensors, on the current stream and on a side stream")
def _():
    n = 1_000_003
    x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
    out = torch.full_like(x, float("nan"))
    vadd[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    s = torch.cuda.Stream()
    out2 = torch.full_like(x, float("nan"))
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vadd(x, y, out2, n)
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(out2, x + y, rtol=0, atol=0)


@case("bad calls on the GPU: f32 for *i32, a CPU tensor, non-contiguous, wrong count")
def _():
    k = blk.load(source="kernel cp(x: *i32, y: *i32, n: i32) grid(1) "
                        "{ let o = arange(0, 16); store(y + o, load(x + o, mask = o < n), mask = o < n); }").cp
    xi, yi = torch.arange(16, dtype=torch.int32, device=dev), torch.zeros(16, dtype=torch.int32, device=dev)
    raises(lambda: k(xi.float(), yi, 16), "x", "float32")
    raises(lambda: k(xi, yi.cpu(), 16), "y", "CPU tensor")
    raises(lambda: k(xi, torch.zeros(32, dtype=torch.int32, device=dev)[::2], 16), "y", "not contiguous",
           "y.contiguous()", "blk.strided(y)")
    raises(lambda: k(xi, yi), "n", "given 2")
    k(xi, yi, 16)
    assert torch.equal(xi, yi)


@case("issue 33: big[:, :C] with a row_stride three tensors share is refused; blk.strided passes a view")
def _():
    k = blk.load(source="""
kernel add_rows(x: *f32, y: *f32, out: *f32, row_stride: i32, C: i32) grid(4) {
    let c = arange(0, 8);
    let at = program_id(0) * row_stride + c;
    store(out + at, load(x + at, mask = c < C) + load(y + at, mask = c < C), mask = c < C);
}""").add_rows
    big = torch.randn(4, 16, device=dev)
    y, out = torch.randn(4, 6, device=dev), torch.zeros(4, 6, device=dev)
    for _ in range(2):  # the checked path, then the launcher's
        raises(lambda: k(big[:, :6], y, out, out.stride(0), 6), "x", "not contiguous", "blk.strided(x)")
    assert not out.any()
    k(big[:, :6].contiguous(), y, out, out.stride(0), 6)
    torch.testing.assert_close(out, big[:, :6] + y, rtol=0, atol=0)
    col = blk.load(source="""
kernel col(x: *f32, out: *f32, stride: i32) grid(1) {
    let o = arange(0, 4);
    store(out + o, load(x + o * stride));
}""").col
    o4 = torch.zeros(4, device=dev)
    for _ in range(3):
        col(blk.strided(big[:, 3]), o4, big.stride(0))
    torch.testing.assert_close(o4, big[:, 3], rtol=0, atol=0)


@case("kernel.compile(): PTX, shared bytes, phase times")
def _():
    info = m.vector_add.compile(BLOCK=256)
    assert info.ptx and ".entry" in info.ptx and info.backend == "gpu", info
    return repr(info)


@case("a blk custom op in torch.compile(fullgraph=True)")
def _():
    sm = blk.load(os.path.join(REPO, "examples", "softmax.tile")).softmax

    def fake(x):
        return torch.empty_like(x)

    @blk.torch_op("blktest::softmax", fake=fake)
    def blk_softmax(x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        sm[(rows,)](x, out, cols, cols, rows, cols, BLOCK=blk.next_power_of_2(cols))
        return out

    def f(x):
        return blk_softmax(x * 2.0) + 1.0

    cf = torch.compile(f, fullgraph=True)
    x = torch.randn(300, 700, device=dev)
    got = cf(x)
    torch.testing.assert_close(got, torch.softmax(x * 2.0, dim=1) + 1.0, rtol=1e-5, atol=1e-6)
    x2 = torch.randn(300, 700, device=dev)
    torch.testing.assert_close(cf(x2), torch.softmax(x2 * 2.0, dim=1) + 1.0, rtol=1e-5, atol=1e-6)


@case("launches captured in a CUDA graph and replayed")
def _():
    n = 4096
    x, y, out = torch.randn(n, device=dev), torch.randn(n, device=dev), torch.zeros(n, device=dev)
    relu = blk.load(os.path.join(REPO, "examples", "relu.tile")).relu
    r = torch.empty_like(x)
    # warm up on a side stream (compiles; nothing of that may happen during capture)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vadd[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        relu(out, r, n)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vadd[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        relu(out, r, n)
    for _ in range(3):
        x.copy_(torch.randn(n, device=dev))
        y.copy_(torch.randn(n, device=dev))
        r.zero_()
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(r, (x + y).clamp(min=0), rtol=0, atol=0)


@case("launch overhead of kernel[grid](...) (1000 launches, then a synchronize)")
def _():
    x, y, out = (torch.randn(16, device=dev) for _ in range(3))
    g = (1,)
    for _ in range(200):
        vadd[g](x, y, out, 1, BLOCK=1024)
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(1000):
            vadd[g](x, y, out, 1, BLOCK=1024)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / 1000)
    assert best < 20e-6, f"{best * 1e6:.2f} µs a launch"
    return f"{best * 1e6:.2f} µs a launch (target 8 µs)"


finish()
