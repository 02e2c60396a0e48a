#!/usr/bin/env python3
"""rows_kernels.py: issue 14's benchmark rows of common kernels, blk against Triton and torch.

    bench/run --only issue14                 (on the GPU; or one row: --only rmsnorm)
    python3 bench/rows_kernels.py            (no GPU, no torch: every blk kernel of these rows
                                              on the interpreter, small sizes, against references
                                              computed here in Python)
    python3 bench/rows_kernels.py --triton   (no GPU, no torch, pip install triton: compiles every
                                              Triton peer and config for sm_90)

bench.py loads this file (GROUP, ROWS). Each row runs one computation three ways on the
same GPU and stream: the blk kernel (bench/kernels/*.tile, or the examples' backward
kernels) launched through blkffi; a Triton kernel of the same algorithm, written below for
the bench; and torch's operation. Every output is checked against a float64 torch
reference before anything is timed (bench.measure). Both sides try the same configs
(bench.tune) and keep their fastest.

| key | computation | blk kernel |
|---|---|---|
| rmsnorm | y = x * rsqrt(mean(x^2) + eps) * w, bf16 8192x8192, f32 sums, rstd saved | kernels/rmsnorm.tile |
| bias_gelu | gelu_tanh(x + bias[offs % n_cols]), bf16 8192^2 as a flat vector | kernels/bias_gelu.tile |
| cross_entropy | loss[r] = logsumexp(x[r]) - x[r, t[r]], bf16 logits 4096x32768, one pass | kernels/cross_entropy.tile |
| embedding | out[t] = table[ids[t]], 65536 tokens x 1024 bf16 from a 32768-row table | kernels/embedding.tile |
| rotary | rotate-half RoPE, bf16 (4*4096) x 32 heads x 128, f32 cos/sin (4096 x 64) | kernels/rotary.tile |
| layernorm_bwd | dx, dw, db of layer norm, f16 4096x8192, dw/db by a two-stage reduction | examples/layernorm_backward.tile |
| smax_bwd | dx = y * (dy - sum(dy * y)), f32 4096x4096 | examples/softmax_backward.tile |

The softmax backward row's key is smax_bwd: a key containing "softmax" would join the rows
that `--only softmax` selects (the three forward rows, which selftest.py holds it to).
Triton is imported here under try: this file imports without it (bench/selftest.py and
the interpreter check below run where there is no triton or torch).
"""

import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import blkffi  # noqa: E402
import blk_calls as bc  # noqa: E402

GROUP = "issue14"

try:
    import triton
    import triton.language as tl
except ImportError:  # the rows need it on the GPU; the interpreter check does not
    triton = None


# ---- blk launches (shared by the rows and the interpreter check) ----------------------

def _k(ctx, file, name, dtypes):
    """The kernel, its pointer parameters checked against `dtypes` (blk names) once."""
    k = bc.bench_kernel(ctx, file, name) if not file.startswith("examples/") else bc.kernel(ctx, file[9:], name)
    blkffi.check_pointer_types(k, [None if d is None else _TORCH_NAME[d] for d in dtypes])
    return k


# blk type -> a torch dtype name that check_pointer_types maps back to it
_TORCH_NAME = {v: k for k, v in blkffi.TORCH_DTYPES.items()}


def blk_rmsnorm(ctx, x, y, w, rstd, M, N, eps, BLOCK, num_warps, stream=0):
    k = _k(ctx, "rmsnorm", "rmsnorm", ["bf16", "bf16", "bf16", "f32"])
    return k.prepare([x, y, w, rstd, N, N, M, N, eps], consts={"BLOCK": BLOCK}, num_warps=num_warps, stream=stream)


def blk_bias_gelu(ctx, x, bias, out, n, n_cols, BLOCK, num_warps, stream=0):
    k = _k(ctx, "bias_gelu", "bias_gelu", ["bf16", "bf16", "bf16"])
    # the default options: products feeding sums are fmas (fp_fusion, on by default), as Triton's side contracts
    return k.prepare([x, bias, out, n, n_cols], consts={"BLOCK": BLOCK}, num_warps=num_warps, stream=stream)


def blk_cross_entropy(ctx, logits, target, loss, M, N, BLOCK, num_warps, stream=0):
    k = _k(ctx, "cross_entropy", "cross_entropy_fwd", ["bf16", "i64", "f32"])
    return k.prepare([logits, target, loss, N, M, N], consts={"BLOCK": BLOCK}, num_warps=num_warps, stream=stream)


def blk_embedding(ctx, ids, table, out, T, D, BLOCK_T, BLOCK_D, num_warps, stream=0):
    k = _k(ctx, "embedding", "embedding", ["i64", "bf16", "bf16"])
    return k.prepare([ids, table, out, T, D], consts={"BLOCK_T": BLOCK_T, "BLOCK_D": BLOCK_D},
                     num_warps=num_warps, stream=stream)


