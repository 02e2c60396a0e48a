"""blkffi.py: libblk.so through ctypes, for the benchmark and its self-test.

The structs of runtime/blk.h that cross the boundary (blk_arg, blk_const,
blk_launch_options, blk_param_info, blk_module_options, blk_compile_info,
blk_tune_result) come from the Python package (python/blk/_ffi.py), which
checks at import that their sizes and field offsets are the numbers
bench/layout.c prints for blk.h on x86-64 Linux: a change of layout in blk.h
fails there, loudly, instead of passing garbage to blk_launch.

Nothing here needs torch: pointers are plain integers (blk_devptr), from
blk_malloc on the interpreter or from torch's tensor.data_ptr() on a GPU.

    lib = Blk()                                   # build/libblk.so, or $BLK_LIB
    ctx = lib.context(BACKEND_GPU)                # or BACKEND_INTERPRETER
    k = ctx.load("examples/vector_add.tile").kernel("vector_add")
    go = k.prepare([x, y, out, n], consts={"BLOCK": 1024}, grid=(cdiv(n, 1024),))
    go()                                          # one blk_launch, arguments built once
    info = go.compile()                           # blk_kernel_compile: PTX, phase times (ms)
    ms = go.time(reps=10)                         # blk_time_launch: median ms
    res = go.autotune()                           # blk_autotune: each config's ms, the best
"""

import ctypes
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_size_t, c_uint64, c_void_p

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The ctypes mirrors of blk.h's structs and their layout check live in the
# Python package (python/blk/_ffi.py); this module is the benchmark's thin
# layer over them (the package itself is what users call).
sys.path.insert(0, os.path.join(REPO, "python"))
from blk._ffi import (ARG_FLOAT, ARG_INT, ARG_PTR, BACKEND_AUTO, BACKEND_GPU, BACKEND_INTERPRETER,  # noqa: E402,F401
                      COMPILE_PHASES, EXPECTED_LAYOUT, PARAM_FLOAT, PARAM_INT, PARAM_POINTER, STATUS_NAMES,
                      SUCCESS, TUNE_MAX_CONFIGS, BlkArg, BlkCompileInfo, BlkConst, BlkLaunchOptions,
                      BlkModuleOptions, BlkParamInfo, BlkTuneResult, check_layout, ctypes_layout)
from blk._ffi import STRUCTS as _STRUCTS  # noqa: E402,F401
from blk._ffi import options as lib_options  # noqa: E402  (the kernel options of libblk's table)
from blk._kernel import Param  # noqa: E402  (Param: a kernel parameter as blk_kernel_param describes it)


# torch dtype names (str(dtype) without "torch.") -> blk's scalar type names, for
# checking a kernel's pointer parameters against the tensors given to them
# (Launch takes bare addresses, so nothing else would notice an f16 tensor
# passed to an *f8e4m3 parameter).
TORCH_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
}


def blk_type(dtype):
    """blk's name of a torch dtype (a torch.dtype or its str); KeyError when blk has none."""
    name = str(dtype)
    return TORCH_DTYPES[name[6:] if name.startswith("torch.") else name]


def check_pointer_types(kernel, dtypes, types=None):
    """Raises ValueError unless the kernel's pointer parameters, in order, point to
    `dtypes` (torch dtypes or their names; None skips a parameter). `types` binds the
    kernel's `T: const type` parameters (name -> blk type name), so that `*T` is checked
    as the type the launch gives T."""
    ptrs = [p for p in kernel.runtime_params if p.kind == PARAM_POINTER]
    if len(dtypes) > len(ptrs):
        raise ValueError(f"{kernel.name}: {len(ptrs)} pointer parameters, {len(dtypes)} types given")
    types = types or {}

    def pointee(p):
        name = p.type[1:]
        return types.get(name, name)

    bad = [f"'{p.name}' is {p.type}" + (f" ({p.type[1:]} = {pointee(p)})" if pointee(p) != p.type[1:] else "")
           + f", given {d}" for p, d in zip(ptrs, dtypes) if d is not None and pointee(p) != blk_type(d)]
    if bad:
        raise ValueError(f"{kernel.name}: " + "; ".join(bad))


class BlkError(RuntimeError):
    def __init__(self, status, call, message):
        name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else f"status {status}"
        super().__init__(f"{call}: {name}: {message}")
        self.status = status


def _encode(s):
    return s.encode() if isinstance(s, str) else s


