"""examples/layernorm_backward.tile from Python: the gradients of layer norm (dx, and dw, db
reduced in two stages), for the forward of layernorm.tile."""
from _common import blk, load, size, randn, empty, ref, check, done, np, GPU, torch, tensor

m = load("layernorm_backward.tile")
bwd_dx, bwd_dwdb = m.layernorm_bwd_dx, m.layernorm_bwd_dwdb
rows, cols = size((4096, 4000), (19, 700))
eps = 1e-5
x, dy = randn((rows, cols), np.float16), randn((rows, cols), np.float16)
w = randn(cols, np.float16)


def np_stats(x):
    mu = x.mean(axis=1)
    return mu, 1 / np.sqrt(x.var(axis=1) + eps)


def t_stats(x):
    return x.mean(dim=1), 1 / (x.var(dim=1, unbiased=False) + eps).sqrt()


# the forward's saved statistics, f32
mean_np, rstd_np = (np.asarray(v, np.float32) for v in (ref(lambda x: t_stats(x)[0], lambda x: np_stats(x)[0], x),
                                                         ref(lambda x: t_stats(x)[1], lambda x: np_stats(x)[1], x)))
mean, rstd = tensor(mean_np), tensor(rstd_np)
n_progs = min(rows, 128 if GPU else 4)
dx = empty((rows, cols), np.float16)
pdw, pdb = empty((n_progs, cols)), empty((n_progs, cols))
dw, db = empty(cols, np.float16), empty(cols, np.float16)
bwd_dx(dy, x, w, mean, rstd, dx, pdw, pdb, cols, rows, cols, n_progs, BLOCK=blk.next_power_of_2(cols))
bwd_dwdb(pdw, pdb, dw, db, n_progs, cols)


def np_grads(x, dy, w):
    mu, rs = x.mean(axis=1, keepdims=True), 1 / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xhat = (x - mu) * rs
    g = w * dy
    c1 = (xhat * g).mean(axis=1, keepdims=True)
    c2 = g.mean(axis=1, keepdims=True)
    return rs * (g - xhat * c1 - c2), (dy * xhat).sum(axis=0), dy.sum(axis=0)


def t_grads(x, dy, w):
    x = x.clone().requires_grad_(True)
    w = w.clone().requires_grad_(True)
    b = torch.zeros_like(w, requires_grad=True)
    y = torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, eps)
    y.backward(dy)
    return x.grad, w.grad, b.grad


check("dx", dx, ref(lambda *a: t_grads(*a)[0], lambda *a: np_grads(*a)[0], x, dy, w), 2e-2)
check("dw = sum over rows of dy * xhat", dw, ref(lambda *a: t_grads(*a)[1], lambda *a: np_grads(*a)[1], x, dy, w), 1e-2)
check("db = sum over rows of dy", db, ref(lambda *a: t_grads(*a)[2], lambda *a: np_grads(*a)[2], x, dy, w), 1e-2)
done("layernorm_backward")
