"""blk.nn: the kernels of transformer training as torch ops, forward and
backward written in blk (stdlib/nn/*.tile), each registered as a torch
custom op (torch.library) with its autograd formula and a fake function, so
that torch.compile(fullgraph=True) keeps it as one node. CUDA tensors run on
the GPU, CPU tensors on the interpreter. Needs torch (2.4 or later: torch.library.custom_op).

    import blk.nn
    y = blk.nn.rms_norm(x, w, eps=1e-6)            # Llama; offset=1.0: Gemma
    y, h = blk.nn.add_rms_norm(x, residual, w)     # h = x + residual, y = rms_norm(h)
    out = blk.nn.swiglu(gate, up)                  # silu(gate) * up; geglu: gelu_tanh(gate) * up
    q, k = blk.nn.rope(q, k, cos, sin)             # rotate-half, GQA head counts
    loss = blk.nn.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1, z_loss=1e-4)
    print(blk.nn.patch(hf_model))                  # a transformers Llama/Mistral/Qwen/Gemma on these ops

docs/python.md, "blk.nn", says each op's dtypes, what it saves and its limits.
"""

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("blk.nn needs torch (pip install torch)") from e

from ._cross_entropy import cross_entropy  # noqa: F401,E402
from ._rmsnorm import RMSNorm, add_rms_norm, rms_norm  # noqa: F401,E402
from ._rope import rope  # noqa: F401,E402
from ._glu import geglu, swiglu  # noqa: F401,E402
from ._patch import Patched, patch  # noqa: F401,E402

__all__ = ["rms_norm", "add_rms_norm", "RMSNorm", "swiglu", "geglu", "rope", "cross_entropy", "patch", "Patched"]
