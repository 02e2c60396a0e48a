"""tests/python/test_nn_eager.py: the eager path of blk.nn's ops
(blk.nn._kernels.eager): outside torch.compile and tracing an op runs its
implementation directly (a plain torch.autograd.Function where a gradient
is needed) rather than through its torch.library custom op. Each op's
output and gradients by the eager path equal, bit for bit, those through
the custom op (forced by a dispatch mode that passes every call on); the
eager path does not call the custom op (a torch function mode sees no
blk_nn op) and its grad_fn is the plain Function's; torch.compile(
fullgraph=True) still has the custom ops in its graph, and fake and meta
tensors still go through their fake functions. Without torch it prints one
line and counts nothing. BLK_NN_DEVICE=cuda runs the same on the GPU."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import case, finish  # noqa: E402

try:
    import torch
except ImportError:
    print("skip tests/python/test_nn_eager.py: no torch in this python (blk.nn needs it)")
    finish()

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import blk.nn as nn  # noqa: E402
from blk.nn import _kernels as K  # noqa: E402

DEV = os.environ.get("BLK_NN_DEVICE", "cpu")
torch.manual_seed(0)


class PassOn(TorchDispatchMode):
    """A dispatch mode that runs every op as it is: under it blk.nn's ops take
    their custom ops (a tracer's mode would)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def t(*shape, dtype=torch.float32, grad=True):
    x = torch.randn(*shape, dtype=dtype, device=DEV)
    return x.requires_grad_(grad)


def softmax(*shape, log=False):
    x = torch.randn(*shape, device=DEV)
    return (x.log_softmax(-1) if log else x.softmax(-1)).detach()


# name -> (fn(*inputs) -> a tensor or a tuple of them, inputs, the custom op its eager path must skip)
OPS = {
    "rms_norm": (lambda x, w: nn.rms_norm(x, w, 1e-6), lambda: (t(5, 24), t(24)), "rms_norm_fwd"),
    "rms_norm bf16, Gemma": (lambda x, w: nn.rms_norm(x, w, 1e-5, 1.0),
                             lambda: (t(3, 2, 16, dtype=torch.bfloat16), t(16, dtype=torch.bfloat16)),
                             "rms_norm_fwd"),
    "add_rms_norm": (lambda x, r, w: nn.add_rms_norm(x, r, w), lambda: (t(4, 16), t(4, 16), t(16)),
                     "add_rms_norm_fwd"),
    "layer_norm": (lambda x, w, b: nn.layer_norm(x, w, b), lambda: (t(6, 20), t(20), t(20)), "layer_norm_fwd"),
    "layer_norm, no bias": (lambda x, w: nn.layer_norm(x, w, None), lambda: (t(6, 20), t(20)), "layer_norm_fwd"),
    "swiglu": (nn.swiglu, lambda: (t(3, 40), t(3, 40)), "glu_fwd"),
    "geglu f16": (nn.geglu, lambda: (t(3, 40, dtype=torch.float16), t(3, 40, dtype=torch.float16)), "glu_fwd"),
    "kl_div batchmean": (lambda x, y: nn.kl_div(x, y), lambda: (softmax(4, 30, log=True).requires_grad_(),
                                                               softmax(4, 30)), "kl_div_fwd"),
    "kl_div none, log_target": (lambda x, y: nn.kl_div(x, y, "none", log_target=True),
                                lambda: (softmax(4, 30, log=True).requires_grad_(),
                                         softmax(4, 30, log=True).requires_grad_()), "kl_div_fwd"),
    "jsd, labels": (lambda s, u: nn.jsd(s, u, 0.3, labels=torch.tensor([0, -100, 2], device=DEV)),
                    lambda: (t(3, 33), t(3, 33, grad=False)), "jsd_fwd"),
    "jsd, teacher grad": (lambda s, u: nn.jsd(s, u, 0.5, temperature=2.0), lambda: (t(3, 33), t(3, 33)),
                          "jsd_fwd"),
    "cross_entropy, smoothing and z-loss": (
        lambda x: nn.cross_entropy(x, torch.tensor([3, -100, 0, 29], device=DEV), label_smoothing=0.1, z_loss=1e-3),
        lambda: (t(4, 30),), "cross_entropy_loss"),
    "cross_entropy bf16, none": (lambda x: nn.cross_entropy(x, torch.tensor([1, 2, 7], device=DEV),
                                                            reduction="none"),
                                 lambda: (t(3, 50, dtype=torch.bfloat16),), "cross_entropy_loss"),
    "linear_cross_entropy mean, bias": (
        lambda x, w, b: nn.linear_cross_entropy(x, w, torch.tensor([5, -100, 0, 39, 2], device=DEV), b,
                                                chunk_rows=2),
        lambda: (t(5, 12), t(40, 12), t(40)), "linear_cross_entropy_fwd"),
    "linear_cross_entropy none": (
        lambda x, w: nn.linear_cross_entropy(x, w, torch.tensor([5, 1, 0], device=DEV), reduction="none",
                                             chunk_rows=2),
        lambda: (t(3, 12), t(40, 12)), "linear_cross_entropy_fwd"),
    "embedding, padding_idx": (lambda w: nn.embedding(torch.tensor([[3, 0, 3], [9, 1, 0]], device=DEV), w,
                                                      padding_idx=0),
                               lambda: (t(10, 8),), "embedding_fwd"),
    "rope, grouped k": (lambda q, k: nn.rope(q, k, *rope_cs()),
                        lambda: (t(2, 4, 6, 8), t(2, 2, 6, 8)), "rope"),
}


def rope_cs():
    f = torch.arange(6, dtype=torch.float32, device=DEV)[:, None] * torch.linspace(0.1, 1.0, 4, device=DEV)
    emb = torch.cat((f, f), -1)
    return emb.cos(), emb.sin()


def outputs_and_grads(fn, inputs, mode=None):
    """fn's outputs on copies of inputs, and the gradients of a fixed random
    combination of them; under mode where given."""
    ins = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    if mode is not None:
        with mode:
            out = fn(*ins)
    else:
        out = fn(*ins)
    outs = out if isinstance(out, tuple) else (out,)
    g = torch.Generator(device="cpu").manual_seed(3)
    total = sum((o.double() * torch.randn(o.shape, generator=g, dtype=torch.float64).to(o.device)).sum()
                for o in outs)
    wrt = [x for x in ins if x.requires_grad]
    grads = torch.autograd.grad(total, wrt)
    return [o.detach() for o in outs], list(grads), outs


def graph_nodes(outs, depth=4):
    """The class names of the autograd nodes within depth steps behind outs."""
    seen, todo = [], [(o.grad_fn, 0) for o in outs if o.grad_fn is not None]
    while todo:
        node, d = todo.pop()
        seen.append(type(node).__name__)
        if d < depth:
            todo += [(n, d + 1) for n, _ in node.next_functions if n is not None]
    return seen


class Seen(TorchFunctionMode):
    """Records the blk_nn custom ops called (torch.ops calls reach a torch
    function mode; the eager path does not look at these modes)."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if name.startswith("blk_nn."):
            self.ops.add("blk_nn::" + name.split(".")[1])
        return func(*args, **(kwargs or {}))


def blk_ops_seen(fn):
    """The blk_nn:: custom ops called while fn runs."""
    with Seen() as seen:
        fn()
    return seen.ops


for name, (fn, make, opname) in OPS.items():
    @case(f"{name}: the eager path's output and gradients equal the custom op's, bit for bit")
    def _(fn=fn, make=make):
        inputs = make()
        o1, g1, outs = outputs_and_grads(fn, inputs)
        o2, g2, outs2 = outputs_and_grads(fn, inputs, PassOn())
        assert len(o1) == len(o2) and len(g1) == len(g2)
        for a, b in zip(o1 + g1, o2 + g2):
            assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
            assert torch.equal(a, b), (a - b).abs().max()
        # the graph each made: the plain Function's, the custom op's (among the nodes behind the outputs: the
        # losses reduce or convert the op's output after it)
        names, names2 = graph_nodes(outs), graph_nodes(outs2)
        assert any("_eager" in n for n in names) or name.startswith(("kl_div", "jsd")), names
        assert not any("_eager" in n for n in names2), names2

    @case(f"{name}: the eager path reaches no blk_nn:: custom op (with and without grad); the forced path does")
    def _(fn=fn, make=make, opname=opname):
        inputs = make()
        seen = blk_ops_seen(lambda: outputs_and_grads(fn, inputs))
        assert not seen, seen
        with torch.no_grad():
            seen = blk_ops_seen(lambda: fn(*inputs))
        assert not seen, seen
        seen = blk_ops_seen(lambda: outputs_and_grads(fn, inputs, PassOn()))
        assert f"blk_nn::{opname}" in seen, seen


@case("the eager path saves what the custom op saves (rms_norm: x, weight, rstd)")
def _():
    x, w = t(4, 8), t(8)
    y = nn.rms_norm(x, w)
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 3 and saved[0] is x and saved[1] is w and saved[2].shape == (4,), saved
    with PassOn():
        y2 = nn.rms_norm(x, w)
    node = y2.grad_fn   # the custom op's output [0]: a select of its generated Function's outputs
    while not hasattr(node, "saved_tensors"):
        node = node.next_functions[0][0]
    saved2 = node.saved_tensors
    assert len(saved2) == 3 and saved2[0] is x and saved2[1] is w and torch.equal(saved[2], saved2[2]), saved2


@case("fake tensors and meta tensors take the custom ops (their fake functions: no kernel runs)")
def _():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x, w = torch.empty(5, 12, device=DEV), torch.empty(12, device=DEV)
        y = nn.rms_norm(x, w)
        z = nn.swiglu(x, x)
        assert y.shape == (5, 12) and z.shape == (5, 12)
    xm, wm = torch.empty(5, 12, device="meta", requires_grad=True), torch.empty(12, device="meta")
    y = nn.layer_norm(xm, wm, None)
    assert y.device.type == "meta" and y.shape == (5, 12)
    assert "_eager" not in type(y.grad_fn).__name__, type(y.grad_fn).__name__


@case("a custom op without an autograd formula: the eager op runs the function without grad, the custom op with")
def _():
    calls = []

    @torch.library.custom_op("blk_nn_test::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return x * 2

    op = K.eager(twice)
    x = torch.ones(3, device=DEV)
    assert torch.equal(op(x), x * 2) and op.custom_op is twice
    seen = blk_ops_seen(lambda: op(x))
    assert not any("twice" in s for s in seen), seen
    # a gradient asked of an op without a formula: the custom op (torch says it has none)
    try:
        op(x.clone().requires_grad_()).sum().backward()
        raised = False
    except RuntimeError:
        raised = True
    assert raised


@case("torch.fx.symbolic_trace of a module of blk.nn ops: its graph has the custom ops (a Proxy is traced)")
def _():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.RMSNorm(16, device=DEV)

        def forward(self, x, a):
            return nn.swiglu(self.norm(x), a)

    m = M()
    gm = torch.fx.symbolic_trace(m)
    text = str(gm.graph)
    assert "blk_nn.rms_norm_fwd" in text and "blk_nn.glu_fwd" in text, text
    x, a = t(3, 16, grad=False), t(3, 16, grad=False)
    assert torch.equal(gm(x, a), m(x, a))


@case("torch.compile(fullgraph=True): the graph dynamo makes has the blk_nn custom ops")
def _():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, r, w, b, a):
        y, h = nn.add_rms_norm(x, r, w)
        y = nn.rms_norm(y, w) + nn.layer_norm(h, w, b)
        return nn.swiglu(y, a), nn.kl_div(y.log_softmax(-1), a.softmax(-1))

    torch._dynamo.reset()
    ins = [t(4, 16), t(4, 16), t(16), t(16), t(4, 16)]
    got = torch.compile(f, backend=backend, fullgraph=True)(*ins)
    want = f(*ins)
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    text = "\n".join(str(g.graph) for g in graphs)
    for op in ("add_rms_norm_fwd", "rms_norm_fwd", "layer_norm_fwd", "glu_fwd", "kl_div_fwd"):
        assert f"blk_nn.{op}" in text, (op, text)


@case("torch.compile(fullgraph=True, backend='aot_eager'): forward and gradients equal the eager path's")
def _():
    def f(x, w, a):
        return nn.swiglu(nn.rms_norm(x, w), a).sum()

    torch._dynamo.reset()
    ins = [t(4, 16), t(16), t(4, 16)]
    loss = torch.compile(f, backend="aot_eager", fullgraph=True)(*ins)
    grads = torch.autograd.grad(loss, ins)
    ins2 = [x.detach().clone().requires_grad_() for x in ins]
    loss2 = f(*ins2)
    grads2 = torch.autograd.grad(loss2, ins2)
    assert torch.equal(loss, loss2)
    for a, b in zip(grads, grads2):
        assert torch.equal(a, b)


finish()
