"""blk.nn.patch: a Hugging Face transformers causal LM (Llama, Mistral, Qwen2,
Qwen3, Gemma, Gemma 2, Gemma 3 text) made to run on blk.nn's ops, in place.

What is replaced, and how (the parameters stay the same objects under the
same names, so state_dict keys and an already-loaded model's weights are
kept):
  - every RMSNorm submodule: a blk.nn.RMSNorm subclass holding the old
    module's weight Parameter (Gemma's families: offset 1.0);
  - every MLP computing down(act(gate(x)) * up(x)): a module holding the
    same three Linear submodules that calls swiglu (SiLU) or geglu
    (gelu-tanh) on the two projections;
  - apply_rotary_pos_emb of the model's modeling module (q and k in one
    blk.nn.rope call): the function has no link to a model, so this is
    process-wide for that family until Patched.undo();
  - the causal-LM loss (model.loss_function): blk's cross-entropy kernel;
    where blk.nn has linear_cross_entropy, the *ForCausalLM's forward (on
    the instance) computes the training loss from the last hidden states
    without making logits.
"""

import sys
import types

import torch
import torch.nn.functional as F

from ._cross_entropy import cross_entropy_op
from ._glu import geglu, swiglu
from ._rmsnorm import RMSNorm
from ._rope import rope

# model_type -> Gemma's RMSNorm convention (x * (1 + w), computed in float32)
FAMILIES = {
    "llama": False, "mistral": False, "qwen2": False, "qwen3": False,
    "gemma": True, "gemma2": True, "gemma3_text": True,
}


class HFRMSNorm(RMSNorm):
    """blk.nn.RMSNorm in the place of a transformers RMSNorm, holding that
    module's weight. Its output has the dtype the replaced module's had:
    Llama's multiplies the normalized x (in x's dtype) by the weight, so a
    float32 weight promotes a bfloat16 x; Gemma's returns x's dtype."""

    def __init__(self, weight, eps, gemma):
        super().__init__(weight.shape[0], eps=eps, gemma=gemma, device="meta")
        self.weight = weight

    def forward(self, x, residual=None):
        y = super().forward(x, residual)
        if not self.offset and residual is None:
            dt = torch.promote_types(x.dtype, self.weight.dtype)
            if dt != y.dtype:
                y = y.to(dt)
        return y

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.eps}, offset={self.offset}"


class GatedMLP(torch.nn.Module):
    """down_proj(act(gate_proj(x)) * up_proj(x)) with the activation and the
    product in one blk kernel (swiglu, or geglu for gelu-tanh). Holds the
    replaced MLP's own Linear modules under their names."""

    def __init__(self, mlp, gelu):
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = mlp.gate_proj, mlp.up_proj, mlp.down_proj
        self.gelu = gelu

    def forward(self, x):
        a, b = self.gate_proj(x), self.up_proj(x)
        if b.dtype != a.dtype:
            dt = torch.promote_types(a.dtype, b.dtype)
            a, b = a.to(dt), b.to(dt)
        return self.down_proj(geglu(a, b) if self.gelu else swiglu(a, b))

    def extra_repr(self):
        return "geglu" if self.gelu else "swiglu"


def _act_kind(act):
    """'silu' or 'gelu_tanh' for the activation module act, found by
    evaluating it (the class names differ between versions); else None."""
    x = torch.linspace(-4, 4, 33, dtype=torch.float32, device="cpu")
    try:
        with torch.no_grad():
            y = act(x)
    except Exception:
        return None
    if torch.allclose(y, F.silu(x), rtol=1e-6, atol=1e-6):
        return "silu"
    if torch.allclose(y, F.gelu(x, approximate="tanh"), rtol=1e-6, atol=1e-6):
        return "gelu_tanh"
    return None


def _is_rms_norm(m):
    w = getattr(m, "weight", None)
    return (type(m).__name__.endswith("RMSNorm") and isinstance(w, torch.nn.Parameter) and w.dim() == 1
            and getattr(m, "bias", None) is None and _eps(m) is not None)


def _eps(m):
    for name in ("variance_epsilon", "eps"):
        v = getattr(m, name, None)
        if isinstance(v, (int, float)):
            return float(v)
    return None


def _is_gated_mlp(m):
    return all(isinstance(getattr(m, n, None), torch.nn.Linear) for n in ("gate_proj", "up_proj", "down_proj")) \
        and isinstance(getattr(m, "act_fn", None), torch.nn.Module)


