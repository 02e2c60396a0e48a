"""blk.triton: Triton kernels on blk, unchanged.

    import blk.triton as triton
    import blk.triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

A @jit function's Python source is translated to blk source (.tile) at its
first launch for each specialization (the element types of its pointer
arguments, the types of its scalars, the values of its constexprs),
compiled by libblk and cached; `kernel.tile_source` shows the last one.
blk.from_triton(fn) does the same for a function decorated with Triton's
own @triton.jit (or for its source text), so Triton need not be imported.
docs/python.md, "Running Triton kernels", says what translates.
"""

import ast
import functools
import inspect
import textwrap
import time

from .. import _args, _plan
from . import language  # noqa: F401
from ._translate import PRELUDE, FnTranslator, TranslationError, Unit, ident

# the Triton language version whose kernels this translates (libraries compare it)
__version__ = "3.6.0"

__all__ = ["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "from_triton",
           "TranslationError", "language", "install"]


def install():
    """Make `import triton` give blk.triton, with the modules a library's
    Triton code imports (triton.language, its math and extra.libdevice
    (extra.cuda.libdevice too), triton.tools.tensor_descriptor): a
    library's kernels then run on blk unchanged. Call it before the
    library is imported; it replaces a Triton already imported."""
    import sys
    import types
    from . import tools
    me = sys.modules[__name__]
    me.language, me.tools = language, tools
    extra = types.ModuleType("triton.language.extra")
    extra.libdevice = language.libdevice
    cuda = types.ModuleType("triton.language.extra.cuda")
    cuda.libdevice = language.libdevice
    extra.cuda = cuda
    language.extra = extra
    mods = {"triton": me, "triton.language": language, "triton.language.math": language.math,
            "triton.language.extra": extra, "triton.language.extra.libdevice": language.libdevice,
            "triton.language.extra.cuda": cuda, "triton.language.extra.cuda.libdevice": language.libdevice,
            "triton.tools": tools, "triton.tools.tensor_descriptor": tools.tensor_descriptor}
    sys.modules.update(mods)


