#!/usr/bin/env python3
"""rows_nn_shapes.py: issue 30's rows at the other shapes and dtype its benchmark names
(python3 bench/bench.py --only issue30_shapes; --only issue30,issue30_shapes for all of them).

bench/rows_nn.py's ops, sides, checks and timing (its docstring says what each row measures), in
its table, at:

- Llama-3-70B-like shapes, bf16: 16384 tokens (4 x 4096), hidden 8192, intermediate 28672,
  vocabulary 32000, 64 query and 8 key/value heads of 128 (rows "nn70_...");
- Llama-3-8B shapes in float32 (rows_nn's shapes; rows "nnf32_...").

The optimizer rows (float32 already) are rows_nn's only. No GPU: rows_nn.py --cpu checks the ops at
tiny shapes (here only the shapes differ).
"""

import rows_nn as R

GROUP = "issue30_shapes"
SECTION = R.SECTION

LLAMA70 = dict(tokens=16384, hidden=8192, inter=28672, vocab=32000, batch=4, heads=64, kv_heads=8, head_dim=128,
               layers=1)


def _row(make, S, dtype):
    """fn(env, b) -> the op's fwd and fwd+bwd rows with its inputs in dtype (rows_nn.DTYPE while the op
    is made; its name says the dtype)."""
    def fn(env, b):
        old = R.DTYPE
        R.DTYPE = dtype
        try:
            env.torch.manual_seed(30)
            op = make(env.torch, env.dev, S)
        finally:
            R.DTYPE = old
        if dtype == "float32":
            op.kernel = op.kernel.replace(" bf16", " f32")
        return R.run_op(env, b, op)
    return fn


ROWS = ([(key.replace("nn_", "nn70_", 1), kernel + " fwd and fwd+bwd", "Llama-3-70B-like shapes",
          _row(make, LLAMA70, "bfloat16")) for key, kernel, make in R.OPS]
        + [(key.replace("nn_", "nnf32_", 1), kernel.replace(" bf16", " f32") + " fwd and fwd+bwd",
            "Llama-3-8B shapes, f32", _row(make, R.LLM, "float32")) for key, kernel, make in R.OPS])
