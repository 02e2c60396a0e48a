#!/usr/bin/env python3
"""triton_check.py: compiles the issue-12 Triton kernels of triton_kernels.py for sm_90, no GPU needed.

    pip install triton==3.6.0      (no torch needed; a virtual environment will do)
    python3 bench/triton_check.py [--quick]

Triton compiles for a target given by hand (triton.compile of an ASTSource,
GPUTarget("cuda", 90, 32)) down to a cubin with the ptxas its wheel ships,
without a driver. This compiles each config bench.py gives Triton's side of the
issue-12 rows (blk_calls.MATMUL_TC_CONFIGS for _matmul_tc in every input type,
plain and with the bias + relu epilogue; blk_calls.PERSISTENT_CONFIGS for
_matmul_persistent_tma in f16 and bf16, plain and with it; blk_calls.ATTENTION_TMA_CONFIGS, with
and without warp specialization, for _attention_fwd_tma at HEAD_DIM 64 and 128,
causal and not; the issue-29 attention backward's kernels over the deterministic
blk_calls.ATTENTION_BWD_CONFIGS), with the specializations a launch on the benchmark's tensors
gets (pointers and sizes divisible by 16, unit strides constant). It prints one
line a kernel: ok with the registers, spills and shared memory, or the error;
a config that does not compile here fails on the GPU too, and bench.py then
reports it (a warp-specialized attention that does not compile makes bench.py
fall back). Exit status 1 when a kernel that bench.py needs without a fallback
(every matmul, the attention kernel without warp specialization) fails.
It runs nothing: whether the kernels compute the right thing is checked by
bench.py on the GPU, against torch in float64, before anything is timed.
"""

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import blk_calls as bc  # noqa: E402
import triton_kernels as tk  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
DIV16 = [["tt.divisibility", 16]]


def compile_one(fn, signature, constexprs, div16, options):
    """triton.compile of fn with these argument types (name -> "*fp16", "i32", "constexpr"),
    constexpr values, the arguments named in div16 divisible by 16, and options (num_warps ...)."""
    names = fn.arg_names
    attrs = {(names.index(n),): DIV16 for n in div16}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=TARGET, options=options)


def describe(kernel):
    md = kernel.metadata
    n_regs = getattr(kernel, "n_regs", None)
    n_spills = getattr(kernel, "n_spills", None)
    parts = [f"shared {getattr(md, 'shared', '?')} B", f"{getattr(md, 'num_warps', '?')} warps"]
    if n_regs is not None:
        parts.append(f"{n_regs} regs")
    if n_spills is not None:
        parts.append(f"{n_spills} spills")
    ptx = kernel.asm.get("ptx", "")
    parts.append("wgmma" if "wgmma" in ptx else "mma.sync" if "mma.sync" in ptx else "no mma")
    if "cp.async.bulk.tensor" in ptx:
        parts.append("TMA")
    return ", ".join(parts)


MATMUL_TYPES = [  # (name, a and b, c)
    ("f16", "*fp16", "*fp16"), ("bf16", "*bf16", "*bf16"), ("f32", "*fp32", "*fp32"),
    ("f8e4m3", "*fp8e4nv", "*fp16"), ("i8", "*i8", "*i32"),
]
TORCH_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f8e4m3": "float8_e4m3fn", "i8": "int8"}