def cdiv(a, b):
    return -(-a // b)


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


class Config:
    """A config of @autotune: constexpr values and launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        self.kwargs, self.num_warps, self.num_stages = dict(kwargs), num_warps, num_stages
        self.pre_hook = pre_hook

    def all_kwargs(self):
        return dict(self.kwargs, num_warps=self.num_warps, num_stages=self.num_stages)

    def __repr__(self):
        return f"Config({self.kwargs}, num_warps={self.num_warps}, num_stages={self.num_stages})"


def _blk_type(x, name):
    """The blk parameter type of argument x (a launch's), or None for a
    constexpr-like value (None)."""
    import blk
    if isinstance(x, bool):
        return "i1"
    if isinstance(x, int):
        return "i32" if -2**31 <= x < 2**31 else ("i64" if -2**63 <= x < 2**63 else "u64")
    if isinstance(x, float):
        return "f32"
    dt = getattr(x, "dtype", None)
    if dt is not None and hasattr(x, "shape"):
        return "*" + _dtype_name(dt, name)
    if isinstance(x, blk.DeviceArray):
        return "*" + x.dtype
    raise TranslationError(f"argument '{name}': a {type(x).__name__} (a tensor, an array, an int, a float or "
                           "a bool is expected)")


_DT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int8": "i8", "int16": "i16",
       "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
       "bool": "i1", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}


def _dtype_name(dt, name):
    s = str(dt).replace("torch.", "")
    if s in _DT:
        return _DT[s]
    raise TranslationError(f"argument '{name}': element type {dt} has no blk form")


class JITFunction:
    """A @blk.triton.jit function: launch it with kernel[grid](args...)."""

    def __init__(self, fn=None, source=None, name=None, globals=None):
        if fn is not None:
            src = textwrap.dedent(inspect.getsource(fn))
            self.filename = inspect.getsourcefile(fn) or "<triton>"
            self.first_line = fn.__code__.co_firstlineno
            self.globals = fn.__globals__
            self.name = fn.__name__
        else:
            src = textwrap.dedent(source)
            self.filename, self.first_line = name or "<triton source>", 1
            self.globals = dict(globals or {})
            self.globals.setdefault("tl", language)
            self.globals.setdefault("triton", __import__(__name__))
            self.name = None
        self.fn, self.src = fn, src
        tree = ast.parse(src)
        fdefs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if not fdefs:
            raise TranslationError(f"{self.filename}: no function in the source")
        self.fdef = fdefs[0] if self.name is None else next((f for f in fdefs if f.name == self.name), fdefs[0])
        self.name = self.fdef.name
        # decorators start the function's source: its lines count from the def's
        self.first_line -= 0
        self.params = [a.arg for a in self.fdef.args.args]
        defaults = self.fdef.args.defaults
        self.defaults = {}
        for a, d in zip(self.fdef.args.args[len(self.params) - len(defaults):], defaults):
            try:
                self.defaults[a.arg] = ast.literal_eval(d)
            except ValueError:
                pass
        self.constexprs = {a.arg for a in self.fdef.args.args if self.is_constexpr(a)}
        self._cflags = tuple(p in self.constexprs for p in self.params)
        self._types = {}
        self._blk_jit = self
        self._cache = {}
        self._fast = {}
        self._places = {}
        self._grids = {}    # grid -> its launcher (kernel[grid]): in C where one was made, else _miss's
        self._recent = {}   # grid -> [(launcher, probe, source)]: its last few launchers in C, the last first
        self.tile_source = None

    def is_constexpr(self, a):
        ann = a.annotation
        if ann is None:
            return False
        text = ast.unparse(ann)
        return text.endswith("constexpr")

    def __call__(self, *args, **kw):
        raise TranslationError(f"'{self.name}' is a kernel: launch it as {self.name}[grid](...)")

    def __getitem__(self, grid):
        """kernel[grid]: the launcher kept for grid (a few attribute reads and
        one blk_launch, in C, where the last launch of grid made one; see
        _install), else one that takes the checked way (_miss)."""
        try:
            return self._grids[grid]
        except (KeyError, TypeError):
            pass
        if callable(grid):
            return lambda *args, **kw: self._grid_fn(grid, args, kw)
        try:
            hash(grid)
        except TypeError:  # a list: kept by nothing
            return lambda *args, **kw: self.run(grid, args, kw)
        if len(self._grids) >= MAX_GRIDS:
            self._grids.clear()
            self._recent.clear()

        def launch(*args, **kw):
            return self._miss(grid, args, kw)
        self._grids[grid] = launch
        return launch

    def _grid_fn(self, grid, args, kw):
        """A launch whose grid is a function of the arguments by name: the
        grid it gives, launched as kernel[that grid]."""
        named = dict(zip(self.params, args), **kw)
        if len(named) < len(self.params):
            for p in self.params:
                named.setdefault(p, self.defaults.get(p))
        g = grid(named)
        if type(g) is not tuple:
            g = tuple(g) if isinstance(g, list) else (g,)
        return self[g](*args, **kw)

    def _miss(self, grid, args, kw):
        """A launch that kernel[grid]'s launcher was not made for (another
        dtype, device, constexpr, a non-contiguous tensor, the first launch):
        one of the grid's last few launchers where it fits (each checks in
        C: NotImplemented when not), else the checked way (run), which
        makes the launcher of the new call."""
        current = self._grids.get(grid)
        recent = self._recent.get(grid)
        if recent is None:   # the grid's first launch: a grid of one launch makes no launcher
            self._recent[grid] = []
            return self.run(grid, args, kw)
        for i, (fast, probe, source) in enumerate(recent):
            if fast is current or probe(*args, **kw) is NotImplemented:
                continue
            recent.insert(0, recent.pop(i))
            self._grids[grid] = fast
            self.tile_source = source
            return None
        return self.run(grid, args, kw, install=True)

    def _install(self, key, grid, kernel, hit, vals, opts, call_kw, n_args):
        """Makes kernel[key]'s launcher in C for calls like this one (it ran,
        on the grid of integers `grid`):
        its positional arguments the first runtime parameters, in order,
        the other runtime arguments by name, and its other keyword arguments
        the same names with equal values of the same classes (constexprs,
        options). It checks per call all that decides the specialization and
        the plan (see _fastlaunch.c): each tensor's class, dtype, device and
        contiguity, each int's range (i32, i64 or u64), a bool for an i1, a
        float for an f32; any other call (other keyword names among them)
        goes to _miss. Nothing where the call is otherwise (positional
        constexprs, a runtime argument left to its default or named as a
        launch option, a strided tensor, not on the GPU, no extension)."""
        where = hit[1]
        names = tuple(k for k, _ in call_kw)
        if n_args > len(where) or any(i != j for j, (i, _, _) in enumerate(where[:n_args])) or \
                any(p not in names or p in _LAUNCH_KW for _, p, _ in where[n_args:]) or \
                any(isinstance(v, _args.Strided) for v in vals):
            return
        plan = kernel._prepare(list(vals), dict(opts or {}))[0]
        if not plan.fast:
            return
        f = plan.launcher(grid)
        specs = []
        for (kind, word, dt), p in zip(getattr(f, "specs", ()), kernel.runtime_params):
            if kind != _plan._FAST_TENSOR:
                kind = _FAST_KINDS.get(p.type)
                if kind is None:
                    return
            specs.append((kind, word, dt))
        if len(specs) != len(vals):
            return
        # each keyword's runtime argument (its index among them), or -1: a value to compare
        at = {p: j for j, (_, p, _) in enumerate(where) if j >= n_args}
        kw_at = tuple(at.get(k, -1) for k in names)
        values = tuple(None if k in at else v for k, v in call_kw)

        def fail(st, call, _call_args):   # the call is a Triton kernel's, not blk's: no check of it as blk's
            plan.fail(st, call)
        fast = plan.c_launcher(f, functools.partial(self._miss, key), names, values, specs, True, fail, kw_at)
        probe = plan.c_launcher(f, None, names, values, specs, True, fail, kw_at)
        if fast is None or probe is None:
            return
        recent = self._recent.setdefault(key, [])
        recent.insert(0, (fast, probe, hit[2]))
        del recent[RECENT:]
        self._grids[key] = fast

    def bind(self, args, kw):
        """All arguments by name: positional, keyword, defaults."""
        if len(args) > len(self.params):
            raise TranslationError(f"'{self.name}' takes {len(self.params)} arguments, given {len(args)}")
        named = dict(zip(self.params, args))
        for k, v in kw.items():
            if k not in self.params:
                raise TranslationError(f"'{self.name}' has no parameter '{k}'")
            if k in named:
                raise TranslationError(f"'{self.name}': parameter '{k}' given by position and by name")
            named[k] = v
        for p in self.params:
            if p not in named:
                if p in self.defaults:
                    named[p] = self.defaults[p]
                else:
                    raise TranslationError(f"'{self.name}': no value for parameter '{p}'")
        return named

    def specialize(self, named):
        """The translated source and the runtime parameters for this launch."""
        consts, types = {}, {}
        for p in self.params:
            v = named[p]
            if p in self.constexprs or v is None or isinstance(v, (str, language.dtype)):
                consts[p] = v
            else:
                types[p] = _blk_type(v, p)
        self._types.update(types)
        key = (tuple(sorted(types.items())), tuple(sorted((k, repr(v)) for k, v in consts.items())))
        hit = self._cache.get(key)
        if hit is None:
            unit = Unit()
            t = FnTranslator(unit, self, consts, types, is_kernel=True)
            runtime = [p for p in self.params if p in types]
            header = f"kernel {self.name}(" + ", ".join(f"{ident(p)}: {types[p]}" for p in runtime) + ")"
            body = t.translate(self.fdef, header)
            source = PRELUDE + "\n" + "\n\n".join(unit.fns + [body]) + "\n"
            # the Python place of each line of source (None: the prelude, blank lines)
            places = [None] * (PRELUDE.count("\n") + 1)
            for lines in unit.fn_lines + [[(self.filename, n) for n in t.line_map]]:
                places += lines + [None]
            self._places[source] = places
            import blk
            try:
                module = blk.load(source=source, name=f"{self.filename}:{self.name}")
            except blk.Error as e:
                raise TranslationError(f"{self.filename}:{self.first_line}: '{self.name}' translated to blk "
                                       f"does not compile:\n{e}\n--- the blk source ---\n{source}") from e
            hit = (source, module[self.name], runtime)
            self._cache[key] = hit
        self.tile_source = hit[0]
        return hit

    def _key(self, args, kw):
        """What decides the specialization, cheaply: each constexpr's type and
        value, each other argument's kind (a tensor's dtype, an int's
        width, a float, a bool)."""
        key = []
        for a, c in zip(args, self._cflags):
            t = type(a)
            if c or a is None or t is str:
                key.append((t, a))
            elif t is int:
                key.append(-2147483648 <= a < 2147483648)
            elif t is float or t is bool:
                key.append(t)
            else:
                key.append(getattr(a, "dtype", t))
        if kw:
            for k in sorted(kw):
                a = kw[k]
                key.append((k, type(a), a if k in self.constexprs or a is None or type(a) in (str, int, float, bool)
                            else getattr(a, "dtype", None)))
        return tuple(key)

    def run(self, grid, args, kw, options=None, install=False):
        """A launch the checked way: the specialization found by its key (or
        translated and compiled), the arguments passed on to blk's kernel.
        install: make kernel[grid]'s launcher for calls like this one."""
        import blk
        opts = options
        call_kw = tuple(kw.items()) if install else None   # as called (launch options are taken out below)
        given = _LAUNCH_KW.intersection(kw) if kw else None
        if given:
            # launch options; a kernel parameter of the same name (num_warps:
            # tl.constexpr) gets the value too, as in Triton
            opts = {}
            for k in given:
                v = kw[k] if k in self.params else kw.pop(k)
                if k in ("num_warps", "num_stages"):
                    opts[k] = v
            if options:
                opts.update(options)
        try:
            key = self._key(args, kw)
            hit = self._fast.get(key)
        except TypeError:  # an unhashable constexpr
            key, hit = None, None
        if hit is None:
            named = self.bind(args, kw)
            source, kernel, runtime = self.specialize(named)
            # each runtime argument: its position, its name, whether it is a pointer
            where = tuple((self.params.index(p), p, self._types[p].startswith("*")) for p in runtime)
            hit = (kernel, where, source)
            if key is not None:
                self._fast[key] = hit
        kernel, where, source = hit
        self.tile_source = source
        n = len(args)
        vals = []
        for i, p, ptr in where:
            v = args[i] if i < n else kw[p] if p in kw else self.defaults[p]
            if ptr and not _contiguous(v):
                v = blk.strided(v)
            vals.append(v)
        key_grid = grid
        if callable(grid):
            named = dict(zip(self.params, args), **kw)
            for p in self.params:
                named.setdefault(p, self.defaults.get(p))
            grid = grid(named)
        elif type(grid) is not tuple:
            grid = tuple(grid) if isinstance(grid, list) else (grid,)
        try:
            if opts:
                kernel[grid](*vals, **opts)
            else:
                kernel[grid](*vals)
        except blk.Error as e:
            msg = self._python_places(str(e), source)
            if msg is None:
                raise
            raise TranslationError(msg) from e
        if install and options is None and not callable(key_grid):
            self._install(key_grid, grid, kernel, hit, vals, opts, call_kw, n)
        return None

    def _python_places(self, msg, source):
        """blk's compile errors in the translation (compiled at the first
        launch) with the Python lines they come from; None when msg has none."""
        import re
        places = self._places.get(source)
        label = re.escape(f"{self.filename}:{self.name}:")
        found = False

        def place(m):
            nonlocal found
            line = int(m.group(1))
            at = places[line - 1] if places and 0 < line <= len(places) else None
            if at is None:
                return m.group(0)
            found = True
            return f"{at[0]}:{at[1]}: {m.group(3)}: (line {line} of the translation) "
        out = re.sub(label + r"(\d+):(\d+): (error|warning|note): ", place, msg)
        return out if found else None


