"""tests/python/test_nn_patch.py: blk.nn.patch (python/blk/nn/_patch.py) on
transformers models built from tiny configs (no download), and the training
example examples/python/train_llama.py, with CPU torch (blk's kernels on the
interpreter). For each family (Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma2,
Gemma3 text) two models from one seed, one patched: the counts of what was
replaced, the blk ops that then run (a dispatch mode counts them), state_dict
keys and parameter objects kept, logits, loss and every parameter's
gradient equal the unpatched model's (float32; bfloat16 against a float32
reference, within twice torch's own bf16 error); undo() restoring the
model; unknown model types refused; torch.compile(fullgraph=True) of a
patched Llama; the training example for 3 steps, eager and blk, losses
within 2%. Without torch it says so in a line; without transformers only
the example's plain-torch model runs. BLK_NN_DEVICE=cuda adds a small
Llama's forward and backward on the GPU (tests/gpu/python.sh)."""

import collections
import contextlib
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import case, finish, close, torch_compile_works  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_patch.py: no torch in this python (blk.nn needs it)")
    finish()

import torch.nn.functional as F  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import blk.nn as nn  # noqa: E402

try:
    import transformers
    transformers.logging.set_verbosity_error()
except ImportError:
    transformers = None

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.set_default_device(DEV)
REPO = os.path.dirname(os.path.dirname(HERE))
K = 1 if DEV == "cpu" else 10   # the f32 tolerances' factor on the GPU (its exp and rsqrt, other sum orders)


class BlkOps(TorchDispatchMode):
    """Counts the blk_nn custom ops that run under it."""

    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.name()
        if name.startswith("blk_nn::"):
            self.counts[name.split("::")[1].split(".")[0]] += 1
        return func(*args, **(kwargs or {}))


# family: (config class, model class, extra config, RMSNorms a layer, gelu)
FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}, 2, False),
    "mistral": ("MistralConfig", "MistralForCausalLM", {}, 2, False),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}, 2, False),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}, 4, False),          # + q_norm, k_norm
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": 16}, 2, True),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": 16, "query_pre_attn_scalar": 16}, 4, True),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", {"head_dim": 16, "query_pre_attn_scalar": 16}, 6, True),
}
LAYERS, VOCAB = 2, 128


def build(family, dtype=torch.float32, seed=0, **over):
    """The family's CausalLM of a tiny config from seed, every 1-D parameter
    (norm weights, biases) moved off its initial value so that the norms'
    weight conventions matter."""
    cfg_name, cls_name, extra, _, _ = FAMILIES[family]
    kw = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=LAYERS, num_attention_heads=4,
              num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=64)
    kw.update(extra)
    kw.update(over)
    cfg = getattr(transformers, cfg_name)(**kw)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, cls_name)(cfg)
    g = torch.Generator(device="cpu").manual_seed(seed + 1)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() == 1:
                p.add_(0.2 * torch.randn(p.shape, generator=g, device="cpu").to(p.device))
    return model.to(dtype)


def batch(vocab=VOCAB, b=2, s=8, seed=5):
    g = torch.Generator(device="cpu").manual_seed(seed)
    ids = torch.randint(0, vocab, (b, s), generator=g, device="cpu").to(DEV)
    labels = ids.clone()
    labels[0, :3] = -100
    return ids, labels


def run(model, ids, labels, ops=None):
    """(logits, loss, {name: gradient}) of one forward and backward (both
    under the dispatch mode ops, where given)."""
    model.zero_grad(set_to_none=True)
    with ops if ops is not None else contextlib.nullcontext():
        out = model(input_ids=ids, labels=labels)
        out.loss.backward()
    grads = {n.removeprefix("_orig_mod."): p.grad.clone() for n, p in model.named_parameters()}  # compiled
    return (out.logits.detach() if out.logits is not None else None), out.loss.detach(), grads



def expected(family):
    _, _, _, norms, gelu = FAMILIES[family]
    return {"rms_norm": norms * LAYERS + 1, "geglu" if gelu else "swiglu": LAYERS, "rope": LAYERS,
            "cross_entropy": 1}