def matmul_cases(quick):
    for name, ab, c in MATMUL_TYPES:
        for bias in ((False, True) if name in ("f16", "bf16") else (False,)):
            kind = tk.matmul_tc_kind(TORCH_NAMES[name])
            k_major_b = name in ("f8e4m3", "i8")  # bench.py's layout of b
            configs = bc.MATMUL_TC_CONFIGS[bc.matmul_tc_family(name)]
            for cfg in (configs[:1] if quick else configs):
                sig = {"a_ptr": ab, "b_ptr": ab, "c_ptr": c, "bias_ptr": c, "M": "i32", "N": "i32", "K": "i32",
                       "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "i32",
                       "stride_cm": "i32", "stride_cn": "constexpr"}
                consts = {"stride_ak": 1, "stride_cn": 1, "DOT_KIND": kind, "BIAS_RELU": bias}
                if k_major_b:
                    sig["stride_bk"] = "constexpr"
                    consts["stride_bk"] = 1
                    div = ["stride_bn"]
                else:
                    sig["stride_bn"] = "constexpr"
                    consts["stride_bn"] = 1
                    div = ["stride_bk"]
                for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "DOT_KIND", "BIAS_RELU"):
                    sig[key] = "constexpr"
                consts.update({k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")})
                div += ["a_ptr", "b_ptr", "c_ptr", "bias_ptr", "M", "N", "K", "stride_am", "stride_cm"]
                label = f"_matmul_tc {name}{' bias+relu' if bias else ''} {bc.config_text(cfg)}"
                yield label, True, (tk._matmul_tc, sig, consts, div,
                                    {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})


def persistent_cases(quick):
    """_matmul_persistent_tma (the 16-bit rows' persistent kernel) for f16 and bf16, plain and
    with bias + relu, over blk_calls.PERSISTENT_CONFIGS (four stages of 128 x 256 may not fit:
    bench.py then keeps the others)."""
    for name, ab, _ in MATMUL_TYPES[:2]:
        for bias in (False, True):
            for cfg in (bc.PERSISTENT_CONFIGS[1:2] if quick else bc.PERSISTENT_CONFIGS):
                sig = {"a_ptr": ab, "b_ptr": ab, "c_ptr": ab, "bias_ptr": ab, "M": "i32", "N": "i32", "K": "i32",
                       "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
                for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "NUM_SMS", "BIAS_RELU"):
                    sig[key] = "constexpr"
                consts = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
                consts.update(NUM_SMS=132, BIAS_RELU=bias)
                label = f"_matmul_persistent_tma {name}{' bias+relu' if bias else ''} {bc.config_text(cfg)}"
                yield label, cfg["num_stages"] < 4 or cfg["BLOCK_N"] < 256, (
                    tk._matmul_persistent_tma, sig, consts,
                    ["a_ptr", "b_ptr", "c_ptr", "bias_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"],
                    {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})


def attention_cases(quick):
    for d in (64, 128):
        for causal in (False, True):
            for cfg in (bc.ATTENTION_TMA_CONFIGS[:1] if quick else bc.ATTENTION_TMA_CONFIGS):
                for ws in (True, False):
                    sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "lse_ptr": "*fp32",
                           "Z": "i32", "H": "i32", "N_CTX": "i32", "scale": "fp32", "HEAD_DIM": "constexpr",
                           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "CAUSAL": "constexpr",
                           "WARP_SPECIALIZE": "constexpr"}
                    consts = {"HEAD_DIM": d, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "CAUSAL": causal,
                              "WARP_SPECIALIZE": ws}
                    label = (f"_attention_fwd_tma d{d}{' causal' if causal else ''} {cfg['BLOCK_M']}x{cfg['BLOCK_N']} "
                             f"w{cfg['num_warps']} s{cfg['num_stages']}{' warp-specialized' if ws else ''}")
                    yield label, not ws, (tk._attention_fwd_tma, sig, consts,
                                          ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "lse_ptr", "N_CTX"],
                                          {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})


def attention_bwd_cases(quick):
    """The three kernels of triton_kernels.attention_bwd (f16, the issue-29 rows) at HEAD_DIM
    64 and 128, causal and not, over the deterministic configs of blk_calls.ATTENTION_BWD_CONFIGS."""
    ptrs = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "do_ptr": "*fp16", "lse_ptr": "*fp32",
            "delta_ptr": "*fp32"}
    configs = [c for c in bc.ATTENTION_BWD_CONFIGS if not c["ATOMIC_DQ"]]
    for d in (64, 128):
        sig = {"o_ptr": "*fp16", "do_ptr": "*fp16", "delta_ptr": "*fp32", "N_CTX": "i32", "HEAD_DIM": "constexpr",
               "BLOCK_M": "constexpr"}
        yield f"_attn_bwd_delta d{d}", True, (tk._attn_bwd_delta, sig, {"HEAD_DIM": d, "BLOCK_M": 64},
                                              ["o_ptr", "do_ptr", "delta_ptr", "N_CTX"], {"num_warps": 4})
        for causal in (False, True):
            for cfg in (configs[:1] if quick else configs):
                opts = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
                for fn, outs, bm, bn in ((tk._attn_bwd_dkdv, ("dk_ptr", "dv_ptr"), cfg["KV_M"], cfg["KV_N"]),
                                         (tk._attn_bwd_dq, ("dq_ptr",), cfg["Q_M"], cfg["Q_N"])):
                    sig = dict(ptrs, **{o: "*fp16" for o in outs}, N_CTX="i32", scale="fp32", HEAD_DIM="constexpr",
                               BLOCK_M="constexpr", BLOCK_N="constexpr", CAUSAL="constexpr")
                    label = (f"{fn.fn.__name__} d{d}{' causal' if causal else ''} {bm}x{bn} w{cfg['num_warps']} "
                             f"s{cfg['num_stages']}")
                    yield label, True, (fn, sig, {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal},
                                        list(ptrs) + list(outs) + ["N_CTX"], opts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the first config of each kernel only")
    args = ap.parse_args()
    print(f"Triton {triton.__version__}, target {TARGET}")
    bad = 0
    ws_ok = ws_bad = 0
    cases = (list(matmul_cases(args.quick)) + list(persistent_cases(args.quick)) + list(attention_cases(args.quick))
             + list(attention_bwd_cases(args.quick)))
    for label, needed, (fn, sig, consts, div, opts) in cases:
        t0 = time.time()
        try:
            k = compile_one(fn, sig, consts, div, opts)
            print(f"ok   {label}: {describe(k)} ({time.time() - t0:.1f} s)", flush=True)
            if "warp-specialized" in label:
                ws_ok += 1
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            print(f"{'FAIL' if needed else 'no  '} {label}: {type(e).__name__}: "
                  f"{lines[-1][:300] if lines else ''} ({time.time() - t0:.1f} s)", flush=True)
            if os.environ.get("TRITON_CHECK_TRACEBACK"):
                traceback.print_exc()
            if needed:
                bad += 1
            else:
                ws_bad += 1
    print(f"warp-specialized attention: {ws_ok} compiled, {ws_bad} did not (bench.py falls back to the others)")
    print(f"{bad} needed kernels failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