def _blk_rope(original):
    """apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1) on blk.nn.rope;
    any call it does not fit (another layout, partial rotary dimensions,
    more arguments) goes to the function it replaced."""

    def apply_rotary_pos_emb(q, k, cos, sin, *args, **kwargs):
        # only unsqueeze_dim=1, by position or name (an older signature's position_ids: the original)
        unsq = kwargs.get("unsqueeze_dim", args[0] if args else 1)
        plain = len(args) + len(kwargs) <= 1 and set(kwargs) <= {"unsqueeze_dim"} and type(unsq) is int and unsq == 1
        if (not plain or q.dim() != 4 or k.dim() != 4 or q.dtype != k.dtype
                or cos.shape != sin.shape or cos.shape[-1] != q.shape[-1] or k.shape[-1] != q.shape[-1]
                or q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2] or cos.shape[-2] != q.shape[2]
                or cos.dim() not in (2, 3) or (cos.dim() == 3 and cos.shape[0] not in (1, q.shape[0]))):
            return original(q, k, cos, sin, *args, **kwargs)
        dt = torch.promote_types(q.dtype, cos.dtype)   # q * cos in the replaced function
        dev = q.device.type
        if (dt == torch.float32 and cos.dtype == dt and q.dtype in (torch.float16, torch.bfloat16)
                and torch.is_autocast_enabled(dev) and torch.get_autocast_dtype(dev) == q.dtype):
            # under autocast attention takes q and k in q's dtype: the float32 rotation rounded once to it in
            # the kernel, rather than float32 copies of q and k rotated and converted again
            return rope(q, k, cos, sin)
        return rope(q.to(dt), k.to(dt), cos.to(dt), sin.to(dt))

    apply_rotary_pos_emb.__blk_original__ = original
    return apply_rotary_pos_emb


def causal_lm_loss(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, shift_labels=None,
                   **kwargs):
    """transformers' ForCausalLMLoss on blk's cross-entropy kernel: labels
    shifted left by one (the last position ignored), the mean over the
    tokens kept, or the sum divided by num_items_in_batch where given. The
    logits are not upcast first (the kernel computes in float32 whatever
    their dtype) and the loss is float32, as transformers' (and as torch's
    cross_entropy under autocast)."""
    if shift_labels is None:
        shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    logits = logits.reshape(-1, vocab_size)
    target = shift_labels.reshape(-1).to(logits.device)
    rows, _ = cross_entropy_op(logits, target, int(ignore_index), 0.0, 0.0, 0.0)
    loss = rows.float().sum()
    if num_items_in_batch is None:
        return loss / (target != ignore_index).sum()
    if torch.is_tensor(num_items_in_batch):
        num_items_in_batch = num_items_in_batch.to(loss.device)
    return loss / num_items_in_batch


# the logits of one chunk of the patched training loss: up to this many bytes (linear_cross_entropy's own
# default keeps them about x's size, Liger-Kernel's memory; fewer, larger chunks pass over the weight's gradient
# fewer times: at a 1B Llama's 8192 x 2048 x 128256, 1024 rows instead of 256, 190 MiB more)
CHUNK_LOGITS_BYTES = 256 << 20


