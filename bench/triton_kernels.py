"""triton_kernels.py: the Triton side of the benchmark.

The same computations as examples/*.tile, written as ordinary, well-tuned
Triton kernels (the layouts Triton's tutorials use; block sizes and warps
chosen the way those tutorials choose them, or tried over the same small set
of configurations as the blk kernel where bench.py says so). Each launcher
takes torch tensors and returns nothing; outputs are written in place.
"""

try:
    import torch
except ImportError:  # bench/triton_check.py compiles these kernels for sm_90 without torch or a GPU
    torch = None
import triton
import triton.language as tl

import blk_calls as _blk_calls


# ---- vector add -------------------------------------------------------------

@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


def vector_add(x, y, out, BLOCK=1024, num_warps=4):
    n = out.numel()
    _add[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, num_warps=num_warps)


# ---- sin applied four times, fused --------------------------------------------

@triton.jit
def _sin4(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    v = tl.sin(tl.sin(tl.sin(tl.sin(v))))
    tl.store(out_ptr + offs, v, mask=mask)


def sin4(x, out, BLOCK=1024, num_warps=4):
    n = out.numel()
    _sin4[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=num_warps)


# ---- row softmax: one row a program, the whole row in registers -----------------

@triton.jit
def _softmax(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax_warps(block):
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def softmax(x, out):
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    _softmax[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=block, num_warps=softmax_warps(block))


# ---- layer norm forward, f16 in and out, f32 statistics --------------------------
# One row a program; three passes over the row in BLOCK-wide chunks (mean,
# variance around it, normalize). With BLOCK >= n_cols each pass is one chunk
# and the later passes find the row in L1/L2.

@triton.jit
def _layernorm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride

    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mu = tl.sum(total, axis=0) / n_cols

    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        xv = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, xv - mu, 0.0)
        sq += d * d
    r = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)

    tl.store(mean_ptr + row, mu)
    tl.store(rstd_ptr + row, r)

    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        xv = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        bv = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_row + cols, ((xv - mu) * r * wv + bv).to(tl.float16), mask=mask)