MAX_GRIDS = 256   # grids kept a kernel (a grid made anew at each call must not fill the memory)
RECENT = 4        # launchers in C kept a grid (calls that take turns between devices or dtypes)
# the blk parameter type of a translation -> the kind its launcher in C checks (blk._plan)
_FAST_KINDS = {"i1": _plan.FAST_BOOL, "i32": _plan.FAST_INT32, "i64": _plan.FAST_INT64_WIDE,
               "u64": _plan.FAST_U64_WIDE, "f32": _plan.FAST_FLOAT_EXACT}
_LAUNCH_KW = frozenset(("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug", "stream"))
_CONTIG = {}  # type -> its contiguity test


def _contiguous(v):
    """A tensor or array in C order (passed as it is: blk's fast launch);
    others go as blk.strided, their pointer whatever the strides."""
    f = _CONTIG.get(type(v))
    if f is None:
        if hasattr(v, "is_contiguous"):
            f = _CONTIG[type(v)] = lambda x: x.is_contiguous()
        elif hasattr(v, "flags"):
            f = _CONTIG[type(v)] = lambda x: x.flags.c_contiguous
        else:
            return True  # a DeviceArray, a raw pointer: passed as it is
    return f(v)


def jit(fn=None, **_options):
    """@blk.triton.jit: as Triton's @triton.jit."""
    if fn is None:
        return lambda f: JITFunction(f)
    return JITFunction(fn)


