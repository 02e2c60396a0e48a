"""blk._plan: a launch prepared for one call signature (argument kinds and
dtypes, consts, options): the blk_launch_options and const array built once,
and a run function. On the GPU with torch tensors and numbers, run is
generated for the signature (see _gen_fast): a launch is a few attribute
reads, memoryview writes and one blk_launch. Otherwise (the interpreter,
__cuda_array_interface__, DLPack, addresses) run_checked builds each call's
arguments anew: host arrays are copied into the interpreter's memory and
back."""

import ctypes
import re
import sys
from ctypes import byref

from . import _args, _ffi, _runtime, _types
from ._runtime import Error


def _stream_getter(torch):
    if torch is None:
        return lambda dev: 0
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda dev: torch.cuda.current_stream(dev).cuda_stream


def _views(buf):
    m = memoryview(buf).cast("B")
    return m.cast("Q"), m.cast("q"), m.cast("d")


class Plan:
    def __init__(self, kernel, backend, device, infos, consts, options, user_kw):
        self.kernel = kernel
        self.backend = backend
        self.ctx = _runtime.context_for(backend, device)
        self.device = self.ctx.device if backend == "gpu" else -1
        self.handle = kernel._handle(self.ctx)
        self.infos = infos
        self.consts = dict(consts)
        self.options = dict(options)
        self.kw = dict(user_kw)
        params = kernel.runtime_params
        self.n = len(params)
        # consts
        self._carr = (_ffi.BlkConst * max(1, len(consts)))()
        self._keep = []
        for c, (name, value) in zip(self._carr, consts.items()):
            self._keep += kernel_fill_const(c, name, value, kernel.const_params[name])
        # options
        o = self.opts = _ffi.BlkLaunchOptions()
        o.consts = ctypes.cast(self._carr, ctypes.POINTER(_ffi.BlkConst)) if consts else None
        o.n_consts = len(consts)
        for key in ("num_warps", "num_stages", "threads"):
            v = options.get(key, 0)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 1024:
                raise Error(f"{kernel.name}: option {key}={v!r}: expected a small non-negative integer",
                            param=key, kernel=kernel.name)
            setattr(o, key, v)
        self.stream = options.get("stream")
        if self.stream is not None:
            s = getattr(self.stream, "cuda_stream", self.stream)  # a torch.cuda.Stream, or a CUstream as an int
            if not isinstance(s, int):
                raise Error(f"{kernel.name}: option stream={self.stream!r}: a torch.cuda.Stream or a CUstream "
                            f"(int)", param="stream", kernel=kernel.name)
            self.stream = s
            o.stream = s or None
        self._popts = byref(o)
        self.meta = {**consts, **options}
        # the argument array of the fast path, its kinds set once
        self.args = (_ffi.BlkArg * max(1, self.n))()
        for a, p in zip(self.args, params):
            a.kind = {_ffi.PARAM_POINTER: _ffi.ARG_PTR, _ffi.PARAM_INT: _ffi.ARG_INT}.get(p.kind, _ffi.ARG_FLOAT)
        self.torch = sys.modules.get("torch")
        self.getstream = _stream_getter(self.torch) if backend == "gpu" else None
        self.run = self._slow_run
        if backend == "gpu" and infos is not None and self.torch is not None and \
                all(a.kind in ("tensor", "int", "float") for a in infos):
            self.run = self._gen_fast()

    # ---- errors, grids ----------------------------------------------------------

    def fail(self, st, call="blk_launch"):
        msg = _runtime.lib().last_error()
        k = self.kernel
        param = None
        for name in re.findall(r"'([A-Za-z_]\w*)'", msg):
            if name != k.name and any(p.name == name for p in k.params):
                param = name
                break
        raise Error(f"{call}({k.name}): {msg}", st, param=param, kernel=k.name)

    def grid3(self, grid, args):
        """(g0, g1, g2) for a launch: (0, 0, 0) for the kernel's grid clause;
        None when a dimension is 0 (nothing to run). Raises blk.Error."""
        if grid is None:
            return (0, 0, 0)
        if callable(grid):
            meta = dict(zip((p.name for p in self.kernel.runtime_params), args))
            meta.update(self.meta)
            grid = grid(meta)
        if hasattr(grid, "__index__") and not isinstance(grid, bool):
            grid = (grid,)
        try:
            g = tuple(int(x.__index__()) for x in grid)
        except (TypeError, AttributeError):
            raise Error(f"{self.kernel.name}: grid {grid!r}: expected up to 3 integers (or a function of the "
                        f"consts giving them)", kernel=self.kernel.name) from None
        if not 1 <= len(g) <= 3 or any(not 0 <= x < 2**31 for x in g):
            raise Error(f"{self.kernel.name}: grid {grid!r}: expected 1 to 3 integers in [0, 2^31)",
                        kernel=self.kernel.name)
        g = g + (1,) * (3 - len(g))
        return None if 0 in g else g

    def _slow_run(self, grid, args):
        return self.kernel._slow(grid, args, self.kw)

    # ---- the fast path ------------------------------------------------------------

    def _gen_fast(self):
        """A run(grid, args) for this signature: checks each argument is what
        the plan was made for (else the slow path, which raises or makes a
        plan that fits), writes it into the argument array, launches."""
        k = self.kernel
        q, i64, f64 = _views(self.args)
        oq, _, _ = _views(self.opts)
        og = memoryview(self.opts).cast("B")[:12].cast("I")
        env = {"Tensor": self.torch.Tensor, "Q": q, "I": i64, "F": f64, "O": oq, "G": og,
               "getstream": self.getstream, "launch": _runtime.lib().launch_fast, "K": self.handle,
               "A": self.args, "NA": self.n, "PO": self._popts, "slow": self._slow_run, "fail": self.fail,
               "grid3": self.grid3, "DEV": self.device}
        names = [f"a{i}" for i in range(self.n)]
        checks, writes = [], []
        for i, (p, a) in enumerate(zip(k.runtime_params, self.infos)):
            v = names[i]
            if a.kind == "tensor":
                env[f"D{i}"] = a.obj.dtype
                c = f"isinstance({v}, Tensor) and {v}.dtype is D{i} and {v}.get_device() == DEV"
                if not k.takes_strides:
                    c += f" and {v}.is_contiguous()"
                checks.append(c)
                writes.append(f"Q[{2 * i + 1}] = {v}.data_ptr()")
            elif a.kind == "int":
                lo, hi = _types.INT_RANGE.get(p.type, (-2**63, 2**63 - 1))
                view = "Q" if p.type == "u64" else "I"
                checks.append(f"{v}.__class__ is int and {lo} <= {v} <= {hi}")
                writes.append(f"{view}[{2 * i + 1}] = {v}")
            else:
                checks.append(f"({v}.__class__ is float or {v}.__class__ is int)")
                writes.append(f"F[{2 * i + 1}] = {v}")
        src = ["def run(grid, args):"]
        src.append(f"    if len(args) != {self.n}: return slow(grid, args)")
        if self.n:
            src.append(f"    {', '.join(names)}, = args")
            src.append(f"    if not ({' and '.join(checks)}): return slow(grid, args)")
        src += ["    if grid is None:", "        g0 = g1 = g2 = 0",
                "    elif grid.__class__ is tuple and len(grid) == 1 and grid[0].__class__ is int and grid[0] > 0:",
                "        g0 = grid[0]; g1 = g2 = 1",
                "    else:",
                "        g = grid3(grid, args)",
                "        if g is None: return",
                "        g0, g1, g2 = g",
                "    try:"]
        src += [f"        {w}" for w in writes]
        src += ["        G[0] = g0; G[1] = g1; G[2] = g2",
                "    except (ValueError, TypeError, OverflowError):",
                "        return slow(grid, args)"]
        if self.stream is None:
            src.append("    O[%d] = getstream(DEV)" % _ffi.OPT_STREAM_WORD)
        src += ["    st = launch(K, A, NA, PO)", "    if st: fail(st)"]
        code = "\n".join(src) + "\n"
        exec(compile(code, f"<blk launch {k.name}>", "exec"), env)
        self.fast_source = code
        return env["run"]

    # ---- the checked path -------------------------------------------------------

    def _build(self, args, infos):
        """A fresh blk_arg array for these arguments, and what to do after the
        launch (host arrays copied back, interpreter memory freed)."""
        arr = (_ffi.BlkArg * max(1, self.n))()
        bufs = {}  # interpreter: the allocation a host array views -> its copy
        for a, p, info in zip(arr, self.kernel.runtime_params, infos):
            if info.kind == "int":
                a.kind, a.v.i = _ffi.ARG_INT, info.value
            elif info.kind == "float":
                a.kind, a.v.f = _ffi.ARG_FLOAT, info.value
            elif info.kind == "host":
                key = (info.root, info.root_nbytes)
                b = bufs.get(key)
                if b is None:
                    dev = self.ctx.malloc(info.root_nbytes)
                    b = bufs[key] = [dev, info.writeable, info]
                    try:
                        self.ctx.to_device(dev, info.root, info.root_nbytes)
                    except Error:
                        self._release(bufs, False)
                        raise
                b[1] = b[1] or info.writeable
                a.kind, a.v.ptr = _ffi.ARG_PTR, b[0] + (info.ptr - info.root)
            else:
                a.kind, a.v.ptr = _ffi.ARG_PTR, info.ptr
        return arr, bufs

    def _release(self, bufs, copy_back):
        err = None
        for (root, nbytes), (dev, writeable, _) in bufs.items():
            try:
                if copy_back and writeable:
                    self.ctx.from_device(root, dev, nbytes)
            except Error as e:
                err = err or e
            self.ctx.free(dev)
        if err:
            raise err

    def _classified(self, args, infos):
        if infos is None:
            infos = [_args.classify(v, p, self.kernel) for v, p in zip(args, self.kernel.runtime_params)]
        return infos

    def _set_stream(self):
        if self.backend == "gpu" and self.stream is None:
            s = self.getstream(self.device)
            self.opts.stream = s or None

    def run_checked(self, grid, args, infos=None):
        infos = self._classified(args, infos)
        g = self.grid3(grid, args)
        if g is None:
            return
        arr, bufs = self._build(args, infos)
        opts = _ffi.BlkLaunchOptions.from_buffer_copy(self.opts)
        opts.grid[:] = g
        if self.backend == "gpu" and self.stream is None:
            opts.stream = self.getstream(self.device) or None
        L = _runtime.lib()
        ok = False
        try:
            st = L.lib.blk_launch(self.handle, arr, self.n, byref(opts))
            if st:
                self.fail(st)
            ok = True
        finally:
            self._release(bufs, ok)

    def _call(self, fn, call, argsinfo, grid, *extra):
        bufs = {}
        if argsinfo is None:
            arr, n = None, 0
        else:
            args, infos = argsinfo
            arr, bufs = self._build(args, self._classified(args, infos))
            n = self.n
        opts = _ffi.BlkLaunchOptions.from_buffer_copy(self.opts)
        g = self.grid3(grid, argsinfo[0] if argsinfo else ())
        opts.grid[:] = g or (0, 0, 0)
        if self.backend == "gpu" and self.stream is None:
            opts.stream = self.getstream(self.device) or None
        ok = False
        try:
            st = fn(self.handle, arr, n, byref(opts), *extra)
            if st:
                self.fail(st, call)
            ok = True
        finally:
            self._release(bufs, ok)

    def compile(self, argsinfo, grid=None):
        info = _ffi.BlkCompileInfo()
        self._call(_runtime.lib().lib.blk_kernel_compile, "blk_kernel_compile", argsinfo, grid, byref(info))
        from ._kernel import CompileResult
        return CompileResult(info, self.backend)

    def autotune(self, argsinfo, grid=None):
        res = _ffi.BlkTuneResult()
        self._call(_runtime.lib().lib.blk_autotune, "blk_autotune", argsinfo, grid, byref(res))
        from ._kernel import TuneResult
        return TuneResult(res)

    def time(self, argsinfo, reps, grid=None):
        ms = ctypes.c_double()
        self._call(_runtime.lib().lib.blk_time_launch, "blk_time_launch", argsinfo, grid, int(reps), byref(ms))
        return ms.value


def kernel_fill_const(c, name, value, param):
    from ._kernel import _fill_const
    return _fill_const(c, name, value, param)
