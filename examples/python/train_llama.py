"""Trains a Llama-architecture model on random tokens and reports its speed.

    python3 examples/python/train_llama.py --mode blk              (~1B, GPU)
    python3 examples/python/train_llama.py --mode eager --layers 4 --seq 1024
    python3 examples/python/train_llama.py --tiny --steps 3        (CPU: seconds)

The model is transformers' LlamaForCausalLM built from a LlamaConfig (no
download: random weights), or, where transformers is missing (or with
--plain), the same architecture written below in plain torch. The default
size is that of a 1B Llama: hidden 2048, 16 layers, 32 query heads, 8
key/value heads, MLP 8192, vocabulary 128256, tied embeddings, sequences
of 4096 tokens. The tokens are random, from a fixed seed, the same in every
mode; the loss is the next-token cross-entropy; the step runs under bf16
autocast (float32 weights) with AdamW.

--mode picks what runs the model:
  eager        torch as it is
  compile      torch.compile(model)
  blk          blk.nn.patch(model): RMSNorm, SwiGLU, RoPE and the loss on
               blk's kernels (the plain model: its blk.nn modules)
  blk+compile  both
  liger        liger_kernel's patch of Llama (where liger_kernel imports)
AdamW is blk.nn.AdamW in the blk modes where blk.nn has it, else torch's
(fused on the GPU); --optim says otherwise.

Each step prints its loss and time; the end prints the mean step time (the
--warmup first steps excluded), tokens per second and the peak memory
torch allocated on the GPU.

--compare eager,compile,blk,blk+compile,liger (or --compare all) runs each
mode in a process of its own, one after another, with the same seed and
sizes, and prints one table: step time, tokens/s, peak memory, blk's
speed against compile and Liger, and each mode's loss against eager's
(the largest relative difference over the steps, and at the last step). --tiny makes every size small (hidden 64, 2
layers, 4 heads, 2 key/value heads, MLP 128, vocabulary 128, batch 2 of 32
tokens, 3 steps) and runs on the CPU unless --device says otherwise: there
blk's kernels run on its interpreter.
"""

import argparse
import inspect
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import blk  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
    import blk  # noqa: F401

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

FULL = dict(hidden=2048, layers=16, heads=32, kv_heads=8, mlp=8192, vocab=128256, batch=2, seq=4096, steps=50,
            warmup=3, lr=3e-4)
TINY = dict(hidden=64, layers=2, heads=4, kv_heads=2, mlp=128, vocab=128, batch=2, seq=32, steps=3, warmup=1,
            lr=1e-3)
MODES = ("eager", "compile", "blk", "blk+compile", "liger")
LIGER = dict(rope=True, rms_norm=True, swiglu=True, cross_entropy=False, fused_linear_cross_entropy=True)


