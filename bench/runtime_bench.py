"""runtime_bench.py: the Runtime table of the benchmark (bench.py runs it last).

Three parts, each its own --only name:

  launch_c  Launch overhead from C: bench/launch.c (build/bench/launch, from
            `make bench-bins`; built here with cc when missing) times blk_launch
            against a raw cuLaunchKernel of the same cubin, for kernels of 3 and
            20 arguments (its header says how). The row of the kernel table
            "launch overhead, from Python" is repeated here beside it.
  compile   Compile time of softmax, layernorm and matmul, in this (warm)
            process: blk from source to a loaded cubin with the disk cache off
            (BLK_CACHE=0; a fresh module each time, so parsing counts), median
            of 5, with blk_compile_info's phases; Triton's first call of a new
            JITFunction of the same kernel with an empty cache directory
            (TRITON_CACHE_DIR), median of 5. Triton builds a C launcher for each
            new kernel signature and caches it in the same directory: the ratio
            uses trials whose fresh directory holds the launcher already (what a
            user with a warm cache of other kernels sees; the notes give the
            trials with nothing at all cached). Then both sides' disk-cache hits:
            a fresh module, or a fresh JITFunction, over a filled cache.
  autotune  The first call of an autotuned matmul (4096^3 f16) over
            examples/matmul.tile's four @autotune configs: blk_autotune then
            blk_launch, against a new @triton.autotune over the same configs,
            with nothing cached (compiling and timing every config), and with
            the compiled kernels in each one's disk cache. Which config each
            picked, each config's time as each autotuner measured it and by
            do_bench afterwards; "the autotuner picks the fastest config": blk's
            choice is the fastest of its own times, and within 3% of the fastest
            by do_bench.

Nothing here needs torch or triton at import: selftest.py imports it for
parse_launch_output.
"""

import contextlib
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import blkffi  # noqa: E402
import blk_calls as bc  # noqa: E402

PARTS = ["launch_c", "compile", "autotune"]
COMPILE_TRIALS = 5
TRITON_FULL_TRIALS = 3        # nothing cached at all (Triton builds its launcher too)
SWEEP_TRIALS = 3              # autotune sweeps with nothing cached, each side
WARM_SWEEP_TRIALS = 2         # with the compiled kernels on disk
PICK_TOLERANCE = 1.03         # "picks the fastest": within 3% of the fastest by do_bench

HEADER = ["runtime", "blk", "Triton / raw", "ratio", "target"]


class RRow:
    """One row of the Runtime table: cells as text."""

    def __init__(self, name, blk="—", peer="—", ratio="—", target=""):
        self.name, self.blk, self.peer, self.ratio, self.target = name, blk, peer, ratio, target
        self.data = {}

    def cells(self):
        return [self.name, self.blk, self.peer, self.ratio, self.target]


def verdict(ok):
    return "yes" if ok else "**no**"


def fmt_ms(ms):
    return f"{ms:.3g} ms" if ms < 10 else f"{ms:.0f} ms"


# ---- environment variables, set for a while -----------------------------------------

@contextlib.contextmanager
def env_set(**values):
    """Sets (str) or removes (None) environment variables, and puts them back after.
    libblk reads BLK_CACHE, BLK_ALWAYS_COMPILE and BLK_CACHE_DIR at each compilation."""
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def triton_cache(triton, path):
    """Triton's cache directory is `path` for a while (TRITON_CACHE_DIR, and
    triton.knobs.cache.dir where this Triton has knobs)."""
    knobs = getattr(triton, "knobs", None)
    cache = getattr(knobs, "cache", None) if knobs is not None else None
    had = cache is not None and "dir" in vars(cache)
    old = vars(cache).get("dir") if had else None
    with env_set(TRITON_CACHE_DIR=path):
        try:
            if cache is not None:
                cache.dir = path
            yield
        finally:
            if cache is not None:
                if had:
                    cache.dir = old
                else:
                    vars(cache).pop("dir", None)


def launcher_entries(cache_dir):
    """The entries of a Triton cache directory that hold a built launcher (__triton_launcher*)."""
    out = []
    for d in sorted(os.listdir(cache_dir)):
        p = os.path.join(cache_dir, d)
        if os.path.isdir(p) and any(f.startswith("__triton_launcher") for f in os.listdir(p)):
            out.append(p)
    return out


