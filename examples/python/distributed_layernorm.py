"""A blk layernorm in a small model trained data-parallel with torch.distributed.

    torchrun --nproc_per_node=N examples/python/distributed_layernorm.py
    python3 examples/python/distributed_layernorm.py          (one process: N = 1)

The model: Linear -> LayerNorm -> ReLU -> Linear, its LayerNorm the blk
kernels of examples/layernorm.tile (forward) and layernorm_backward.tile
(dx, then dw and db in two stages) inside a torch.autograd.Function, on f16
activations with f32 statistics. Every rank runs on its own GPU
(LOCAL_RANK: blk launches on the device of the tensors it is given),
trains on its shard of each batch, and DistributedDataParallel averages the
gradients over NCCL. After a few SGD steps the weights must equal those of
the same model trained on the whole batches on one GPU (rank 0 runs that
too): the gradient of a mean over the batch is the mean of the shards'
gradients. Checked as well: the blk layernorm against torch's, forward and
backward, on every rank, and the weights equal on every rank.

NCCL's NVLink multicast (NVLS) is turned off (NCCL_NVLS_ENABLE=0) unless
the environment says otherwise. Without torch, CUDA or NCCL it prints one
line saying so and exits 0.
"""

import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
try:
    import blk
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(EXAMPLES), "python"))
    import blk

try:
    import torch
    import torch.distributed as dist
    why = None
    if os.environ.get("BLK_BACKEND", "").lower() in ("interpreter", "interp"):
        why = "BLK_BACKEND is the interpreter"
    elif not torch.cuda.is_available():
        why = "torch sees no GPU"
    elif not dist.is_available() or not dist.is_nccl_available():
        why = "torch has no NCCL"
except ImportError:
    why = "no torch"
if why:
    print(f"distributed_layernorm: skipped: needs torch with CUDA and NCCL ({why})")
    sys.exit(0)

fwd = blk.load(os.path.join(EXAMPLES, "layernorm.tile")).layernorm_fwd
bwd = blk.load(os.path.join(EXAMPLES, "layernorm_backward.tile"))
EPS = 1e-5


class BlkLayerNorm(torch.autograd.Function):
    """y = layernorm(x) * w + b over the last axis of a 2-D f16 x (w, b: f16)."""

    @staticmethod
    def forward(ctx, x, w, b):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(rows, device=x.device, dtype=torch.float32)
        rstd = torch.empty_like(mean)
        fwd[(rows,)](x, y, w, b, mean, rstd, cols, cols, rows, cols, EPS, BLOCK=256)
        ctx.save_for_backward(x, w, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, mean, rstd = ctx.saved_tensors
        dy = dy.contiguous()
        rows, cols = x.shape
        n_progs = min(rows, 64)
        dx = torch.empty_like(x)
        part_w = torch.empty((n_progs, cols), device=x.device, dtype=torch.float32)
        part_b = torch.empty_like(part_w)
        dw, db = torch.empty_like(w), torch.empty_like(w)
        bwd.layernorm_bwd_dx[(n_progs,)](dy, x, w, mean, rstd, dx, part_w, part_b, cols, rows, cols, n_progs,
                                        BLOCK=blk.next_power_of_2(cols))
        bwd.layernorm_bwd_dwdb(part_w, part_b, dw, db, n_progs, cols)
        return dx, dw, db


class LayerNorm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(d))

    def forward(self, h):
        return BlkLayerNorm.apply(h.half(), self.weight.half(), self.bias.half()).float()


def model(device, d_in=64, d=96, d_out=16):
    torch.manual_seed(1234)  # the same weights in every rank and in the one-GPU run
    return torch.nn.Sequential(torch.nn.Linear(d_in, d), LayerNorm(d), torch.nn.ReLU(),
                               torch.nn.Linear(d, d_out)).to(device)


def batches(device, steps=4, batch=96, d_in=64, d_out=16):
    g = torch.Generator().manual_seed(99)
    return [(torch.randn(batch, d_in, generator=g).to(device), torch.randn(batch, d_out, generator=g).to(device))
            for _ in range(steps)]


def train(net, data, rank=0, world=1):
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for x, t in data:
        shard = x.shape[0] // world
        xs, ts = x[rank * shard:(rank + 1) * shard], t[rank * shard:(rank + 1) * shard]
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(xs), ts)
        loss.backward()
        opt.step()
    return loss.item()


def check_layernorm(device):
    """The blk layernorm against torch's in float64, forward and backward."""
    x = torch.randn(37, 96, device=device, dtype=torch.float64)
    w, b = 1 + 0.1 * torch.randn(96, device=device, dtype=torch.float64), 0.1 * torch.randn(96, device=device,
                                                                                           dtype=torch.float64)
    dy = torch.randn(37, 96, device=device, dtype=torch.float64)
    x16, w16, b16 = (t.half().requires_grad_() for t in (x, w, b))
    y = BlkLayerNorm.apply(x16, w16, b16)
    y.backward(dy.half())
    xr, wr, br = (t.half().double().requires_grad_() for t in (x, w, b))
    yr = torch.nn.functional.layer_norm(xr, (96,), wr, br, EPS)
    yr.backward(dy.half().double())
    errs = {}
    for name, got, want in [("y", y, yr), ("dx", x16.grad, xr.grad), ("dw", w16.grad, wr.grad),
                            ("db", b16.grad, br.grad)]:
        errs[name] = ((got.double() - want).abs().max() / want.abs().max()).item()
    return errs


def main():
    under_torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    if under_torchrun:
        dist.init_process_group("nccl", device_id=device)
    else:  # one process: a group of one, NCCL all the same
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1,
                                device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    failures = 0

    errs = check_layernorm(device)
    bad = {k: v for k, v in errs.items() if not v <= 2e-2}
    failures += bool(bad)
    print(f"[rank {rank} on {torch.cuda.get_device_name(device)} (cuda:{local})] blk layernorm vs torch: "
          + ", ".join(f"{k} {v:.2g}" for k, v in errs.items()) + (" FAIL" if bad else " ok"), flush=True)

    net = torch.nn.parallel.DistributedDataParallel(model(device), device_ids=[local])
    data = batches(device)
    loss = train(net, data, rank, world)
    flat = torch.cat([p.detach().reshape(-1) for p in net.module.parameters()])

    # the same on every rank
    hi, lo = flat.clone(), flat.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    spread = (hi - lo).abs().max().item()
    if spread > 1e-6:
        failures += 1
        print(f"FAIL rank {rank}: weights differ between ranks by {spread:.3g}")

    if rank == 0:
        one = model(device)
        ref_loss = train(one, data)
        ref = torch.cat([p.detach().reshape(-1) for p in one.parameters()])
        err = ((flat - ref).abs().max() / ref.abs().max()).item()
        ok = err <= 2e-3
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {world} rank(s) over NCCL vs one GPU: weights max rel err {err:.3g} "
              f"(tol 2e-3); last loss {ref_loss:.4f} on one GPU, {loss:.4f} on rank 0's shard", flush=True)
    total = torch.tensor([failures], device=device)
    dist.all_reduce(total)
    dist.destroy_process_group()
    if total.item():
        if rank == 0:
            print(f"distributed_layernorm: {int(total.item())} check(s) FAILED")
        sys.exit(1)
    if rank == 0:
        print(f"distributed_layernorm: OK, {world} rank(s) over NCCL, checked against one GPU")


if __name__ == "__main__":
    main()