def training_chunk_rows(rows, hidden, vocab, itemsize):
    """Rows a chunk of the patched loss: a power of two whose logits take at
    most CHUNK_LOGITS_BYTES, and at least linear_cross_entropy's default."""
    from ._linear_cross_entropy import chunk_rows_for
    base = chunk_rows_for(rows, hidden, vocab)
    fit = max(1, CHUNK_LOGITS_BYTES // max(1, vocab * itemsize))
    return min(max(base, 1 << (fit.bit_length() - 1)), 1 << (max(rows, 1) - 1).bit_length())


def _fused_forward(flce):
    """A *ForCausalLM forward that, given labels, computes the loss from the
    last hidden states and lm_head's weight with flce (blk.nn's
    linear_cross_entropy) and returns no logits; without labels it is the
    model's own forward."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, labels=None, logits_to_keep=0,
                **kwargs):
        orig = type(self).forward
        if labels is None or not self.training:
            return orig(self, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                        labels=labels, logits_to_keep=logits_to_keep, **kwargs)
        num_items = kwargs.pop("num_items_in_batch", None)
        ignore_index = kwargs.pop("ignore_index", -100)
        shift_labels = kwargs.pop("shift_labels", None)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kwargs)
        h = out.last_hidden_state
        if shift_labels is None:
            shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
        h = h.reshape(-1, h.shape[-1])
        w, bias = self.lm_head.weight, self.lm_head.bias
        if torch.is_autocast_enabled(h.device.type):   # the head's matmul in autocast's type, as lm_head's
            dt = torch.get_autocast_dtype(h.device.type)
            h, w, bias = h.to(dt), w.to(dt), (bias.to(dt) if bias is not None else None)
        target = shift_labels.reshape(-1).to(h.device)
        red = "mean" if num_items is None else "sum"
        cap = getattr(self.config, "final_logit_softcapping", None)   # Gemma 2/3: tanh-capped logits
        more = {"softcap": cap} if cap else {}
        loss = flce(h, w, target, bias=bias, ignore_index=ignore_index, reduction=red,
                    chunk_rows=training_chunk_rows(h.shape[0], h.shape[1], w.shape[0], h.element_size()),
                    **more).float()
        if num_items is not None:
            loss = loss / (num_items.to(loss.device) if torch.is_tensor(num_items) else num_items)
        from transformers.modeling_outputs import CausalLMOutputWithPast
        rest = {k: v for k, v in out.items() if k != "last_hidden_state"}
        return CausalLMOutputWithPast(loss=loss, logits=None, **rest)

    return forward


class Patched:
    """What blk.nn.patch replaced: counts (a dict: kind -> how many), str()
    a one-line summary, undo() puts every replaced module, function and
    forward back."""

    def __init__(self, model):
        self.model_name = type(model).__name__
        self.counts = {}
        self.notes = []
        self._undo = []

    def _add(self, kind, n=1):
        self.counts[kind] = self.counts.get(kind, 0) + n

    def undo(self):
        for fn in reversed(self._undo):
            fn()
        self._undo.clear()

    def __getitem__(self, kind):
        return self.counts.get(kind, 0)

    def __str__(self):
        parts = ", ".join(f"{k} {v}" for k, v in self.counts.items()) or "nothing"
        notes = "".join(f"; {n}" for n in self.notes)
        return f"blk.nn.patch({self.model_name}): {parts}{notes}"

    __repr__ = __str__


def _set_child(model, name, new, patched):
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    old = getattr(parent, child)
    setattr(parent, child, new)
    patched._undo.append(lambda: setattr(parent, child, old))


def _model_type(model):
    cfg = getattr(model, "config", None)
    mt = getattr(cfg, "model_type", None)
    if mt in FAMILIES:
        return mt
    # a multimodal wrapper's text part is not patched; say so
    raise ValueError(f"blk.nn.patch: model {type(model).__name__} of model_type {mt!r}: only transformers models "
                     f"of the types {', '.join(sorted(FAMILIES))} are patched")


def patch(model, rms_norm=True, rope=True, swiglu=True, cross_entropy=True, linear_cross_entropy=None,
          verbose=False):
    """Replaces, in place, the parts of a transformers Llama, Mistral, Qwen2,
    Qwen3, Gemma, Gemma2 or Gemma3 (text) model that blk.nn has kernels
    for (see this module's comment) and returns a Patched: .counts says how
    many of each kind were replaced ("rms_norm", "swiglu", "geglu", "rope",
    and "cross_entropy" or "linear_cross_entropy"), str() says it in a line
    (printed where verbose), .undo() reverts. linear_cross_entropy (with
    cross_entropy): None uses blk.nn.linear_cross_entropy where blk.nn has
    it, False never, True requires it. Another model type is a ValueError.
    Patching a patched model again replaces nothing more."""
    import blk.nn as nn
    mt = _model_type(model)
    gemma = FAMILIES[mt]
    flce = getattr(nn, "linear_cross_entropy", None)
    if linear_cross_entropy and flce is None:
        raise ValueError("blk.nn.patch: linear_cross_entropy=True, and this blk.nn has no linear_cross_entropy")
    p = Patched(model)
    if getattr(model, "_blk_nn_patched", None) is not None:
        p.notes.append("already patched")
        return p
    mod = sys.modules.get(type(model).__module__)

    if rms_norm:
        for name, m in list(model.named_modules()):
            if name and _is_rms_norm(m) and not isinstance(m, HFRMSNorm):
                _set_child(model, name, HFRMSNorm(m.weight, _eps(m), gemma), p)
                p._add("rms_norm")
    if swiglu:
        for name, m in list(model.named_modules()):
            if name and _is_gated_mlp(m) and not isinstance(m, GatedMLP):
                kind = _act_kind(m.act_fn)
                if kind is None:
                    p.notes.append(f"{name}: activation {type(m.act_fn).__name__} kept")
                    continue
                gelu = kind == "gelu_tanh"
                _set_child(model, name, GatedMLP(m, gelu), p)
                p._add("geglu" if gelu else "swiglu")
    if rope:
        fn = getattr(mod, "apply_rotary_pos_emb", None)
        if fn is None:
            p.notes.append(f"{type(model).__module__} has no apply_rotary_pos_emb: rope kept")
        else:
            if not hasattr(fn, "__blk_original__"):
                setattr(mod, "apply_rotary_pos_emb", _blk_rope(fn))
                p._undo.append(lambda: setattr(mod, "apply_rotary_pos_emb", fn))
            # the attention modules of this model that call it
            n = sum(1 for m in model.modules()
                    if type(m).__module__ == mod.__name__ and type(m).__name__.endswith("Attention"))
            p._add("rope", n)
    if cross_entropy and hasattr(model, "lm_head") and type(model).__name__.endswith("ForCausalLM"):
        had = vars(model).get("_loss_function")
        model.loss_function = causal_lm_loss

        def restore(had=had):
            if had is None:
                vars(model).pop("_loss_function", None)
            else:
                model._loss_function = had
        p._undo.append(restore)
        if linear_cross_entropy is not False and flce is not None:
            # training with labels: the loss without logits; else the forward as it is, with the loss above
            model.forward = types.MethodType(_fused_forward(flce), model)
            p._undo.append(lambda: vars(model).pop("forward", None))
            p._add("linear_cross_entropy")
        else:
            p._add("cross_entropy")
    model._blk_nn_patched = p
    p._undo.append(lambda: vars(model).pop("_blk_nn_patched", None))
    if verbose:
        print(p)
    return p
