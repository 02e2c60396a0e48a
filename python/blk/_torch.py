"""blk._torch: a blk kernel as a torch custom op (torch.library), so that
torch.compile(fullgraph=True) graphs call it instead of breaking on it."""


def torch_op(name, *, mutates_args=(), fake=None, device_types=None, schema=None):
    """A decorator: registers `fn` (a Python function that launches blk
    kernels on tensors) as the custom op `name` ("mylib::op") through
    torch.library.custom_op, and `fake` as its fake (meta) function: the
    function torch.compile traces with, which returns empty tensors of the
    result's shape and dtype without running anything. Returns the op (call
    it like fn; op.register_fake works too).

        @blk.torch_op("mylib::add", fake=lambda x, y: torch.empty_like(x))
        def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            kernels.vector_add(x, y, out, x.numel())
            return out

    fn needs type annotations (torch derives the op's schema from them), or
    give schema= ("(Tensor x, Tensor y) -> Tensor"). mutates_args names the
    arguments fn writes in place (see torch.library.custom_op)."""
    import torch

    def wrap(fn):
        op = torch.library.custom_op(name, mutates_args=mutates_args, device_types=device_types,
                                     schema=schema)(fn)
        if fake is not None:
            op.register_fake(fake)
        return op
    return wrap
