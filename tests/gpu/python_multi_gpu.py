#!/usr/bin/env python3
"""python_multi_gpu.py: the blk package with torch on several GPUs (tests/gpu/python.sh runs it).

  - tensors on cuda:1 launch on device 1 (torch's current device left at 0),
    results against torch; devices by turns from one thread, and one thread
    a device;
  - torch's current stream of the tensors' device (a side stream on cuda:1);
  - arguments on two devices: a blk.Error naming both;
  - examples/python/distributed_layernorm.py under torchrun with one process
    a GPU (NCCL, NCCL_NVLS_ENABLE=0), checked there against one GPU.
With fewer than 2 GPUs it says so in one line and prints "0 passed, 0 failed".
Prints a line per case and last "N passed, N failed".
"""

import os
import subprocess
import sys
import threading

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import blk
except ImportError:
    sys.path.insert(0, os.path.join(REPO, "python"))
    import blk
import torch

if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    print(f"SKIP python_multi_gpu.py: {n} GPU(s) here, 2 needed")
    print("0 passed, 0 failed")
    sys.exit(0)

NDEV = torch.cuda.device_count()


sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from harness import case, finish  # noqa: E402


vadd = blk.load(os.path.join(REPO, "examples", "vector_add.tile")).vector_add
softmax = blk.load(os.path.join(REPO, "examples", "softmax.tile")).softmax


def add_on(dev, n):
    x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
    out = torch.full_like(x, float("nan"))
    vadd[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out, x + y


@case("tensors on cuda:1 launch on device 1; torch's current device stays cuda:0")
def _():
    torch.cuda.set_device(0)
    for n in (1, 1000, 1_000_003):
        out, want = add_on("cuda:1", n)
        torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert torch.cuda.current_device() == 0
    x = torch.randn(300, 700, device="cuda:1")
    out = torch.empty_like(x)
    softmax[(300,)](x, out, 700, 700, 300, 700, BLOCK=1024)
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@case("every device by turns from one thread (each launch on its tensors' device)")
def _():
    for rnd in range(3):
        for d in range(NDEV):
            out, want = add_on(f"cuda:{d}", 4096 + rnd)
            torch.testing.assert_close(out, want, rtol=0, atol=0)
    return f"{NDEV} devices"


@case("one thread a device, launching at once (as nn.DataParallel's replicas do)")
def _():
    errors = []

    def work(d):
        try:
            torch.cuda.set_device(d)
            for i in range(50):
                out, want = add_on(f"cuda:{d}", 10_000 + i)
                torch.testing.assert_close(out, want, rtol=0, atol=0)
        except Exception as e:  # noqa: BLE001
            errors.append(f"cuda:{d}: {e!r}")
    ts = [threading.Thread(target=work, args=(d,)) for d in range(NDEV)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


@case("torch's current stream of the tensors' device: a side stream on cuda:1")
def _():
    n = 1 << 20
    x, y = torch.randn(n, device="cuda:1"), torch.randn(n, device="cuda:1")
    out = torch.full_like(x, float("nan"))
    with torch.cuda.device(1):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            vadd(x, y, out, n)
        torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@case("arguments on two devices: a blk.Error naming both")
def _():
    x0, y1, o1 = torch.randn(16, device="cuda:0"), torch.randn(16, device="cuda:1"), torch.zeros(16, device="cuda:1")
    vadd(y1, y1, o1, 16)  # a launcher for cuda:1 first: the mixed call reaches it
    try:
        vadd(x0, y1, o1, 16)
    except blk.Error as e:
        msg = str(e)
        assert "'x'" in msg and "'y'" in msg and "cuda:0" in msg and "cuda:1" in msg, msg
        assert e.param in ("x", "y"), e.param
        return msg
    raise AssertionError("no blk.Error")


@case("examples/python/distributed_layernorm.py under torchrun, one process a GPU (NCCL)")
def _():
    nproc = min(NDEV, 4)
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONPATH=os.path.join(REPO, "python") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        f"--nproc_per_node={nproc}", os.path.join(REPO, "examples", "python",
                                                                   "distributed_layernorm.py")],
                       capture_output=True, text=True, env=env, timeout=540)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "distributed_layernorm: OK" in out, out[-3000:]
    return [line for line in out.splitlines() if "vs one GPU" in line][0].strip()


finish()