def check_family(family):
    ref = build(family)
    model = build(family)
    ids, labels = batch()
    want = run(ref, ids, labels)               # before patching: the rope function is the family's own
    keys = list(model.state_dict().keys())
    params = {n: p for n, p in model.named_parameters()}
    p = nn.patch(model, linear_cross_entropy=False)     # logits to compare
    try:
        assert p.counts == expected(family), f"{p.counts} != {expected(family)}"
        assert str(p).startswith(f"blk.nn.patch({type(model).__name__}): rms_norm "), str(p)
        assert list(model.state_dict().keys()) == keys, "state_dict keys changed"
        now = dict(model.named_parameters())
        assert now.keys() == params.keys() and all(now[n] is params[n] for n in params), "parameters replaced"
        ops = BlkOps()
        logits, loss, grads = run(model, ids, labels, ops)
        runs = {"rms_norm_fwd": p.counts["rms_norm"], "glu_fwd": LAYERS, "rope": LAYERS,
                "cross_entropy_loss": 1, "rms_norm_bwd": p.counts["rms_norm"], "glu_bwd": LAYERS}
        assert all(ops.counts[k] >= v for k, v in runs.items()), f"blk ops run: {dict(ops.counts)}"
        assert ops.counts["rope"] == 2 * LAYERS and ops.counts["rms_norm_fwd"] == p.counts["rms_norm"], \
            dict(ops.counts)
        close(logits, want[0], 1e-4 * K, 1e-5 * K, "logits")
        close(loss, want[1], 1e-5 * K, 1e-6 * K, "loss")
        for n, gw in want[2].items():
            close(grads[n], gw, 1e-3 * K, 1e-5 * K * max(1.0, gw.abs().max().item()), f"gradient of {n}")
    finally:
        p.undo()
    return f"{p}; {len(want[2])} gradients"


if transformers is None:
    print("skip the blk.nn.patch cases: no transformers in this python (pip install transformers)")
