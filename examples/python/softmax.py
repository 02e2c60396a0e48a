"""examples/softmax.tile from Python: row-wise softmax, one program a row."""
from _common import blk, load, size, randn, empty, ref, check, done, np

k = load("softmax.tile").softmax
rows, cols = size((4096, 1000), (37, 200))
x, out = randn((rows, cols)), empty((rows, cols))
block = blk.next_power_of_2(cols)
k[(rows,)](x, out, cols, cols, rows, cols, BLOCK=block)


def np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


check("softmax(x, rows)", out, ref(lambda a: a.softmax(dim=1), np_softmax, x), 1e-5)
done("softmax")
