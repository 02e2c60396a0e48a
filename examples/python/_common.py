"""_common.py: what the example drivers share.

On a machine with torch and a GPU (and BLK_BACKEND not "interpreter") the
drivers run their kernel on CUDA tensors and check it against torch on the
GPU; elsewhere on numpy arrays on blk's interpreter, at small sizes, against
numpy. Either way the comparison is in float64: max |got - want| / max |want|.
The package is imported from the installation, else from python/ of this
checkout."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
try:
    import blk  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(EXAMPLES), "python"))
    import blk  # noqa: F401

import numpy as np

torch = None
if os.environ.get("BLK_BACKEND", "").lower() not in ("interpreter", "interp"):
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
GPU = torch is not None
rng = np.random.default_rng(2024)


def load(name):
    return blk.load(os.path.join(EXAMPLES, name))


def size(gpu, interp):
    return gpu if GPU else interp


def tensor(a):
    """numpy array -> what the kernel gets: a CUDA tensor on the GPU, the array itself on the interpreter."""
    a = np.ascontiguousarray(a)
    return torch.from_numpy(a).cuda() if GPU else a


def randn(shape, dtype=np.float32, scale=1.0):
    return tensor((rng.standard_normal(shape) * scale).astype(dtype))


def empty(shape, dtype=np.float32):
    """Filled with NaN (floats) so that an element the kernel misses fails the check."""
    a = np.full(shape, np.nan, dtype) if np.dtype(dtype).kind == "f" else np.zeros(shape, dtype)
    return tensor(a)


def f64(a):
    """Any tensor or array as a float64 numpy array."""
    if GPU and isinstance(a, torch.Tensor):
        return a.detach().double().cpu().numpy()
    return np.asarray(a, np.float64)


def ref(torch_fn, numpy_fn, *inputs):
    """The reference: torch_fn on float64 CUDA copies of inputs on the GPU, numpy_fn on float64 arrays else."""
    if GPU:
        return f64(torch_fn(*(x.double() if isinstance(x, torch.Tensor) else x for x in inputs)))
    return numpy_fn(*(np.asarray(x, np.float64) if isinstance(x, np.ndarray) else x for x in inputs))


failures = 0


def check(label, got, want, tol):
    global failures
    got, want = f64(got), f64(want)
    if got.shape != want.shape:
        print(f"FAIL {label}: shape {got.shape}, want {want.shape}")
        failures += 1
        return
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    err = np.abs(got - want).max(initial=0.0) / scale if np.isfinite(got).all() else float("inf")
    ok = err <= tol
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {label}: max rel err {err:.3g} (tol {tol:g})")


def done(name):
    where = f"GPU ({torch.cuda.get_device_name()}) vs torch" if GPU else "interpreter vs numpy"
    if failures:
        print(f"{name}: {failures} check(s) FAILED on the {where}")
        sys.exit(1)
    if GPU:
        torch.cuda.synchronize()
    print(f"{name}: OK on the {where}")
