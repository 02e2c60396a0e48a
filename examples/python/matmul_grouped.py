"""examples/matmul_grouped.tile from Python: products of different shapes in
one launch (the experts of a mixture-of-experts layer), their addresses in
arrays of pointers and their shapes and strides in i32 arrays."""
from _common import GPU, blk, load, size, randn, empty, f64, ref, check, done, np, torch

k = load("matmul_grouped.tile").matmul_grouped
# (M, N, K) of each group: an expert that got no token has M = 0
shapes = size([(512, 1024, 768), (0, 1024, 768), (37, 1024, 768), (1200, 1024, 768)],
              [(60, 48, 40), (0, 48, 40), (1, 48, 40), (33, 20, 70)])
As = [randn((m_, k_), np.float16) for m_, n_, k_ in shapes]
Bs = [randn((k_, n_), np.float16) for m_, n_, k_ in shapes]
Cs = [empty((m_, n_), np.float16) for m_, n_, k_ in shapes]
dims = np.array(shapes, np.int32).reshape(-1)
strides = np.array([(k_, n_, 1, n_) for m_, n_, k_ in shapes], np.int32).reshape(-1)
if GPU:
    def ptrs(ts):
        return torch.tensor([t.data_ptr() for t in ts], dtype=torch.int64, device="cuda")
    dims, strides = torch.from_numpy(dims).cuda(), torch.from_numpy(strides).cuda()
else:
    # memory of the interpreter, alive while used: As, Bs and Cs become DeviceArrays
    As, Bs, Cs = ([blk.device_array(t) for t in ts] for ts in (As, Bs, Cs))

    def ptrs(ts):
        return np.array([t.ptr for t in ts], np.uint64)
k(ptrs(As), ptrs(Bs), ptrs(Cs), dims, strides, len(shapes), T="f16", TO="f16")
for g, (a, b) in enumerate(zip(As, Bs)):
    got, a, b = (x if GPU else x.numpy() for x in (Cs[g], a, b))
    check(f"group {g} {shapes[g]}", got, ref(lambda a, b: a @ b, lambda a, b: a @ b, a, b), 1e-2)
done("matmul_grouped")
