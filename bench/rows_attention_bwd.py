"""rows_attention_bwd.py: attention backward, and forward + backward (python3 bench/bench.py --only issue29).

f16, 4×16×4096, HEAD_DIM 64 and 128, causal and not; one entry a (HEAD_DIM, causal) pair gives two rows:
"attention bwd" (dq, dk, dv from q, k, v, o, dO and the forward's lse) and "attention fwd+bwd" (the
forward, then the backward). blk: stdlib/nn/attention.tile's backward through blk_calls.attention_backward
(preprocessing D = rowsum(dO * O), the dK/dV kernel, then the dQ kernel, or with ATOMIC_DQ dQ by f32
atomics from the dK/dV kernel and a cast), over blk_calls.ATTENTION_BWD_CONFIGS; its forward
stdlib/nn/attention.tile. Triton: triton_kernels.attention_bwd (the same algorithm, deterministic, over the
configs without ATOMIC_DQ) after triton_kernels.attention. torch: F.scaled_dot_product_attention and
autograd (torch.autograd.grad of its output, the graph kept: the backward alone is timed). Every result is
checked against float64 gradients before it is timed. FLOPs: the backward 2.5 times the forward's
4·Z·H·N²·D (five products of N² D multiply-adds to the forward's two), half for causal; fwd+bwd 3.5 times.
The fwd+bwd rows reuse the backward config the bwd row chose and the forward config that was fastest
among the first three of blk_calls.ATTENTION_CONFIGS (each side its own).
"""
import math

GROUP = "issue29"


def bwd_reference(torch, q, k, v, do, scale, causal, heads_at_once=2):
    """The gradients of sum(o * do) for o = softmax(scale * q k^T [causal]) v, float64, a few
    (batch, head) pairs at a time. q, k, v, do: (Z, H, N, D). Returns dq, dk, dv (Z, H, N, D)."""
    Z, H, N, D = q.shape
    qs, ks, vs, dos = (t.reshape(Z * H, N, D) for t in (q, k, v, do))
    grads = [torch.empty(Z * H, N, D, dtype=torch.float64, device=q.device) for _ in range(3)]
    above = torch.ones(N, N, dtype=torch.bool, device=q.device).triu_(1) if causal else None
    for i in range(0, Z * H, heads_at_once):
        sl = slice(i, i + heads_at_once)
        qd, kd, vd, dod = (t[sl].double() for t in (qs, ks, vs, dos))
        s = torch.matmul(qd, kd.transpose(1, 2)).mul_(scale)
        if causal:
            s.masked_fill_(above, -math.inf)
        p = torch.softmax(s, dim=-1)
        del s
        grads[2][sl] = torch.matmul(p.transpose(1, 2), dod)
        dp = torch.matmul(dod, vd.transpose(1, 2))
        ds = p.mul_(dp.sub_((p * dp).sum(-1, keepdim=True)))  # P * (dP - rowsum(P * dP)), in p's storage
        del dp
        grads[0][sl] = torch.matmul(ds, kd).mul_(scale)
        grads[1][sl] = torch.matmul(ds.transpose(1, 2), qd).mul_(scale)
        del ds, p
    return [g.view(Z, H, N, D) for g in grads]


def grads_err(b, torch, got, want):
    return max(b.max_rel_err(torch, g, w) for g, w in zip(got, want))