def parse(argv):
    p = argparse.ArgumentParser(description="Train a Llama-architecture model on random tokens; report speed.")
    p.add_argument("--mode", choices=MODES, default="eager")
    p.add_argument("--tiny", action="store_true", help="every size small, on the CPU unless --device is given")
    for name in ("hidden", "layers", "heads", "kv-heads", "mlp", "vocab", "batch", "seq", "steps", "warmup"):
        p.add_argument("--" + name, type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cuda where there is one, else cpu (--tiny: cpu)")
    p.add_argument("--no-autocast", action="store_true", help="float32 throughout instead of bf16 autocast")
    p.add_argument("--plain", action="store_true", help="the plain-torch model even where transformers imports")
    p.add_argument("--optim", choices=("auto", "torch", "blk"), default="auto")
    p.add_argument("--quiet", action="store_true", help="no line per step")
    p.add_argument("--compare", default=None, metavar="MODES",
                   help="comma-separated modes (or 'all') run one after another, each in its own process; one table")
    p.add_argument("--result-line", action="store_true", help=argparse.SUPPRESS)   # --compare's children
    a = p.parse_args(argv)
    base = TINY if a.tiny else FULL
    for k, v in base.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.device is None:
        a.device = "cuda" if not a.tiny and torch.cuda.is_available() else "cpu"
    if a.hidden % a.heads or a.heads % a.kv_heads or (a.hidden // a.heads) % 2:
        p.error(f"hidden {a.hidden}, heads {a.heads}, kv-heads {a.kv_heads}: heads must divide hidden into an even "
                f"head size, kv-heads must divide heads")
    return a


# ---- the model in plain torch (where transformers is missing, or --plain) ------------------------


class PlainLlama(torch.nn.Module if torch else object):
    """Llama: token embedding, layers of (RMSNorm, attention with RoPE and
    grouped-query heads, RMSNorm, SwiGLU MLP) with residuals, a final
    RMSNorm and the embedding's transpose as the LM head. use_blk: the
    norms, RoPE, SwiGLU and the loss are blk.nn's (and the embedding, and
    the LM head with the loss in one, where blk.nn has embedding and
    linear_cross_entropy)."""

    def __init__(self, a, use_blk):
        super().__init__()
        nn = torch.nn
        self.a, self.use_blk = a, use_blk
        if use_blk:
            import blk.nn
            norm = lambda: blk.nn.RMSNorm(a.hidden, eps=1e-5)  # noqa: E731
        else:
            norm = lambda: nn.RMSNorm(a.hidden, eps=1e-5)  # noqa: E731
        hd = a.hidden // a.heads
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList()
        for _ in range(a.layers):
            layer = nn.Module()
            layer.norm1, layer.norm2 = norm(), norm()
            layer.q = nn.Linear(a.hidden, a.heads * hd, bias=False)
            layer.k = nn.Linear(a.hidden, a.kv_heads * hd, bias=False)
            layer.v = nn.Linear(a.hidden, a.kv_heads * hd, bias=False)
            layer.o = nn.Linear(a.heads * hd, a.hidden, bias=False)
            layer.gate = nn.Linear(a.hidden, a.mlp, bias=False)
            layer.up = nn.Linear(a.hidden, a.mlp, bias=False)
            layer.down = nn.Linear(a.mlp, a.hidden, bias=False)
            self.layers.append(layer)
        self.norm = norm()
        for p in self.parameters():
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02)
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
        self.register_buffer("inv_freq", inv, persistent=False)

    def _rope(self, q, k, cos, sin):
        if self.use_blk:
            import blk.nn
            dt = torch.promote_types(q.dtype, cos.dtype)
            return blk.nn.rope(q.to(dt), k.to(dt), cos.to(dt), sin.to(dt))

        def rot(x):
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)
        return q * cos + rot(q) * sin, k * cos + rot(k) * sin

    def forward(self, input_ids, labels=None):
        a = self.a
        b, s = input_ids.shape
        hd = a.hidden // a.heads
        freqs = torch.arange(s, device=input_ids.device, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        bnn = None
        if self.use_blk:
            import blk.nn as bnn
        # blk.nn's embedding and fused linear cross-entropy where this blk.nn has them
        emb = getattr(bnn, "embedding", None)
        x = emb(input_ids, self.embed.weight) if emb is not None else self.embed(input_ids)
        for L in self.layers:
            h = L.norm1(x)
            q = L.q(h).view(b, s, a.heads, hd).transpose(1, 2)
            k = L.k(h).view(b, s, a.kv_heads, hd).transpose(1, 2)
            v = L.v(h).view(b, s, a.kv_heads, hd).transpose(1, 2)
            q, k = self._rope(q, k, cos, sin)
            q, k = q.to(v.dtype), k.to(v.dtype)
            rep = a.heads // a.kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + L.o(att.transpose(1, 2).reshape(b, s, a.hidden))
            h = L.norm2(x)
            g, u = L.gate(h), L.up(h)
            if self.use_blk:
                import blk.nn
                m = blk.nn.swiglu(g, u.to(g.dtype))
            else:
                m = F.silu(g) * u
            x = x + L.down(m)
        h = self.norm(x)
        flce = getattr(bnn, "linear_cross_entropy", None)
        if labels is not None and flce is not None and self.training:
            w = self.embed.weight
            if torch.is_autocast_enabled(h.device.type):
                dt = torch.get_autocast_dtype(h.device.type)
                h, w = h.to(dt), w.to(dt)
            loss = flce(h[:, :-1], w, labels[:, 1:]).float()     # no logits made
            return argparse.Namespace(loss=loss, logits=None)
        logits = F.linear(h, self.embed.weight)
        loss = None
        if labels is not None:
            logits2 = logits[:, :-1].reshape(-1, a.vocab)
            target = labels[:, 1:].reshape(-1)
            if self.use_blk:
                import blk.nn
                loss = blk.nn.cross_entropy(logits2, target).float()
            else:
                loss = F.cross_entropy(logits2.float(), target)
        return argparse.Namespace(loss=loss, logits=logits)


# ---- building, patching, training --------------------------------------------------------------


def build(a):
    """(model, a line saying what it is, what blk.nn.patch returned or None)."""
    hf = None
    if not a.plain:
        try:
            import transformers as hf
        except ImportError:
            hf = None
    liger = None
    if a.mode == "liger" and hf is not None:
        try:
            from liger_kernel.transformers import apply_liger_kernel_to_llama as liger
        except Exception as e:   # not installed, or no GPU for Triton
            raise SystemExit(f"train_llama.py: --mode liger: liger_kernel does not import here ({e})")
        liger(**LIGER)   # transformers' Llama classes, before the model is made of them
    torch.manual_seed(a.seed)
    with torch.device(a.device):
        if hf is None:
            if a.mode == "liger":
                raise SystemExit("train_llama.py: --mode liger needs transformers (liger_kernel patches its Llama)")
            model = PlainLlama(a, use_blk=a.mode.startswith("blk"))
            what = "plain-torch Llama" + (" on blk.nn modules" if model.use_blk else "")
        else:
            cfg = hf.LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.mlp,
                                 num_hidden_layers=a.layers, num_attention_heads=a.heads,
                                 num_key_value_heads=a.kv_heads, max_position_embeddings=max(a.seq, 128),
                                 rms_norm_eps=1e-5, tie_word_embeddings=True)
            cfg._attn_implementation = "sdpa"
            model = hf.LlamaForCausalLM(cfg)
            what = f"transformers {hf.__version__} LlamaForCausalLM"
    model.train()
    patched = None
    if a.mode.startswith("blk") and hf is not None:
        import blk.nn
        patched = blk.nn.patch(model)
        what += f"; {patched}"
    if liger is not None:
        if "model" in inspect.signature(liger).parameters:   # newer versions patch the instance too
            liger(model=model, **LIGER)
        what += "; liger_kernel's Llama patch"
    return model, what, patched


