"""blk._kernel: modules, kernels, and launching them.

`kernel[grid]` is the launcher kept for that grid (one dict lookup), a
function generated for one plan (a call signature: keyword arguments,
argument kinds, dtypes, device; see _plan.Plan.launcher) and that grid: it
compares the keyword arguments with the plan's (one dict compare), checks
each argument against what the plan was made for (class, dtype, device,
contiguity: attribute reads and `is`), writes torch's current stream and
every pointer and scalar into its own blk_launch_options and blk_arg array
(memoryview stores; the grid and the kinds were written once), and calls
blk_launch once. Anything unlike what the launcher
expects goes to Kernel._miss: the plan made for the keyword arguments when
the arguments fit it, else the slow way (every argument classified and
checked, errors naming the parameter, a plan made or found for the new
signature); the launcher of the plan that ran becomes the grid's.
"""

import ctypes
import os
import re
import sys
from ctypes import byref, c_void_p

from . import _args, _consts, _ffi, _plan, _runtime, _types
from ._consts import fill_const as _fill_const
from ._plan import Plan
from ._results import CompileResult, TuneResult  # noqa: F401  (blk.CompileResult, blk.TuneResult)
from ._runtime import Error

# launch options of blk_launch_options' own fields; the kernel options of
# libblk's table (_runtime.Lib.options: tma, fp_fusion, ...) go among the
# consts
OPTIONS = ("num_warps", "num_stages", "stream", "threads")
MAX_LAUNCHERS = 256
RECENT = 4