def rows_attention_bwd(env, b, D, causal, Z=4, H=16, N=4096):
    torch, tk, bc = env.torch, env.tk, b.bc
    F = torch.nn.functional
    scale = 1.0 / math.sqrt(D)
    torch.manual_seed(29)
    q, k, v, do = (torch.randn(Z, H, N, D, device=env.dev).half() for _ in range(4))
    ref_o, ref_lse = b.attention_reference(torch, q, k, v, scale, causal)
    ref = bwd_reference(torch, q, k, v, do, scale, causal)
    fwd_flop = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
    name = " fp16" + (" causal" if causal else "")
    size = f"{Z}×{H}×{N}×{D}"
    row = b.Row("attention bwd" + name, size, flop=2.5 * fwd_flop)
    both = b.Row("attention fwd+bwd" + name, size, flop=3.5 * fwd_flop)
    tol = 2e-2  # f16 gradients, P and dS rounded to f16 before their products

    def tensors():
        return ([torch.empty(Z, H, N, D, device=env.dev, dtype=torch.float16) for _ in range(4)]
                + [torch.empty(Z * H, N, device=env.dev, dtype=torch.float32) for _ in range(2)])

    # blk: o, dq, dk, dv, lse, delta (+ dq_acc); Triton the same
    ob, dqb, dkb, dvb, lseb, deltab = tensors()
    dq_acc = torch.empty(Z, H, N, D, device=env.dev, dtype=torch.float32)
    ot, dqt, dkt, dvt, lset, deltat = tensors()

    def fwd_err(o, lse):
        return b.check_with_stats(torch, "attention: lse", o, ref_o, [(lse, ref_lse)])

    def blk_fwd(c):
        return bc.attention(env.ctx, q.data_ptr(), k.data_ptr(), v.data_ptr(), ob.data_ptr(), lseb.data_ptr(),
                            Z, H, N, D, q.stride(), k.stride(), v.stride(), ob.stride(), scale,
                            BLOCK_M=c["BLOCK_M"], BLOCK_N=c["BLOCK_N"], num_warps=c["num_warps"],
                            num_stages=c["num_stages"], causal=causal, stream=env.stream)

    def triton_fwd(c):
        return lambda: tk.attention(q, k, v, ot, lset, scale, c, causal=causal)

    # the forwards: the fastest of three configs each (a scratch row), which also leaves o and lse
    fwd_cfg = {}
    for side, make, outs in (("blk", blk_fwd, [ob, lseb]), ("Triton", triton_fwd, [ot, lset])):
        probe = b.Row("attention fwd" + name, size)
        b.tune(env, probe, side, bc.ATTENTION_CONFIGS[:3], make, outs, fwd_err(*outs), 1e-2)
        fwd_cfg[side] = probe.config.get(side)
        if fwd_cfg[side] is not None:
            make(fwd_cfg[side])()  # o and lse for the backward (tune left them poisoned or partial)
            torch.cuda.synchronize()

    def blk_bwd(c):
        return bc.attention_backward(env.ctx, q.data_ptr(), k.data_ptr(), v.data_ptr(), ob.data_ptr(), do.data_ptr(),
                                     lseb.data_ptr(), deltab.data_ptr(), dqb.data_ptr(), dkb.data_ptr(),
                                     dvb.data_ptr(), dq_acc.data_ptr(), Z, H, H, N, D, scale, c, T="f16",
                                     causal=causal, stream=env.stream)

    def triton_bwd(c):
        return lambda: tk.attention_bwd(q, k, v, ot, do, lset, dqt, dkt, dvt, deltat, scale, c, causal=causal)

    configs = bc.ATTENTION_BWD_CONFIGS
    if env.quick:
        configs = configs[:2] + [next(c for c in configs if c["ATOMIC_DQ"])]
    blk_grads, triton_grads = [dqb, dkb, dvb], [dqt, dkt, dvt]
    if fwd_cfg["blk"] is not None:
        b.tune(env, row, "blk", configs, blk_bwd, blk_grads, lambda _: grads_err(b, torch, blk_grads, ref), tol)
    if fwd_cfg["Triton"] is not None:
        b.tune(env, row, "Triton", [c for c in configs if not c["ATOMIC_DQ"]], triton_bwd, triton_grads,
               lambda _: grads_err(b, torch, triton_grads, ref), tol)
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    og = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
    b.measure(env, row, "torch", lambda: torch.autograd.grad(og, (qg, kg, vg), do, retain_graph=True), [],
              lambda res: grads_err(b, torch, res, ref), tol)

    # forward + backward: each side's chosen configs, one after the other
    bwd_cfg = {side: row.config.get(side) for side in ("blk", "Triton")}
    if fwd_cfg["blk"] is not None and bwd_cfg["blk"] is not None:
        f, g = blk_fwd(fwd_cfg["blk"]), blk_bwd(bwd_cfg["blk"])
        b.measure(env, both, "blk", lambda f=f, g=g: (f(), g()), [ob, lseb] + blk_grads,
                  lambda _: grads_err(b, torch, blk_grads, ref), tol)
    if fwd_cfg["Triton"] is not None and bwd_cfg["Triton"] is not None:
        f, g = triton_fwd(fwd_cfg["Triton"]), triton_bwd(bwd_cfg["Triton"])
        b.measure(env, both, "Triton", lambda f=f, g=g: (f(), g()), [ot, lset] + triton_grads,
                  lambda _: grads_err(b, torch, triton_grads, ref), tol)
    b.measure(env, both, "torch",
              lambda: torch.autograd.grad(F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale),
                                          (qg, kg, vg), do), [], lambda res: grads_err(b, torch, res, ref), tol)

    for r in (row, both):
        r.notes.append(b.tflops_note(r) + f" (flops {'2.5' if r is row else '3.5'}× the forward's "
                       + ("2·Z·H·N²·D, causal)" if causal else "4·Z·H·N²·D)"))
    for side in ("blk", "Triton"):
        if isinstance(bwd_cfg[side], dict):
            text = bc.attention_bwd_config_text(bwd_cfg[side])
            row.config[side] = text
            f = fwd_cfg[side]
            both.config[side] = f"fwd {f['BLOCK_M']}×{f['BLOCK_N']} w{f['num_warps']} s{f['num_stages']}; bwd {text}"
    row.notes.append("blk: stdlib/nn/attention.tile's backward (blk_calls.ATTENTION_BWD_CONFIGS, atomic dQ among them); "
                     "Triton: triton_kernels.attention_bwd (deterministic configs); torch: autograd through "
                     "F.scaled_dot_product_attention, the backward alone")
    return [row, both]


ROWS = [
    (f"attn_bwd_d{d}{'_causal' if c else ''}", "attention bwd and fwd+bwd fp16" + (" causal" if c else ""),
     f"4×16×4096×{d}", (lambda d, c: lambda env, b: rows_attention_bwd(env, b, d, c))(d, c))
    for d in (64, 128) for c in (False, True)
]