def optimizer(a, model):
    import blk.nn
    blk_adamw = getattr(blk.nn, "AdamW", None)
    want = a.optim if a.optim != "auto" else ("blk" if a.mode.startswith("blk") and blk_adamw else "torch")
    if want == "blk":
        if blk_adamw is None:
            raise SystemExit("train_llama.py: --optim blk: this blk.nn has no AdamW")
        return blk_adamw(model.parameters(), lr=a.lr, weight_decay=0.1), "blk.nn.AdamW"
    fused = a.device.startswith("cuda")
    return (torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.1, fused=fused or None),
            "torch AdamW" + (" (fused)" if fused else ""))


def bar(done, total, width=24):
    n = width * done // max(total, 1)
    return "[" + "#" * n + "." * (width - n) + "]"


def main(argv=None):
    """Runs the training; returns a dict: losses (a float a step), step_s (seconds a step), mean_step_s,
    tokens_per_s, peak_bytes (None on the CPU), what (the model and its patches), patched (what
    blk.nn.patch returned, whose undo() puts back the rope function it replaced process-wide), model."""
    if torch is None:
        print("skip train_llama.py: it needs torch (pip install torch)")
        return None
    a = parse(argv)
    if a.compare:
        return compare(a, argv if argv is not None else sys.argv[1:])
    dev = torch.device(a.device)
    model, what, patched = build(a)
    opt, opt_name = optimizer(a, model)
    run = torch.compile(model) if a.mode.endswith("compile") else model
    nparams = sum(p.numel() for p in model.parameters())
    print(f"{what}: {nparams / 1e6:.1f}M parameters; {a.mode} on {a.device}; {opt_name}; batch {a.batch} x "
          f"{a.seq} tokens; {'float32' if a.no_autocast else 'bf16 autocast'}")
    gen = torch.Generator().manual_seed(a.seed + 1)
    cuda = dev.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)
    losses, times = [], []
    for step in range(a.steps):
        tokens = torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen, device="cpu").to(dev)
        t0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=not a.no_autocast):
            loss = run(input_ids=tokens, labels=tokens).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        value = loss.item()
        if cuda:
            torch.cuda.synchronize(dev)
        dt = time.perf_counter() - t0
        losses.append(value)
        times.append(dt)
        if not math.isfinite(value):
            raise SystemExit(f"train_llama.py: step {step + 1}: loss {value}")
        if not a.quiet:
            print(f"step {step + 1:>4}/{a.steps} {bar(step + 1, a.steps)} loss {value:8.4f}  {dt * 1e3:9.1f} ms",
                  flush=True)
    timed = times[a.warmup:] if len(times) > a.warmup else times
    mean = sum(timed) / len(timed)
    peak = torch.cuda.max_memory_allocated(dev) if cuda else None
    print(f"mean step {mean * 1e3:.1f} ms over {len(timed)} steps (first {len(times) - len(timed)} not counted), "
          f"{a.batch * a.seq / mean:,.0f} tokens/s, peak memory "
          + (f"{peak / 2**30:.2f} GiB" if peak is not None else "n/a (CPU)"))
    if a.result_line:
        import json
        print("RESULT " + json.dumps(dict(mode=a.mode, losses=losses, mean_step_s=mean,
                                          tokens_per_s=a.batch * a.seq / mean, peak_bytes=peak)), flush=True)
    return dict(losses=losses, step_s=times, mean_step_s=mean, tokens_per_s=a.batch * a.seq / mean,
                peak_bytes=peak, what=what, patched=patched, model=model)


