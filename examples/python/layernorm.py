"""examples/layernorm.tile from Python: layer norm of f16 rows, with mean and rstd."""
from _common import load, size, randn, empty, ref, check, done, np

k = load("layernorm.tile").layernorm_fwd
rows, cols = size((4096, 4000), (19, 700))      # cols no multiple of BLOCK: the last chunk is masked
eps = 1e-5
x = randn((rows, cols), np.float16)
w, b = randn(cols, np.float16), randn(cols, np.float16)
y, mean, rstd = empty((rows, cols), np.float16), empty(rows), empty(rows)
k(x, y, w, b, mean, rstd, cols, cols, rows, cols, eps, BLOCK=256)


def np_layernorm(x, w, b):
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def t_layernorm(x, w, b):
    import torch
    return torch.nn.functional.layer_norm(x, (cols,), w, b, eps)


check("y = layernorm(x) * w + b", y, ref(t_layernorm, np_layernorm, x, w, b), 1e-2)
check("mean", mean, ref(lambda x: x.mean(dim=1), lambda x: x.mean(axis=1), x), 1e-3)
check("rstd", rstd, ref(lambda x: 1 / (x.var(dim=1, unbiased=False) + eps).sqrt(),
                        lambda x: 1 / np.sqrt(x.var(axis=1) + eps), x), 1e-3)
done("layernorm")