def from_triton(fn, globals=None):
    """A blk kernel from a Triton @triton.jit function (or its source text,
    with the module globals it reads): launch it as kernel[grid](args)."""
    if isinstance(fn, str):
        return JITFunction(source=fn, globals=globals)
    inner = getattr(fn, "fn", fn)  # Triton's JITFunction keeps the function in .fn
    return JITFunction(inner)


class Autotuner:
    """@autotune: each config tried at the first launch of each key value,
    the fastest kept."""

    def __init__(self, fn, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 prune_configs_by=None):
        self.fn, self.configs, self.key = fn, list(configs), list(key)
        self.reset_to_zero, self.restore_value = list(reset_to_zero or []), list(restore_value or [])
        self.pre_hook, self.prune = pre_hook, prune_configs_by
        self.best = {}
        self._blk_jit = getattr(fn, "_blk_jit", None)
        self.name = getattr(fn, "name", "")

    @property
    def tile_source(self):
        return self.fn.tile_source

    def __getitem__(self, grid):
        return lambda *args, **kw: self.run(grid, args, kw)

    def _launch(self, cfg, grid, args, kw):
        kw = dict(kw, **cfg.kwargs)
        if cfg.pre_hook:
            cfg.pre_hook(self.fn.bind(args, kw) if hasattr(self.fn, "bind") else kw)
        if isinstance(self.fn, JITFunction) and "num_warps" not in kw and "num_stages" not in kw:
            # the config's options as launch options: the kernel's launcher for the grid takes it
            return self.fn[grid](*args, num_warps=cfg.num_warps, num_stages=cfg.num_stages, **kw)
        return self.fn.run(grid, args, kw, options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages})

    def run(self, grid, args, kw):
        named = self.fn.bind(args, dict(kw, **self.configs[0].kwargs)) if hasattr(self.fn, "bind") else kw
        key = tuple(repr(named.get(k)) for k in self.key)
        cfg = self.best.get(key)
        if cfg is None:
            configs = self.configs
            if self.prune and "early_config_prune" in self.prune:
                configs = self.prune["early_config_prune"](configs, named) or configs
            cfg, best_t = configs[0], None
            saved = {n: named[n].clone() for n in self.restore_value if hasattr(named[n], "clone")}
            for c in configs:
                if len(configs) > 1:
                    self._reset(named, saved)
                    t0 = time.perf_counter()
                    self._launch(c, grid, args, kw)
                    _sync()
                    t = time.perf_counter() - t0
                    if best_t is None or t < best_t:
                        cfg, best_t = c, t
            self._reset(named, saved)
            self.best[key] = cfg
        return self._launch(cfg, grid, args, kw)

    def _reset(self, named, saved):
        for n in self.reset_to_zero:
            if hasattr(named.get(n), "zero_"):
                named[n].zero_()
            elif hasattr(named.get(n), "fill"):
                named[n].fill(0)
        for n, v in saved.items():
            named[n].copy_(v)