else:
    for fam in FAMILIES:
        case(f"patch({fam}): counts, the blk ops run, state_dict and parameters kept, logits, loss and "
             f"gradients equal the unpatched model's (f32)")(lambda fam=fam: check_family(fam))

    @case("patch(llama) in bfloat16: logits, loss and gradients within twice torch's own bf16 error")
    def _():
        ids, labels = batch()
        want = run(build("llama"), ids, labels)                    # float32 reference
        lowp = run(build("llama", torch.bfloat16), ids, labels)    # torch in bf16
        model = build("llama", torch.bfloat16)
        p = nn.patch(model, linear_cross_entropy=False)
        try:
            got = run(model, ids, labels)
        finally:
            p.undo()
        worst = 0.0
        for what, g, w, t in (("logits", got[0], want[0], lowp[0]), ("loss", got[1], want[1], lowp[1])) + tuple(
                (f"gradient of {n}", got[2][n], want[2][n], lowp[2][n]) for n in want[2]):
            err = (g.double() - w.double()).abs().max().item()
            terr = (t.double() - w.double()).abs().max().item()
            scale = w.double().abs().max().item()
            assert err <= 2 * terr + 1e-2 * scale, f"{what}: blk error {err:.3g}, torch bf16 error {terr:.3g}"
            worst = max(worst, err / max(terr, 1e-30))
        return f"worst blk/torch error ratio {worst:.2f}"

    @case("patch: undo() restores modules, the rope function and the loss; a second patch replaces nothing")
    def _():
        import transformers.models.llama.modeling_llama as ml
        model = build("llama")
        before = {n: type(m) for n, m in model.named_modules()}
        fn = ml.apply_rotary_pos_emb
        p = nn.patch(model)
        assert ml.apply_rotary_pos_emb is not fn and "_loss_function" in vars(model)
        again = nn.patch(model)
        assert again.counts == {} and "already patched" in str(again), str(again)
        p.undo()
        assert {n: type(m) for n, m in model.named_modules()} == before
        assert ml.apply_rotary_pos_emb is fn and "_loss_function" not in vars(model)
        p2 = nn.patch(model)      # patchable again after undo
        p2.undo()
        return f"{len(before)} modules as before"

    @case("patch: rope=False, cross_entropy=False replace only the norms and MLPs; the function untouched")
    def _():
        import transformers.models.gemma.modeling_gemma as mg
        model = build("gemma")
        fn = mg.apply_rotary_pos_emb
        p = nn.patch(model, rope=False, cross_entropy=False)
        try:
            assert p.counts == {"rms_norm": 5, "geglu": 2}, p.counts
            assert mg.apply_rotary_pos_emb is fn and "_loss_function" not in vars(model)
            p2 = nn.patch(build("gemma"), rms_norm=False, swiglu=False, rope=False, linear_cross_entropy=False)
            assert p2.counts == {"cross_entropy": 1}, p2.counts
        finally:
            p.undo()
        return str(p)

    @case("patch refuses a model type it does not know, and a module that is no transformers model")
    def _():
        for model, word in ((transformers.GPT2LMHeadModel(transformers.GPT2Config(
                n_embd=32, n_layer=1, n_head=2, vocab_size=64, n_positions=16)), "'gpt2'"),
                (torch.nn.Linear(2, 2), "None")):
            try:
                nn.patch(model)
            except ValueError as e:
                assert word in str(e) and "llama" in str(e) and "gemma" in str(e), str(e)
            else:
                raise AssertionError(f"{type(model).__name__} patched")
        return "ValueError naming the type and the types known"

    @case("patch with a linear_cross_entropy in blk.nn (Llama; Gemma2 with its final logit softcap): the training "
          "loss from the hidden states, no logits; eval keeps the logits")
    def _():
        had = getattr(nn, "linear_cross_entropy", None)

        def stand_in(h, w, target, bias=None, ignore_index=-100, reduction="mean", softcap=None):
            logits = F.linear(h.float(), w.float(), bias)
            if softcap:
                logits = softcap * torch.tanh(logits / softcap)
            return F.cross_entropy(logits, target, ignore_index=ignore_index, reduction=reduction)
        if had is None:
            try:
                nn.patch(build("llama"), linear_cross_entropy=True)
            except ValueError as e:
                assert "no linear_cross_entropy" in str(e), str(e)
            else:
                raise AssertionError("linear_cross_entropy=True without one in blk.nn")
            nn.linear_cross_entropy = stand_in      # the fused op of another branch, its torch formula
        try:
            ids, labels = batch()
            for family, over in (("llama", {}), ("gemma2", {"final_logit_softcapping": 0.5})):
                want = run(build(family, **over), ids, labels)
                model = build(family, **over)
                p = nn.patch(model)
                try:
                    assert p.counts.get("linear_cross_entropy") == 1 and "cross_entropy" not in p.counts, p.counts
                    got = run(model, ids, labels)
                    assert got[0] is None, "logits made"
                    close(got[1], want[1], 1e-5 * K, 1e-6 * K, f"{family}: loss")
                    for n, g in want[2].items():
                        close(got[2][n], g, 1e-3 * K, 1e-5 * K, f"{family}: gradient of {n}")
                    model.eval()
                    out = model(input_ids=ids, labels=labels)
                    assert out.logits.shape == (2, 8, VOCAB)
                    close(out.loss, want[1], 1e-5 * K, 1e-6 * K, f"{family}: eval loss")
                finally:
                    p.undo()
                assert "forward" not in vars(model)
        finally:
            if had is None:
                del nn.linear_cross_entropy
        return "the stand-in (torch)" if had is None else "blk.nn.linear_cross_entropy"

    @case("patch's apply_rotary_pos_emb: blk.nn.rope for (q, k, cos, sin[, unsqueeze_dim=1]), the original for "
          "any other call")
    def _():
        from blk.nn._patch import _blk_rope
        calls = []

        def original(q, k, cos, sin, *args, **kwargs):
            calls.append(1)
            return "original"
        fn = _blk_rope(original)
        q, k, cos, sin = torch.randn(2, 4, 6, 8), torch.randn(2, 2, 6, 8), torch.randn(1, 6, 8), torch.randn(1, 6, 8)
        for args, kwargs in (((), {}), ((1,), {}), ((), {"unsqueeze_dim": 1})):
            got = fn(q, k, cos, sin, *args, **kwargs)
            want = nn.rope(q, k, cos, sin)
            assert isinstance(got, tuple) and all(torch.equal(a, b) for a, b in zip(got, want)), (args, kwargs)
        qh = q.to(torch.bfloat16)      # promoted with cos, as q * cos would be
        got = fn(qh, k.to(torch.bfloat16), cos, sin)
        assert got[0].dtype == torch.float32 and torch.equal(got[0], nn.rope(qh.float(), k.bfloat16().float(),
                                                                             cos, sin)[0])
        others = (((2,), {}), ((), {"unsqueeze_dim": 2}), ((torch.arange(6),), {}), ((None, 1), {}),
                  ((), {"position_ids": None}))
        for args, kwargs in others:
            assert fn(q, k, cos, sin, *args, **kwargs) == "original", (args, kwargs)
        assert fn(q, k, cos[..., :4], sin[..., :4]) == "original"          # partial rotary dimensions
        assert fn(q.transpose(1, 2), k.transpose(1, 2), cos, sin) == "original"   # (batch, seq, heads, dim)
        assert len(calls) == len(others) + 2
        return f"{len(calls)} calls to the original"

    why = torch_compile_works()
    if why:
        print(f"skip torch.compile of a patched Llama: torch.compile does not run here ({why})")
    else:
        @case("torch.compile(fullgraph=True) of a patched Llama (and with linear_cross_entropy, where blk.nn has "
              "it): loss and gradients equal eager's, blk ops in its graph")
        def _():
            from torch._inductor.compile_fx import compile_fx
            seen = collections.Counter()

            def backend(gm, example_inputs):     # Inductor, after counting the blk ops of the graph
                for node in gm.graph.nodes:
                    if node.op == "call_function" and str(node.target).startswith("blk_nn."):
                        seen[str(node.target).split(".")[1]] += 1
                return compile_fx(gm, example_inputs)

            ids, labels = batch()
            fused = (False, True) if getattr(nn, "linear_cross_entropy", None) is not None else (False,)
            said = []
            for f in fused:
                model = build("llama")
                p = nn.patch(model, linear_cross_entropy=f)
                seen.clear()
                try:
                    eager = run(model, ids, labels)
                    torch._dynamo.reset()
                    got = run(torch.compile(model, fullgraph=True, backend=backend), ids, labels)
                finally:
                    p.undo()
                    torch._dynamo.reset()
                close(got[1], eager[1], 1e-5 * K, 1e-6 * K, "loss")
                if not f:
                    close(got[0], eager[0], 1e-4 * K, 1e-5 * K, "logits")
                for n, g in eager[2].items():
                    close(got[2][n], g, 1e-3 * K, 1e-5 * K, f"gradient of {n}")
                loss_op = {"linear_cross_entropy_fwd": 1} if f else {"cross_entropy_loss": 1}
                want = {"rms_norm_fwd": 5, "glu_fwd": LAYERS, "rope": LAYERS, **loss_op}
                assert dict(seen) == want, f"blk ops in the graph: {dict(seen)}, expected {want}"
                said.append(f"loss {got[1].item():.4f}, the graph's blk ops {dict(seen)}")
            return "; ".join(said)


