"""blk._plan: a launch prepared for one call signature (argument kinds,
dtypes and device, consts, options): the blk_launch_options and const array
built once, and its launchers. On the GPU with torch tensors and numbers a
launcher is generated for the signature and a grid (see launcher): a launch
is a few attribute reads, memoryview stores and one blk_launch.
Otherwise (the interpreter, __cuda_array_interface__, DLPack, addresses)
run_checked builds each call's arguments anew: host arrays are copied into
the interpreter's memory and back."""

import _thread
import ctypes
import functools
import keyword
import re
import sys
from ctypes import byref

from . import _args, _ffi, _runtime
from ._consts import fill_const
from ._results import CompileResult, TuneResult
from ._runtime import Error


def _stream_getter(torch):
    if torch is None:
        return lambda dev: 0
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda dev: torch.cuda.current_stream(dev).cuda_stream


# What a launcher returns from run(args) when the arguments are not those it
# was made for.
MISS = object()
MAX_LAUNCHERS = 256
_UNSET = object()  # a launcher's parameter not given


def _given(pos, more, named, kw):
    """The (args, kw) of a call of a launcher, from its parameters."""
    args = tuple(a for a in pos if a is not _UNSET) + more
    kw = {**{k: v for k, v in named.items() if v is not _UNSET}, **kw}
    return args, kw
_OPT_BYTES = ctypes.sizeof(_ffi.BlkLaunchOptions)
# an argument's kind for the launchers in C (_fastlaunch.c's K_*)
_FAST_TENSOR, _FAST_TENSOR_STRIDED, _FAST_INT, _FAST_U64, _FAST_FLOAT = range(5)
# blk.triton's: an int of the range of i32, of i64 outside it, of u64 past
# i64; a bool; a float (not an int)
FAST_INT32, FAST_INT64_WIDE, FAST_U64_WIDE, FAST_BOOL, FAST_FLOAT_EXACT = range(5, 10)
_FAST_MAX_ARGS = 64


def _host_spans(infos):
    """{index: (lo, hi)}: the bytes each host array's interpreter copy
    holds: its own extent, merged with those of the others it overlaps (x
    and out the same array, or views that share bytes, share one copy), so
    no kernel reaches a byte outside the arrays it was given."""
    groups = []
    for lo, hi, i in sorted((a.lo, a.hi, i) for i, a in enumerate(infos) if a.kind == "host"):
        if groups and lo < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], hi)
            groups[-1][2].append(i)
        else:
            groups.append([lo, hi, [i]])
    return {i: (lo, hi) for lo, hi, idx in groups for i in idx}


