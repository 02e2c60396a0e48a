"""examples/vector_add.tile from Python: out = x + y."""
from _common import blk, load, size, randn, empty, ref, check, done

k = load("vector_add.tile").vector_add
n = size(1_000_003, 5_000)                     # no multiple of BLOCK: the last block is masked
x, y, out = randn(n), randn(n), empty(n)
k[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
check("out = x + y, grid given", out, ref(lambda a, b: a + b, lambda a, b: a + b, x, y), 1e-6)
out2 = empty(n)
k(x, y, out2, n)                               # the kernel's grid clause, BLOCK's default
check("out = x + y, grid clause", out2, ref(lambda a, b: a + b, lambda a, b: a + b, x, y), 1e-6)
done("vector_add")
