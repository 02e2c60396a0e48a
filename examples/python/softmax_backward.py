"""examples/softmax_backward.tile from Python: the gradient of a row-wise softmax, dx = y * (dy - sum(dy * y))."""
from _common import blk, load, size, randn, empty, ref, check, done, np, tensor

k = load("softmax_backward.tile").softmax_bwd
rows, cols = size((4096, 1000), (37, 200))
x, dy, dx = randn((rows, cols)), randn((rows, cols)), empty((rows, cols))


def np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def t_softmax(a):
    return a.softmax(dim=1)


# y: the forward's output, in f32, from the reference (the kernel needs y, not x)
y = tensor(ref(t_softmax, np_softmax, x).astype(np.float32))
k[(rows,)](y, dy, dx, cols, cols, rows, cols, BLOCK=blk.next_power_of_2(cols))


def np_bwd(y, dy):
    return y * (dy - (dy * y).sum(axis=1, keepdims=True))


def t_bwd(y, dy):
    return y * (dy - (dy * y).sum(dim=1, keepdim=True))


check("dx = y * (dy - sum(dy * y))", dx, ref(t_bwd, np_bwd, y, dy), 1e-5)
done("softmax_backward")
