"""blk.nn: the kernels of transformer training as torch ops, forward and
backward written in blk (stdlib/nn/*.tile), each registered as a torch
custom op (torch.library) with its autograd formula and a fake function, so
that torch.compile(fullgraph=True) keeps it as one node; and the
optimizer's step (AdamW, gradient clipping) as multi-tensor kernels, one
launch for a list of tensors through a device table of their addresses.
CUDA tensors run on the GPU, CPU tensors on the interpreter. Needs torch (2.4 or later: torch.library.custom_op).

    import blk.nn
    y = blk.nn.rms_norm(x, w, eps=1e-6)            # Llama; offset=1.0: Gemma
    y, h = blk.nn.add_rms_norm(x, residual, w)     # h = x + residual, y = rms_norm(h)
    y = blk.nn.layer_norm(x, w, b, eps=1e-5)       # weight and bias each optional
    e = blk.nn.embedding(tokens, table)            # deterministic gradient; padding_idx
    out = blk.nn.swiglu(gate, up)                  # silu(gate) * up; geglu: gelu_tanh(gate) * up
    q, k = blk.nn.rope(q, k, cos, sin)             # rotate-half, GQA head counts
    o = blk.nn.attention(q, k, v, causal=True)     # flash attention, GQA; (batch, heads, seq, head_dim)
    loss = blk.nn.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1, z_loss=1e-4)
    opt = blk.nn.AdamW(model.parameters(), lr=1e-3, master_weights=True)   # one launch a step
    norm = blk.nn.clip_grad_norm_(model.parameters(), 1.0)                 # a device tensor, no sync
    loss = blk.nn.linear_cross_entropy(h, lm_head.weight, target)   # never the whole logits
    y = blk.nn.linear(x, w, b, activation="silu", residual=r)      # act(x @ w.T + b) + r, one launch
    loss = blk.nn.kl_div(student.log_softmax(-1), teacher_probs)    # F.kl_div, "batchmean"
    loss = blk.nn.jsd(student_logits, teacher_logits, beta=0.5)    # distillation, generalized JSD
    print(blk.nn.patch(hf_model))                  # a transformers Llama/Mistral/Qwen/Gemma on these ops

docs/python.md, "blk.nn", says each op's dtypes, what it saves and its limits,
and how the optimizer keeps its state.
"""

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("blk.nn needs torch (pip install torch)") from e

from ._cross_entropy import cross_entropy  # noqa: F401,E402
from ._rmsnorm import RMSNorm, add_rms_norm, rms_norm  # noqa: F401,E402
from ._layernorm import LayerNorm, layer_norm  # noqa: F401,E402
from ._embedding import embedding  # noqa: F401,E402
from ._rope import rope  # noqa: F401,E402
from ._attention import attention  # noqa: F401,E402
from ._glu import geglu, swiglu  # noqa: F401,E402
from ._optim import AdamW, clip_grad_norm_  # noqa: F401,E402
from ._linear_cross_entropy import LinearCrossEntropy, linear_cross_entropy  # noqa: F401,E402
from ._distill import jsd, kl_div  # noqa: F401,E402
from ._linear import Linear, linear  # noqa: F401,E402
from ._patch import Patched, patch  # noqa: F401,E402

__all__ = ["rms_norm", "add_rms_norm", "RMSNorm", "layer_norm", "LayerNorm", "embedding", "swiglu", "geglu",
           "rope", "attention", "cross_entropy", "linear_cross_entropy", "LinearCrossEntropy", "kl_div", "jsd",
           "AdamW", "clip_grad_norm_", "patch", "Patched"]
__all__ += ["linear", "Linear"]
