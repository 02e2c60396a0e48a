"""rows_python.py: issue 16's row: the launch cost of the blk Python package.

`python3 bench/bench.py --only issue16` (or --only python_launch).

blk: the package (python/blk) launching examples/vector_add.tile as a user
would, `vadd[(1,)](x, y, out, 1, BLOCK=1024)` on torch tensors: every call
checks each tensor (dtype, device, contiguity), reads its data_ptr, takes
torch's current stream and calls blk_launch once. Triton: the same kernel
(triton_kernels._add) launched the same way, `_add[(1,)](x, y, out, 1,
BLOCK=1024)`. torch: torch.add(x, y, out=o) on one element. Each side, after
checking the result: the host time of a launch with the GPU's launch queue
kept short (300 batches of 20 launches, each batch timed alone, a
synchronize between batches outside the timing; the median), the figure of
the row, as bench/launch.c times launches from C; and, in the notes, the
same in batches of 100, and 1000 launches in a row then one synchronize
(wall time a launch, median of 7), which a launch cheaper than the GPU's
own time a kernel reports at the GPU's rate once the queue is full. (On
the H100 of session 9, blk's launch took 4.6 µs of CPU time but 7.0 µs of
wall time in batches of 100, as torch's own did: batches of 20 tell
whether the GPU's rate set that.) The target (issue 16): blk at most 8 µs
a launch and at least 2.5x faster than Triton.
"""

import os
import sys

GROUP = "issue16"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _blk():
    sys.path.insert(0, os.path.join(REPO, "python"))
    import blk
    return blk


def row_python_launch(env, b):
    torch, tk = env.torch, env.tk
    blk = _blk()
    vadd = blk.load(os.path.join(REPO, "examples", "vector_add.tile")).vector_add
    x, y = torch.randn(16, device=env.dev), torch.randn(16, device=env.dev)
    outs = {side: torch.empty(16, device=env.dev) for side in ("blk", "Triton", "torch")}
    want = (x[0] + y[0]).item()
    row = b.Row("launch overhead, Python package", "n=1, kernel[grid](...)")
    x1, y1, ot1 = x[:1], y[:1], outs["torch"][:1]
    ob, otr = outs["blk"], outs["Triton"]
    sides = [("blk", lambda: vadd[(1,)](x, y, ob, 1, BLOCK=1024)),
             ("Triton", lambda: tk._add[(1,)](x, y, otr, 1, BLOCK=1024)),
             ("torch", lambda: torch.add(x1, y1, out=ot1))]
    for side, fn in sides:
        o = outs[side]
        if b.measure(env, row, side, fn, [o], lambda _, o=o: abs(o[0].item() - want), 0.0, time_it=False):
            short = b.launch_host_ms(env, fn)
            hundred = b.launch_host_ms(env, fn, batch=100, batches=60)
            wall, host = b.launch_time_ms(env, fn)
            row.ms[side] = short
            row.notes.append(f"{side}: {short * 1e3:.2f} µs a launch on the host in batches of 20 "
                             f"({hundred * 1e3:.2f} in batches of 100); {wall * 1e3:.2f} µs a launch over 1000 in "
                             f"a row with the sync after ({host * 1e3:.2f} µs host time)")
            print(f"  python launch [{side}]: {short * 1e3:.2f} µs on the host in batches of 20, "
                  f"{hundred * 1e3:.2f} in batches of 100; {wall * 1e3:.2f} µs over 1000 with the sync "
                  f"(host {host * 1e3:.2f} µs)", flush=True)
    if row.ok("blk"):
        us = row.ms["blk"] * 1e3
        verdict = [f"blk {us:.2f} µs a launch: {'meets' if us <= 8 else 'misses'} the 8 µs target"]
        if row.ok("Triton"):
            r = row.ms["Triton"] / row.ms["blk"]
            verdict.append(f"{r:.2f}x faster than Triton ({'meets' if r >= 2.5 else 'misses'} the 2.5x target)")
        row.notes.append("; ".join(verdict))
    return [row]


ROWS = [("python_launch", "launch overhead, Python package", "n=1", row_python_launch)]