# ---- the training example ------------------------------------------------------------------------

def _example():
    spec = importlib.util.spec_from_file_location("train_llama", os.path.join(REPO, "examples", "python",
                                                                              "train_llama.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def train(*args):
    res = _example().main(["--tiny", "--steps", "3", "--quiet", "--device", DEV, *args])
    if res.get("patched") is not None:
        res["patched"].undo()
    return res


for plain in ((False, True) if transformers is not None else (True,)):
    what = "plain-torch model" if plain else "transformers Llama"

    @case(f"examples/python/train_llama.py --tiny, 3 steps ({what}): eager and blk losses within 2%")
    def _(plain=plain):
        extra = ["--plain"] if plain else []
        eager = train("--mode", "eager", *extra)
        blk_ = train("--mode", "blk", *extra)
        assert len(eager["losses"]) == len(blk_["losses"]) == 3
        assert ("blk.nn.patch(" in blk_["what"]) != plain and "blk" not in eager["what"], (eager["what"],
                                                                                              blk_["what"])
        for i, (a, b) in enumerate(zip(eager["losses"], blk_["losses"])):
            assert abs(a - b) <= 0.02 * abs(a), f"step {i + 1}: eager loss {a}, blk {b}"
        assert eager["tokens_per_s"] > 0 and blk_["mean_step_s"] > 0
        return "eager " + " ".join(f"{x:.4f}" for x in eager["losses"]) + ", blk " + " ".join(
            f"{x:.4f}" for x in blk_["losses"])


@case("training_chunk_rows: the patched loss's chunks, logits up to 256 MiB and at least linear_cross_entropy's "
      "default, a power of two at most rows' (1B Llama: 1024 rows; 8B at a 32000 vocabulary: 4096)")
def _():
    from blk.nn._patch import training_chunk_rows
    from blk.nn._linear_cross_entropy import chunk_rows_for
    got = [training_chunk_rows(8190, 2048, 128256, 2), training_chunk_rows(8192, 4096, 32000, 2),
           training_chunk_rows(10, 64, 128, 4), training_chunk_rows(8192, 4096, 10 ** 9, 2)]
    assert got == [1024, 4096, 16, chunk_rows_for(8192, 4096, 10 ** 9)], got
    return str(got)


@case("examples/python/train_llama.py --tiny --compare eager,blk (plain-torch model, 2 steps, each mode in its own "
      "process): both results, the table's loss columns against eager, a failed mode's line in its row")
def _():
    got = _example().main(["--tiny", "--steps", "2", "--warmup", "1", "--plain", "--device", DEV, "--compare",
                           "eager,blk"])
    assert set(got) == {"eager", "blk"}, got
    for m, r in got.items():
        assert isinstance(r, dict) and len(r["losses"]) == 2 and r["tokens_per_s"] > 0, (m, r)
    worst = max(abs(x - y) / abs(y) for x, y in zip(got["blk"]["losses"], got["eager"]["losses"]))
    assert worst <= 0.02, got
    table = _example().compare_table(dict(got, liger="train_llama.py: --mode liger: no liger_kernel"))
    rows = table.splitlines()
    assert len(rows) == 5 and rows[2].startswith("| eager |") and "| 0.00% | 0.00% |" in rows[2], table
    assert f"| {100 * worst:.2f}% |" in rows[3] and "no liger_kernel" in rows[4], table
    return rows[3]


# ---- GPU: a small Llama ----------------------------------------------------------------------------

if DEV != "cpu" and transformers is not None:
    @case("GPU: a small Llama (hidden 1024, 4 layers, vocab 32000, 2 x 1024 tokens) in bf16, patched: logits, "
          "loss and gradients within twice torch's bf16 error")
    def _():
        big = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                   num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
        ids, labels = batch(32000, 2, 1024)
        want = run(build("llama", **big), ids, labels)
        lowp = run(build("llama", torch.bfloat16, **big), ids, labels)
        model = build("llama", torch.bfloat16, **big)
        p = nn.patch(model, linear_cross_entropy=False)
        try:
            got = run(model, ids, labels)
        finally:
            p.undo()
        for what, g, w, t in (("logits", got[0], want[0], lowp[0]), ("loss", got[1], want[1], lowp[1])) + tuple(
                (f"gradient of {n}", got[2][n], want[2][n], lowp[2][n]) for n in want[2]):
            err = (g.double() - w.double()).abs().max().item()
            terr = (t.double() - w.double()).abs().max().item()
            assert err <= 2 * terr + 1e-2 * w.double().abs().max().item(), \
                f"{what}: blk error {err:.3g}, torch bf16 error {terr:.3g}"
        return str(p)

finish()