def _sync():
    import blk
    try:
        blk.synchronize()
    except Exception:
        pass


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """@blk.triton.autotune: as Triton's (configs tried at the first launch of each key value)."""
    return lambda fn: Autotuner(fn, configs, key, reset_to_zero, restore_value, pre_hook, prune_configs_by)


class Heuristics:
    def __init__(self, fn, values):
        self.fn, self.values = fn, dict(values)
        self._blk_jit = getattr(fn, "_blk_jit", None)
        self.name = getattr(fn, "name", "")

    @property
    def tile_source(self):
        return self.fn.tile_source

    def bind(self, args, kw):
        """All arguments by name, the heuristics' values among them."""
        named = self.fn.bind(args, dict(kw, **{k: None for k in self.values if k not in kw}))
        for k, f in self.values.items():
            if k not in kw:
                named[k] = f(named)
        return named

    def run(self, grid, args, kw, options=None):
        named = self.bind(args, kw)
        extra = {k: named[k] for k in self.values if k not in kw}
        if options is None and isinstance(self.fn, JITFunction):   # the kernel's launcher for the grid
            return self.fn[grid](*args, **kw, **extra)
        return self.fn.run(grid, args, dict(kw, **extra), options)

    def __getitem__(self, grid):
        return lambda *args, **kw: self.run(grid, args, kw)


def heuristics(values):
    """@blk.triton.heuristics: constexprs computed from the arguments."""
    return lambda fn: Heuristics(fn, values)
