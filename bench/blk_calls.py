"""blk_calls.py: how the benchmark launches each examples/*.tile kernel.

One function a kernel: device addresses (ints) and sizes in, a prepared
blkffi.Launch out (arguments, const values, grid and warps built once). The
argument order follows each kernel's signature in examples/; bench.py uses
these on the GPU with torch tensors' data_ptr(), and selftest.py uses the very
same functions on the interpreter with blk_malloc memory, so an argument in the
wrong place shows up without a GPU.
"""


def cdiv(a, b):
    return (a + b - 1) // b


def next_power_of_2(n):
    return 1 << max(0, (n - 1).bit_length())


# ---- module cache: one blk module a .tile file and context ----

_modules = {}


def kernel(ctx, file, name=None):
    """Kernel `name` (default: `file`) of examples/FILE.tile (FILE.tile itself, from the
    repository's root, when FILE has a slash: "stdlib/nn/attention"), loaded once per context."""
    key = (id(ctx), file, name)
    if key not in _modules:
        _modules[key] = ctx.load(f"{file}.tile" if "/" in file else f"examples/{file}.tile").kernel(name or file)
    return _modules[key]


def fresh(ctx, file, name=None):
    """Forgets the module of kernel(ctx, file, name), so that the next call loads
    (parses, compiles) it anew; returns the forgotten kernel, or None. The caller
    may destroy its module (k.module.destroy()) once it no longer launches it."""
    return _modules.pop((id(ctx), file, name), None)


# ---- the kernels ----

def vector_add(ctx, x, y, out, n, BLOCK=1024, num_warps=4, stream=0):
    """out[i] = x[i] + y[i]; f32."""
    return kernel(ctx, "vector_add").prepare([x, y, out, n], consts={"BLOCK": BLOCK}, grid=(cdiv(n, BLOCK),),
                                              num_warps=num_warps, stream=stream)


def sin4(ctx, x, out, n, BLOCK=1024, num_warps=4, stream=0):
    """out[i] = sin(sin(sin(sin(x[i])))); f32."""
    return kernel(ctx, "sin4").prepare([x, out, n], consts={"BLOCK": BLOCK}, grid=(cdiv(n, BLOCK),),
                                        num_warps=num_warps, stream=stream)


def softmax_warps(block):
    """Warps for a row of `block` elements, as Triton's softmax tutorial chooses them."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def softmax(ctx, x, out, n_rows, n_cols, x_row_stride=None, out_row_stride=None, BLOCK=None, num_warps=None,
            stream=0):
    """Row softmax of an f32 n_rows x n_cols matrix, one row a program, the whole row in one tile."""
    BLOCK = BLOCK or next_power_of_2(n_cols)
    num_warps = num_warps or softmax_warps(BLOCK)
    xs = n_cols if x_row_stride is None else x_row_stride
    os_ = n_cols if out_row_stride is None else out_row_stride
    return kernel(ctx, "softmax").prepare([x, out, xs, os_, n_rows, n_cols], consts={"BLOCK": BLOCK},
                                           grid=(n_rows,), num_warps=num_warps, stream=stream)


def layernorm_config(n_cols, elem_bytes=2):
    """BLOCK and warps for a row of n_cols, as Triton's layernorm tutorial chooses them:
    the whole row in one chunk up to 64 KB, 8 warps at most."""
    block = min(65536 // elem_bytes, next_power_of_2(n_cols))
    return block, min(max(block // 256, 1), 8)


def layernorm(ctx, x, y, w, b, mean, rstd, n_rows, n_cols, eps=1e-5, BLOCK=None, num_warps=None, stream=0):
    """Layer norm forward over rows of an f16 matrix; mean and rstd (f32) saved."""
    dblock, dwarps = layernorm_config(n_cols)
    BLOCK = BLOCK or dblock
    num_warps = num_warps or dwarps
    return kernel(ctx, "layernorm", "layernorm_fwd").prepare([x, y, w, b, mean, rstd, n_cols, n_cols, n_rows, n_cols, eps],
                                             consts={"BLOCK": BLOCK}, grid=(n_rows,), num_warps=num_warps,
                                             stream=stream)


def sum_many(ctx, ptrs, sizes, out, n_tensors, BLOCK=1024, num_warps=4, stream=0):
    """out[t] = sum of tensor t, whose address is ptrs[t] (device array of pointers) and length sizes[t] (i64)."""
    return kernel(ctx, "sum_many").prepare([ptrs, sizes, out, n_tensors], consts={"BLOCK": BLOCK},
                                            grid=(n_tensors,), num_warps=num_warps, stream=stream)


def w4a16_gemv(ctx, w, scales, x, y, N, K, GROUP=128, BLOCK_N=32, BLOCK_K=128, num_warps=4, stream=0):
    """y = dequant(w) @ x: w N x K/2 bytes of packed 4-bit weights, scales N x K/GROUP f16, x and y f16."""
    return kernel(ctx, "w4a16_gemv").prepare([w, scales, x, y, N, K, K // 2, K // GROUP],
                                              consts={"GROUP": GROUP, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K},
                                              grid=(cdiv(N, BLOCK_N),), num_warps=num_warps, stream=stream)


# The @autotune configs of examples/matmul.tile, in its order (triton_kernels.MATMUL_CONFIGS
# gives Triton's autotuner the same ones). selftest.py checks them against the file.
MATMUL_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 5},
]


# The tiles of the persistent descriptor matmul rows (bench/rows_tma.py), both sides:
# the first two configs of examples/matmul_persistent.tile's @autotune (four stages:
# with TMA the copies of two K steps in flight) and the three-stage ones of
# MATMUL_CONFIGS. Triton's kernel may not fit four stages of 128 x 256 x 64 in
# shared memory; the rows report what each side ran.
PERSISTENT_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    # warp-specialized (the kernel's last two @autotune configs)
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 5,
     "warp_specialize": 1},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 6,
     "warp_specialize": 1},
]


def matmul(ctx, a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, config=None,
           stream=0):
    """c = a @ b, f16 in and out, f32 accumulation. config: a dict of MATMUL_CONFIGS's
    form (consts, num_warps, num_stages); None leaves the consts open, so that the
    first launch autotunes over the kernel's @autotune configs (grid from the
    kernel's grid clause either way)."""
    k = kernel(ctx, "matmul")
    consts = {key: v for key, v in (config or {}).items() if key not in ("num_warps", "num_stages")}
    cfg = config or {}
    return k.prepare([a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn],
                     consts=consts, num_warps=cfg.get("num_warps", 0), num_stages=cfg.get("num_stages", 0),
                     stream=stream)


