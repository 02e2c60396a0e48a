"""examples/sum_many.tile from Python: the sums of many tensors, one launch,
their addresses passed as an array of pointers (torch: data_ptr(); the
interpreter: blk.device_array, whose .ptr is an address in its memory)."""
from _common import GPU, blk, load, size, randn, empty, ref, check, done, np, torch

k = load("sum_many.tile").sum_many
sizes = size([1, 1000, 4097, 100_000, 3] * 40, [1, 100, 1500, 7, 300])
tensors = [randn(n) for n in sizes]
if GPU:
    ptrs = torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64, device="cuda")
    lens = torch.tensor(sizes, dtype=torch.int64, device="cuda")
else:
    keep = [blk.device_array(t) for t in tensors]   # memory of the interpreter, alive while used
    ptrs = np.array([d.ptr for d in keep], np.uint64)
    lens = np.array(sizes, np.int64)
out = empty(len(sizes))
k(ptrs, lens, out, len(sizes), BLOCK=1024)
want = ref(lambda *ts: torch.stack([t.sum() for t in ts]), lambda *ts: np.array([t.sum() for t in ts]), *tensors)
check("out[t] = sum(tensor t)", out, want, 1e-5)
done("sum_many")