def compare(a, argv):
    """--compare: each mode in a child process (the same arguments but --compare), then one table. Returns
    {mode: result dict, or the error line}."""
    import json
    import subprocess
    modes = MODES if a.compare == "all" else tuple(m.strip() for m in a.compare.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise SystemExit(f"train_llama.py: --compare: unknown modes {bad}; of {', '.join(MODES)}")
    rest, skip = [], False
    for arg in argv:   # the arguments without --compare (and its value) and --mode
        if skip:
            skip = False
        elif arg in ("--compare", "--mode"):
            skip = True
        elif not arg.startswith(("--compare=", "--mode=")):
            rest.append(arg)
    got = {}
    for m in modes:
        print(f"== {m}", flush=True)
        cmd = [sys.executable, os.path.abspath(__file__), "--mode", m, "--result-line", "--quiet"] + rest
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = proc.stdout.splitlines()
        for line in lines:
            if not line.startswith("RESULT "):
                print("   " + line, flush=True)
        res = [json.loads(line[7:]) for line in lines if line.startswith("RESULT ")]
        got[m] = res[0] if res and proc.returncode == 0 else (lines[-1] if lines else f"exit {proc.returncode}")
    print(compare_table(got))
    return got


def compare_table(got):
    """The markdown table of --compare's results (a mode's error line in place of its numbers)."""
    ok = {m: r for m, r in got.items() if isinstance(r, dict)}
    ref = ok.get("eager")

    def loss_diff(r):
        if ref is None or len(ref["losses"]) != len(r["losses"]):
            return "—", "—"
        rel = [abs(x - y) / abs(y) for x, y in zip(r["losses"], ref["losses"])]
        return f"{100 * max(rel):.2f}%", f"{100 * rel[-1]:.2f}%"

    def ratio(r, other):
        return f"{r['tokens_per_s'] / ok[other]['tokens_per_s']:.2f}" if other in ok else "—"

    out = ["| mode | mean step ms | tokens/s | peak GiB | vs compile | vs liger | loss vs eager: max | last |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for m, r in got.items():
        if not isinstance(r, dict):
            out.append(f"| {m} | {r} |  |  |  |  |  |  |")
            continue
        peak = f"{r['peak_bytes'] / 2**30:.2f}" if r["peak_bytes"] is not None else "n/a"
        worst, last = loss_diff(r)
        out.append(f"| {m} | {r['mean_step_s'] * 1e3:.1f} | {r['tokens_per_s']:,.0f} | {peak} | {ratio(r, 'compile')} "
                   f"| {ratio(r, 'liger')} | {worst} | {last} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