class Blk:
    """The loaded library. Path: `path`, else $BLK_LIB, else build/libblk.so of this repository."""

    def __init__(self, path=None):
        path = path or os.environ.get("BLK_LIB") or os.path.join(REPO, "build", "libblk.so")
        self.path = path
        self.lib = lib = ctypes.CDLL(path)
        vp = c_void_p
        sigs = {
            "blk_version": (c_char_p, []),
            "blk_last_error": (c_char_p, []),
            "blk_context_create": (c_int, [c_int, c_int, POINTER(vp)]),
            "blk_context_destroy": (None, [vp]),
            "blk_context_backend": (c_int, [vp]),
            "blk_malloc": (c_int, [vp, c_size_t, POINTER(c_uint64)]),
            "blk_free": (c_int, [vp, c_uint64]),
            "blk_copy_to_device": (c_int, [vp, c_uint64, vp, c_size_t]),
            "blk_copy_from_device": (c_int, [vp, vp, c_uint64, c_size_t]),
            "blk_module_load_file": (c_int, [vp, c_char_p, POINTER(BlkModuleOptions), POINTER(vp)]),
            "blk_module_destroy": (None, [vp]),
            "blk_kernel_get": (c_int, [vp, c_char_p, POINTER(vp)]),
            "blk_kernel_num_params": (c_int, [vp]),
            "blk_kernel_param": (c_int, [vp, c_int, POINTER(BlkParamInfo)]),
            "blk_launch": (c_int, [vp, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions)]),
            "blk_synchronize": (c_int, [vp]),
            "blk_kernel_compile": (c_int, [vp, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions),
                                           POINTER(BlkCompileInfo)]),
            "blk_time_launch": (c_int, [vp, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions), c_int,
                                        POINTER(c_double)]),
            "blk_autotune": (c_int, [vp, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions),
                                     POINTER(BlkTuneResult)]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        self.launch_fn = lib.blk_launch

    def version(self):
        return self.lib.blk_version().decode()

    def last_error(self):
        msg = self.lib.blk_last_error()
        return msg.decode(errors="replace") if msg else ""

    def check(self, status, call):
        if status != SUCCESS:
            raise BlkError(status, call, self.last_error())

    def context(self, backend=BACKEND_GPU, device=0):
        return Context(self, backend, device)


class Context:
    def __init__(self, blk, backend, device=0):
        self.blk = blk
        self.handle = c_void_p()
        blk.check(blk.lib.blk_context_create(backend, device, byref(self.handle)), "blk_context_create")
        self.backend = blk.lib.blk_context_backend(self.handle)
        self.modules = []

    # memory (the interpreter's, or the GPU's when not from torch)
    def malloc(self, nbytes):
        p = c_uint64()
        self.blk.check(self.blk.lib.blk_malloc(self.handle, nbytes, byref(p)), "blk_malloc")
        return p.value

    def free(self, ptr):
        self.blk.check(self.blk.lib.blk_free(self.handle, ptr), "blk_free")

    def to_device(self, dst, buf):
        """Copies a ctypes array, or the bytes of a bytes-like object, to device address dst."""
        if not isinstance(buf, ctypes.Array):
            data = bytes(buf)
            buf = ctypes.create_string_buffer(data, len(data))
        self.blk.check(self.blk.lib.blk_copy_to_device(self.handle, dst, ctypes.addressof(buf), ctypes.sizeof(buf)),
                       "blk_copy_to_device")

    def from_device(self, buf, src):
        """Fills a ctypes array buf from device address src."""
        self.blk.check(self.blk.lib.blk_copy_from_device(self.handle, ctypes.addressof(buf), src, ctypes.sizeof(buf)),
                       "blk_copy_from_device")

    def synchronize(self):
        self.blk.check(self.blk.lib.blk_synchronize(self.handle), "blk_synchronize")

    def load(self, path):
        """A module from a .tile file; a relative path is taken from the repository root."""
        if not os.path.isabs(path):
            path = os.path.join(REPO, path)
        m = Module(self, path)
        self.modules.append(m)
        return m

    def destroy(self):
        if self.handle:
            for m in self.modules:
                m.destroy()
            self.blk.lib.blk_context_destroy(self.handle)
            self.handle = c_void_p()


class Module:
    def __init__(self, ctx, path):
        self.ctx = ctx
        self.path = path
        self.handle = c_void_p()
        blk = ctx.blk
        blk.check(blk.lib.blk_module_load_file(ctx.handle, path.encode(), None, byref(self.handle)),
                  f"blk_module_load_file({path})")

    def kernel(self, name=None):
        return Kernel(self, name)

    def destroy(self):
        if self.handle:
            self.ctx.blk.lib.blk_module_destroy(self.handle)
            self.handle = c_void_p()


class Kernel:
    def __init__(self, module, name=None):
        self.module = module
        self.blk = blk = module.ctx.blk
        self.handle = c_void_p()
        blk.check(blk.lib.blk_kernel_get(module.handle, _encode(name), byref(self.handle)), f"blk_kernel_get({name})")
        self.name = name
        self.params = []
        for i in range(blk.lib.blk_kernel_num_params(self.handle)):
            info = BlkParamInfo()
            blk.check(blk.lib.blk_kernel_param(self.handle, i, byref(info)), "blk_kernel_param")
            self.params.append(Param(info))
        self.runtime_params = [p for p in self.params if not p.is_const]
        self.const_params = {p.name: p for p in self.params if p.is_const}

    def prepare(self, args, consts=None, grid=(0, 0, 0), num_warps=0, num_stages=0, stream=0, threads=0):
        """A Launch: the blk_arg array and blk_launch_options built once, for
        repeated calls. `args` are the kernel's non-const parameters in order
        (ints for pointers and integers, floats for floats); `consts` maps const
        parameter names to values; `grid` of all zeros uses the kernel's grid
        clause."""
        return Launch(self, args, consts or {}, grid, num_warps, num_stages, stream, threads)

    def launch(self, args, **kw):
        self.prepare(args, **kw)()