def layernorm_config(n_cols, elem_bytes=2):
    block = min(65536 // elem_bytes, triton.next_power_of_2(n_cols))
    return block, min(max(block // 256, 1), 8)


def layernorm(x, y, w, b, mean, rstd, eps=1e-5):
    n_rows, n_cols = x.shape
    block, warps = layernorm_config(n_cols, x.element_size())
    _layernorm_fwd[(n_rows,)](x, y, w, b, mean, rstd, x.stride(0), y.stride(0), n_cols, eps, BLOCK=block,
                              num_warps=warps)


# ---- per-tensor sums of many tensors, through an array of pointers -------------
# ptrs is an int64 tensor of data_ptr()s. Each program loads its tensor's
# address from memory and casts it to a pointer. ALIGNED says every address is
# 16-byte aligned (torch's allocator gives 512), so the loads can be 16 bytes.

@triton.jit
def _sum_many(ptrs, sizes, out_ptr, BLOCK: tl.constexpr, ALIGNED: tl.constexpr):
    t = tl.program_id(0)
    data = tl.load(ptrs + t).to(tl.pointer_type(tl.float32))
    if ALIGNED:
        data = tl.multiple_of(data, 16)
    size = tl.load(sizes + t)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(data + offs, mask=offs < size, other=0.0, eviction_policy="evict_first")
    tl.store(out_ptr + t, tl.sum(acc, axis=0))


def sum_many(ptrs, sizes, out, BLOCK=1024, num_warps=4, ALIGNED=True):
    _sum_many[(out.numel(),)](ptrs, sizes, out, BLOCK=BLOCK, ALIGNED=ALIGNED, num_warps=num_warps)


# ---- W4A16 GEMV ---------------------------------------------------------------
# y[n] = sum_k (q[n, k] - 8) * scales[n, k / GROUP] * x[k]; byte j of row n holds
# k = 2j (low nibble) and k = 2j + 1 (high nibble). Rather than interleave the
# nibbles back into k order, the even and odd activations are loaded apart and
# each nibble plane is multiplied by its own half. A GEMV moves little data
# per program, so wide steps along K (many bytes in flight per row) matter:
# BLOCK_K may span several scale groups, each weight then scaled before the
# reduction; when a step lies inside one group, one scale per row is applied
# after it.

@triton.jit
def _w4a16_gemv(w_ptr, s_ptr, x_ptr, y_ptr, N, K, stride_wn, stride_sn,
                GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    offs_b = tl.arange(0, BLOCK_K // 2)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        bytes_ = k0 // 2 + offs_b
        b_mask = bytes_ < K // 2
        mask2 = n_mask[:, None] & b_mask[None, :]
        packed = tl.load(w_ptr + offs_n[:, None] * stride_wn + bytes_[None, :], mask=mask2, other=0)
        lo = (packed & 0xF).to(tl.float32) - 8.0
        hi = ((packed >> 4) & 0xF).to(tl.float32) - 8.0
        x_even = tl.load(x_ptr + 2 * bytes_, mask=b_mask, other=0.0).to(tl.float32)
        x_odd = tl.load(x_ptr + 2 * bytes_ + 1, mask=b_mask, other=0.0).to(tl.float32)
        part = lo * x_even[None, :] + hi * x_odd[None, :]
        if GROUP % BLOCK_K == 0:
            s = tl.load(s_ptr + offs_n * stride_sn + k0 // GROUP, mask=n_mask, other=0.0).to(tl.float32)
            acc += tl.sum(part, axis=1) * s
        else:
            s = tl.load(s_ptr + offs_n[:, None] * stride_sn + (2 * bytes_[None, :]) // GROUP, mask=mask2,
                        other=0.0).to(tl.float32)
            acc += tl.sum(part * s, axis=1)
    tl.store(y_ptr + offs_n, acc.to(tl.float16), mask=n_mask)


def w4a16_gemv(w, scales, x, y, GROUP=128, BLOCK_N=32, BLOCK_K=128, num_warps=4):
    N, K = w.shape[0], w.shape[1] * 2
    _w4a16_gemv[(triton.cdiv(N, BLOCK_N),)](w, scales, x, y, N, K, w.stride(0), scales.stride(0), GROUP=GROUP,
                                            BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps)


# ---- matmul, f16 in and out, f32 accumulation ------------------------------------
# Triton's matmul tutorial: program ids in groups of GROUP_M tile rows (as
# examples/matmul.tile orders them), row and column offsets wrapped modulo M
# and N (no masks on the loads; the store is masked), only the last K slice
# masked. The configs are examples/matmul.tile's @autotune configs, the same
# ones blk tunes over (blk_calls.MATMUL_CONFIGS, checked against the file by
# selftest.py).

@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tm = first_m + (pid % per_group) % rows
    tn = (pid % per_group) // rows
    offs_am = (tm * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (tn * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = tm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _triton_config(cfg):
    consts = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
    return triton.Config(consts, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


MATMUL_CONFIGS = [_triton_config(c) for c in _blk_calls.MATMUL_CONFIGS]
MATMUL_KEY = ["M", "N", "K"]


def matmul_grid(M, N):
    return lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


def _matmul_args(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def matmul(a, b, c, config, kernel=None):
    """c = a @ b with one config (a dict of blk_calls.MATMUL_CONFIGS's form).
    kernel: another JITFunction of _matmul's code (a fresh one compiles anew)."""
    consts = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
    (kernel or _matmul)[matmul_grid(a.shape[0], b.shape[1])](*_matmul_args(a, b, c), **consts,
                                                             num_warps=config["num_warps"],
                                                             num_stages=config["num_stages"])


def make_matmul_autotuned():
    """A new @triton.autotune over MATMUL_CONFIGS, key (M, N, K), on a new
    JITFunction of _matmul's code: nothing tuned or compiled in this process."""
    return triton.autotune(configs=MATMUL_CONFIGS, key=MATMUL_KEY)(triton.jit(_matmul.fn))


def matmul_autotuned(a, b, c, tuned):
    """c = a @ b through `tuned` (from make_matmul_autotuned): its first call for
    a key sweeps the configs; tuned.best_config and tuned.configs_timings tell."""
    tuned[matmul_grid(a.shape[0], b.shape[1])](*_matmul_args(a, b, c))


# ---- attention forward (flash attention), f16 in and out, f32 statistics ----------
# The algorithm of stdlib/nn/attention.tile, line for line: a program keeps
# BLOCK_M query rows in registers and walks the keys in BLOCK_N slices with an
# online softmax in base 2 (log2(e) folded into the scale): a running row
# maximum m_i, a running sum l_i of 2^(s - m_i), an f32 accumulator of
# 2^(s - m_i) V, both rescaled by 2^(m_old - m_new) when the maximum grows.
# The slice bound and (with CAUSAL) the causal mask are applied on every key
# slice, as the blk kernel does. Writes o (f16) and lse (f32, natural log, Z*H
# x N_CTX). Grid: (cdiv(N_CTX, BLOCK_M), Z * H).

@triton.jit
def _attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
                   stride_qz, stride_qh, stride_qm, stride_qd,
                   stride_kz, stride_kh, stride_kn, stride_kd,
                   stride_vz, stride_vh, stride_vn, stride_vd,
                   stride_oz, stride_oh, stride_om, stride_od,
                   Z, H, N_CTX, scale,
                   HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    zh = tl.program_id(1).to(tl.int64)
    z = zh // H
    h = zh % H
    q_base = q_ptr + z * stride_qz + h * stride_qh
    k_base = k_ptr + z * stride_kz + h * stride_kh
    v_base = v_ptr + z * stride_vz + h * stride_vh
    o_base = o_ptr + z * stride_oz + h * stride_oh

    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    row_ok = rows < N_CTX

    qt = tl.load(q_base + rows[:, None] * stride_qm + dims[None, :] * stride_qd, mask=row_ok[:, None], other=0.0)
    qk_scale = scale * 1.4426950408889634  # log2(e): exp(x) = 2^(x log2(e))

    run_max = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)

    if CAUSAL:
        end = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)  # no key after this block's last row
    else:
        end = N_CTX
    for first in range(0, end, BLOCK_N):
        cols = first + keys
        col_ok = cols < N_CTX
        kt = tl.load(k_base + cols[:, None] * stride_kn + dims[None, :] * stride_kd, mask=col_ok[:, None],
                     other=0.0)
        s = tl.dot(qt, tl.trans(kt)) * qk_scale  # (BLOCK_M, BLOCK_N) f32, log2 units
        s = tl.where(col_ok[None, :], s, float("-inf"))
        if CAUSAL:
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(s, axis=1))  # finite: key 0 is in every row's first slice
        rescale = tl.exp2(run_max - new_max)
        p = tl.exp2(s - new_max[:, None])
        run_sum = run_sum * rescale + tl.sum(p, axis=1)
        vt = tl.load(v_base + cols[:, None] * stride_vn + dims[None, :] * stride_vd, mask=col_ok[:, None],
                     other=0.0)
        acc = tl.dot(p.to(tl.float16), vt, acc * rescale[:, None])
        run_max = new_max

    tl.store(lse_ptr + zh * N_CTX + rows, (run_max + tl.log2(run_sum)) * 0.6931471805599453, mask=row_ok)
    tl.store(o_base + rows[:, None] * stride_om + dims[None, :] * stride_od, (acc / run_sum[:, None]).to(tl.float16),
             mask=row_ok[:, None])


def attention(q, k, v, o, lse, scale, config, causal=False):
    """o = softmax(scale * q k^T [causal]) v, lse its natural-log logsumexp per row.
    q, k, v, o: (Z, H, N_CTX, HEAD_DIM) f16 tensors of any strides; lse: (Z*H, N_CTX)
    f32, contiguous. config: a dict of blk_calls.ATTENTION_CONFIGS's form."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    grid = (triton.cdiv(N_CTX, config["BLOCK_M"]), Z * H)
    _attention_fwd[grid](q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), Z, H, N_CTX, scale,
                         HEAD_DIM=HEAD_DIM, BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"], CAUSAL=bool(causal),
                         num_warps=config["num_warps"], num_stages=config["num_stages"])


# ---- issue 12: matmuls of every tensor-core input type, and a fused epilogue ----------------
# The matmul above generalized: the accumulator is i32 for i8 inputs (DOT_KIND 2),
# f32 otherwise; f32 inputs use input_precision "tf32" (DOT_KIND 1), as blk's dot
# does by default; f16, bf16 and fp8 use tl.dot's defaults (DOT_KIND 0: on the
# H100 Triton accumulates fp8 products with the tensor core's fast, imprecise
# accumulation, max_num_imprecise_acc 2^30). BIAS_RELU adds bias[n] (the dtype of
# c) in f32 and applies relu before the store. c's element type is the output's.
# Strides are arguments: the benchmark stores the 8-bit and f32 b K-major (stride_bk
# 1), which Hopper's 8-bit and tf32 wgmma want; Triton sees stride 1 specialized.

@triton.jit
def _matmul_tc(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
               stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, DOT_KIND: tl.constexpr, BIAS_RELU: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tm = first_m + (pid % per_group) % rows
    tn = (pid % per_group) // rows
    offs_am = (tm * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (tn * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    if DOT_KIND == 2:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if DOT_KIND == 2:  # Triton casts `other` to the element type: an int for i8, a float for the rest (fp8)
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if DOT_KIND == 2:
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif DOT_KIND == 1:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = tm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    if BIAS_RELU:
        bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0).to(tl.float32)
        acc = tl.maximum(acc + bias[None, :], 0.0)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul_tc_kind(dtype):
    """_matmul_tc's DOT_KIND for an input dtype (a torch dtype, or its name)."""
    name = str(dtype).replace("torch.", "")
    return 2 if name == "int8" else 1 if name == "float32" else 0


def matmul_tc(a, b, c, config, bias=None):
    """c = a @ b [+ bias, relu] with one config (a dict of blk_calls.MATMUL_CONFIGS's form);
    a, b of any strides, c of the output dtype (f16 for fp8 inputs, i32 for i8)."""
    consts = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
    M, K = a.shape
    N = b.shape[1]
    _matmul_tc[matmul_grid(M, N)](a, b, c, c if bias is None else bias, M, N, K, a.stride(0), a.stride(1),
                                  b.stride(0), b.stride(1), c.stride(0), c.stride(1), **consts,
                                  DOT_KIND=matmul_tc_kind(a.dtype), BIAS_RELU=bias is not None,
                                  num_warps=config["num_warps"], num_stages=config["num_stages"])


# ---- issue 12: attention forward with Hopper's TMA (tensor descriptors) --------------------
# Written for the benchmark with Triton's own Hopper features: q, k, v and o
# reached through device-side tensor descriptors (tl.make_tensor_descriptor: TMA
# loads and stores; Triton needs triton.set_allocator for the descriptors'
# global scratch), the key loop optionally warp-specialized
# (tl.range(..., warp_specialize=True); Triton 3.6 documents it for Blackwell, so
# on the H100 it may fail to compile, and the benchmark then falls back), and,
# with CAUSAL and no warp specialization, the keys split as Triton's tutorial
# splits them: the slices wholly below the diagonal with no mask, then the
# diagonal block with the mask (warp-specialized: one loop, masked throughout). The
# online softmax in base 2 is the blk kernel's. Each (z, h) is N_CTX rows of the
# tensors seen as (Z*H*N_CTX, HEAD_DIM): q, k, v, o contiguous, N_CTX a multiple
# of BLOCK_M and BLOCK_M of BLOCK_N (attention_tma checks). Grid (N_CTX/BLOCK_M, Z*H).

@triton.jit
def _attention_tma_slices(acc, run_max, run_sum, qt, k_desc, v_desc, kv_row0, rows, lo, hi, qk_scale,
                          BLOCK_N: tl.constexpr, MASKED: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    for first in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        kt = k_desc.load([kv_row0 + first, 0])
        s = tl.dot(qt, tl.trans(kt)) * qk_scale
        if MASKED:
            cols = first + tl.arange(0, BLOCK_N)
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(s, axis=1))
        rescale = tl.exp2(run_max - new_max)
        p = tl.exp2(s - new_max[:, None])
        run_sum = run_sum * rescale + tl.sum(p, axis=1)
        vt = v_desc.load([kv_row0 + first, 0])
        acc = tl.dot(p.to(tl.float16), vt, acc * rescale[:, None])
        run_max = new_max
    return acc, run_max, run_sum


@triton.jit
def _attention_fwd_tma(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, Z, H, N_CTX, scale,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                       WARP_SPECIALIZE: tl.constexpr):
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    n_rows = Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[n_rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[n_rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[n_rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[n_rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    kv_row0 = zh * N_CTX
    q_row = kv_row0 + start_m * BLOCK_M
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    qt = q_desc.load([q_row, 0])
    qk_scale = scale * 1.4426950408889634  # log2(e)

    run_max = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL and WARP_SPECIALIZE:
        # one loop, the mask on every slice: Triton 3.6's warp specialization fails (an MLIR assertion in
        # NVGPUWarpSpecialization, bench/triton_check.py shows it) on the kernel with two loops
        acc, run_max, run_sum = _attention_tma_slices(acc, run_max, run_sum, qt, k_desc, v_desc, kv_row0, rows, 0,
                                                      (start_m + 1) * BLOCK_M, qk_scale, BLOCK_N, True, True)
    elif CAUSAL:
        acc, run_max, run_sum = _attention_tma_slices(acc, run_max, run_sum, qt, k_desc, v_desc, kv_row0, rows, 0,
                                                      start_m * BLOCK_M, qk_scale, BLOCK_N, False, False)
        acc, run_max, run_sum = _attention_tma_slices(acc, run_max, run_sum, qt, k_desc, v_desc, kv_row0, rows,
                                                      start_m * BLOCK_M, (start_m + 1) * BLOCK_M, qk_scale, BLOCK_N,
                                                      True, False)
    else:
        acc, run_max, run_sum = _attention_tma_slices(acc, run_max, run_sum, qt, k_desc, v_desc, kv_row0, rows, 0,
                                                      N_CTX, qk_scale, BLOCK_N, False, WARP_SPECIALIZE)
    tl.store(lse_ptr + zh * N_CTX + rows, (run_max + tl.log2(run_sum)) * 0.6931471805599453)
    o_desc.store([q_row, 0], (acc / run_sum[:, None]).to(tl.float16))


def _scratch(size, alignment, stream):
    """triton.set_allocator's allocator: global scratch for device-side tensor descriptors."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


_allocator_set = False


def attention_tma(q, k, v, o, lse, scale, config, causal=False):
    """As attention(), through _attention_fwd_tma. config: a dict of
    blk_calls.ATTENTION_CONFIGS's form plus "warp_specialize" (bool)."""
    global _allocator_set
    if not _allocator_set:
        triton.set_allocator(_scratch)
        _allocator_set = True
    Z, H, N_CTX, HEAD_DIM = q.shape
    bm, bn = config["BLOCK_M"], config["BLOCK_N"]
    if not all(t.is_contiguous() for t in (q, k, v, o)) or N_CTX % bm or bm % bn:
        raise ValueError("attention_tma: q, k, v, o contiguous, N_CTX a multiple of BLOCK_M and BLOCK_M of BLOCK_N")
    _attention_fwd_tma[(N_CTX // bm, Z * H)](q, k, v, o, lse, Z, H, N_CTX, scale, HEAD_DIM=HEAD_DIM, BLOCK_M=bm,
                                            BLOCK_N=bn, CAUSAL=bool(causal),
                                            WARP_SPECIALIZE=bool(config.get("warp_specialize", False)),
                                            num_warps=config["num_warps"], num_stages=config["num_stages"])



# ---- issue 29: attention backward ---------------------------------------------------------
# The FlashAttention-2 backward over the forward's lse (natural log of the scaled scores'
# sum, as attention() stores it), the algorithm of stdlib/nn/attention.tile's backward in its
# deterministic form: _attn_bwd_delta computes D = rowsum(dO * O); _attn_bwd_dkdv gives each
# program KV_N keys of one (z, h) and walks the query blocks (causal: from the diagonal on,
# the blocks across it masked), recomputing P^T = exp2(K Q^T * scale * log2(e) - lse * log2(e))
# transposed, so that Q^T is loaded transposed rather than a register block transposed;
# _attn_bwd_dq gives each program Q_M query rows and walks the key blocks up to the diagonal.
# q, k, v, o, dO and the gradients contiguous (Z, H, N_CTX, HEAD_DIM); N_CTX a multiple of
# every block, KV_N of KV_M and Q_M of Q_N (attention_bwd checks).

@triton.jit
def _attn_bwd_delta(o_ptr, do_ptr, delta_ptr, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    zh = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    at = (zh * N_CTX + rows)[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    prod = tl.load(o_ptr + at).to(tl.float32) * tl.load(do_ptr + at).to(tl.float32)
    tl.store(delta_ptr + zh * N_CTX + rows, tl.sum(prod, axis=1))


@triton.jit
def _attn_bwd_kv_blocks(dk, dv, kt, vt, q_head, do_head, lse_head, delta_head, keys, lo, hi, qk_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, DIAG: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for first in range(lo, hi, BLOCK_M):
        rows = first + tl.arange(0, BLOCK_M)
        q_t = tl.load(q_head + rows[None, :] * HEAD_DIM + dims[:, None])    # (HEAD_DIM, BLOCK_M)
        dot_ = tl.load(do_head + rows[:, None] * HEAD_DIM + dims[None, :])  # dO (BLOCK_M, HEAD_DIM)
        lse2 = tl.load(lse_head + rows) * 1.4426950408889634
        delta = tl.load(delta_head + rows)
        p_t = tl.exp2(tl.dot(kt, q_t) * qk_scale - lse2[None, :])          # P^T (BLOCK_N, BLOCK_M)
        if DIAG:
            p_t = tl.where(rows[None, :] >= keys[:, None], p_t, 0.0)
        dv = tl.dot(p_t.to(dot_.dtype), dot_, dv)
        dp_t = tl.dot(vt, tl.trans(dot_))
        ds_t = (p_t * (dp_t - delta[None, :])).to(kt.dtype)
        dk = tl.dot(ds_t, tl.trans(q_t), dk)
    return dk, dv


@triton.jit
def _attn_bwd_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_CTX, scale,
                   HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    first_key = tl.program_id(0) * BLOCK_N
    zh = tl.program_id(1).to(tl.int64)
    head = zh * N_CTX * HEAD_DIM
    keys = first_key + tl.arange(0, BLOCK_N)
    at = keys[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    kt = tl.load(k_ptr + head + at)
    vt = tl.load(v_ptr + head + at)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    qk_scale = scale * 1.4426950408889634
    if CAUSAL:
        dk, dv = _attn_bwd_kv_blocks(dk, dv, kt, vt, q_ptr + head, do_ptr + head, lse_ptr + zh * N_CTX,
                                     delta_ptr + zh * N_CTX, keys, first_key, first_key + BLOCK_N, qk_scale,
                                     HEAD_DIM, BLOCK_M, True)
        dk, dv = _attn_bwd_kv_blocks(dk, dv, kt, vt, q_ptr + head, do_ptr + head, lse_ptr + zh * N_CTX,
                                     delta_ptr + zh * N_CTX, keys, first_key + BLOCK_N, N_CTX, qk_scale,
                                     HEAD_DIM, BLOCK_M, False)
    else:
        dk, dv = _attn_bwd_kv_blocks(dk, dv, kt, vt, q_ptr + head, do_ptr + head, lse_ptr + zh * N_CTX,
                                     delta_ptr + zh * N_CTX, keys, 0, N_CTX, qk_scale, HEAD_DIM, BLOCK_M, False)
    tl.store(dk_ptr + head + at, (dk * scale).to(dk_ptr.dtype.element_ty))
    tl.store(dv_ptr + head + at, dv.to(dv_ptr.dtype.element_ty))


@triton.jit
def _attn_bwd_q_blocks(dq, qt, dot_, lse2, delta, k_head, v_head, rows, lo, hi, qk_scale,
                       HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, DIAG: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for first in range(lo, hi, BLOCK_N):
        keys = first + tl.arange(0, BLOCK_N)
        k_t = tl.load(k_head + keys[None, :] * HEAD_DIM + dims[:, None])  # K^T (HEAD_DIM, BLOCK_N)
        v_t = tl.load(v_head + keys[None, :] * HEAD_DIM + dims[:, None])
        p = tl.exp2(tl.dot(qt, k_t) * qk_scale - lse2[:, None])
        if DIAG:
            p = tl.where(rows[:, None] >= keys[None, :], p, 0.0)
        ds = (p * (tl.dot(dot_, v_t) - delta[:, None])).to(k_t.dtype)
        dq = tl.dot(ds, tl.trans(k_t), dq)
    return dq


@triton.jit
def _attn_bwd_dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_CTX, scale,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    first_row = tl.program_id(0) * BLOCK_M
    zh = tl.program_id(1).to(tl.int64)
    head = zh * N_CTX * HEAD_DIM
    rows = first_row + tl.arange(0, BLOCK_M)
    at = rows[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    qt = tl.load(q_ptr + head + at)
    dot_ = tl.load(do_ptr + head + at)
    lse2 = tl.load(lse_ptr + zh * N_CTX + rows) * 1.4426950408889634
    delta = tl.load(delta_ptr + zh * N_CTX + rows)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = scale * 1.4426950408889634
    if CAUSAL:
        dq = _attn_bwd_q_blocks(dq, qt, dot_, lse2, delta, k_ptr + head, v_ptr + head, rows, 0, first_row, qk_scale,
                                HEAD_DIM, BLOCK_N, False)
        dq = _attn_bwd_q_blocks(dq, qt, dot_, lse2, delta, k_ptr + head, v_ptr + head, rows, first_row,
                                first_row + BLOCK_M, qk_scale, HEAD_DIM, BLOCK_N, True)
    else:
        dq = _attn_bwd_q_blocks(dq, qt, dot_, lse2, delta, k_ptr + head, v_ptr + head, rows, 0, N_CTX, qk_scale,
                                HEAD_DIM, BLOCK_N, False)
    tl.store(dq_ptr + head + at, (dq * scale).to(dq_ptr.dtype.element_ty))


def attention_bwd(q, k, v, o, do, lse, dq, dk, dv, delta, scale, config, causal=False):
    """dq, dk, dv of attention()'s forward for the gradient do of o, lse being the forward's;
    delta: (Z*H, N_CTX) f32 scratch. config: a dict of blk_calls.ATTENTION_BWD_CONFIGS's form
    (ATOMIC_DQ ignored: always the two-kernel deterministic form)."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    kv_m, kv_n, q_m, q_n = config["KV_M"], config["KV_N"], config["Q_M"], config["Q_N"]
    if (not all(t.is_contiguous() for t in (q, k, v, o, do, dq, dk, dv)) or N_CTX % kv_n or N_CTX % q_m
            or kv_n % kv_m or q_m % q_n):
        raise ValueError("attention_bwd: contiguous tensors, N_CTX a multiple of KV_N and Q_M, KV_N of KV_M, "
                         "Q_M of Q_N")
    opts = {"num_warps": config["num_warps"], "num_stages": config["num_stages"]}
    _attn_bwd_delta[(N_CTX // q_m, Z * H)](o, do, delta, N_CTX, HEAD_DIM=HEAD_DIM, BLOCK_M=q_m)
    _attn_bwd_dkdv[(N_CTX // kv_n, Z * H)](q, k, v, do, lse, delta, dk, dv, N_CTX, scale, HEAD_DIM=HEAD_DIM,
                                           BLOCK_M=kv_m, BLOCK_N=kv_n, CAUSAL=bool(causal), **opts)
    _attn_bwd_dq[(N_CTX // q_m, Z * H)](q, k, v, do, lse, delta, dq, N_CTX, scale, HEAD_DIM=HEAD_DIM, BLOCK_M=q_m,
                                        BLOCK_N=q_n, CAUSAL=bool(causal), **opts)

# ---- issue 12: the persistent matmul through tensor descriptors (TMA) ------------------
# One program a multiprocessor walking the tiles of c in groups of GROUP_M tile rows
# (blk's examples/matmul_persistent.tile and bench/kernels/matmul_persistent_tc.tile,
# the same algorithm), a, b, c through device-side descriptors; with BIAS_RELU,
# relu(acc + bias[n]) in f32 before c is stored in c's dtype. Rows contiguous.

@triton.jit
def _matmul_persistent_tma(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, BIAS_RELU: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS):
        per_group = GROUP_M * tiles_n
        first_m = (tile // per_group) * GROUP_M
        rows = tl.minimum(tiles_m - first_m, GROUP_M)
        in_group = tile % per_group
        m0 = (first_m + in_group % rows) * BLOCK_M
        n0 = (in_group // rows) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            acc = tl.dot(a_desc.load([m0, k]), b_desc.load([k, n0]), acc)
        if BIAS_RELU:
            offs_n = n0 + tl.arange(0, BLOCK_N)
            bv = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
            acc = tl.maximum(acc + bv[None, :], 0.0)
        c_desc.store([m0, n0], acc.to(c_ptr.dtype.element_ty))


def matmul_persistent_tma(a, b, c, config, bias=None, sms=None):
    """c = a @ b [+ bias, relu] by _matmul_persistent_tma with one config (a dict of
    blk_calls.MATMUL_CONFIGS's form); a, b, c (and bias) of one 16-bit dtype."""
    global _allocator_set
    if not _allocator_set:
        triton.set_allocator(_scratch)
        _allocator_set = True
    M, K = a.shape
    N = b.shape[1]
    if sms is None:
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    tiles = triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"])
    grid = (min(sms, tiles),)
    _matmul_persistent_tma[grid](a, b, c, c if bias is None else bias, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                 BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"], BLOCK_K=config["BLOCK_K"],
                                 GROUP_M=config["GROUP_M"], NUM_SMS=grid[0], BIAS_RELU=bias is not None,
                                 num_warps=config["num_warps"], num_stages=config["num_stages"])


def fresh_jit(kernel):
    """A new JITFunction of a @triton.jit kernel's code: its in-memory cache is
    empty, so its first call compiles (or loads from Triton's disk cache)."""
    return triton.jit(kernel.fn)


def triton_version():
    return triton.__version__


__all__ = ["vector_add", "sin4", "softmax", "layernorm", "sum_many", "w4a16_gemv", "matmul", "make_matmul_autotuned",
           "matmul_autotuned", "attention", "matmul_tc", "matmul_tc_kind", "attention_tma", "attention_bwd",
           "fresh_jit", "torch"]


# ---- microscaled GEMM (bench/rows_dot_scaled.py): tl.dot_scaled of e4m3 A and e2m1 B -----

@triton.jit
def _mxgemm(a, a_scale, b, b_scale, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    rows = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + pid % (GROUP_M * grid_n) % rows
    pid_n = pid % (GROUP_M * grid_n) // rows
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rkh = tl.arange(0, BLOCK_K // 2)
    g = tl.arange(0, BLOCK_K // 32)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(a + rm.to(tl.int64)[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k // 2 + rkh).to(tl.int64)[:, None] * N + rn[None, :])
        xs = tl.load(a_scale + rm[:, None] * (K // 32) + (k // 32 + g)[None, :])
        ys = tl.load(b_scale + rn[:, None] * (K // 32) + (k // 32 + g)[None, :])
        acc = tl.dot_scaled(x, xs, "e4m3", y, ys, "e2m1", acc)
    tl.store(c + rm.to(tl.int64)[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


def mxgemm(a, a_scale, b, b_scale, c, config):
    M, K = a.shape
    N = c.shape[1]
    meta = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
    grid = (triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"]),)
    _mxgemm[grid](a, a_scale, b, b_scale, c, M, N, K, **meta, num_warps=config["num_warps"],
                  num_stages=config["num_stages"])
