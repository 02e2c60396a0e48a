"""tests/gpu/attention_branches.py: attention with runtime branches inside
its key loop (tests/gpu/attention_loop.tile, the one-loop form of
stdlib/nn/attention.tile's attention_fwd), and that kernel itself, on the GPU against torch
in float32.

A branch between the scores' wgmma and the P V wgmma once made ptxas give Q's
registers (the scores' A operand, live through the loop) to P: every
iteration after the first multiplied P by K. Each variant here adds a branch
that changes nothing (s + 0.0, l_i + 0.0), taken on some iterations, all or
none, so every result must equal the plain kernel's. Prints a line per case
and last "N passed, N failed"; skips in one line without torch or a GPU."""
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
try:
    import torch
    if not torch.cuda.is_available():
        raise ImportError("torch sees no GPU")
except ImportError as e:
    print(f"SKIP tests/gpu/attention_branches.py: {e}")
    print("0 passed, 0 failed")
    sys.exit(0)
import blk

SRC = open(os.path.join(ROOT, "tests", "gpu", "attention_loop.tile")).read()
EXAMPLE = open(os.path.join(ROOT, "stdlib", "nn", "attention.tile")).read()
BEFORE = "        s = where(n_mask[None, :], s, -inf(f32));\n"
AFTER = "        m_i = m_new;\n"


def variant(before="", after=""):
    assert BEFORE in SRC and AFTER in SRC
    return SRC.replace(BEFORE, before + BEFORE).replace(AFTER, AFTER + after)


def branch(cond, stmt):
    return f"        if {cond} {{\n            {stmt}\n        }}\n"


VARIANTS = {
    "stdlib/nn/attention.tile": EXAMPLE,
    "plain": variant(),
    "if on s, last slices": variant(branch("start_n >= N_CTX - BLOCK_N", "s = s + 0.0;")),
    "if on s, every slice": variant(branch("start_n >= 0", "s = s + 0.0;")),
    "if on s, never": variant(branch("start_n < 0", "s = s + 0.0;")),
    "if on l_i before P V": variant(branch("start_n >= N_CTX - BLOCK_N", "l_i = l_i + 0.0;")),
    "if on l_i after P V": variant("", branch("start_n >= N_CTX - BLOCK_N", "l_i = l_i + 0.0;")),
}
# (Z, H, N_CTX, HEAD_DIM, BLOCK_M, BLOCK_N, num_warps, num_stages)
CONFIGS = [(1, 2, 200, 64, 128, 64, 4, 3), (1, 2, 256, 64, 128, 64, 4, 1),
           (1, 2, 1024, 128, 128, 128, 8, 3), (2, 2, 333, 64, 128, 64, 8, 3)]


def reference(q, k, v, causal, scale):
    s = scale * (q.float() @ k.float().transpose(-1, -2))
    n = q.shape[2]
    if causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=s.device).tril(), -math.inf)
    return s.softmax(-1) @ v.float(), s.logsumexp(-1)


passed = failed = 0
for name, src in VARIANTS.items():
    kern = blk.load(source=src, name="attention_branches.tile").attention_fwd
    for Z, H, N, D, BM, BN, nw, ns in CONFIGS:
        for causal in (False, True):
            torch.manual_seed(N + D)
            q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.empty_like(q)
            lse = torch.empty(Z * H, N, device="cuda", dtype=torch.float32)
            scale = 1 / math.sqrt(D)
            st = [s for t in (q, k, v, o) for s in t.stride()]
            what = f"{name}: N={N} d{D} {BM}x{BN} w{nw} s{ns}{' causal' if causal else ''}"
            try:
                kern[(math.ceil(N / BM), Z * H)](q, k, v, o, lse, *st, Z, H, N, scale, HEAD_DIM=D, BLOCK_M=BM,
                                                 BLOCK_N=BN, CAUSAL=causal, num_warps=nw, num_stages=ns)
                torch.cuda.synchronize()
            except blk.Error as e:
                print(f"FAIL {what}: {str(e).splitlines()[0]}")
                failed += 1
                continue
            want_o, want_lse = reference(q, k, v, causal, scale)
            bad_l = ((lse.view(Z, H, N) - want_lse).abs() > 1e-3 * (1 + want_lse.abs())).sum().item()
            bad_o = ((o.float() - want_o).abs() > 1e-2 * (1 + want_o.abs())).sum().item()
            if bad_l or bad_o:
                print(f"FAIL {what}: {bad_l} of {lse.numel()} lse and {bad_o} of {o.numel()} o wrong")
                failed += 1
            else:
                print(f"ok   {what}")
                passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