def blk_rotary(ctx, x, cos, sin, out, T, H, D, seq_len, BLOCK_H, num_warps, stream=0):
    """x, out: T x H x D contiguous; cos, sin: seq_len x D/2 f32."""
    k = _k(ctx, "rotary", "rotary", ["bf16", "f32", "f32", "bf16"])
    return k.prepare([x, cos, sin, out, H * D, D, T, seq_len, H], consts={"HALF": D // 2, "BLOCK_H": BLOCK_H},
                     num_warps=num_warps, stream=stream)


class TwoLaunches:
    """Two launches run as one step (a row's blk side that needs two kernels)."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self):
        self.first()
        self.second()


def blk_layernorm_bwd(ctx, dy, x, w, mean, rstd, dx, pdw, pdb, dw, db, M, N, n_progs, BLOCK, num_warps,
                      BLOCK_M=32, BLOCK_N=64, warps2=4, stream=0):
    """examples/layernorm_backward.tile: stage 1 (dx and n_progs partial rows of dw, db in
    pdw, pdb: n_progs x N f32), then stage 2 (the column sums into dw, db)."""
    k1 = _k(ctx, "examples/layernorm_backward", "layernorm_bwd_dx",
            ["f16", "f16", "f16", "f32", "f32", "f16", "f32", "f32"])
    k2 = _k(ctx, "examples/layernorm_backward", "layernorm_bwd_dwdb", ["f32", "f32", "f16", "f16"])
    first = k1.prepare([dy, x, w, mean, rstd, dx, pdw, pdb, N, M, N, n_progs], consts={"BLOCK": BLOCK},
                       num_warps=num_warps, stream=stream)
    second = k2.prepare([pdw, pdb, dw, db, n_progs, N], consts={"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N},
                        num_warps=warps2, stream=stream)
    return TwoLaunches(first, second)


def blk_softmax_bwd(ctx, y, dy, dx, M, N, BLOCK, num_warps, stream=0):
    k = _k(ctx, "examples/softmax_backward", "softmax_bwd", ["f32", "f32", "f32"])
    return k.prepare([y, dy, dx, N, N, M, N], consts={"BLOCK": BLOCK}, num_warps=num_warps, stream=stream)


# ---- the Triton peers: the same algorithms -------------------------------------------

if triton is not None:
    @triton.jit
    def _rmsnorm_tt(x_ptr, y_ptr, w_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        xv = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.rsqrt(tl.sum(xv * xv, axis=0) / n_cols + eps)
        tl.store(rstd_ptr + row, r)
        wv = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * y_row_stride + cols, (xv * r * wv).to(tl.bfloat16), mask=mask)

    @triton.jit
    def _bias_gelu_tt(x_ptr, bias_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = (tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
             + tl.load(bias_ptr + offs % n_cols, mask=mask, other=0.0).to(tl.float32))
        u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
        tl.store(out_ptr + offs, (v / (1.0 + tl.exp(-2.0 * u))).to(tl.bfloat16), mask=mask)

    @triton.jit
    def _cross_entropy_tt(logits_ptr, target_ptr, loss_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        base = logits_ptr + row * row_stride
        m = tl.full((), float("-inf"), tl.float32)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(v, axis=0))
            acc = acc * tl.exp(m - m_new) + tl.exp(v - m_new)
            m = m_new
        lse = m + tl.log(tl.sum(acc, axis=0))
        t = tl.load(target_ptr + row)
        tl.store(loss_ptr + row, lse - tl.load(base + t).to(tl.float32))

    @triton.jit
    def _embedding_tt(ids_ptr, table_ptr, out_ptr, n_tokens, dim, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
        toks = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
        cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
        tmask = toks < n_tokens
        idx = tl.load(ids_ptr + toks, mask=tmask, other=0)
        mask = tmask[:, None] & (cols < dim)[None, :]
        v = tl.load(table_ptr + idx[:, None] * dim + cols[None, :], mask=mask)
        tl.store(out_ptr + toks.to(tl.int64)[:, None] * dim + cols[None, :], v, mask=mask)

    @triton.jit
    def _rotary_tt(x_ptr, cos_ptr, sin_ptr, out_ptr, stride_t, stride_h, seq_len, n_heads, HALF: tl.constexpr,
                   BLOCK_H: tl.constexpr):
        t = tl.program_id(0)
        pos = (t % seq_len).to(tl.int64) * HALF
        heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
        d = tl.arange(0, HALF)
        mask = (heads < n_heads)[:, None]
        at = t.to(tl.int64) * stride_t + heads[:, None] * stride_h + d[None, :]
        x1 = tl.load(x_ptr + at, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x_ptr + at + HALF, mask=mask, other=0.0).to(tl.float32)
        c = tl.load(cos_ptr + pos + d)[None, :]
        s = tl.load(sin_ptr + pos + d)[None, :]
        tl.store(out_ptr + at, (x1 * c - x2 * s).to(tl.bfloat16), mask=mask)
        tl.store(out_ptr + at + HALF, (x2 * c + x1 * s).to(tl.bfloat16), mask=mask)

    @triton.jit
    def _layernorm_bwd_dx_tt(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, pdw_ptr, pdb_ptr, row_stride,
                             n_rows, n_cols, n_progs, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        wv = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dw_acc = tl.zeros((BLOCK,), dtype=tl.float32)
        db_acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for r in range(pid, n_rows, n_progs):
            off = r.to(tl.int64) * row_stride
            xv = tl.load(x_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            dyv = tl.load(dy_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            rs = tl.load(rstd_ptr + r)
            xhat = tl.where(mask, (xv - tl.load(mean_ptr + r)) * rs, 0.0)
            g = wv * dyv
            c1 = tl.sum(xhat * g, axis=0) / n_cols
            c2 = tl.sum(g, axis=0) / n_cols
            tl.store(dx_ptr + off + cols, ((g - (xhat * c1 + c2)) * rs).to(tl.float16), mask=mask)
            dw_acc += dyv * xhat
            db_acc += dyv
        prow = pid.to(tl.int64) * n_cols
        tl.store(pdw_ptr + prow + cols, dw_acc, mask=mask)
        tl.store(pdb_ptr + prow + cols, db_acc, mask=mask)

    @triton.jit
    def _layernorm_bwd_dwdb_tt(pdw_ptr, pdb_ptr, dw_ptr, db_ptr, n_progs, n_cols, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr):
        cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        col_mask = cols < n_cols
        acc_w = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc_b = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for start in range(0, n_progs, BLOCK_M):
            rows = start + tl.arange(0, BLOCK_M)
            mask = (rows < n_progs)[:, None] & col_mask[None, :]
            offs = rows.to(tl.int64)[:, None] * n_cols + cols[None, :]
            acc_w += tl.load(pdw_ptr + offs, mask=mask, other=0.0)
            acc_b += tl.load(pdb_ptr + offs, mask=mask, other=0.0)
        tl.store(dw_ptr + cols, tl.sum(acc_w, axis=0).to(tl.float16), mask=col_mask)
        tl.store(db_ptr + cols, tl.sum(acc_b, axis=0).to(tl.float16), mask=col_mask)

    @triton.jit
    def _softmax_bwd_tt(y_ptr, dy_ptr, dx_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        yv = tl.load(y_ptr + row * in_row_stride + cols, mask=mask, other=0.0)
        g = tl.load(dy_ptr + row * in_row_stride + cols, mask=mask, other=0.0)
        s = tl.sum(yv * g, axis=0)
        tl.store(dx_ptr + row * out_row_stride + cols, yv * (g - s), mask=mask)


def _cdiv(a, b):
    return (a + b - 1) // b


# ---- the rows ------------------------------------------------------------------------

WARPS = [4, 8, 16]


def row_rmsnorm(env, b, M=8192, N=8192):
    torch = env.torch
    F = torch.nn.functional
    eps = 1e-6
    torch.manual_seed(14)
    x = torch.randn(M, N, device=env.dev).bfloat16()
    w = (torch.rand(N, device=env.dev) + 0.5).bfloat16()
    xd = x.double()
    ref_rstd = torch.rsqrt(xd.square().mean(dim=1) + eps)
    ref_y = xd.mul_(ref_rstd[:, None]).mul_(w.double())
    row = b.Row("RMSNorm bf16", f"{M}×{N}", 2 * M * N * 2 + N * 2 + M * 4)

    def outs():
        return torch.empty_like(x), torch.empty(M, device=env.dev)

    def err(o):
        return b.check_with_stats(torch, "rmsnorm: rstd", o[0], ref_y, [(o[1], ref_rstd)])

    ob, ot = outs(), outs()
    block = bc.next_power_of_2(N)
    b.tune(env, row, "blk", WARPS,
           lambda wp: blk_rmsnorm(env.ctx, x.data_ptr(), ob[0].data_ptr(), w.data_ptr(), ob[1].data_ptr(), M, N, eps,
                                  block, wp, stream=env.stream), list(ob), err(ob), 1e-2)
    b.tune(env, row, "Triton", WARPS,
           lambda wp: (lambda: _rmsnorm_tt[(M,)](x, ot[0], w, ot[1], x.stride(0), ot[0].stride(0), N, eps,
                                                 BLOCK=block, num_warps=wp)), list(ot), err(ot), 1e-2)
    if hasattr(F, "rms_norm"):
        b.vendor(env, row, [("F.rms_norm (no rstd)", lambda: F.rms_norm(x, (N,), w, eps))], [],
                 lambda res: b.max_rel_err(torch, res, ref_y), 1e-2)
    row.notes.append(f"BLOCK {block} (the row in registers, read once); num_warps {WARPS} tried on both sides")
    return [row]


BIAS_GELU_CONFIGS = [(1024, 4), (2048, 4), (2048, 8), (4096, 8), (8192, 8), (8192, 16)]


def row_bias_gelu(env, b, M=8192, N=8192):
    torch = env.torch
    F = torch.nn.functional
    torch.manual_seed(14)
    x = torch.randn(M, N, device=env.dev).mul_(2).bfloat16()
    bias = torch.randn(N, device=env.dev).bfloat16()
    ref = F.gelu(x.double() + bias.double(), approximate="tanh")
    n = M * N
    row = b.Row("bias + GELU (tanh) bf16", f"{M}×{N}", 2 * n * 2 + N * 2)
    ob, ot = torch.empty_like(x), torch.empty_like(x)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", BIAS_GELU_CONFIGS,
           lambda c: blk_bias_gelu(env.ctx, x.data_ptr(), bias.data_ptr(), ob.data_ptr(), n, N, c[0], c[1],
                                   stream=env.stream), [ob], err(ob), 1e-2)
    b.tune(env, row, "Triton", BIAS_GELU_CONFIGS,
           lambda c: (lambda: _bias_gelu_tt[(_cdiv(n, c[0]),)](x, bias, ot, n, N, BLOCK=c[0], num_warps=c[1])),
           [ot], err(ot), 1e-2)
    b.vendor(env, row, [("F.gelu(x + bias, approximate='tanh'): two kernels", lambda: F.gelu(x + bias,
                                                                                              approximate="tanh"))],
             [], err(None), 1e-2)
    row.notes.append(f"(BLOCK, num_warps) {BIAS_GELU_CONFIGS} tried on both sides; the flat index's bias "
                     "offs % n_cols; gelu as v / (1 + exp(-2u)) on both sides; float products and sums "
                     "contracted into fmas on both sides by default (blk: the contract pass's rule; Triton: LLVM's)")
    return [row]


CE_CONFIGS = [(2048, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 16)]


def row_cross_entropy(env, b, M=4096, V=32768):
    torch = env.torch
    F = torch.nn.functional
    torch.manual_seed(14)
    logits = torch.randn(M, V, device=env.dev).mul_(3).bfloat16()
    target = torch.randint(0, V, (M,), device=env.dev, dtype=torch.int64)
    ld = logits.double()
    ref = torch.logsumexp(ld, dim=1) - ld.gather(1, target[:, None])[:, 0]
    del ld
    row = b.Row("cross-entropy fwd, bf16 logits", f"{M}×{V}", M * V * 2 + M * 8 + M * 4)
    ob, ot = torch.empty(M, device=env.dev), torch.empty(M, device=env.dev)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", CE_CONFIGS,
           lambda c: blk_cross_entropy(env.ctx, logits.data_ptr(), target.data_ptr(), ob.data_ptr(), M, V, c[0], c[1],
                                       stream=env.stream), [ob], err(ob), 1e-4)
    b.tune(env, row, "Triton", CE_CONFIGS,
           lambda c: (lambda: _cross_entropy_tt[(M,)](logits, target, ot, logits.stride(0), V, BLOCK=c[0],
                                                      num_warps=c[1])), [ot], err(ot), 1e-4)
    b.vendor(env, row, [("F.cross_entropy(reduction='none') on the bf16 logits (bf16 loss)",
                         lambda: F.cross_entropy(logits, target, reduction="none"))], [], err(None), 1e-2)
    row.notes.append(f"(BLOCK, num_warps) {CE_CONFIGS} tried on both sides; one pass over the row, a running "
                     "max and per-lane sums rescaled; loss f32 (tolerance 1e-4; torch's bf16 loss: 1e-2)")
    return [row]


EMB_CONFIGS = [(1, 1024, 4), (2, 1024, 4), (4, 1024, 4), (8, 1024, 8), (16, 1024, 8), (8, 512, 4)]


def row_embedding(env, b, T=65536, D=1024, V=32768):
    torch = env.torch
    F = torch.nn.functional
    torch.manual_seed(14)
    table = torch.randn(V, D, device=env.dev).bfloat16()
    ids = torch.randint(0, V, (T,), device=env.dev, dtype=torch.int64)
    ref = table[ids]
    row = b.Row("embedding gather bf16", f"{T} tokens × {D} of {V}", 2 * T * D * 2 + T * 8)
    ob, ot = (torch.empty(T, D, device=env.dev, dtype=torch.bfloat16) for _ in range(2))

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", EMB_CONFIGS,
           lambda c: blk_embedding(env.ctx, ids.data_ptr(), table.data_ptr(), ob.data_ptr(), T, D, c[0], c[1], c[2],
                                   stream=env.stream), [ob], err(ob), 0.0)
    b.tune(env, row, "Triton", EMB_CONFIGS,
           lambda c: (lambda: _embedding_tt[(_cdiv(T, c[0]), _cdiv(D, c[1]))](ids, table, ot, T, D, BLOCK_T=c[0],
                                                                              BLOCK_D=c[1], num_warps=c[2])),
           [ot], err(ot), 0.0)
    b.vendor(env, row, [("F.embedding", lambda: F.embedding(ids, table))], [], err(None), 0.0)
    row.notes.append(f"(BLOCK_T, BLOCK_D, num_warps) {EMB_CONFIGS} tried on both sides; exact copies (tolerance 0)")
    return [row]


ROTARY_CONFIGS = [(4, 4), (8, 4), (16, 4), (32, 4), (32, 8)]


def row_rotary(env, b, B=4, S=4096, H=32, D=128):
    torch = env.torch
    torch.manual_seed(14)
    T, half = B * S, D // 2
    x = torch.randn(T, H, D, device=env.dev).bfloat16()
    inv = 1.0 / (10000.0 ** (torch.arange(0, half, device=env.dev, dtype=torch.float64) / half))
    ang = torch.arange(S, device=env.dev, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().float().contiguous(), ang.sin().float().contiguous()
    pos = torch.arange(T, device=env.dev) % S
    cd, sd = cos.double()[pos][:, None, :], sin.double()[pos][:, None, :]
    x1, x2 = x[..., :half].double(), x[..., half:].double()
    ref = torch.cat((x1 * cd - x2 * sd, x2 * cd + x1 * sd), dim=-1)
    del x1, x2, cd, sd
    row = b.Row("rotary embedding bf16", f"({B}·{S})×{H}×{D}", 2 * T * H * D * 2 + 2 * S * half * 4)
    ob, ot = torch.empty_like(x), torch.empty_like(x)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    b.tune(env, row, "blk", ROTARY_CONFIGS,
           lambda c: blk_rotary(env.ctx, x.data_ptr(), cos.data_ptr(), sin.data_ptr(), ob.data_ptr(), T, H, D, S,
                                c[0], c[1], stream=env.stream), [ob], err(ob), 1e-2)
    b.tune(env, row, "Triton", ROTARY_CONFIGS,
           lambda c: (lambda: _rotary_tt[(T, _cdiv(H, c[0]))](x, cos, sin, ot, x.stride(0), x.stride(1), S, H,
                                                              HALF=half, BLOCK_H=c[0], num_warps=c[1])),
           [ot], err(ot), 1e-2)
    cp, sp = cos[pos][:, None, :], sin[pos][:, None, :]  # gathered once, outside the timing

    def torch_rotary():
        a, c2 = x[..., :half].float(), x[..., half:].float()
        return torch.cat((a * cp - c2 * sp, c2 * cp + a * sp), dim=-1).bfloat16()

    b.vendor(env, row, [("the formula in torch ops (f32, tables gathered by position beforehand)", torch_rotary)],
             [], err(None), 1e-2)
    row.notes.append(f"(BLOCK_H, num_warps) {ROTARY_CONFIGS} tried on both sides; a program rotates BLOCK_H heads "
                     "of one token; position = token % 4096")
    return [row]


# (n_progs, num_warps) of stage 1; stage 2 sums the partial rows in (32 x 64) tiles, 4 warps, on both sides
LN_BWD_CONFIGS = [(128, 8), (256, 8), (512, 8), (132, 16), (264, 16), (528, 16)]


def row_layernorm_bwd(env, b, M=4096, N=8192):
    torch = env.torch
    eps = 1e-5
    torch.manual_seed(14)
    x = torch.randn(M, N, device=env.dev).add_(torch.rand(M, 1, device=env.dev) * 4 - 2).half()
    w = (torch.rand(N, device=env.dev) + 0.5).half()
    bias = (torch.rand(N, device=env.dev) - 0.5).half()
    dy = torch.randn(M, N, device=env.dev).half()
    xd = x.double()
    mean_d = xd.mean(dim=1)
    rstd_d = 1.0 / torch.sqrt(xd.var(dim=1, unbiased=False) + eps)
    mean, rstd = mean_d.float(), rstd_d.float()  # as the forward saves them
    xhat = xd.sub_(mean_d[:, None]).mul_(rstd_d[:, None])
    dyd = dy.double()
    g = dyd * w.double()
    c1 = (xhat * g).mean(dim=1, keepdim=True)
    c2 = g.mean(dim=1, keepdim=True)
    ref_dx = g.sub_(xhat * c1).sub_(c2).mul_(rstd_d[:, None])
    ref_dw = (dyd * xhat).sum(dim=0)
    ref_db = dyd.sum(dim=0)
    del xd, xhat, dyd, c1, c2
    row = b.Row("layernorm bwd fp16", f"{M}×{N}", 3 * M * N * 2 + 3 * N * 2 + 2 * M * 4)
    max_progs = max(p for p, _ in LN_BWD_CONFIGS)

    def outs():
        return (torch.empty_like(x), torch.empty(N, device=env.dev, dtype=torch.float16),
                torch.empty(N, device=env.dev, dtype=torch.float16))

    def err(o):
        def check(res):
            dx, dw, db = o if o is not None else res
            return max(b.max_rel_err(torch, dx, ref_dx), b.max_rel_err(torch, dw, ref_dw),
                       b.max_rel_err(torch, db, ref_db))
        return check

    ob, ot = outs(), outs()
    pb = [torch.empty(max_progs, N, device=env.dev) for _ in range(2)]
    pt = [torch.empty(max_progs, N, device=env.dev) for _ in range(2)]
    block = bc.next_power_of_2(N)
    b.tune(env, row, "blk", LN_BWD_CONFIGS,
           lambda c: blk_layernorm_bwd(env.ctx, dy.data_ptr(), x.data_ptr(), w.data_ptr(), mean.data_ptr(),
                                       rstd.data_ptr(), ob[0].data_ptr(), pb[0].data_ptr(), pb[1].data_ptr(),
                                       ob[1].data_ptr(), ob[2].data_ptr(), M, N, c[0], block, c[1],
                                       stream=env.stream), list(ob), err(ob), 1e-2)

    def triton_run(c):
        def run():
            _layernorm_bwd_dx_tt[(c[0],)](dy, x, w, mean, rstd, ot[0], pt[0], pt[1], x.stride(0), M, N, c[0],
                                          BLOCK=block, num_warps=c[1])
            _layernorm_bwd_dwdb_tt[(_cdiv(N, 64),)](pt[0], pt[1], ot[1], ot[2], c[0], N, BLOCK_M=32, BLOCK_N=64,
                                                    num_warps=4)
        return run

    b.tune(env, row, "Triton", LN_BWD_CONFIGS, triton_run, list(ot), err(ot), 1e-2)

    def torch_bwd():
        return torch.ops.aten.native_layer_norm_backward(dy, x, [N], mean.view(M, 1), rstd.view(M, 1), w, bias,
                                                         [True, True, True])

    b.vendor(env, row, [("aten.native_layer_norm_backward (dx, dw, db)", torch_bwd)], [], err(None), 1e-2)
    row.notes.append(f"(n_progs, num_warps) of stage 1 {LN_BWD_CONFIGS} tried on both sides (BLOCK {block}: the row "
                     "in registers; program p takes rows p, p + n_progs, ... and stores its dw, db sums as one "
                     "partial row); stage 2 sums the partial rows (32×64 tiles, 4 warps): deterministic, no atomics; "
                     "times are both launches")
    return [row]


def row_softmax_bwd(env, b, M=4096, N=4096):
    torch = env.torch
    torch.manual_seed(14)
    y = torch.softmax(torch.randn(M, N, device=env.dev), dim=-1)
    dy = torch.randn(M, N, device=env.dev)
    yd = y.double()
    ref = yd * (dy.double() - (dy.double() * yd).sum(dim=1, keepdim=True))
    del yd
    row = b.Row("softmax bwd fp32", f"{M}×{N}", 3 * M * N * 4)
    ob, ot = torch.empty_like(y), torch.empty_like(y)

    def err(o):
        return lambda res: b.max_rel_err(torch, res if o is None else o, ref)

    block = bc.next_power_of_2(N)
    b.tune(env, row, "blk", WARPS,
           lambda wp: blk_softmax_bwd(env.ctx, y.data_ptr(), dy.data_ptr(), ob.data_ptr(), M, N, block, wp,
                                      stream=env.stream), [ob], err(ob), 1e-5)
    b.tune(env, row, "Triton", WARPS,
           lambda wp: (lambda: _softmax_bwd_tt[(M,)](y, dy, ot, y.stride(0), ot.stride(0), N, BLOCK=block,
                                                     num_warps=wp)), [ot], err(ot), 1e-5)
    b.vendor(env, row, [("torch._softmax_backward_data", lambda: torch._softmax_backward_data(dy, y, -1, y.dtype))],
             [], err(None), 1e-5)
    row.notes.append(f"BLOCK {block} (the row in registers); num_warps {WARPS} tried on both sides")
    return [row]


ROWS = [
    ("rmsnorm", "RMSNorm bf16", "8192×8192", row_rmsnorm),
    ("bias_gelu", "bias + GELU (tanh) bf16", "8192×8192", row_bias_gelu),
    ("cross_entropy", "cross-entropy fwd, bf16 logits", "4096×32768", row_cross_entropy),
    ("embedding", "embedding gather bf16", "65536 tokens × 1024 of 32768", row_embedding),
    ("rotary", "rotary embedding bf16", "(4·4096)×32×128", row_rotary),
    ("layernorm_bwd", "layernorm bwd fp16", "4096×8192", row_layernorm_bwd),
    ("smax_bwd", "softmax bwd fp32", "4096×4096", row_softmax_bwd),
]


# ---- the interpreter check (no GPU, no torch) ------------------------------------------

def _bf16_bits(f):
    u = struct.unpack("<I", struct.pack("<f", f))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def _bf16_val(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _f16_bits(f):
    return struct.unpack("<H", struct.pack("<e", f))[0]


def _f16_val(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


class _Buffers:
    """Device buffers on the interpreter, filled from and read into Python lists."""

    FMT = {"bf16": "H", "f16": "H", "f32": "f", "i64": "q"}

    def __init__(self, ctx):
        self.ctx, self.ptrs = ctx, []

    def put(self, kind, values):
        data = struct.pack(f"<{len(values)}{self.FMT[kind]}", *values)
        p = self.ctx.malloc(max(len(data), 1))
        self.ctx.to_device(p, data)
        self.ptrs.append(p)
        return p

    def empty(self, kind, n):
        return self.put(kind, [0] * n)

    def get(self, kind, p, n):
        import ctypes
        buf = (ctypes.c_char * (n * struct.calcsize(self.FMT[kind])))()
        self.ctx.from_device(buf, p)
        vals = struct.unpack(f"<{n}{self.FMT[kind]}", bytes(buf))
        conv = {"bf16": _bf16_val, "f16": _f16_val}.get(kind)
        return [conv(v) for v in vals] if conv else list(vals)

    def free(self):
        for p in self.ptrs:
            self.ctx.free(p)


def _rel(got, want):
    """max |got - want| / max |want| (inf for a NaN)."""
    scale = max((abs(v) for v in want), default=0.0) or 1.0
    worst = 0.0
    for g, w in zip(got, want):
        d = abs(g - w)
        if d != d:
            return math.inf
        worst = max(worst, d / scale)
    return worst


def interpreter_check():
    """Every blk kernel of these rows, launched by the functions the rows use, on the
    interpreter with small odd sizes (masked tails), against Python references. Returns
    a list of (name, error, tolerance)."""
    blk = blkffi.Blk()
    ctx = blk.context(blkffi.BACKEND_INTERPRETER)
    buf = _Buffers(ctx)
    rnd = random.Random(14)
    results = []

    def bf16_list(n, lo=-2.0, hi=2.0):
        bits = [_bf16_bits(rnd.uniform(lo, hi)) for _ in range(n)]
        return bits, [_bf16_val(b) for b in bits]

    def f16_list(n, lo=-2.0, hi=2.0):
        bits = [_f16_bits(rnd.uniform(lo, hi)) for _ in range(n)]
        return bits, [_f16_val(b) for b in bits]

    # RMSNorm: 3 rows of 100 in a block of 128
    M, N, eps = 3, 100, 1e-6
    xb, xv = bf16_list(M * N)
    wb, wv = bf16_list(N, 0.5, 1.5)
    px, pw, py, pr = buf.put("bf16", xb), buf.put("bf16", wb), buf.empty("bf16", M * N), buf.empty("f32", M)
    blk_rmsnorm(ctx, px, py, pw, pr, M, N, eps, 128, 4)()
    rstd = [1 / math.sqrt(sum(v * v for v in xv[r * N:(r + 1) * N]) / N + eps) for r in range(M)]
    want = [xv[i] * rstd[i // N] * wv[i % N] for i in range(M * N)]
    results.append(("rmsnorm y", _rel(buf.get("bf16", py, M * N), want), 1e-2))
    results.append(("rmsnorm rstd", _rel(buf.get("f32", pr, M), rstd), 1e-5))

    # bias + GELU: 5 x 37 as a flat vector, blocks of 64 (the bias index wraps inside blocks)
    M, N = 5, 37
    xb, xv = bf16_list(M * N, -4, 4)
    bb, bv = bf16_list(N)
    px, pb, po = buf.put("bf16", xb), buf.put("bf16", bb), buf.empty("bf16", M * N)
    blk_bias_gelu(ctx, px, pb, po, M * N, N, 64, 4)()

    def gelu(v):
        return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    want = [gelu(xv[i] + bv[i % N]) for i in range(M * N)]
    results.append(("bias_gelu", _rel(buf.get("bf16", po, M * N), want), 1e-2))

    # cross-entropy: 3 rows of 1000 in chunks of 256 (the last one masked)
    M, V = 3, 1000
    lb, lv = bf16_list(M * V, -6, 6)
    tgt = [rnd.randrange(V) for _ in range(M)]
    pl, pt, ploss = buf.put("bf16", lb), buf.put("i64", tgt), buf.empty("f32", M)
    blk_cross_entropy(ctx, pl, pt, ploss, M, V, 256, 4)()
    want = []
    for r in range(M):
        row = lv[r * V:(r + 1) * V]
        m = max(row)
        want.append(m + math.log(sum(math.exp(v - m) for v in row)) - row[tgt[r]])
    results.append(("cross_entropy", _rel(buf.get("f32", ploss, M), want), 1e-5))

    # embedding: 13 tokens of 40 from a 50-row table, tiles of 4 x 32 (both edges masked)
    T, D, E = 13, 40, 50
    tb, tv = bf16_list(E * D)
    ids = [rnd.randrange(E) for _ in range(T)]
    pi, ptab, po = buf.put("i64", ids), buf.put("bf16", tb), buf.empty("bf16", T * D)
    blk_embedding(ctx, pi, ptab, po, T, D, 4, 32, 4)()
    want = [tv[ids[t] * D + d] for t in range(T) for d in range(D)]
    results.append(("embedding", _rel(buf.get("bf16", po, T * D), want), 0.0))

    # rotary: 6 tokens (positions modulo 4), 3 heads of 16 (HALF 8), 2 heads a program
    T, H, D, S = 6, 3, 16, 4
    half = D // 2
    xb, xv = bf16_list(T * H * D)
    cos = [math.cos(p * 0.3 + d) for p in range(S) for d in range(half)]
    sin = [math.sin(p * 0.3 + d) for p in range(S) for d in range(half)]
    cos = [struct.unpack("<f", struct.pack("<f", c))[0] for c in cos]
    sin = [struct.unpack("<f", struct.pack("<f", s))[0] for s in sin]
    px, pc, ps, po = buf.put("bf16", xb), buf.put("f32", cos), buf.put("f32", sin), buf.empty("bf16", T * H * D)
    blk_rotary(ctx, px, pc, ps, po, T, H, D, S, 2, 4)()
    want = []
    for t in range(T):
        for h in range(H):
            base, p = (t * H + h) * D, (t % S) * half
            x1, x2 = xv[base:base + half], xv[base + half:base + D]
            want += [x1[d] * cos[p + d] - x2[d] * sin[p + d] for d in range(half)]
            want += [x2[d] * cos[p + d] + x1[d] * sin[p + d] for d in range(half)]
    results.append(("rotary", _rel(buf.get("bf16", po, T * H * D), want), 1e-2))

    # layernorm backward: 7 rows of 40 (block 64), 3 programs, partial rows summed 2 at a time in columns of 16
    M, N, P, eps = 7, 40, 3, 1e-5
    xb, xv = f16_list(M * N)
    db_, dyv = f16_list(M * N, -1, 1)
    wb, wv = f16_list(N, 0.5, 1.5)
    mean, rstd = [], []
    for r in range(M):
        row = xv[r * N:(r + 1) * N]
        mu = sum(row) / N
        mean.append(mu)
        rstd.append(1 / math.sqrt(sum((v - mu) ** 2 for v in row) / N + eps))
    mean32 = [struct.unpack("<f", struct.pack("<f", v))[0] for v in mean]
    rstd32 = [struct.unpack("<f", struct.pack("<f", v))[0] for v in rstd]
    p_dy, p_x, p_w = buf.put("f16", db_), buf.put("f16", xb), buf.put("f16", wb)
    p_m, p_r = buf.put("f32", mean32), buf.put("f32", rstd32)
    p_dx, p_pdw, p_pdb = buf.empty("f16", M * N), buf.empty("f32", P * N), buf.empty("f32", P * N)
    p_dw, p_db = buf.empty("f16", N), buf.empty("f16", N)
    blk_layernorm_bwd(ctx, p_dy, p_x, p_w, p_m, p_r, p_dx, p_pdw, p_pdb, p_dw, p_db, M, N, P, 64, 4,
                      BLOCK_M=2, BLOCK_N=16)()
    want_dx, want_dw, want_db = [], [0.0] * N, [0.0] * N
    for r in range(M):
        xh = [(xv[r * N + c] - mean[r]) * rstd[r] for c in range(N)]
        g = [wv[c] * dyv[r * N + c] for c in range(N)]
        c1 = sum(a * b for a, b in zip(xh, g)) / N
        c2 = sum(g) / N
        want_dx += [rstd[r] * (g[c] - xh[c] * c1 - c2) for c in range(N)]
        for c in range(N):
            want_dw[c] += dyv[r * N + c] * xh[c]
            want_db[c] += dyv[r * N + c]
    results.append(("layernorm_bwd dx", _rel(buf.get("f16", p_dx, M * N), want_dx), 2e-3))
    results.append(("layernorm_bwd dw", _rel(buf.get("f16", p_dw, N), want_dw), 2e-3))
    results.append(("layernorm_bwd db", _rel(buf.get("f16", p_db, N), want_db), 2e-3))

    # softmax backward: 5 rows of 70 in a block of 128
    M, N = 5, 70
    y, dyl = [], [rnd.uniform(-1, 1) for _ in range(M * N)]
    for r in range(M):
        e = [math.exp(rnd.uniform(-3, 3)) for _ in range(N)]
        y += [v / sum(e) for v in e]
    y = [struct.unpack("<f", struct.pack("<f", v))[0] for v in y]
    dyl = [struct.unpack("<f", struct.pack("<f", v))[0] for v in dyl]
    p_y, p_g, p_o = buf.put("f32", y), buf.put("f32", dyl), buf.empty("f32", M * N)
    blk_softmax_bwd(ctx, p_y, p_g, p_o, M, N, 128, 4)()
    want = []
    for r in range(M):
        s = sum(y[r * N + c] * dyl[r * N + c] for c in range(N))
        want += [y[r * N + c] * (dyl[r * N + c] - s) for c in range(N)]
    results.append(("softmax_bwd", _rel(buf.get("f32", p_o, M * N), want), 1e-5))

    buf.free()
    ctx.destroy()
    return results


def _ptxas_summary(ptx):
    """Registers and spill bytes by `ptxas -v` (CUDA's, where it is), or '' without it."""
    import subprocess
    import tempfile
    ptxas = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    if not ptx or not os.path.exists(ptxas):
        return ""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as fh:
            fh.write(ptx)
        r = subprocess.run([ptxas, "-v", "-arch=sm_90a", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
    regs = [ln.split("Used ")[1].split(",")[0] for ln in r.stderr.splitlines() if "Used " in ln]
    spills = [ln.strip().split(", ")[1] for ln in r.stderr.splitlines() if "spill stores" in ln]
    return f"{regs[0] if regs else '?'}, {spills[0] if spills else '?'}"


def triton_compile_check():
    """Compiles each Triton peer for sm_90 with the specializations the rows' launches get
    (pointers and sizes divisible by 16), with no GPU (pip install triton; no torch): one
    line a kernel and config, with registers and spills. Returns the number that failed."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    target = GPUTarget("cuda", 90, 32)
    bf, h, f, q = "*bf16", "*fp16", "*fp32", "*i64"
    cases = []  # (fn, signature, constexprs, divisible-by-16 args, num_warps)
    for wp in WARPS:
        cases.append((_rmsnorm_tt, {"x_ptr": bf, "y_ptr": bf, "w_ptr": bf, "rstd_ptr": f, "x_row_stride": "i32",
                                    "y_row_stride": "i32", "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"},
                      {"BLOCK": 8192}, ["x_ptr", "y_ptr", "w_ptr", "rstd_ptr", "x_row_stride", "y_row_stride",
                                        "n_cols"], wp))
        cases.append((_softmax_bwd_tt, {"y_ptr": f, "dy_ptr": f, "dx_ptr": f, "in_row_stride": "i32",
                                        "out_row_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
                      {"BLOCK": 4096}, ["y_ptr", "dy_ptr", "dx_ptr", "in_row_stride", "out_row_stride", "n_cols"], wp))
    for blk_, wp in BIAS_GELU_CONFIGS:
        cases.append((_bias_gelu_tt, {"x_ptr": bf, "bias_ptr": bf, "out_ptr": bf, "n": "i32", "n_cols": "i32",
                                      "BLOCK": "constexpr"}, {"BLOCK": blk_},
                      ["x_ptr", "bias_ptr", "out_ptr", "n", "n_cols"], wp))
    for blk_, wp in CE_CONFIGS:
        cases.append((_cross_entropy_tt, {"logits_ptr": bf, "target_ptr": q, "loss_ptr": f, "row_stride": "i32",
                                          "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": blk_},
                      ["logits_ptr", "target_ptr", "loss_ptr", "row_stride", "n_cols"], wp))
    for bt, bd, wp in EMB_CONFIGS:
        cases.append((_embedding_tt, {"ids_ptr": q, "table_ptr": bf, "out_ptr": bf, "n_tokens": "i32", "dim": "i32",
                                      "BLOCK_T": "constexpr", "BLOCK_D": "constexpr"}, {"BLOCK_T": bt, "BLOCK_D": bd},
                      ["ids_ptr", "table_ptr", "out_ptr", "n_tokens", "dim"], wp))
    for bh, wp in ROTARY_CONFIGS:
        cases.append((_rotary_tt, {"x_ptr": bf, "cos_ptr": f, "sin_ptr": f, "out_ptr": bf, "stride_t": "i32",
                                   "stride_h": "i32", "seq_len": "i32", "n_heads": "i32", "HALF": "constexpr",
                                   "BLOCK_H": "constexpr"}, {"HALF": 64, "BLOCK_H": bh},
                      ["x_ptr", "cos_ptr", "sin_ptr", "out_ptr", "stride_t", "stride_h", "seq_len", "n_heads"], wp))
    for _, wp in LN_BWD_CONFIGS:
        cases.append((_layernorm_bwd_dx_tt, {"dy_ptr": h, "x_ptr": h, "w_ptr": h, "mean_ptr": f, "rstd_ptr": f,
                                             "dx_ptr": h, "pdw_ptr": f, "pdb_ptr": f, "row_stride": "i32",
                                             "n_rows": "i32", "n_cols": "i32", "n_progs": "i32", "BLOCK": "constexpr"},
                      {"BLOCK": 8192}, ["dy_ptr", "x_ptr", "w_ptr", "mean_ptr", "rstd_ptr", "dx_ptr", "pdw_ptr",
                                        "pdb_ptr", "row_stride", "n_rows", "n_cols"], wp))
    cases.append((_layernorm_bwd_dwdb_tt, {"pdw_ptr": f, "pdb_ptr": f, "dw_ptr": h, "db_ptr": h, "n_progs": "i32",
                                           "n_cols": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
                  {"BLOCK_M": 32, "BLOCK_N": 64}, ["pdw_ptr", "pdb_ptr", "dw_ptr", "db_ptr", "n_cols"], 4))
    bad, seen = 0, set()
    for fn, sig, consts, div, wp in cases:
        if (fn.__name__, str(consts), wp) in seen:
            continue
        seen.add((fn.__name__, str(consts), wp))
        names = fn.arg_names
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div}
        label = f"{fn.__name__} {consts} w{wp}"
        try:
            k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs), target=target,
                               options={"num_warps": wp})
            print(f"ok   {label}: {_ptxas_summary(k.asm.get('ptx', ''))}", flush=True)
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            print(f"FAIL {label}: {type(e).__name__}: {lines[-1][:300] if lines else ''}", flush=True)
            bad += 1
    return bad


def main():
    import blk_calls
    return blk_calls.check_main("rows_kernels", interpreter_check, triton_compile_check, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