def fresh_dir(tmp_root, seed=()):
    d = tempfile.mkdtemp(prefix="triton-cache-", dir=tmp_root)
    for entry in seed:
        shutil.copytree(entry, os.path.join(d, os.path.basename(entry)))
    return d


# ---- launch overhead from C -----------------------------------------------------------

def parse_launch_output(text):
    """bench/launch's RESULT lines as dicts (args and launches ints, the rest floats)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("RESULT "):
            continue
        d = {}
        for field in line.split()[1:]:
            key, _, value = field.partition("=")
            d[key] = int(value) if key in ("args", "launches") else float(value)
        rows.append(d)
    return rows


def launch_program():
    """(path of the launch program, how it was found, libblk's path); path None when none can be had."""
    lib = os.path.abspath(os.environ.get("BLK_LIB") or os.path.join(blkffi.REPO, "build", "libblk.so"))
    src = os.path.join(HERE, "launch.c")
    exe = os.path.join(blkffi.REPO, "build", "bench", "launch")
    fresh = os.path.isfile(exe) and os.path.getmtime(exe) >= os.path.getmtime(src)
    if fresh:
        return exe, "build/bench/launch", lib
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        if os.path.isfile(exe):
            return exe, "build/bench/launch (older than bench/launch.c; no C compiler here to rebuild it)", lib
        return None, "build/bench/launch is missing (make bench-bins, and carry it) and there is no C compiler", lib
    out_dir = tempfile.mkdtemp(prefix="blk-bench-launch-")
    out = os.path.join(out_dir, "launch")
    cmd = [cc, "-std=c17", "-O2", "-D_GNU_SOURCE", "-I", os.path.join(blkffi.REPO, "runtime"), src, "-o", out, lib,
           "-Wl,-rpath," + os.path.dirname(lib), "-ldl"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"building bench/launch.c failed: {' '.join(cmd)}: {r.stderr.strip()[:400]}", lib
    return out, f"bench/launch.c built now with {cc}", lib


def part_launch_c(env, main_rows, out, notes):
    exe, how, lib = launch_program()
    print(f"  launch program: {how}", flush=True)
    rows = {n: RRow(f"launch from C, {n} args") for n in (3, 20)}
    out += rows.values()
    if exe is None:
        for r in rows.values():
            r.blk = r.peer = "ERROR"
        notes.append(f"launch from C: {how}")
    else:
        run_env = dict(os.environ)
        run_env["LD_LIBRARY_PATH"] = os.path.dirname(lib) + (":" + run_env["LD_LIBRARY_PATH"]
                                                             if run_env.get("LD_LIBRARY_PATH") else "")
        device = str(env.torch.cuda.current_device())
        r = subprocess.run([exe, device], capture_output=True, text=True, timeout=300, env=run_env)
        for line in (r.stdout + r.stderr).splitlines():
            print("  " + line, flush=True)
        results = {d["args"]: d for d in parse_launch_output(r.stdout)}
        if r.returncode != 0 or "no GPU" in r.stdout:
            why = (r.stderr.strip() or r.stdout.strip()).splitlines()
            notes.append(f"launch from C: bench/launch exited {r.returncode}: {why[-1] if why else ''}")
        for n, row in rows.items():
            d = results.get(n)
            if not d:
                row.blk = row.peer = "ERROR" if r.returncode else "—"
                continue
            row.data = d
            row.blk = f"{d['blk_us']:.2f} µs"
            row.peer = f"{d['raw_us']:.2f} µs (cuLaunchKernel)"
            row.ratio = f"{d['ratio']:.2f} (blk/raw)"
            row.target = f"≤ 1.25: {verdict(d['ratio'] <= 1.25)}"
            notes.append(f"launch from C, {n} args: {d['launches']} launches in a row, then one sync: "
                         f"cuLaunchKernel {d['raw_row_us']:.2f} µs host ({d['raw_row_sync_us']:.2f} with the sync), "
                         f"blk_launch {d['blk_row_us']:.2f} µs host ({d['blk_row_sync_us']:.2f} with the sync)")
        if 3 in results and 20 in results:
            r3, r20 = results[3]["ratio"], results[20]["ratio"]
            notes.append(f"launch from C: blk/raw {r3:.2f} with 3 arguments, {r20:.2f} with 20: "
                         f"flat in the argument count (within 0.10): {verdict(abs(r20 - r3) <= 0.10)}")
        if results:
            notes.append("launch from C: the median host time of one call over 10,000 launches, each timed alone "
                         "(batches of 500 with a sync between, outside the timing; raw and blk take turns), of a "
                         "one-program kernel; raw is the cubin of blk_kernel_compile's PTX for the same variant, "
                         "loaded with cuModuleLoadData")
    # the Python row of the kernel table, beside it
    py = next((r for r in main_rows if r.kernel == "launch overhead, from Python" and "prebuilt" in r.size), None)
    prow = RRow("launch from Python, vector add n=1 (with the sync)")
    out.append(prow)
    if py is not None and isinstance(py.ms.get("blk"), float) and isinstance(py.ms.get("Triton"), float):
        b, t = py.ms["blk"] * 1e3, py.ms["Triton"] * 1e3
        prow.blk, prow.peer, prow.ratio = f"{b:.2f} µs", f"{t:.2f} µs (Triton)", f"{t / b:.1f}× (Triton/blk)"
    else:
        prow.blk = prow.peer = "not run" if py is None else "—"


# ---- compile time -----------------------------------------------------------------------

def blk_compile_trials(make, forget, n):
    """n compilations, each of a fresh module: make() -> a prepared Launch (loading the
    module), then blk_kernel_compile. A list of info dicts with 'total' (ms, wall)."""
    out = []
    for _ in range(n):
        old = forget()
        if old is not None:
            old.module.destroy()
        t0 = time.perf_counter()
        go = make()
        info = go.compile()
        info["total"] = (time.perf_counter() - t0) * 1e3
        info.pop("ptx", None)
        out.append(info)
    return out


def triton_first_call(env, jit, call, cache_dir):
    """ms of the first call of a new JITFunction of `jit`'s code, with Triton's cache in cache_dir."""
    torch = env.torch
    k = env.tk.fresh_jit(jit)
    with triton_cache(env.triton, cache_dir):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call(k)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
    return (t1 - t0) * 1e3


def compile_cases(env):
    """(name, what, blk make, blk forget, Triton JITFunction, Triton call) for each kernel."""
    torch, tk, ctx, dev = env.torch, env.tk, env.ctx, env.dev
    cases = []
    M, N = 1024, 1024
    x = torch.randn(M, N, device=dev)
    o = torch.empty_like(x)
    block = bc.next_power_of_2(N)
    warps = bc.softmax_warps(block)
    cases.append(("softmax", f"f32 {M}×{N}, BLOCK {block}, {warps} warps",
                  lambda: bc.softmax(ctx, x.data_ptr(), o.data_ptr(), M, N, stream=env.stream),
                  lambda: bc.fresh(ctx, "softmax"), tk._softmax,
                  lambda k: k[(M,)](x, o, x.stride(0), o.stride(0), N, BLOCK=block, num_warps=warps)))
    LM, LN, eps = 256, 8192, 1e-5
    lx = torch.randn(LM, LN, device=dev).half()
    ly = torch.empty_like(lx)
    lw = torch.rand(LN, device=dev).half()
    lb = torch.rand(LN, device=dev).half()
    mean, rstd = torch.empty(LM, device=dev), torch.empty(LM, device=dev)
    lblock, lwarps = bc.layernorm_config(LN)
    cases.append(("layernorm", f"f16 {LM}×{LN}, BLOCK {lblock}, {lwarps} warps",
                  lambda: bc.layernorm(ctx, lx.data_ptr(), ly.data_ptr(), lw.data_ptr(), lb.data_ptr(),
                                       mean.data_ptr(), rstd.data_ptr(), LM, LN, eps, stream=env.stream),
                  lambda: bc.fresh(ctx, "layernorm", "layernorm_fwd"), tk._layernorm_fwd,
                  lambda k: k[(LM,)](lx, ly, lw, lb, mean, rstd, lx.stride(0), ly.stride(0), LN, eps, BLOCK=lblock,
                                     num_warps=lwarps)))
    S = 1024
    a = torch.randn(S, S, device=dev).half()
    b = torch.randn(S, S, device=dev).half()
    c = torch.empty(S, S, device=dev, dtype=torch.float16)
    cfg = bc.MATMUL_CONFIGS[1]
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    cases.append(("matmul", f"f16 {S}³, config {config_text(cfg)}",
                  lambda: bc.matmul(ctx, a.data_ptr(), b.data_ptr(), c.data_ptr(), S, S, S, *strides, config=cfg,
                                    stream=env.stream),
                  lambda: bc.fresh(ctx, "matmul"), tk._matmul,
                  lambda k: tk.matmul(a, b, c, cfg, kernel=k)))
    return cases


def part_compile(env, out, notes):
    tmp_root = tempfile.mkdtemp(prefix="blk-bench-compile-")
    try:
        # both compilers warm in this process (imports, the driver's JIT, Triton's backend)
        xs = env.torch.randn(4096, device=env.dev)
        with env_set(BLK_CACHE="0"):
            blk_compile_trials(lambda: bc.vector_add(env.ctx, xs.data_ptr(), xs.data_ptr(), xs.data_ptr(), 4096,
                                                     stream=env.stream),
                               lambda: bc.fresh(env.ctx, "vector_add"), 1)
        triton_first_call(env, env.tk._add, lambda k: k[(4,)](xs, xs, xs, 4096, BLOCK=1024), fresh_dir(tmp_root))
        for name, what, make, forget, jit, call in compile_cases(env):
            compile_one(env, out, notes, tmp_root, name, what, make, forget, jit, call)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    notes.append("compile: blk = loading the module (parse, check) and blk_kernel_compile (IR, passes, the LLVM pipeline, PTX, "
                 "then the driver's JIT: cuModuleLoadDataEx, whose own JIT cache may serve the trials after the first), "
                 "BLK_CACHE=0, a fresh module each trial; Triton = the "
                 "first call of a new JITFunction of the kernel (compile, load, launch) with an empty cache directory "
                 "but for its launcher; medians of 5, in this process after every other row (warm)")


def compile_one(env, out, notes, tmp_root, name, what, make, forget, jit, call):
    print(f"  compile {name} ({what})", flush=True)
    row = RRow(f"compile {name}, source → cubin, no cache")
    ptx_row = RRow(f"{name}: source → PTX (blk)") if name == "softmax" else None
    hit = RRow(f"compile {name}, disk-cache hit")
    out += [r for r in (row, ptx_row, hit) if r is not None]
    # blk, the disk cache off
    try:
        with env_set(BLK_CACHE="0"):
            cold = blk_compile_trials(make, forget, COMPILE_TRIALS)
        if any(i["from_disk_cache"] or i["ms_llvm"] <= 0 for i in cold):
            raise RuntimeError("blk: a compilation with BLK_CACHE=0 did not compile (from the disk cache, or no LLVM "
                               "time)")
        blk_ms = statistics.median(i["total"] for i in cold)
        phases = {label: statistics.median(i[key] for i in cold) for key, label in blkffi.COMPILE_PHASES}
        to_ptx = statistics.median(sum(i[k] for k, _ in blkffi.COMPILE_PHASES[:5]) for i in cold)
        row.blk = fmt_ms(blk_ms)
        row.data["blk"] = {"total_ms": [i["total"] for i in cold], "phases_ms": phases, "to_ptx_ms": to_ptx}
        notes.append(f"compile {name} ({what}): blk {fmt_ms(blk_ms)}: " +
                     ", ".join(f"{label} {v:.2f}" for label, v in phases.items()) +
                     f" ms (medians); source → PTX {to_ptx:.1f} ms; trials " +
                     ", ".join(f"{i['total']:.1f}" for i in cold) + " ms")
        print(f"    blk, no cache: {blk_ms:.1f} ms (" + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()) + ")",
              flush=True)
        if ptx_row is not None:
            ptx_row.blk = fmt_ms(to_ptx)
            ptx_row.target = f"≤ 20 ms: {verdict(to_ptx <= 20)}"
    except Exception as e:
        row.blk = "ERROR"
        blk_ms = None
        print(f"  ERROR compile {name} [blk]:", flush=True)
        traceback.print_exc()
        notes.append(f"compile {name}: blk: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
    # blk, a hit in a filled disk cache
    blk_hit = None
    try:
        cache = tempfile.mkdtemp(prefix="blk-cache-", dir=tmp_root)
        with env_set(BLK_CACHE=None, BLK_ALWAYS_COMPILE=None, BLK_CACHE_DIR=cache):
            blk_compile_trials(make, forget, 1)
            hits = blk_compile_trials(make, forget, COMPILE_TRIALS)
        if not all(i["from_disk_cache"] for i in hits):
            raise RuntimeError("blk: the disk cache was not hit")
        blk_hit = statistics.median(i["total"] for i in hits)
        hit.blk = fmt_ms(blk_hit)
        hit.data["blk"] = {"total_ms": [i["total"] for i in hits],
                           "phases_ms": {label: statistics.median(i[key] for i in hits)
                                         for key, label in blkffi.COMPILE_PHASES}}
        print(f"    blk, disk-cache hit: {blk_hit:.2f} ms", flush=True)
    except Exception as e:
        hit.blk = "ERROR"
        print(f"  ERROR compile {name} [blk, cache hit]:", flush=True)
        traceback.print_exc()
        notes.append(f"compile {name}: blk cache hit: {type(e).__name__}: {str(e)[:200]}")
    # Triton: nothing cached; then only the launcher cached; then a full cache
    try:
        full, last = [], None
        for _ in range(TRITON_FULL_TRIALS):
            last = fresh_dir(tmp_root)
            full.append(triton_first_call(env, jit, call, last))
        seed = launcher_entries(last)
        cold = [triton_first_call(env, jit, call, fresh_dir(tmp_root, seed)) for _ in range(COMPILE_TRIALS)]
        hits = [triton_first_call(env, jit, call, last) for _ in range(COMPILE_TRIALS)]
        t_ms, t_full, t_hit = statistics.median(cold), statistics.median(full), statistics.median(hits)
        row.peer = fmt_ms(t_ms) + " (Triton)"
        hit.peer = fmt_ms(t_hit) + " (Triton)"
        row.data["Triton"] = {"ms": cold, "nothing_cached_ms": full, "hit_ms": hits}
        print(f"    Triton: {t_ms:.0f} ms (launcher cached), {t_full:.0f} ms (nothing cached), hit {t_hit:.1f} ms",
              flush=True)
        notes.append(f"compile {name}: Triton {fmt_ms(t_ms)} with its launcher cached (trials " +
                     ", ".join(f"{v:.0f}" for v in cold) + f" ms); {fmt_ms(t_full)} with nothing cached (trials " +
                     ", ".join(f"{v:.0f}" for v in full) + f" ms; {len(seed)} launcher entr"
                     f"{'y' if len(seed) == 1 else 'ies'} in its cache); a disk-cache hit {fmt_ms(t_hit)}")
        if blk_ms:
            ratio = t_ms / blk_ms
            row.ratio = f"{ratio:.0f}× (Triton/blk)" if ratio >= 10 else f"{ratio:.1f}× (Triton/blk)"
            row.target = f"≥ 10×: {verdict(ratio >= 10)}"
        if blk_hit:
            hit.ratio = f"{t_hit / blk_hit:.1f}× (Triton/blk)"
    except Exception as e:
        row.peer = hit.peer = "ERROR"
        print(f"  ERROR compile {name} [Triton]:", flush=True)
        traceback.print_exc()
        notes.append(f"compile {name}: Triton: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")


# ---- autotuning ---------------------------------------------------------------------------

def config_text(cfg):
    return (f"{cfg['BLOCK_M']}×{cfg['BLOCK_N']}×{cfg['BLOCK_K']} g{cfg['GROUP_M']} w{cfg['num_warps']} "
            f"s{cfg['num_stages']}")


def triton_config_index(config):
    """The index in blk_calls.MATMUL_CONFIGS of a triton.Config, or None."""
    for i, c in enumerate(bc.MATMUL_CONFIGS):
        consts = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
        if dict(config.kwargs) == consts and config.num_warps == c["num_warps"] and \
                config.num_stages == c["num_stages"]:
            return i
    return None


def max_rel_err(torch, out, ref):
    out = out.to(torch.float64)
    if not bool(torch.isfinite(out).all()):
        return math.inf
    return (out - ref).abs_().max().item() / (ref.abs().max().item() or 1.0)


def part_autotune(env, out, notes):
    torch, tk, ctx, dev = env.torch, env.tk, env.ctx, env.dev
    S = 4096
    M = N = K = S
    a = torch.randn(M, K, device=dev).half()
    b = torch.randn(K, N, device=dev).half()
    ref = a.double() @ b.double()
    cb = torch.empty(M, N, device=dev, dtype=torch.float16)
    ct = torch.empty_like(cb)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), cb.stride(0), cb.stride(1))
    flops = 2.0 * M * N * K
    configs = bc.MATMUL_CONFIGS
    size = f"matmul {S}³ f16, {len(configs)} configs"
    cold_row = RRow(f"autotune sweep, {size}, first call, nothing cached")
    warm_row = RRow(f"autotune sweep, {size}, compiled kernels on disk")
    pick_row = RRow("autotune choice (matmul)")
    fast_row = RRow("autotuner picks the fastest config")
    out += [cold_row, warm_row, pick_row, fast_row]
    tmp_root = tempfile.mkdtemp(prefix="blk-bench-tune-")

    def blk_sweep():
        old = bc.fresh(ctx, "matmul")
        if old is not None:
            old.module.destroy()
        cb.fill_(math.nan)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        go = bc.matmul(ctx, a.data_ptr(), b.data_ptr(), cb.data_ptr(), M, N, K, *strides, stream=env.stream)
        res = go.autotune()
        go()
        torch.cuda.synchronize()
        s = time.perf_counter() - t0
        err = max_rel_err(torch, cb, ref)
        if not err <= 1e-2:
            raise RuntimeError(f"blk: the tuned matmul is wrong: max rel err {err:.3g}")
        return s, res

    def triton_sweep(cache_dir):
        tuned = tk.make_matmul_autotuned()
        ct.fill_(math.nan)
        with triton_cache(env.triton, cache_dir):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            tk.matmul_autotuned(a, b, ct, tuned)
            torch.cuda.synchronize()
            s = time.perf_counter() - t0
        err = max_rel_err(torch, ct, ref)
        if not err <= 1e-2:
            raise RuntimeError(f"Triton: the tuned matmul is wrong: max rel err {err:.3g}")
        timings = {}
        for cfg, t in getattr(tuned, "configs_timings", {}).items():
            i = triton_config_index(cfg)
            if i is not None:
                timings[i] = t[0] if isinstance(t, (list, tuple)) else t
        return s, triton_config_index(tuned.best_config), timings, getattr(tuned, "bench_time", None)

    blk_res = blk_picks = None
    tri_picks, tri_timings = None, {}
    seconds = {}  # (row name, side) -> median s
    try:
        # blk: nothing cached (BLK_CACHE=0), then compiled variants on disk
        try:
            with env_set(BLK_CACHE="0"):
                cold = [blk_sweep() for _ in range(SWEEP_TRIALS)]
            cache = tempfile.mkdtemp(prefix="blk-cache-", dir=tmp_root)
            with env_set(BLK_CACHE=None, BLK_ALWAYS_COMPILE=None, BLK_CACHE_DIR=cache):
                blk_sweep()
                warm = [blk_sweep() for _ in range(WARM_SWEEP_TRIALS)]
            blk_cold, blk_warm = statistics.median(s for s, _ in cold), statistics.median(s for s, _ in warm)
            cold_row.blk, warm_row.blk = f"{blk_cold:.2f} s", f"{blk_warm:.2f} s"
            seconds[cold_row.name, "blk"], seconds[warm_row.name, "blk"] = blk_cold, blk_warm
            blk_res = cold[-1][1]
            blk_picks = [r["best"] for _, r in cold + warm]
            cold_row.data["blk"] = {"s": [s for s, _ in cold], "results": [r for _, r in cold]}
            warm_row.data["blk"] = {"s": [s for s, _ in warm]}
            print(f"  blk sweep: {blk_cold:.2f} s nothing cached, {blk_warm:.2f} s variants on disk; picks "
                  f"{blk_picks}; tune ms {[round(v, 4) if v is not None else None for v in blk_res['ms']]}",
                  flush=True)
        except Exception as e:
            cold_row.blk = warm_row.blk = "ERROR"
            print("  ERROR autotune [blk]:", flush=True)
            traceback.print_exc()
            notes.append(f"autotune: blk: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
        # Triton: nothing cached (one trial with nothing at all, then with its launcher), then a full cache
        try:
            first_dir = fresh_dir(tmp_root)
            s_full, *_ = triton_sweep(first_dir)
            seed = launcher_entries(first_dir)
            cold, last = [], None
            for _ in range(SWEEP_TRIALS):
                last = fresh_dir(tmp_root, seed)
                cold.append(triton_sweep(last))
            warm = [triton_sweep(last) for _ in range(WARM_SWEEP_TRIALS)]
            t_cold, t_warm = statistics.median(x[0] for x in cold), statistics.median(x[0] for x in warm)
            cold_row.peer, warm_row.peer = f"{t_cold:.2f} s (Triton)", f"{t_warm:.2f} s (Triton)"
            seconds[cold_row.name, "Triton"], seconds[warm_row.name, "Triton"] = t_cold, t_warm
            tri_picks = [x[1] for x in cold + warm]
            tri_timings = cold[-1][2]
            cold_row.data["Triton"] = {"s": [x[0] for x in cold], "nothing_cached_s": s_full,
                                       "bench_time_s": [x[3] for x in cold]}
            warm_row.data["Triton"] = {"s": [x[0] for x in warm]}
            notes.append(f"autotune: Triton's sweep with nothing at all cached (its launcher built too): {s_full:.2f} s; "
                         f"its autotuner's own benchmarking took " +
                         ", ".join(f"{x[3]:.2f}" for x in cold if x[3] is not None) + " s of the cold sweeps")
            print(f"  Triton sweep: {t_cold:.2f} s nothing cached (launcher cached), {t_warm:.2f} s kernels on "
                  f"disk, {s_full:.2f} s nothing at all; picks {tri_picks}", flush=True)
        except Exception as e:
            cold_row.peer = warm_row.peer = "ERROR"
            print("  ERROR autotune [Triton]:", flush=True)
            traceback.print_exc()
            notes.append(f"autotune: Triton: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
        for r in (cold_row, warm_row):
            tb, tt = seconds.get((r.name, "blk")), seconds.get((r.name, "Triton"))
            if tb and tt:
                r.ratio = f"{tt / tb:.1f}× (Triton/blk)"
        # each config timed on its own afterwards (do_bench), both sides
        blk_t, tri_t = [], []
        for cfg in configs:
            try:
                go = bc.matmul(ctx, a.data_ptr(), b.data_ptr(), cb.data_ptr(), M, N, K, *strides, config=cfg,
                               stream=env.stream)
                cb.fill_(math.nan)
                go()
                torch.cuda.synchronize()
                blk_t.append(env.do_bench(go) if max_rel_err(torch, cb, ref) <= 1e-2 else None)
            except Exception as e:
                print(f"  ERROR blk matmul config {config_text(cfg)}: {e}", flush=True)
                blk_t.append(None)
            try:
                ct.fill_(math.nan)
                tk.matmul(a, b, ct, cfg)
                torch.cuda.synchronize()
                ok = max_rel_err(torch, ct, ref) <= 1e-2
                tri_t.append(env.do_bench(lambda c=cfg: tk.matmul(a, b, ct, c)) if ok else None)
            except Exception as e:
                print(f"  ERROR Triton matmul config {config_text(cfg)}: {e}", flush=True)
                tri_t.append(None)
        for i, cfg in enumerate(configs):
            def cell(ms):
                return f"{ms:.4g} ms ({flops / ms / 1e9:.0f} TFLOP/s)" if ms else "—"
            tune_ms = blk_res["ms"][i] if blk_res and i < len(blk_res["ms"]) else None
            notes.append(f"autotune: config {i} ({config_text(cfg)}): blk's autotuner {cell(tune_ms)}, "
                         f"do_bench {cell(blk_t[i])}; Triton's autotuner {cell(tri_timings.get(i))}, "
                         f"do_bench {cell(tri_t[i])}")
        # the choices
        if blk_picks:
            pick = blk_picks[-1]
            pick_row.blk = f"config {pick}: {config_text(configs[pick])}" + (
                "" if len(set(blk_picks)) == 1 else f" (sweeps picked {blk_picks})")
        if tri_picks:
            tp = tri_picks[-1]
            pick_row.peer = (f"config {tp}: {config_text(configs[tp])}" if tp is not None else "?") + (
                "" if len(set(tri_picks)) == 1 else f" (sweeps picked {tri_picks})")
        pick_row.data = {"blk": blk_picks, "Triton": tri_picks}
        if blk_res and blk_picks:
            own = [v if v is not None else math.inf for v in blk_res["ms"]]
            own_ok = blk_res["best"] == min(range(len(own)), key=own.__getitem__)
            valid = [t for t in blk_t if t]
            fastest = min(valid) if valid else None
            near = [blk_t[p] is not None and fastest is not None and blk_t[p] <= PICK_TOLERANCE * fastest
                    for p in blk_picks]
            ok = own_ok and all(near)
            fast_row.blk = (f"{verdict(ok)}: the least of its own times; within 3% of the fastest by do_bench in "
                            f"{sum(near)}/{len(near)} sweeps")
            fast_row.target = "yes"
            fast_row.data["blk"] = {"own_ok": own_ok, "near": near, "do_bench_ms": blk_t}
            if not ok:
                i_fast = blk_t.index(fastest) if fastest else None
                notes.append(f"autotune: NOTE blk picked {blk_picks} (own times {blk_res['ms']}), the fastest by "
                             f"do_bench is config {i_fast} ({fastest} ms)")
        if tri_picks:
            valid = [t for t in tri_t if t]
            fastest = min(valid) if valid else None
            near = [p is not None and tri_t[p] is not None and fastest is not None and
                    tri_t[p] <= PICK_TOLERANCE * fastest for p in tri_picks]
            fast_row.peer = f"Triton {verdict(all(near))}: within 3% in {sum(near)}/{len(near)} sweeps"
        notes.append("autotune: a sweep = the first call with the consts left open, from before the kernel is loaded "
                     "to the end of the tuned launch (blk: blk_module_load_file, blk_autotune, blk_launch; Triton: a "
                     "new @triton.autotune on a new JITFunction, its first call); blk times each config 3 warm-ups "
                     "+ 10 runs (CUDA events, L2 flushed) and saves and restores the arguments' memory; Triton's "
                     "autotuner uses do_bench (25 ms warm-up, 100 ms of runs) per config; nothing cached: blk "
                     "BLK_CACHE=0, Triton an empty cache directory holding only its launcher; medians of "
                     f"{SWEEP_TRIALS} (warm: of {WARM_SWEEP_TRIALS})")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)


# ---- the table ------------------------------------------------------------------------------

def selected(only):
    """The parts --only names (all without --only; 'runtime' names all; 'issue12' names compile)."""
    if not only:
        return list(PARTS)
    names = only.split(",")
    if "runtime" in names:
        return list(PARTS)
    if "issue12" in names:  # issue 12's compile-time row: the matmul config compiled by blk and by Triton
        names = names + ["compile"]
    return [p for p in PARTS if any(n and n in p for n in names)]


def run(env, parts, main_rows, start, budget_s):
    """Runs the parts; returns (RRows, notes)."""
    funcs = {"launch_c": lambda o, n: part_launch_c(env, main_rows, o, n),
             "compile": lambda o, n: part_compile(env, o, n),
             "autotune": lambda o, n: part_autotune(env, o, n)}
    out, notes = [], []
    for p in parts:
        if time.time() - start > budget_s:
            r = RRow(p, "skipped", "skipped")
            out.append(r)
            notes.append(f"{p}: skipped, the run passed {budget_s} s")
            continue
        t0 = time.time()
        print(f"\n== runtime: {p}", flush=True)
        try:
            funcs[p](out, notes)
        except Exception as e:
            print(f"  ERROR runtime {p}:", flush=True)
            traceback.print_exc()
            sys.stderr.flush()
            out.append(RRow(p, "ERROR", "ERROR"))
            notes.append(f"{p}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
        env.torch.cuda.synchronize()
        env.torch.cuda.empty_cache()
        print(f"  ({time.time() - t0:.1f} s)", flush=True)
    return out, notes


def table(rows, notes):
    lines = ["### Runtime", "", "| " + " | ".join(HEADER) + " |", "|---|---:|---:|---:|---|"]
    for r in rows:
        lines.append("| " + " | ".join(r.cells()) + " |")
    lines.append("")
    lines.append("ratio: blk/raw for launches (below 1.25 is the target), Triton/blk for compile and autotuning "
                 "times (above 1: blk is faster).")
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def failed(rows):
    return any(c in ("ERROR", "FAIL") for r in rows for c in (r.blk, r.peer))
