"""examples/softmax_generic.tile from Python: one softmax kernel for f16, bf16 and f32,
its element type T bound from the arrays' dtype (a variant each)."""
from _common import GPU, blk, load, size, randn, empty, ref, check, done, np, torch

k = load("softmax_generic.tile").softmax
rows, cols = size((4096, 1000), (37, 200))


def np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# bf16 only where torch gives it (numpy has no bfloat16)
kinds = [(np.float32, 1e-5), (np.float16, 2e-3)]
for dtype, tol in kinds:
    x, out = randn((rows, cols), dtype), empty((rows, cols), dtype)
    k[(rows,)](x, out, cols, cols, rows, cols, BLOCK=blk.next_power_of_2(cols))
    check(f"softmax of {np.dtype(dtype).name}", out, ref(lambda a: a.softmax(dim=1), np_softmax, x), tol)
if GPU:
    x = randn((rows, cols)).to(torch.bfloat16)
    out = x.new_empty((rows, cols))
    k[(rows,)](x, out, cols, cols, rows, cols, BLOCK=blk.next_power_of_2(cols))
    check("softmax of bfloat16", out, ref(lambda a: a.softmax(dim=1), np_softmax, x), 1e-2)
done("softmax_generic")