# The attention kernels, forward and backward: the standard library's (blk.nn.attention's).
ATTENTION = "stdlib/nn/attention"

# Attention forward: (BLOCK_M, BLOCK_N, warps, stages) tried on both sides of bench.py's
# attention rows (triton_kernels.attention takes the same dicts). HEAD_DIM is the data's.
ATTENTION_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 2},
]


def attention(ctx, q, k, v, o, lse, Z, H, N_CTX, HEAD_DIM, stride_q, stride_k, stride_v, stride_o, scale,
              BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3, causal=False, stream=0):
    """Flash-attention forward of stdlib/nn/attention.tile (kernel attention_fwd):
    o = softmax(scale * q k^T [causal mask]) v and lse[zh, i] = the natural-log
    logsumexp of row i of scale * q k^T. q, k, v, o: f16, Z x H x N_CTX x HEAD_DIM
    tensors addressed through strides in elements, each stride_* a 4-tuple
    (z, h, position, d); lse: Z*H x N_CTX f32, contiguous. Grid from the
    kernel's grid clause: (cdiv(N_CTX, BLOCK_M), Z * H)."""
    strides = [int(s) for st in (stride_q, stride_k, stride_v, stride_o) for s in st]
    if len(strides) != 16:
        raise ValueError("attention: four strides for each of q, k, v and o")
    return kernel(ctx, ATTENTION, "attention_fwd").prepare(
        [q, k, v, o, lse, *strides, Z, H, N_CTX, float(scale)],
        consts={"HEAD_DIM": HEAD_DIM, "BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "CAUSAL": int(bool(causal))},
        num_warps=num_warps, num_stages=num_stages, stream=stream)



# Attention backward (stdlib/nn/attention.tile's backward kernels): KV_M x KV_N the query rows and keys
# of attention_bwd_dkdv's steps, Q_M x Q_N those of attention_bwd_dq (deterministic) and
# the row blocks of the preprocessing; ATOMIC_DQ: dQ by f32 atomics from the dK/dV kernel
# instead. num_warps and num_stages apply to the dK/dV and dQ kernels. Triton's side
# (triton_kernels.attention_bwd, always two kernels) takes the same dicts.
ATTENTION_BWD_CONFIGS = [
    {"KV_M": 32, "KV_N": 64, "Q_M": 64, "Q_N": 32, "num_warps": 4, "num_stages": 2, "ATOMIC_DQ": False},
    {"KV_M": 32, "KV_N": 128, "Q_M": 128, "Q_N": 32, "num_warps": 8, "num_stages": 2, "ATOMIC_DQ": False},
    {"KV_M": 64, "KV_N": 128, "Q_M": 128, "Q_N": 64, "num_warps": 8, "num_stages": 2, "ATOMIC_DQ": False},
    {"KV_M": 16, "KV_N": 64, "Q_M": 64, "Q_N": 16, "num_warps": 4, "num_stages": 3, "ATOMIC_DQ": False},
    {"KV_M": 32, "KV_N": 64, "Q_M": 64, "Q_N": 32, "num_warps": 4, "num_stages": 3, "ATOMIC_DQ": False},
    {"KV_M": 32, "KV_N": 64, "Q_M": 64, "Q_N": 32, "num_warps": 4, "num_stages": 2, "ATOMIC_DQ": True},
    {"KV_M": 32, "KV_N": 128, "Q_M": 128, "Q_N": 32, "num_warps": 8, "num_stages": 2, "ATOMIC_DQ": True},
]


def attention_bwd_config_text(c):
    """A backward config in a few characters: kv 32×64 q 64×32 w4 s2 (atomic dQ)."""
    return (f"kv {c['KV_M']}×{c['KV_N']} q {c['Q_M']}×{c['Q_N']} w{c['num_warps']} s{c['num_stages']}"
            + (" atomic dQ" if c["ATOMIC_DQ"] else ""))


def attention_backward(ctx, q, k, v, o, dout, lse, delta, dq, dk, dv, dq_acc, Z, H, H_KV, N_CTX, HEAD_DIM, scale,
                       config, T="f16", causal=False, stream=0):
    """The backward of stdlib/nn/attention.tile's forward (its attention_bwd_* kernels):
    dq, dk, dv from q, k, v, o, dout (dO) and the forward's lse, through delta (Z*H x N_CTX
    f32 scratch) and, with config["ATOMIC_DQ"], dq_acc (f32, q's size; else any non-null
    address: unused). q, o, dout, dq: contiguous Z x H x N_CTX x HEAD_DIM of T; k, v, dk,
    dv: Z x H_KV x N_CTX x HEAD_DIM (H_KV divides H). Returns a function that launches
    the three kernels in order (preprocessing, dK/dV, then dQ or the f32-to-T cast)."""
    c = config
    atomic = bool(c["ATOMIC_DQ"])
    common = {"T": T, "HEAD_DIM": HEAD_DIM}
    mods = {name: kernel(ctx, ATTENTION, name) for name in
            ("attention_bwd_preprocess", "attention_bwd_dkdv", "attention_bwd_dq", "attention_bwd_dq_cast")}
    pre = mods["attention_bwd_preprocess"].prepare(
        [o, dout, delta, dq_acc, Z, H, N_CTX], consts=dict(common, BLOCK_M=c["Q_M"], ATOMIC_DQ=atomic),
        stream=stream)
    kv = mods["attention_bwd_dkdv"].prepare(
        [q, k, v, dout, lse, delta, dk, dv, dq_acc, Z, H, N_CTX, float(scale)],
        consts=dict(common, BLOCK_M=c["KV_M"], BLOCK_N=c["KV_N"], CAUSAL=bool(causal), GROUP=H // H_KV,
                    ATOMIC_DQ=atomic), num_warps=c["num_warps"], num_stages=c["num_stages"], stream=stream)
    if atomic:
        last = mods["attention_bwd_dq_cast"].prepare([dq_acc, dq, Z, H, N_CTX], consts=dict(common, BLOCK_M=c["Q_M"]),
                                                   stream=stream)
    else:
        last = mods["attention_bwd_dq"].prepare(
            [q, k, v, dout, lse, delta, dq, Z, H, N_CTX, float(scale)],
            consts=dict(common, BLOCK_M=c["Q_M"], BLOCK_N=c["Q_N"], CAUSAL=bool(causal), GROUP=H // H_KV),
            num_warps=c["num_warps"], num_stages=c["num_stages"], stream=stream)

    def run():
        pre()
        kv()
        last()
    return run

# ---- issue 12: bench/kernels/matmul_tc.tile ----

def bench_kernel(ctx, file, name=None):
    """Kernel `name` (default: `file`) of bench/kernels/FILE.tile, loaded once per context."""
    key = (id(ctx), "bench/kernels/" + file, name)
    if key not in _modules:
        _modules[key] = ctx.load(f"bench/kernels/{file}.tile").kernel(name or file)
    return _modules[key]


def config_text(cfg):
    """A matmul config in a few characters: 128×256×64 g8 w8 s3."""
    return (f"{cfg['BLOCK_M']}×{cfg['BLOCK_N']}×{cfg['BLOCK_K']} g{cfg['GROUP_M']} w{cfg['num_warps']} "
            f"s{cfg['num_stages']}" + (" persistent" if cfg.get("kernel") == "persistent" else ""))


def _mm_configs(shapes):
    return [{"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "num_warps": w, "num_stages": s}
            for m, n, k, w, s in shapes]


# The @autotune configs of each kernel family of bench/kernels/matmul_tc.tile, in its
# order (selftest.py checks them against the file). Triton's side of a row tries the
# same ones. f16/bf16: examples/matmul.tile's; f32: K slices of 32; 8-bit: of 128 and 64.
MATMUL_TC_CONFIGS = {
    "16bit": MATMUL_CONFIGS,
    "f32": _mm_configs([(128, 256, 32, 8, 4), (128, 128, 32, 8, 4), (128, 256, 32, 8, 3), (64, 64, 32, 4, 5)]),
    "8bit": _mm_configs([(128, 256, 128, 8, 3), (128, 128, 128, 8, 3), (128, 64, 64, 4, 4), (64, 64, 64, 4, 5)]),
}

# input type -> (kernel of matmul_tc.tile, its epilogue kernel or None, output type); the
# types are blk's names. blkffi.TORCH_DTYPES maps torch's names to these.
MATMUL_TC_KERNELS = {
    "f16": ("matmul_f16", "matmul_f16_bias_relu", "f16"),
    "bf16": ("matmul_bf16", "matmul_bf16_bias_relu", "bf16"),
    "f32": ("matmul_f32", None, "f32"),
    "f8e4m3": ("matmul_f8e4m3", None, "f16"),
    "i8": ("matmul_i8", None, "i32"),
}


def matmul_tc_family(dtype):
    """The MATMUL_TC_CONFIGS key of an input type (blk's name)."""
    return "16bit" if dtype in ("f16", "bf16") else "f32" if dtype == "f32" else "8bit"


def matmul_persistent_tc(ctx, dtype, a, b, c, M, N, K, stride_am, stride_bk, stride_cm, bias=None, config=None,
                         stream=0):
    """c = a @ b (with bias: relu(a @ b + bias[n])) by bench/kernels/matmul_persistent_tc.tile,
    dtype f16 or bf16 (a, b, c and bias), rows contiguous; by TMA on sm_90a. config: a dict
    of PERSISTENT_CONFIGS's form, or None (the kernel's @autotune). Grid from its clause."""
    if dtype not in ("f16", "bf16"):
        raise ValueError(f"matmul_persistent_tc: f16 or bf16, not {dtype}")
    k = bench_kernel(ctx, "matmul_persistent_tc")
    consts = {key: v for key, v in (config or {}).items() if key not in ("num_warps", "num_stages", "kernel")}
    consts.update(T=dtype, BIAS=bias is not None)
    if config:
        consts["tma"] = 1
    cfg = config or {}
    return k.prepare([a, b, c, c if bias is None else bias, M, N, K, stride_am, stride_bk, stride_cm], consts=consts,
                     num_warps=cfg.get("num_warps", 0), num_stages=cfg.get("num_stages", 0), stream=stream)


def matmul_tc(ctx, dtype, a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
              bias=None, config=None, stream=0):
    """c = a @ b (with bias: relu(a @ b + bias[n])) by the kernel of matmul_tc.tile for input
    type `dtype` (blk's name: f16, bf16, f32, f8e4m3, i8); c of MATMUL_TC_KERNELS's output type,
    bias (N elements) of c's type. config: a dict of MATMUL_TC_CONFIGS's form, or None (the
    kernel's @autotune). Grid from the kernel's grid clause."""
    plain, fused, _ = MATMUL_TC_KERNELS[dtype]
    if bias is not None and fused is None:
        raise ValueError(f"matmul_tc: no bias + relu kernel for {dtype}")
    k = bench_kernel(ctx, "matmul_tc", plain if bias is None else fused)
    consts = {key: v for key, v in (config or {}).items() if key not in ("num_warps", "num_stages")}
    cfg = config or {}
    args = [a, b, c] + ([] if bias is None else [bias]) + [M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                                                           stride_cm, stride_cn]
    return k.prepare(args, consts=consts, num_warps=cfg.get("num_warps", 0), num_stages=cfg.get("num_stages", 0),
                     stream=stream)


# Triton's side of the issue-12 attention rows (triton_kernels.attention_tma): BLOCK_M 128
# (its causal split needs BLOCK_N to divide BLOCK_M), each tried with and without
# warp_specialize. blk's side tries ATTENTION_CONFIGS in the attention rows of bench.py,
# and these in the descriptor rows of rows_tma.py.
ATTENTION_TMA_CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 2},
]


def check_main(label, interpreter_check, triton_compile_check, argv):
    """The main() of a rows file's CPU checks: --triton compiles its Triton
    kernels (triton_compile_check() -> the number that failed), else each
    (name, error, tolerance) of interpreter_check() is printed ok or FAIL.
    Returns the exit status."""
    if "--triton" in argv:
        return 1 if triton_compile_check() else 0
    bad = 0
    for name, e, tol in interpreter_check():
        bad += not e <= tol
        print(f"{'ok' if e <= tol else 'FAIL'} {name}: max rel err {e:.2g} (tolerance {tol:g})")
    print(f"{label} interpreter check: {'FAIL' if bad else 'OK'}")
    return 1 if bad else 0