class Param:
    """A kernel parameter: name, type (as written: "*f32", "i32", "const i32"),
    kind (_ffi.PARAM_*), is_const, elem_bytes, pointee ("f32" for "*f32")."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.type = info.type.decode()
        self.kind = info.kind
        self.is_const = bool(info.is_const)
        self.elem_bytes = info.elem_bytes
        self.pointee = self.type[1:] if self.type.startswith("*") else None
        # a `T: const type` parameter (generic kernels): bound to a type name
        self.is_type = self.is_const and self.type.split()[-1] == "type"

    def __repr__(self):
        return f"{self.name}: {self.type}"


class Module:
    """A loaded .tile file or source text. module["name"] and module.name are
    its kernels; module.kernel_names lists them."""

    def __init__(self, path=None, source=None, name=None, include_dirs=(), defines=None):
        if (path is None) == (source is None):
            raise Error("blk.load: give a path or source=, not both")
        # a file is libblk's to read (blk_module_load_file: it refuses a FIFO,
        # a device, a file too large; any bytes in comments)
        self.path = os.path.abspath(_consts.path_arg("path", path)) if path is not None else None
        self._text = _consts.source_arg(source) if source is not None else None
        self.name = _consts.text_arg("name", name) if name is not None else None
        self.name = self.name or self.path or "<source>"
        self.include_dirs = _consts.dirs_arg(include_dirs)
        self.defines = _consts.defines_arg(defines)
        self._handles = {}   # Context -> blk_module handle
        self._kernels = {}
        self._opts_keep = None
        self._handle(_runtime.interpreter_context())  # checks the source now; errors raise here

    @property
    def source(self):
        """The source text (a file's as libblk accepted it, read when asked)."""
        if self._text is None:
            self._text = _consts.read_source(self.path)
        return self._text.decode("utf-8", errors="replace")

    def _options(self):
        if self._opts_keep is None:
            dirs = [os.fsencode(d) for d in self.include_dirs]
            darr = (ctypes.c_char_p * max(1, len(dirs)))(*dirs)
            consts = (_ffi.BlkConst * max(1, len(self.defines)))()
            names = []
            for c, (k, v) in zip(consts, self.defines.items()):
                names.append(_fill_const(c, k, v, None))
            o = _ffi.BlkModuleOptions()
            o.include_dirs = ctypes.cast(darr, ctypes.POINTER(ctypes.c_char_p)) if dirs else None
            o.n_include_dirs = len(dirs)
            o.defines = ctypes.cast(consts, ctypes.POINTER(_ffi.BlkConst)) if self.defines else None
            o.n_defines = len(self.defines)
            self._opts_keep = (o, darr, consts, dirs, names)
        return self._opts_keep[0]

    def _handle(self, ctx):
        h = self._handles.get(ctx)
        if h is not None:
            return h
        L = _runtime.lib()
        h = c_void_p()
        opts = byref(self._options())
        if self.path is not None:
            st = L.lib.blk_module_load_file(ctx.handle, self.path.encode(), opts, byref(h))
        else:
            text = self._text
            st = L.lib.blk_module_load_source(ctx.handle, self.name.encode(), text, len(text), opts, byref(h))
        if st != _ffi.SUCCESS:
            raise Error(L.last_error(), st)
        self._handles[ctx] = h
        return h

    @property
    def kernel_names(self):
        text = re.sub(r"//[^\n]*", "", self.source)
        return re.findall(r"\bkernel\s+([A-Za-z_]\w*)\s*\(", text)

    def __getitem__(self, name):
        k = self._kernels.get(name) if isinstance(name, str) else None
        if k is None:
            if name is not None:
                _consts.text_arg("kernel name", name)
            k = Kernel(self, name)
            self._kernels[name] = k
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            k = self[name]
        except Error as e:
            raise AttributeError(f"module {self.name} has no kernel '{name}' ({e})") from None
        # kept as an attribute: the next module.name is a plain attribute read
        # (only a name no attribute has reaches here)
        self.__dict__[name] = k
        return k

    def __dir__(self):
        return list(super().__dir__()) + self.kernel_names

    def __repr__(self):
        return f"<blk.Module {self.name}: {', '.join(self.kernel_names)}>"

    def __del__(self):
        try:
            L = _runtime.lib()
            for h in self._handles.values():
                L.lib.blk_module_destroy(h)
        except Exception:
            pass


class Kernel:
    """A kernel of a module. kernel[grid](*args, **consts) launches it;
    kernel(*args, **consts) launches it on its own grid clause."""

    def __init__(self, module, name):
        self.module = module
        self.name = name
        L = _runtime.lib()
        self._handles = {}
        h = self._handle(_runtime.interpreter_context())
        self.params = []
        for i in range(L.lib.blk_kernel_num_params(h)):
            info = _ffi.BlkParamInfo()
            L.check(L.lib.blk_kernel_param(h, i, byref(info)), "blk_kernel_param", kernel=name)
            self.params.append(Param(info))
        self.runtime_params = [p for p in self.params if not p.is_const]
        self.const_params = {p.name: p for p in self.params if p.is_const}
        self.type_params = {p.name for p in self.params if p.is_type}
        self._plans = {}       # keyword arguments -> the last Plan made for them
        self._by_sig = {}      # full signature -> Plan
        self._runtime_names = {p.name: i for i, p in enumerate(self.runtime_params)}
        self._launchers = {}   # grid -> its launcher (kernel[grid])
        self._recent = {}      # grid -> its last few launchers, the last first
        self._last = [None]    # the last plan made or found for a launch

    def _handle(self, ctx):
        h = self._handles.get(ctx)
        if h is None:
            L = _runtime.lib()
            h = c_void_p()
            mh = self.module._handle(ctx)
            st = L.lib.blk_kernel_get(mh, self.name.encode() if self.name else None, byref(h))
            if st != _ffi.SUCCESS:
                raise Error(L.last_error(), st, kernel=self.name)
            self._handles[ctx] = h
        return h

    @property
    def signature(self):
        return f"{self.name}({', '.join(map(repr, self.params))})"

    def __repr__(self):
        return f"<blk.Kernel {self.signature}>"

    # ---- launching ------------------------------------------------------------

    def __getitem__(self, grid):
        try:
            return self._launchers[grid]
        except (KeyError, TypeError):
            return self._new_launcher(grid)

    @property
    def __call__(self):
        """kernel(*args, **consts) is kernel[None](*args, **consts): the
        launcher of the grid clause, handed out by this property (Python
        calls what it gives with the call's arguments as they are, without
        packing them into a tuple and a dict for a method to unpack)."""
        try:
            return self._launchers[None]
        except KeyError:
            return self._new_launcher(None)

    def _new_launcher(self, grid):
        """The launcher of `grid` (see _plan.Plan.launcher): the one of the
        last plan made when it can take the fast path, else one that goes
        the way of _miss at every call until a plan is made. Kept by grid
        (at most MAX_LAUNCHERS grids: a grid function made anew at every
        call must not fill the memory)."""
        if isinstance(grid, list):
            grid = tuple(grid)
        try:
            hash(grid)
        except TypeError:  # kept by nothing: every call takes the checked path
            return lambda *args, **kw: self._slow(grid, args, kw)
        p = self._last[0]
        f = p.launcher(grid) if p is not None and p.fast else self._generic(grid)
        self._keep(grid, f)
        return f

    def _generic(self, grid):
        miss = self._miss

        def launch(*args, **kw):
            return miss(grid, args, kw)
        return launch

    def _miss(self, grid, args, kw):
        """A launch the launcher of `grid` was not made for (other keyword
        arguments, argument types, dtypes, devices, or a bad call): one of
        the grid's last few launchers when the call fits it (a loop over
        devices takes turns between two), else the plan made for these
        keyword arguments when the arguments fit it, else the slow path
        (every argument classified and checked, errors naming the
        parameter; a plan made or found by the full signature). Either way
        the launcher of the plan that ran becomes the grid's."""
        current = self._launchers.get(grid)
        for f in self._recent.get(grid, ()):
            probe = getattr(f, "probe", None)
            if probe is not None:   # in C: checks (kw too) and launches, or NotImplemented
                if f.fast is current or probe(*args, **kw) is NotImplemented:
                    continue
                self._keep(grid, f)
                return None
            if kw == f.plan.kw and f.run(args) is not _plan.MISS:
                self._keep(grid, f)
                return None
        try:
            p = self._plans[tuple(kw.items())]
        except (KeyError, TypeError):
            p = None
        if p is not None and p.fast:
            f = p.launcher(grid)
            if f.run(args) is not _plan.MISS:
                self._keep(grid, f)
                return None
        plan, args, infos = self._prepare(args, kw)
        if plan.fast:
            self._keep(grid, plan.launcher(grid))
        return plan.run_checked(grid, args, infos)

    def _keep(self, grid, f):
        """f becomes the launcher of `grid` (its version in C, f.fast, where
        there is one), and the first of its last few."""
        if grid not in self._launchers and len(self._launchers) >= MAX_LAUNCHERS:
            self._launchers.clear()
            self._recent.clear()
        prev, new = self._launchers.get(grid), getattr(f, "fast", f)
        self._launchers[grid] = new
        ext = _runtime.lib().fast_ext if prev is not None and prev is not new else None
        if ext is not None and hasattr(ext, "set_next"):
            # the calls new's plan does not take try prev's in C (consts that take turns on one grid)
            ext.set_next(new, prev)
        if hasattr(f, "plan"):
            self._last[0] = f.plan
            recent = self._recent.setdefault(grid, [])
            if f in recent:
                recent.remove(f)
            recent.insert(0, f)
            del recent[RECENT:]

    def _slow(self, grid, args, kw):
        plan, args, infos = self._prepare(args, kw)
        return plan.run_checked(grid, args, infos)

    def _split(self, args, kw):
        """Keyword arguments into runtime arguments (merged into args), consts
        and options. Raises blk.Error naming an unknown one."""
        consts, options, named = {}, {}, {}
        table = _runtime.lib().options
        for k, v in kw.items():
            if k in table and k not in OPTIONS:  # kernel options that go with the consts
                what = table[k].error(int(v) if isinstance(v, bool) else v)
                if what:
                    raise Error(f"{self.name}: option '{k}' is {what}, given {v!r}", param=k, kernel=self.name)
                consts[k] = int(v)
            elif k in self.const_params:
                consts[k] = v
            elif k in OPTIONS:
                options[k] = v
            elif k in self._runtime_names:
                named[k] = v
            else:
                raise Error(f"{self.name}: no parameter '{k}' (it has {', '.join(p.name for p in self.params)}; "
                            f"options: {', '.join(dict.fromkeys(OPTIONS + tuple(table)))})", param=k,
                            kernel=self.name)
        args = list(args)
        if named:
            for k, i in sorted(((k, self._runtime_names[k]) for k in named), key=lambda t: t[1]):
                if i < len(args):
                    raise Error(f"{self.name}: argument '{k}' given twice", param=k, kernel=self.name)
                if i > len(args):
                    missing = self.runtime_params[len(args)].name
                    raise Error(f"{self.name}: argument '{missing}' missing", param=missing, kernel=self.name)
                args.append(named[k])
        n = len(self.runtime_params)
        if len(args) != n:
            sig = ", ".join(map(repr, self.runtime_params))
            if len(args) < n:
                miss = self.runtime_params[len(args)].name
                raise Error(f"{self.name}: {n} arguments expected ({sig}), given {len(args)}: '{miss}' is missing",
                            param=miss, kernel=self.name)
            raise Error(f"{self.name}: {n} arguments expected ({sig}), given {len(args)}", kernel=self.name)
        return args, consts, options, bool(named)

    def _prepare(self, args, kw, want=None):
        """The Plan for these arguments (made, or found by their signature)
        and the runtime arguments in order. want: compile()'s backend, over
        blk.set_backend's."""
        args, consts, options, named = self._split(args, kw)
        infos = [_args.classify(v, p, self) for v, p in zip(args, self.runtime_params)]
        backend, device = self._backend_for(infos, want)
        user_kw = {**consts, **options}
        # bind `T: const type` parameters from the element types of *T pointers
        for p, a in zip(self.runtime_params, infos):
            if p.pointee in self.type_params and a.elem is not None:
                given = consts.get(p.pointee)
                if given is None:
                    consts[p.pointee] = a.elem
                elif _types.type_name(given) != a.elem:
                    raise Error(f"{self.name}: argument '{p.name}' ({p.type}) has {a.elem} elements, "
                                f"{p.pointee} is {given}", param=p.name, kernel=self.name)
        for t in self.type_params:
            if t not in consts:
                raise Error(f"{self.name}: const '{t}' (const type) missing: give {t}=dtype or a tensor to a "
                            f"*{t} parameter", param=t, kernel=self.name)
        sig = (backend, device, tuple((a.kind, a.elem, a.device, a.strided) for a in infos),
               tuple(sorted((k, _types.type_name(v) if k in self.type_params else (type(v), v))
                            for k, v in consts.items())),
               tuple(sorted(options.items())))
        try:
            plan = self._by_sig.get(sig)
        except TypeError:
            plan, sig = None, None
        if plan is None:
            plan = Plan(self, backend, device, infos, consts, options, user_kw)
            if sig is not None:
                self._by_sig[sig] = plan
        if not named and want is None:  # compile(backend=) leaves the launches' plans alone
            try:
                self._plans[tuple(kw.items())] = plan
                self._last[0] = plan
            except TypeError:
                pass
        return plan, args, infos

    def _backend_for(self, infos, backend=None):
        want = _runtime._norm_backend(backend) if backend is not None else _runtime.get_backend()
        gpu = [(p, a) for p, a in zip(self.runtime_params, infos) if a.kind in ("tensor", "gpu")]
        host = [(p, a) for p, a in zip(self.runtime_params, infos) if a.kind in ("host", "devarray")]
        if want == "auto":
            want = "gpu" if gpu else "interpreter" if host else \
                   ("gpu" if _runtime.gpu_available() else "interpreter")
        if want == "gpu":
            if host:
                p, a = host[0]
                torch = sys.modules.get("torch")
                what = "a CPU tensor" if torch is not None and isinstance(a.obj, torch.Tensor) else \
                    "a blk.DeviceArray of the interpreter" if a.kind == "devarray" else "a host array"
                raise Error(f"{self.name}: argument '{p.name}' ({p.type}) is {what}; the GPU backend takes "
                            f"CUDA memory (torch CUDA tensors, __cuda_array_interface__, DLPack)",
                            param=p.name, kernel=self.name)
            first = gpu[0][1].device if gpu else None
            for p, a in gpu:
                if a.device != first:
                    raise Error(f"{self.name}: argument '{p.name}' is on cuda:{a.device}, '{gpu[0][0].name}' on "
                                f"cuda:{first}: one launch runs on one device", param=p.name, kernel=self.name)
            return "gpu", first
        if gpu:
            p, a = gpu[0]
            raise Error(f"{self.name}: argument '{p.name}' ({p.type}) is GPU memory (cuda:{a.device}); the "
                        f"interpreter backend takes host arrays (numpy, CPU tensors)", param=p.name, kernel=self.name)
        return "interpreter", -1

    # ---- compiling, autotuning, timing ---------------------------------------

    def _plan_for(self, args, kw, backend):
        if args:
            plan, args, infos = self._prepare(args, kw, backend)
            return plan, (args, infos)
        consts = {k: v for k, v in kw.items() if k in self.const_params}
        options = {k: v for k, v in kw.items() if k in OPTIONS}
        bad = [k for k in kw if k not in consts and k not in options]
        if bad:
            raise Error(f"{self.name}: no const parameter or option '{bad[0]}'", param=bad[0], kernel=self.name)
        b = _runtime._norm_backend(backend or _runtime.get_backend())
        if b == "auto":
            b = "gpu" if _runtime.gpu_available() else "interpreter"
        return Plan(self, b, None if b == "gpu" else -1, None, consts, options, kw), None

    def compile(self, *args, backend=None, grid=None, **kw):
        """Compiles the variant a launch with these arguments, consts and
        options would run (blk_kernel_compile), without running it. Without
        arguments: no specialization, on `backend` (default: the GPU when
        there is one). Returns a CompileResult."""
        plan, args = self._plan_for(args, kw, backend)
        return plan.compile(args, grid)

    def autotune(self, *args, grid=None, **kw):
        """Runs the kernel's @autotune configs on these arguments, timing each,
        and keeps the fastest for later launches with the same key values
        (blk_autotune; a plain launch does the same at its first run of a
        key). Returns a TuneResult."""
        plan, args, infos = self._prepare(args, kw)
        return plan.autotune((args, infos), grid)

    def time(self, *args, reps=10, grid=None, **kw):
        """Median time of a launch in ms (blk_time_launch: warm-up, `reps` runs)."""
        plan, args, infos = self._prepare(args, kw)
        return plan.time((args, infos), reps, grid)