class Plan:
    def __init__(self, kernel, backend, device, infos, consts, options, user_kw):
        self.kernel = kernel
        self.backend = backend
        self.ctx = _runtime.context_for(backend, device)
        self.device = self.ctx.device if backend == "gpu" else -1
        self.handle = kernel._handle(self.ctx)
        # what the launchers need of the first launch's arguments: their dtypes, not the arrays themselves (a
        # plan is kept for later launches: holding them would keep them alive)
        self.dtypes = [getattr(a.obj, "dtype", None) for a in infos] if infos is not None else None
        self.infos = [_args.without_object(a) for a in infos] if infos is not None else None
        self.consts = dict(consts)
        self.options = dict(options)
        self.kw = dict(user_kw)
        params = kernel.runtime_params
        self.n = len(params)
        # consts
        self._carr = (_ffi.BlkConst * max(1, len(consts)))()
        self._keep = []
        for c, (name, value) in zip(self._carr, consts.items()):
            self._keep += fill_const(c, name, value, kernel.const_params.get(name))
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
        self.torch = sys.modules.get("torch")
        self.getstream = _stream_getter(self.torch) if backend == "gpu" else None
        # a launcher can be generated for the signature (see launcher)
        self.fast = backend == "gpu" and infos is not None and self.torch is not None and \
            all(a.kind in ("tensor", "int", "float") for a in infos)
        self._launchers = {}   # (grid, thread) -> launcher

    # ---- errors, grids ----------------------------------------------------------

    def fail(self, st, call="blk_launch", recheck=None):
        """Raises the blk.Error of a failed call, naming the parameter the
        library's message names. recheck: (args, kw) of a launch that took
        a launcher, which leaves the range of integers and the like to
        blk_launch: checked again the slow way first, so that a bad call
        gets the same error (naming the parameter) on every path."""
        msg = _runtime.for_python(_runtime.lib().last_error(), call)
        k = self.kernel
        if recheck is not None:
            k._prepare(*recheck)  # raises blk.Error when the arguments are wrong
        param = None
        for name in re.findall(r"'([A-Za-z_]\w*)(?::[^']*)?'", msg):
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

    # ---- launchers -------------------------------------------------------------

    def launcher(self, grid):
        """The launcher of this plan for `grid` on this thread: a function
        launch(*args, **kw) for kernel[grid](...), with launch.run(args) for
        Kernel._miss (MISS when the arguments do not fit). Made once and
        kept: each has its own blk_launch_options (the grid written in it
        once) and blk_arg array, and one thread's launches never write
        another's (the arrays are filled, then blk_launch called: a thread
        switch may fall between)."""
        key = (grid, _thread.get_ident())
        f = self._launchers.get(key)
        if f is None:
            if len(self._launchers) >= MAX_LAUNCHERS:
                self._launchers.clear()
            f = self._launchers[key] = self._make_launcher(grid)
        return f

    def _checked_launcher(self, grid):
        """A launcher that takes the slow path at every call (a bad grid, a
        grid of 0 programs: it raises or returns, with every check made)."""
        k, kw = self.kernel, self.kw

        def launch(*args, **kwargs):
            return k._slow(grid, args, kwargs)
        launch.run = lambda args: k._slow(grid, args, kw)
        return launch

    def _make_launcher(self, grid):
        """Generates the launcher (see launcher). Its source, for a kernel
        f(x: *f32, n: i32, BLOCK: const i32), a plan made for BLOCK=1024
        and a grid of integers (written in the options once):

            def launch(_a0=_U, _a1=_U, /, *_more, BLOCK=_U, **_kw):
                if _more or _kw or _a1 is _U or BLOCK != _V0:
                    return _miss(_GRID, *_given((_a0, _a1), _more, {'BLOCK': BLOCK}, _kw))
                if not (_get_ident() == _THREAD and isinstance(_a0, _Tensor) and _a0.dtype is _D0
                        and _a0.get_device() == _DEV and _a0.is_contiguous() and _a1.__class__ is int):
                    return _miss(...)
                _Q[5] = _getstream(_DEV)           # blk_launch_options.stream
                _Q[8] = _a0.data_ptr()             # blk_arg 0's value
                _I[10] = _a1                       # blk_arg 1's (refuses a value out of int64)
                _st = _blk_launch(_K, _A, _NA, _PO)
                if _st:
                    _fail(_st, 'blk_launch', _given(...))

        Parameters rather than *args and **kw: no tuple or dict made for
        them, nothing to unpack. Where a const's name would not do as a
        Python parameter (a keyword, a name of the launcher's own), it is
        *args and **kw after all. The options and the blk_arg array lie in
        one buffer of the launcher's, the kinds written once. run(args): the
        same checks and launch with the keyword arguments taken as right,
        MISS when the arguments do not fit."""
        k = self.kernel
        callable_grid = callable(grid)
        if callable_grid:
            g = (0, 0, 0)
        else:
            try:
                g = self.grid3(grid, ())
            except Error:
                g = None
            if g is None:  # a bad grid (the slow path raises), or nothing to run
                return self._checked_launcher(grid)
        n = self.n
        words = _OPT_BYTES // 8
        buf = (ctypes.c_uint64 * (words + 2 * max(1, n)))()
        ctypes.memmove(buf, byref(self.opts), _OPT_BYTES)
        opts = _ffi.BlkLaunchOptions.from_buffer(buf)
        opts.grid[:] = g
        args = (_ffi.BlkArg * max(1, n)).from_buffer(buf, _OPT_BYTES)
        mv = memoryview(buf).cast("B")
        env = {"_Tensor": self.torch.Tensor, "_getstream": self.getstream, "_blk_launch": _runtime.lib().launch_fast,
               "_K": self.handle, "_A": byref(buf, _OPT_BYTES), "_NA": n, "_PO": byref(buf), "_miss": k._miss,
               "_fail": self.fail, "_DEV": self.device, "_GRID": grid, "_KW": self.kw, "_get_ident": _thread.get_ident,
               "_THREAD": _thread.get_ident(), "_MISS": MISS, "_grid3": self._grid3_words, "_U": _UNSET,
               "_given": _given, "_Q": mv.cast("Q"), "_I": mv.cast("q"), "_F": mv.cast("d"), "_buf": buf,
               "_opts": opts, "_args": args, "_Strided": _args.Strided}
        names = [f"_a{i}" for i in range(n)]
        checks, writes = ["_get_ident() == _THREAD"], []
        specs = []  # each argument's (kind, word, dtype) for the launcher in C
        if self.stream is None:
            writes.append(f"_Q[{_ffi.OPT_STREAM_WORD}] = _getstream(_DEV)")
        for i, (p, a) in enumerate(zip(k.runtime_params, self.infos)):
            v, word = names[i], words + 2 * i + 1
            if a.kind == "tensor" and a.strided:
                # blk.strided(t): any layout (the launcher in C takes plain tensors only)
                env[f"_D{i}"] = self.dtypes[i]
                checks.append(f"{v}.__class__ is _Strided and isinstance({v}.obj, _Tensor) and "
                              f"{v}.obj.dtype is _D{i} and {v}.obj.get_device() == _DEV")
                args[i].kind = _ffi.ARG_PTR
                writes.append(f"_Q[{word}] = {v}.obj.data_ptr()")
                specs.append((_FAST_TENSOR_STRIDED, word, self.dtypes[i]))
            elif a.kind == "tensor":
                env[f"_D{i}"] = self.dtypes[i]
                checks.append(f"isinstance({v}, _Tensor) and {v}.dtype is _D{i} and {v}.get_device() == _DEV "
                              f"and {v}.is_contiguous()")
                args[i].kind = _ffi.ARG_PTR
                writes.append(f"_Q[{word}] = {v}.data_ptr()")
                specs.append((_FAST_TENSOR, word, self.dtypes[i]))
            elif a.kind == "int":
                # the range of a type narrower than 64 bits: blk_launch checks it
                # (and fail checks again, the slow way, for an error naming it)
                checks.append(f"{v}.__class__ is int")
                args[i].kind = _ffi.ARG_INT
                writes.append(f"_{'Q' if p.type == 'u64' else 'I'}[{word}] = {v}")
                specs.append((_FAST_U64 if p.type == "u64" else _FAST_INT, word, None))
            else:
                checks.append(f"({v}.__class__ is float or {v}.__class__ is int)")
                args[i].kind = _ffi.ARG_FLOAT
                writes.append(f"_F[{word}] = {v}")
                specs.append((_FAST_FLOAT, word, None))
        kwnames = list(self.kw)
        for j, key in enumerate(kwnames):
            env[f"_V{j}"] = self.kw[key]
        plain = all(key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_") for key in kwnames)

        def body(fallback, call, args_tuple):
            out = [f"    if not ({' and '.join(checks)}):", f"        {fallback}"]
            if callable_grid:
                out += [f"    if not _grid3(_GRID, {args_tuple}, _opts):", "        return None"]
            out += ["    try:"] + [f"        {w}" for w in writes] + \
                   ["    except (TypeError, ValueError, OverflowError):", f"        {fallback}",
                    "    _st = _blk_launch(_K, _A, _NA, _PO)",
                    "    if _st:", f"        _fail(_st, 'blk_launch', {call})",
                    "    return None"]
            return out

        if plain:
            pos = "".join(f"{v}=_U, " for v in names) + ("/, " if n else "")
            kws = "".join(f"{key}=_U, " for key in kwnames)
            tup = f"({', '.join(names)}{',' if n == 1 else ''})"
            given = f"_given({tup}, _more, {{{', '.join(f'{key!r}: {key}' for key in kwnames)}}}, _kw)"
            cond = ["_more", "_kw"] + ([f"{names[-1]} is _U"] if n else []) + \
                   [f"{key} != _V{j}" for j, key in enumerate(kwnames)]
            src = [f"def launch({', '.join(x for x in (pos.rstrip(', '), f'*_more, {kws}**_kw') if x)}):",
                   f"    if {' or '.join(cond)}:", f"        return _miss(_GRID, *{given})"]
            src += body(f"return _miss(_GRID, *{given})", given, tup)
        else:
            src = ["def launch(*_args, **_kw):", "    if _kw != _KW:", "        return _miss(_GRID, _args, _kw)"]
            if n:
                src += ["    try:", f"        {', '.join(names)}, = _args", "    except ValueError:",
                        "        return _miss(_GRID, _args, _kw)"]
            else:
                src += ["    if _args:", "        return _miss(_GRID, _args, _kw)"]
            src += body("return _miss(_GRID, _args, _kw)", "(_args, _kw)", "_args")
        src += ["", "", "def run(_args):"]
        if n:
            src += ["    try:", f"        {', '.join(names)}, = _args", "    except ValueError:", "        return _MISS"]
        else:
            src += ["    if _args:", "        return _MISS"]
        src += body("return _MISS", "(_args, _KW)", "_args")
        code = "\n".join(src) + "\n"
        exec(compile(code, f"<blk launcher {k.name}>", "exec"), env)
        f = env["launch"]
        f.run = env["run"]
        f.source = code
        f.plan = self
        if plain and not callable_grid:
            self._fast_launcher(f, grid, buf, specs)
        return f

    def _fast_launcher(self, f, grid, buf, specs):
        """f.fast: the same launcher in C (python/blk/_fastlaunch.c), where
        the extension was built; kernel[grid] hands it out (Kernel._keep).
        A call it was not made for goes to the kernel's _miss for the grid,
        as f's does; f.probe, another, returns NotImplemented instead (for
        _miss to try it). Never in the way: any trouble making them leaves
        f alone."""
        f.buf, f.specs = buf, specs
        k = self.kernel
        fast = self.c_launcher(f, functools.partial(k._miss, grid), tuple(self.kw), tuple(self.kw.values()), specs)
        if fast is not None:
            f.fast = fast
            f.probe = self.c_launcher(f, None, tuple(self.kw), tuple(self.kw.values()), specs)

    def c_launcher(self, f, fallback, kwnames, kwvalues, specs, strict=False, fail=None, kwargs_at=None):
        """A launcher in C over the buffer of f (a launcher of this plan for
        a grid of integers) for calls of the keyword arguments kwnames =
        kwvalues (strict: of the same classes too) and runtime arguments of
        specs (kind, word, dtype), one each; kwargs_at: for each keyword
        name, -1, or the index in specs of the runtime argument it gives
        (the last ones; the others by position). fallback(args, kwargs) takes
        the calls that do not fit (None: they return NotImplemented);
        fail(status, call, (args, kwargs)) raises the error of a failed
        blk_launch (default: self.fail, which checks the call again as the
        kernel's). None where there is no extension, or it cannot make one."""
        L = _runtime.lib()
        if L.fast_ext is None or getattr(f, "buf", None) is None or len(specs) > _FAST_MAX_ARGS or \
                any(kind == _FAST_TENSOR_STRIDED for kind, _, _ in specs):
            return None
        buf = f.buf
        try:
            return L.fast_ext.launcher(
                fallback, fail or self.fail, L.launch_address, self.handle.value, ctypes.addressof(buf), buf, len(buf),
                _OPT_BYTES, _ffi.OPT_STREAM_WORD if self.stream is None else -1, self.getstream, self.device,
                self.torch.Tensor, kwnames, kwvalues, tuple(specs), strict,
                *(() if kwargs_at is None else (tuple(kwargs_at),)))
        except Exception:  # an extension of another version: the Python launcher does it all
            return None

    def _grid3_words(self, grid, args, opts):
        """A grid function's grid for these arguments, written in opts;
        False when it has a 0 (nothing to run)."""
        g = self.grid3(grid, args)
        if g is None:
            return False
        opts.grid[0], opts.grid[1], opts.grid[2] = g
        return True

    # ---- the checked path -------------------------------------------------------

    def _build(self, args, infos):
        """A fresh blk_arg array for these arguments, and what to do after the
        launch (host arrays copied back, interpreter memory freed)."""
        arr = (_ffi.BlkArg * max(1, self.n))()
        bufs = {}  # interpreter: (lo, nbytes) of a span of host memory -> [its copy, writeable, info]
        spans = _host_spans(infos)
        for i, (a, info) in enumerate(zip(arr, infos)):
            if info.kind == "int":
                a.kind, a.v.i = _ffi.ARG_INT, info.value
            elif info.kind == "float":
                a.kind, a.v.f = _ffi.ARG_FLOAT, info.value
            elif info.kind == "host":
                lo, hi = spans[i]
                b = bufs.get((lo, hi - lo))
                if b is None:
                    dev = self.ctx.malloc(hi - lo)
                    b = bufs[(lo, hi - lo)] = [dev, info.writeable, info]
                    try:
                        self.ctx.to_device(dev, lo, hi - lo)
                    except Error:
                        self._release(bufs, False)
                        raise
                b[1] = b[1] or info.writeable
                a.kind, a.v.ptr = _ffi.ARG_PTR, b[0] + (info.ptr - lo)
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
        return CompileResult(info, self.backend)

    def autotune(self, argsinfo, grid=None):
        res = _ffi.BlkTuneResult()
        self._call(_runtime.lib().lib.blk_autotune, "blk_autotune", argsinfo, grid, byref(res))
        return TuneResult(res)

    def time(self, argsinfo, reps, grid=None):
        ms = ctypes.c_double()
        self._call(_runtime.lib().lib.blk_time_launch, "blk_time_launch", argsinfo, grid, int(reps), byref(ms))
        return ms.value