class Launch:
    def __init__(self, kernel, args, consts, grid, num_warps, num_stages, stream, threads):
        self.kernel = kernel
        params = kernel.runtime_params
        if len(args) != len(params):
            raise ValueError(f"{kernel.name}: {len(params)} arguments expected ({', '.join(map(repr, params))}), "
                             f"given {len(args)}")
        arr = (BlkArg * max(1, len(args)))()
        for a, p, v in zip(arr, params, args):
            if p.kind == PARAM_POINTER:
                if not isinstance(v, int) or v == 0:
                    raise ValueError(f"{kernel.name}: argument '{p}' needs a non-null device address, given {v!r}")
                a.kind, a.v.ptr = ARG_PTR, v
            elif p.kind == PARAM_INT:
                a.kind, a.v.i = ARG_INT, int(v)
            else:
                a.kind, a.v.f = ARG_FLOAT, float(v)
        unknown = set(consts) - set(kernel.const_params) - set(lib_options(kernel.blk.lib))  # (options among the consts)
        if unknown:
            raise ValueError(f"{kernel.name}: no const parameter {sorted(unknown)} "
                             f"(it has {sorted(kernel.const_params)})")
        carr = (BlkConst * max(1, len(consts)))()
        self._names = []  # keeps the name strings alive as long as the array
        for c, (name, value) in zip(carr, consts.items()):
            nb = name.encode()
            self._names.append(nb)
            c.name = nb
            if isinstance(value, str):  # a type name, for a `T: const type` parameter
                tb = value.encode()
                self._names.append(tb)
                c.type = tb
            elif isinstance(value, float):
                c.is_float, c.f = 1, value
            else:
                c.i = int(value)
        opts = BlkLaunchOptions()
        g = tuple(grid) + (0,) * (3 - len(grid))
        if any(g):
            g = tuple(x if x else 1 for x in g)
        opts.grid[:] = g
        opts.consts = ctypes.cast(carr, POINTER(BlkConst)) if consts else None
        opts.n_consts = len(consts)
        opts.num_warps, opts.num_stages, opts.threads = num_warps, num_stages, threads
        opts.stream = stream or None
        self.args, self.consts, self.opts = arr, carr, opts
        self.grid = g
        self._fn = kernel.blk.launch_fn
        self._k, self._n, self._popts = kernel.handle, len(args), byref(opts)

    def __call__(self):
        st = self._fn(self._k, self.args, self._n, self._popts)
        if st:
            self.kernel.blk.check(st, f"blk_launch({self.kernel.name})")

    def compile(self, specialize=True):
        """blk_kernel_compile of the variant this launch runs (with specialize,
        from its arguments, as blk_launch does). A dict: ptx (str, or None on the
        interpreter), shared_bytes, num_warps, num_stages, from_disk_cache (bool),
        and the phases' times in ms under COMPILE_PHASES's keys (0: not done now)."""
        info = BlkCompileInfo()
        lib = self.kernel.blk.lib
        args, n = (self.args, self._n) if specialize else (None, 0)
        self.kernel.blk.check(lib.blk_kernel_compile(self._k, args, n, self._popts, byref(info)),
                              f"blk_kernel_compile({self.kernel.name})")
        out = {"ptx": info.ptx[:info.ptx_len].decode() if info.ptx else None, "shared_bytes": info.shared_bytes,
               "num_warps": info.num_warps, "num_stages": info.num_stages,
               "from_disk_cache": bool(info.from_disk_cache)}
        for key, _ in COMPILE_PHASES:
            out[key] = getattr(info, key)
        return out

    def time(self, reps=10):
        """blk_time_launch: the median of `reps` timed runs, in ms."""
        ms = c_double()
        self.kernel.blk.check(self.kernel.blk.lib.blk_time_launch(self._k, self.args, self._n, self._popts, reps,
                                                                  byref(ms)), f"blk_time_launch({self.kernel.name})")
        return ms.value

    def autotune(self):
        """blk_autotune on these arguments. A dict: best (index), ms (a list, one a
        config; None where it could not run), notes (a list of str)."""
        res = BlkTuneResult()
        self.kernel.blk.check(self.kernel.blk.lib.blk_autotune(self._k, self.args, self._n, self._popts, byref(res)),
                              f"blk_autotune({self.kernel.name})")
        n = min(res.n_configs, TUNE_MAX_CONFIGS)
        return {"best": res.best, "ms": [res.ms[i] if res.ms[i] >= 0 else None for i in range(n)],
                "notes": [res.note[i].value.decode(errors="replace") for i in range(n)]}
