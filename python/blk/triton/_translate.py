"""The translator of blk.triton: the Python AST of a @triton.jit function to
blk source (.tile), for one specialization (the types of its pointer and
scalar arguments, the values of its constexprs). Constexprs are folded
into the source as literals, `if`s on them keep one branch (as Triton's
constexpr ifs), and the @jit functions a kernel calls become blk `fn`s
emitted before it. Anything it cannot translate raises TranslationError
naming the construct and its line in the Python source: never a kernel
that computes something else."""

import ast
import math

from . import language as tl_lang


class TranslationError(Exception):
    """A construct blk.triton cannot translate; the message names it and
    its place (file:line)."""


# tl.NAME -> blk builtin (None: same name). Absent: an error.
BUILTINS = {
    "program_id": None, "num_programs": None, "arange": None, "zeros": None, "full": None,
    "zeros_like": None, "load": None, "store": None, "where": None, "minimum": None, "maximum": None,
    "abs": None, "exp": None, "exp2": None, "log": None, "log2": None, "sqrt": None, "sqrt_rn": None,
    "rsqrt": None, "sin": None, "cos": None, "sigmoid": None, "erf": None, "floor": None, "ceil": None,
    "fma": None, "cdiv": None, "clamp": None, "umulhi": None, "div_rn": None, "fdiv": "__tt_fdiv",
    "sum": None, "max": None, "min": None, "argmax": None, "argmin": None, "reduce": None,
    "cumsum": None, "cumprod": None, "associative_scan": None, "sort": None, "flip": None,
    "dot": None, "dot_scaled": None, "trans": None, "permute": None, "reshape": None, "view": None,
    "ravel": "flatten", "broadcast_to": None, "expand_dims": None, "join": None, "split": None,
    "cat": None, "interleave": None, "gather": None, "histogram": None, "topk": None,
    "atomic_add": None, "atomic_max": None, "atomic_min": None, "atomic_and": None, "atomic_or": None,
    "atomic_xor": None, "atomic_xchg": None, "atomic_cas": None, "rand": None, "randn": None,
    "randint": None, "randint4x": None, "multiple_of": None, "max_contiguous": None,
    "static_assert": None, "device_assert": "assert", "debug_barrier": None,
    "inline_asm_elementwise": None, "cast": "to", "static_print": None, "device_print": None,
    "next_power_of_2": None,
}
# tl.math.NAME and libdevice.NAME -> blk builtin
MATH = {
    "exp": None, "exp2": None, "log": None, "log2": None, "sqrt": None, "sqrt_rn": None, "rsqrt": None,
    "sin": None, "cos": None, "tan": None, "tanh": None, "sinh": None, "cosh": None, "asin": None,
    "acos": None, "atan": None, "atan2": None, "asinh": None, "acosh": None, "atanh": None, "erf": None,
    "erfc": None, "erfinv": None, "log1p": None, "expm1": None, "log10": None, "exp10": None,
    "cbrt": None, "pow": None, "hypot": None, "floor": None, "ceil": None, "trunc": None, "round": None,
    "rint": None, "nearbyint": "rint", "fabs": "abs", "abs": None, "fma": None, "fmod": None,
    "remainder": None, "copysign": None, "nextafter": None, "isnan": None, "isinf": None,
    "isfinited": "isfinite", "finitef": "isfinite", "isfinite": None, "signbit": None, "ldexp": None,
    "frexp": None, "lgamma": None, "tgamma": None, "j0": None, "j1": None, "y0": None, "y1": None,
    "i0": None, "i1": None, "fmax": "maximum", "fmin": "minimum", "max": "maximum", "min": "minimum",
    "sigmoid": None, "div_rn": None, "fast_expf": "exp", "fast_logf": "log", "fast_dividef": "__tt_fdiv",
    "rsqrt_rn": "rsqrt", "exp2f": "exp2", "cdiv": None, "umulhi": None, "llrint": None,
}
# keyword renames of a call
KWARGS = {"cache_modifier": "cache", "eviction_policy": "eviction", "keep_dims": "keep_dims",
          "return_indices_tie_break_left": None}
DROP_KWARGS = {"volatile", "boundary_check", "padding_option", "_builder", "_semantic",
               "allow_tf32", "max_num_imprecise_acc", "is_pure", "fast_math", "sanitize_overflow"}

# prelude fns the translation may call
PRELUDE = """fn __tt_is_int(x) {
    let t = x.dtype;
    return t == i1 || t == i8 || t == i16 || t == i32 || t == i64 || t == u8 || t == u16 || t == u32 || t == u64;
}
// Triton's '/': integers divide as f32
fn __tt_truediv(a, b) {
    if __tt_is_int(a) && __tt_is_int(b) {
        return a.to(f32) / b.to(f32);
    }
    return a / b;
}
fn __tt_fdiv(a, b) { return a / b; }
// Triton's store converts the value to the pointee type
fn __tt_to_pointee(p, v) { return v.to(p.dtype.element_ty); }
"""

# names a Python identifier cannot keep in blk: keywords, types, builtins
RESERVED = set("""import as const fn kernel grid let var if else for in while break continue return true false
None print i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2 type
program_id debug_barrier num_programs num_sms arange full zeros zeros_like inf cdiv next_power_of_2 range
static_range load store tensor_desc desc_load desc_store atomic_add atomic_max atomic_min atomic_and atomic_or
atomic_xor atomic_xchg atomic_cas where to bitcast exp exp2 log log2 sqrt sqrt_rn rsqrt sin cos tanh
tanh_precise sinh cosh tan atan asin acos asinh acosh atanh log1p expm1 log10 exp10 cbrt erfc erfinv lgamma
tgamma i0 j0 j1 y0 y1 pow pow_precise atan2 hypot remainder copysign nextafter fmod isnan isinf isfinite signbit ldexp frexp
trunc rint round erf floor ceil sigmoid abs fma div_rn maximum minimum clamp umulhi sum max min argmax argmin
reduce cumsum cumprod associative_scan dot dot_scaled sort argsort topk histogram reshape view flatten trans
permute expand_dims broadcast_to join cat split gather flip interleave globaltimer smid num_warps
inline_asm_elementwise inline_asm rand randn randint randint4x multiple_of max_contiguous static_assert
assert shape dtype strides block_shape""".split())


def ident(name):
    """A Python name as a blk identifier: one blk reserves gets a trailing
    underscore (and so does one ending in underscores followed by such)."""
    base = name.rstrip("_")
    return name + "_" if base in RESERVED or name.startswith("__tt") else name


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Pow: "**", ast.FloorDiv: "/"}
_CMPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Mod: lambda a, b: a % b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
          ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
          ast.Pow: lambda a, b: a ** b, ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b}
_PYCMPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
           ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


class Const:
    """A value known while translating (a constexpr, a literal, a global)."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, tl_lang.constexpr) else value


def literal(v, where):
    """blk source for a Python constant."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "(0.0 / 0.0)"
        if math.isinf(v):
            return "inf(f32)" if v > 0 else "-inf(f32)"
        r = repr(v)
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, tl_lang.dtype):
        return v.blk
    if isinstance(v, tuple):
        return "(" + ", ".join(literal(x, where) for x in v) + ("," if len(v) == 1 else "") + ")"
    raise TranslationError(f"{where}: a constant {v!r} ({type(v).__name__}) has no blk form")


class FnTranslator:
    """One @jit function: a kernel (specialized) or a helper fn."""

    def __init__(self, unit, jit, consts, param_types, is_kernel):
        self.unit, self.jit, self.is_kernel = unit, jit, is_kernel
        self.consts = dict(consts)          # name -> Python value (constexprs)
        self.param_types = param_types      # name -> blk type text (kernel runtime params)
        self.lines = []
        self.line_map = []  # the Python line of each of self.lines (for blk's errors)
        self.py_line = jit.first_line
        self.scopes = [set()]
        self.pending = []  # the statements after each one being translated, in the current block and
        # the constexpr branches it is in (what decides whether a name is carried: var, or not: let)
        self.tmp = 0
        self.block_ptrs = {}  # name -> rank: a make_block_ptr as a descriptor and offset vars

    # ---- places and errors ----
    def where(self, node):
        return f"{self.jit.filename}:{self.jit.first_line + getattr(node, 'lineno', 1) - 1}"

    def fail(self, node, what):
        raise TranslationError(f"{self.where(node)}: {what} (in '{self.jit.name}')")

    # ---- names ----
    def declared(self, name):
        return any(name in s for s in self.scopes)

    @staticmethod
    def assigned_names(s):
        """The names statement s assigns (itself, not in its sub-blocks)."""
        if isinstance(s, ast.Assign):
            targets = s.targets
        elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
            targets = [s.target]
        else:
            return set()
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}

    def scan_carried(self, stmts, name):
        """True when a loop or runtime if among stmts assigns name before it is
        declared again at this level, False when it is declared again first,
        None when neither."""
        for s in stmts:
            if isinstance(s, ast.If) and self.const_of(s.test) is not None:
                r = self.scan_carried(s.body if self.const_of(s.test).value else s.orelse, name)
                if r is not None:
                    return r
            elif name in self.assigned_names(s):
                return False
            elif isinstance(s, (ast.For, ast.While, ast.If)) and any(
                    name in self.assigned_names(x) for x in ast.walk(s)):
                return True
        return None

    def carried(self, name):
        """Whether the name declared now is assigned later in a loop or a
        runtime if (a var, whose type stays, as Triton's loop-carried
        values) rather than only declared again (a let per assignment:
        Python names are not typed)."""
        for rest in reversed(self.pending):
            r = self.scan_carried(rest, name)
            if r is not None:
                return r
        return False

    def rebinds(self, name):
        """An assignment to name here declares it again (it is new, a
        parameter, or declared in this same block); otherwise it assigns the
        variable of an enclosing block (from inside a loop or an if)."""
        return not self.declared(name) or name in self.scopes[-1]

    # ---- constants ----
    def resolve_global(self, node, name):
        g = self.jit.globals
        if name in g:
            return g[name]
        import builtins
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.fail(node, f"unknown name '{name}'")

    def const_of(self, node):
        """The Python value of node when known while translating, else None
        (wrapped in Const so that None itself can be a value)."""
        if isinstance(node, ast.Constant):
            return Const(node.value)
        if isinstance(node, ast.Name):
            if self.declared(node.id):
                return None
            if node.id in self.consts:
                return Const(self.consts[node.id])
            if node.id in self.param_types:
                return None
            v = self.jit.globals.get(node.id, None)
            if isinstance(v, (int, float, bool, str, tl_lang.constexpr, tl_lang.dtype)) or (
                    node.id in self.jit.globals and v is None):
                return Const(v)
            return None
        if isinstance(node, ast.Attribute):
            base = self.namespace_of(node.value)
            if base == "tl" and node.attr in tl_lang.DTYPES:
                return Const(getattr(tl_lang, node.attr))
            b = self.const_of(node.value)
            if b is not None and isinstance(b.value, tl_lang.dtype) and node.attr in ("is_floating", "is_int"):
                return None
            return None
        if isinstance(node, ast.UnaryOp):
            a = self.const_of(node.operand)
            if a is None:
                return None
            op = {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x,
                  ast.Invert: lambda x: ~x}[type(node.op)]
            return Const(op(a.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _PYOPS:
            a, b = self.const_of(node.left), self.const_of(node.right)
            if a is None or b is None:
                return None
            try:
                return Const(_PYOPS[type(node.op)](a.value, b.value))
            except Exception:
                return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _PYCMPS:
            a, b = self.const_of(node.left), self.const_of(node.comparators[0])
            if isinstance(node.ops[0], (ast.Is, ast.IsNot)) and (a is None) != (b is None):
                # a runtime argument is never None (None arguments are constexprs)
                known = a if a is not None else b
                if known.value is None:
                    return Const(isinstance(node.ops[0], ast.IsNot))
            if a is None or b is None:
                return None
            return Const(_PYCMPS[type(node.ops[0])](a.value, b.value))
        if isinstance(node, ast.BoolOp):
            vals = [self.const_of(v) for v in node.values]
            if any(v is None for v in vals):
                return None
            r = vals[0].value
            for v in vals[1:]:
                r = (r and v.value) if isinstance(node.op, ast.And) else (r or v.value)
            return Const(r)
        if isinstance(node, ast.Tuple):
            vals = [self.const_of(e) for e in node.elts]
            return None if any(v is None for v in vals) else Const(tuple(v.value for v in vals))
        if isinstance(node, ast.Call) and self.namespace_of(node.func) == "tl" and node.func.attr == "constexpr":
            return self.const_of(node.args[0]) if node.args else Const(None)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max", "len",
                                                                                               "int", "float"):
            vals = [self.const_of(a) for a in node.args]
            if any(v is None for v in vals):
                return None
            return Const({"min": min, "max": max, "len": len, "int": int, "float": float}[node.func.id](
                *[v.value for v in vals]))
        if isinstance(node, ast.Call) and self.namespace_of(node.func) in ("tl", "triton") and \
                node.func.attr in ("cdiv", "next_power_of_2"):
            vals = [self.const_of(a) for a in node.args]
            if any(v is None for v in vals):
                return None
            if node.func.attr == "cdiv":
                return Const(-(-vals[0].value // vals[1].value))
            n = vals[0].value
            return Const(1 if n <= 1 else 1 << (int(n) - 1).bit_length())
        return None

    def namespace_of(self, node):
        """'tl', 'math', 'libdevice', 'triton' when node names that module."""
        if isinstance(node, ast.Name) and not self.declared(node.id):
            v = self.jit.globals.get(node.id)
            mod = getattr(v, "__name__", "")
            if v is tl_lang or mod in ("triton.language", "blk.triton.language"):
                return "tl"
            if v is tl_lang.math or mod in ("triton.language.math",):
                return "math"
            if v is tl_lang.libdevice or mod.endswith("libdevice"):
                return "libdevice"
            if mod in ("triton", "blk.triton"):
                return "triton"
        if isinstance(node, ast.Attribute):
            base = self.namespace_of(node.value)
            if base == "tl" and node.attr == "math":
                return "math"
            if base in ("tl", "libdevice") and node.attr in ("extra", "cuda", "libdevice"):
                return "libdevice"
            if base == "triton" and node.attr == "language":
                return "tl"
        return None

    # ---- expressions ----
    def expr(self, node):
        c = self.const_of(node)
        if c is not None:
            if c.value is None:
                self.fail(node, "None here (only 'x is None' tests on constexprs translate)")
            return literal(c.value, self.where(node))
        m = getattr(self, "e_" + type(node).__name__, None)
        if m is None:
            self.fail(node, f"a {type(node).__name__} expression")
        return m(node)

    def e_Name(self, node):
        if node.id in self.block_ptrs:
            self.fail(node, f"the block pointer '{node.id}' used other than by tl.load, tl.store and tl.advance")
        if self.declared(node.id) or node.id in self.param_types:
            return ident(node.id)
        v = self.resolve_global(node, node.id)
        target = getattr(v, "_blk_jit", None)
        if target is not None:  # a combine_fn of reduce or associative_scan
            return self.unit.helper(target, self.where(node))
        self.fail(node, f"the global '{node.id}' ({type(v).__name__}) here")

    def e_BinOp(self, node):
        a, b = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.Div):
            ca, cb = self.const_of(node.left), self.const_of(node.right)
            if (ca and isinstance(ca.value, float)) or (cb and isinstance(cb.value, float)):
                return f"({a} / {b})"
            return f"__tt_truediv({a}, {b})"
        if type(node.op) not in _BINOPS:
            self.fail(node, f"the operator {type(node.op).__name__}")
        return f"({a} {_BINOPS[type(node.op)]} {b})"

    def e_UnaryOp(self, node):
        a = self.expr(node.operand)
        op = {ast.USub: "-", ast.UAdd: "", ast.Not: "!", ast.Invert: "~"}[type(node.op)]
        return f"({op}{a})"

    def e_BoolOp(self, node):
        op = " && " if isinstance(node.op, ast.And) else " || "
        return "(" + op.join(self.expr(v) for v in node.values) + ")"

    def e_Compare(self, node):
        if len(node.ops) != 1:
            self.fail(node, "a chained comparison")
        if type(node.ops[0]) not in _CMPS:
            self.fail(node, f"the comparison {type(node.ops[0]).__name__} on a runtime value")
        return f"({self.expr(node.left)} {_CMPS[type(node.ops[0])]} {self.expr(node.comparators[0])})"

    def e_IfExp(self, node):
        c = self.const_of(node.test)
        if c is not None:
            return self.expr(node.body if c.value else node.orelse)
        return f"({self.expr(node.test)} ? {self.expr(node.body)} : {self.expr(node.orelse)})"

    def e_Tuple(self, node):
        items = [self.expr(e) for e in node.elts]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    e_List = e_Tuple

    def e_Subscript(self, node):
        base = self.expr(node.value)
        sl = node.slice
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out = []
        for p in parts:
            if isinstance(p, ast.Slice):
                if p.lower or p.upper or p.step:
                    self.fail(node, "a slice with bounds")
                out.append(":")
            elif isinstance(p, ast.Constant) and p.value is None:
                out.append("None")
            else:
                out.append(self.expr(p))
        return f"{base}[{', '.join(out)}]"

    def e_Attribute(self, node):
        if node.attr == "element_ty" and isinstance(node.value, ast.Attribute) and node.value.attr == "dtype":
            return f"{self.expr(node.value)}.element_ty"  # the pointee type (blk's field, as Triton's)
        if node.attr == "T":
            return f"trans({self.expr(node.value)})"
        if node.attr in ("dtype", "shape"):
            return f"{self.expr(node.value)}.{node.attr}"
        self.fail(node, f"the attribute '.{node.attr}'")

    def call_args(self, node, skip=()):
        out = [self.expr(a) for a in node.args]
        for kw in node.keywords:
            if kw.arg is None:
                self.fail(node, "**kwargs in a call")
            if kw.arg in DROP_KWARGS or kw.arg in skip:
                continue
            name = KWARGS.get(kw.arg, kw.arg) or kw.arg
            c = self.const_of(kw.value)
            if c is not None and c.value is None:
                continue  # an argument given as None means its default
            if kw.arg == "cache_modifier" and c is not None and isinstance(c.value, str):
                if c.value in ("", ".ca"):
                    continue
                out.append(f"cache = {literal(c.value.lstrip('.'), self.where(node))}")  # ".cg" is blk's "cg"
                continue
            out.append(f"{name} = {self.expr(kw.value)}")
        return out

    def e_Call(self, node):
        f = node.func
        ns = self.namespace_of(f.value) if isinstance(f, ast.Attribute) else None
        if ns in ("tl", "triton") and f.attr == "dot":
            return self.call_dot(node)
        if ns in ("tl", "triton") and f.attr in ("load", "store"):
            bp = self.block_ptr_access(node)
            if bp is not None:
                return bp
        if ns in ("tl", "triton") and f.attr == "store":
            return self.call_store(node, "store", "pointer", lambda ptr, v: f"__tt_to_pointee({ptr}, {v})")
        if ns in ("tl", "triton") and f.attr == "make_tensor_descriptor":
            parts = [self.call_arg(node, i, k) for i, k in enumerate(("base", "shape", "strides", "block_shape"))]
            if any(x is None for x in parts):
                self.fail(node, "make_tensor_descriptor without base, shape, strides and block_shape")
            pad = self.call_arg(node, 4, "padding_option")
            c = self.const_of(pad) if pad is not None else None
            if pad is not None and (c is None or c.value not in ("", "zero", "nan", None)):
                self.fail(node, "padding_option other than \"zero\" or \"nan\"")
            opt = ', padding_option = "nan"' if c is not None and c.value == "nan" else ""
            return f"tensor_desc({', '.join(self.expr(x) for x in parts)}{opt})"
        if ns in ("tl", "triton") and f.attr in ("max", "min"):
            ri = next((kw for kw in node.keywords if kw.arg == "return_indices"), None)
            c = self.const_of(ri.value) if ri is not None else None
            if ri is not None and (c is None or c.value):
                if c is None:
                    self.fail(node, "return_indices not a constant")
                args = self.call_args(node, skip=("return_indices", "return_indices_tie_break_left"))
                return f"({f.attr}({', '.join(args)}), arg{f.attr}({', '.join(args)}))"
            if ri is not None:
                return f"{f.attr}({', '.join(self.call_args(node, skip=('return_indices',)))})"
        if ns in ("tl", "triton"):
            if f.attr not in BUILTINS:
                self.fail(node, f"tl.{f.attr}")
            name = BUILTINS[f.attr] or f.attr
            if f.attr == "device_print":
                args = [self.expr(a) for a in node.args]
                return f"print({', '.join(args)})"
            if f.attr in ("static_print",):
                return "()"
            return f"{name}({', '.join(self.call_args(node))})"
        if ns in ("math", "libdevice"):
            attr = f.attr[:-1] if ns == "libdevice" and f.attr.endswith("f") and f.attr[:-1] in MATH else f.attr
            if attr not in MATH:
                self.fail(node, f"{ns}.{f.attr}")
            return f"{MATH[attr] or attr}({', '.join(self.call_args(node))})"
        if isinstance(f, ast.Attribute):
            # a method: x.to(...), x.sum(...), x.reshape(...)
            meth = f.attr
            if meth in ("to", "cast"):
                args = self.call_args(node)
                return f"{self.expr(f.value)}.to({', '.join(args)})"
            if meth == "store":  # a tensor descriptor's
                base = self.expr(f.value)
                return self.call_store(node, f"{base}.store", "offsets", lambda offs, v: f"({v}).to({base}.dtype)")
            if meth in BUILTINS and BUILTINS[meth] is None:
                return f"{self.expr(f.value)}.{meth}({', '.join(self.call_args(node))})"
            self.fail(node, f"the method '.{meth}()'")
        if isinstance(f, ast.Name):
            if self.declared(f.id):
                self.fail(node, f"a call of the local '{f.id}'")
            if f.id in ("min", "max"):
                if len(node.args) != 2:
                    self.fail(node, f"{f.id}() of other than two values")
                return f"{'minimum' if f.id == 'min' else 'maximum'}({self.expr(node.args[0])}, {self.expr(node.args[1])})"
            if f.id == "range":
                return f"range({', '.join(self.call_args(node))})"
            if f.id in ("abs",):
                return f"abs({self.expr(node.args[0])})"
            if f.id in ("float", "int"):
                return f"({self.expr(node.args[0])}).to({'f32' if f.id == 'float' else 'i32'})"
            v = self.resolve_global(f, f.id)
            mod = getattr(v, "__module__", "") or ""
            fname = getattr(v, "name", None) if isinstance(v, tl_lang._Builtin) else getattr(v, "__name__", None)
            if fname and (isinstance(v, tl_lang._Builtin) or mod.startswith("triton.language")):
                # a libdevice or tl function imported by name: from ...libdevice import tanh
                base = fname.rsplit(".", 1)[-1]
                if base in MATH:
                    return f"{MATH[base] or base}({', '.join(self.call_args(node))})"
                if base in BUILTINS and BUILTINS[base] is None:
                    return f"{base}({', '.join(self.call_args(node))})"
                self.fail(node, f"'{f.id}' ({fname})")
            target = getattr(v, "_blk_jit", None)
            if target is not None:
                fname = self.unit.helper(target, self.where(node))
                return f"{fname}({', '.join(self.call_args(node))})"
            self.fail(node, f"a call of '{f.id}' (not a @jit function)")
        self.fail(node, "this call")

    def stored(self, node, convert):
        """A stored value, converted to the pointee type as Triton's stores do
        (value.to(pointer.dtype.element_ty)); a number stays as it is (blk
        converts it)."""
        c = self.const_of(node)
        if c is not None and isinstance(c.value, (bool, int, float)) and math.isfinite(c.value):
            return self.expr(node)
        return convert(self.expr(node))

    def call_store(self, node, callee, first, convert):
        """tl.store(pointer, value, ...) or desc.store(offsets, value): the
        value converted by convert(first's text, value's text)."""
        where = self.call_arg(node, 0, first)
        value = self.call_arg(node, 1, "value")
        if where is None or value is None:
            self.fail(node, f"a store without {first} and value")
        w = self.expr(where)
        args = [w, self.stored(value, lambda v: convert(w, v))]
        args += [self.expr(a) for a in node.args[2:]]
        args += self.call_args(ast.Call(func=node.func, args=[], keywords=[
            kw for kw in node.keywords if kw.arg not in (first, "value")]))
        return f"{callee}({', '.join(args)})"

    def call_dot(self, node):
        args = [self.expr(a) for a in node.args]
        kws = []
        for kw in node.keywords:
            c = self.const_of(kw.value)
            if kw.arg == "allow_tf32":
                if c is None:
                    self.fail(node, "allow_tf32 not a constant")
                kws.append(f'input_precision = "{"tf32" if c.value else "ieee"}"')
            elif kw.arg in ("max_num_imprecise_acc",):
                continue
            elif c is not None and c.value is None:
                continue
            else:
                kws.append(f"{kw.arg} = {self.expr(kw.value)}")
        return f"dot({', '.join(args + kws)})"

    # ---- statements ----
    def emit(self, depth, text):
        self.lines.append("    " * depth + text)
        self.line_map.append(self.py_line)

    def block(self, stmts, depth, new_scope=True, own_block=None):
        """stmts in a scope of their own (new_scope); own_block: they are a
        blk block (a body), not a constexpr if's branch kept in the
        enclosing one (by default, when new_scope)."""
        if new_scope:
            self.scopes.append(set())
        saved = self.pending
        if new_scope if own_block is None else own_block:
            self.pending = []
        for i, s in enumerate(stmts):
            m = getattr(self, "s_" + type(s).__name__, None)
            if m is None:
                self.fail(s, f"the statement {type(s).__name__}")
            self.pending.append(stmts[i + 1:])
            self.py_line = self.jit.first_line + s.lineno - 1
            m(s, depth)
            self.pending.pop()
        self.pending = saved
        if new_scope:
            self.scopes.pop()

    def s_Expr(self, s, depth):
        if isinstance(s.value, ast.Constant):
            return  # a docstring
        text = self.expr(s.value)
        if text != "()":
            self.emit(depth, text + ";")

    def s_Pass(self, s, depth):
        pass

    def declare(self, depth, names, value_text):
        kind = "var" if any(self.carried(n) for n in names) else "let"
        self.emit(depth, f"{kind} {', '.join(map(ident, names))} = {value_text};")
        self.scopes[-1].update(names)

    def bind(self, s, target, value_text, depth):
        """An assignment. Python names are not typed: one assigned again in
        the same block is declared again (let v = v.to(f32) hides the bf16
        v); one declared in an enclosing block and assigned in a loop or an
        if is a var, assigned (it keeps its type, as Triton's loop-carried
        values must)."""
        if isinstance(target, ast.Name):
            names = [target.id]
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = [e.id for e in target.elts]
        else:
            self.fail(s, "an assignment to something other than names")
        for n in names:
            if n in self.consts:
                self.fail(s, f"an assignment to the constexpr '{n}'")
        fresh = [self.rebinds(n) for n in names]
        if all(fresh):
            self.declare(depth, names, value_text)
        elif not any(fresh):
            self.emit(depth, f"{', '.join(map(ident, names))} = {value_text};")
        else:  # some declared again, some assigned: through temporaries
            self.tmp += 1
            tmps = [f"__t{self.tmp}_{i}" for i in range(len(names))]
            self.emit(depth, f"let {', '.join(tmps)} = {value_text};")
            for n, t, f in zip(names, tmps, fresh):
                if f:
                    self.declare(depth, [n], t)
                else:
                    self.emit(depth, f"{ident(n)} = {t};")

    def s_Assign(self, s, depth):
        if len(s.targets) != 1:
            self.fail(s, "a chained assignment")
        if self.block_ptr_assign(s, depth):
            return
        self.bind(s, s.targets[0], self.expr(s.value), depth)

    # ---- block pointers: a descriptor (NAME__d) and offset vars (NAME__o0, ...) ----
    def tl_call(self, node, *names):
        f = getattr(node, "func", None)
        return isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and \
            self.namespace_of(f.value) == "tl" and f.attr in names

    def call_arg(self, node, i, name):
        for kw in node.keywords:
            if kw.arg == name:
                return kw.value
        return node.args[i] if i < len(node.args) else None

    def items(self, node, what):
        if not isinstance(node, (ast.Tuple, ast.List)):
            c = self.const_of(node)
            if c is not None and isinstance(c.value, tuple):
                return [ast.Constant(v) for v in c.value]
            self.fail(node, f"{what} not written as a tuple or list")
        return node.elts

    def block_ptr_assign(self, s, depth):
        t, v = s.targets[0], s.value
        if self.tl_call(v, "make_block_ptr"):
            if not isinstance(t, ast.Name) or self.declared(t.id):
                self.fail(s, "a block pointer assigned to other than a new name")
            parts = {k: self.call_arg(v, i, k) for i, k in
                     enumerate(("base", "shape", "strides", "offsets", "block_shape", "order"))}
            if any(parts[k] is None for k in ("base", "shape", "strides", "offsets", "block_shape")):
                self.fail(s, "make_block_ptr without base, shape, strides, offsets and block_shape")
            shape, strides = self.items(parts["shape"], "shape"), self.items(parts["strides"], "strides")
            offs, block = self.items(parts["offsets"], "offsets"), self.items(parts["block_shape"], "block_shape")
            tup = lambda xs: "(" + ", ".join(self.expr(x) for x in xs) + ("," if len(xs) == 1 else "") + ")"
            n = t.id
            self.emit(depth, f"let {ident(n)}__d = tensor_desc({self.expr(parts['base'])}, {tup(shape)}, {tup(strides)}, "
                             f"{tup(block)});")
            for i, o in enumerate(offs):
                self.emit(depth, f"var {ident(n)}__o{i} = ({self.expr(o)}).to(i32);")
            self.block_ptrs[n] = len(offs)
            self.scopes[-1].update([n, f"{n}__d"] + [f"{n}__o{i}" for i in range(len(offs))])
            return True
        if self.tl_call(v, "advance"):
            src = v.args[0] if v.args else None
            if not (isinstance(src, ast.Name) and src.id in self.block_ptrs and isinstance(t, ast.Name)):
                self.fail(s, "tl.advance of other than a block pointer made in this function")
            rank, d = self.block_ptrs[src.id], self.items(self.call_arg(v, 1, "offsets"), "offsets")
            if len(d) != rank:
                self.fail(s, f"tl.advance by {len(d)} offsets of a rank-{rank} block pointer")
            if t.id == src.id:
                for i, x in enumerate(d):
                    self.emit(depth, f"{ident(t.id)}__o{i} += ({self.expr(x)}).to(i32);")
                return True
            if self.declared(t.id):
                if t.id not in self.block_ptrs:
                    self.fail(s, f"'{t.id}' given a block pointer")
                for i, x in enumerate(d):
                    self.emit(depth, f"{ident(t.id)}__o{i} = {ident(src.id)}__o{i} + ({self.expr(x)}).to(i32);")
                return True
            self.emit(depth, f"let {ident(t.id)}__d = {ident(src.id)}__d;")
            for i, x in enumerate(d):
                self.emit(depth, f"var {ident(t.id)}__o{i} = {ident(src.id)}__o{i} + ({self.expr(x)}).to(i32);")
            self.block_ptrs[t.id] = rank
            self.scopes[-1].update([t.id, f"{t.id}__d"] + [f"{t.id}__o{i}" for i in range(rank)])
            return True
        return False

    def block_ptr_access(self, node):
        """tl.load / tl.store of a block pointer: desc_load / desc_store."""
        p = node.args[0] if node.args else None
        if not (isinstance(p, ast.Name) and p.id in self.block_ptrs):
            return None
        offs = "(" + ", ".join(f"{ident(p.id)}__o{i}" for i in range(self.block_ptrs[p.id])) + \
            ("," if self.block_ptrs[p.id] == 1 else "") + ")"
        for kw in node.keywords:
            if kw.arg == "padding_option":
                c = self.const_of(kw.value)
                if c is None or c.value not in ("", "zero", None):
                    self.fail(node, "padding_option other than \"zero\"")
        if node.func.attr == "load":
            return f"desc_load({ident(p.id)}__d, {offs})"
        value = self.call_arg(node, 1, "value")
        d = f"{ident(p.id)}__d"
        return f"desc_store({d}, {offs}, {self.stored(value, lambda v: f'({v}).to({d}.dtype)')})"

    def s_AnnAssign(self, s, depth):
        if s.value is None:
            self.fail(s, "a declaration without a value")
        self.bind(s, s.target, self.expr(s.value), depth)

    def s_AugAssign(self, s, depth):
        t = s.target
        if not isinstance(t, ast.Name) or not (self.declared(t.id) or t.id in self.param_types):
            self.fail(s, "a compound assignment to a name not assigned before")
        op = "/" if isinstance(s.op, ast.Div) else _BINOPS.get(type(s.op))
        if op is None:
            self.fail(s, f"the operator {type(s.op).__name__}")
        n, v = ident(t.id), self.expr(s.value)
        value = f"__tt_truediv({n}, {v})" if isinstance(s.op, ast.Div) else f"({n} {op} {v})"
        if self.rebinds(t.id):
            # x op= e in x's own block (or on a parameter) is x = x op e:
            # declared again, its type may change (x += an i64 makes an i64)
            self.bind(s, t, value, depth)
        elif isinstance(s.op, ast.Div):
            self.emit(depth, f"{n} = {value};")
        else:
            self.emit(depth, f"{n} {op}= {v};")

    def s_Assert(self, s, depth):
        msg = f", {self.expr(s.msg)}" if s.msg is not None else ""
        self.emit(depth, f"assert({self.expr(s.test)}{msg});")

    def s_Return(self, s, depth):
        if s.value is None:
            self.emit(depth, "return;")
        elif self.is_kernel:
            self.fail(s, "a kernel returning a value")
        else:
            self.emit(depth, f"return {self.expr(s.value)};")

    def s_Break(self, s, depth):
        self.emit(depth, "break;")

    def s_Continue(self, s, depth):
        self.emit(depth, "continue;")

    def s_If(self, s, depth):
        c = self.const_of(s.test)
        if c is not None:  # a constexpr if: the branch taken, in the enclosing scope
            self.block(s.body if c.value else s.orelse, depth, new_scope=False)
            return
        if self.if_as_selects(s, depth):
            return
        self.emit(depth, f"if {self.expr(s.test)} {{")
        self.block(s.body, depth + 1)
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If) and self.const_of(orelse[0].test) is None:
            self.emit(depth, f"}} else if {self.expr(orelse[0].test)} {{")
            self.block(orelse[0].body, depth + 1)
            orelse = orelse[0].orelse
        if orelse:
            self.emit(depth, "} else {")
            self.block(orelse, depth + 1)
        self.emit(depth, "}")

    def if_as_selects(self, s, depth):
        """if c: a = x  else: a = y, for names not assigned before: a = c ? x : y
        (a name first assigned in both branches of a runtime if lives after it)."""
        def plain(stmts):
            out = {}
            for t in stmts:
                if not (isinstance(t, ast.Assign) and len(t.targets) == 1 and isinstance(t.targets[0], ast.Name)):
                    return None
                out[t.targets[0].id] = t.value
            return out
        then, other = plain(s.body), plain(s.orelse)
        if then is None or other is None or not then:
            return False
        new = [n for n in then if not self.declared(n)]
        if not new:
            return False
        if set(then) != set(other) or any(self.declared(n) for n in then):
            self.fail(s, f"'{new[0]}' is first assigned inside a runtime if (assign it before the if, or in "
                         "both branches with plain assignments)")
        names = list(then)
        for n in names:
            for v in list(then.values()) + list(other.values()):
                if any(isinstance(x, ast.Name) and x.id == n for x in ast.walk(v)):
                    self.fail(s, f"'{n}' is assigned in both branches of an if and read in one of them")
        self.tmp += 1
        cond = f"__c{self.tmp}"
        self.emit(depth, f"let {cond} = {self.expr(s.test)};")
        for n in names:
            self.bind(s, ast.Name(id=n), f"({cond} ? {self.expr(then[n])} : {self.expr(other[n])})", depth)
        return True

    def s_For(self, s, depth):
        if not isinstance(s.target, ast.Name):
            self.fail(s, "a for loop over other than one name")
        it = s.iter
        ok = isinstance(it, ast.Call) and (
            (isinstance(it.func, ast.Name) and it.func.id == "range") or
            (isinstance(it.func, ast.Attribute) and self.namespace_of(it.func.value) == "tl" and
             it.func.attr in ("range", "static_range")))
        if not ok or s.orelse:
            self.fail(s, "a for loop over other than range, tl.range or tl.static_range")
        kind = "static_range" if isinstance(it.func, ast.Attribute) and it.func.attr == "static_range" else "range"
        args = [self.expr(a) for a in it.args]
        for kw in it.keywords:
            if kw.arg in ("num_stages", "unroll"):
                args.append(f"{kw.arg} = {self.expr(kw.value)}")
            elif kw.arg in ("loop_unroll_factor",):
                args.append(f"unroll = {self.expr(kw.value)}")
            elif kw.arg in ("flatten", "warp_specialize", "disallow_acc_multi_buffer"):
                continue
            else:
                self.fail(s, f"the range argument '{kw.arg}'")
        self.emit(depth, f"for {ident(s.target.id)} in {kind}({', '.join(args)}) {{")
        self.scopes.append({s.target.id})
        self.block(s.body, depth + 1, new_scope=False, own_block=True)
        self.scopes.pop()
        self.emit(depth, "}")

    def s_While(self, s, depth):
        if s.orelse:
            self.fail(s, "a while loop with an else")
        self.emit(depth, f"while {self.expr(s.test)} {{")
        self.block(s.body, depth + 1)
        self.emit(depth, "}")

    # ---- the function ----
    def translate(self, fdef, header):
        body = fdef.body
        self.lines.append(header + " {")
        self.line_map.append(self.jit.first_line + fdef.lineno - 1)
        # a parameter assigned in a loop or an if (before any assignment in
        # the body's own block) is carried: a var of the same name from the start
        self.pending = [body]
        for p in self.param_types:
            if self.carried(p):
                self.emit(1, f"var {ident(p)} = {ident(p)};")
                self.scopes[-1].add(p)
        self.pending = []
        self.block(body, 1, new_scope=False, own_block=True)
        self.lines.append("}")
        self.line_map.append(self.line_map[-1])
        return "\n".join(self.lines)


class Unit:
    """One kernel's translation: its fns (the @jit helpers it reaches), then
    the kernel."""

    def __init__(self):
        self.fns = []
        self.fn_lines = []  # each fn's Python places: (file, line) a line
        self.names = {}

    def helper(self, jit, where):
        """The blk name of @jit helper `jit`, translated on first use."""
        key = id(jit)
        if key in self.names:
            return self.names[key]
        name = ident(jit.name)
        while name in self.names.values():
            name += "_"
        self.names[key] = name
        fdef = jit.fdef
        params = [a.arg for a in fdef.args.args]
        consts = {}  # a helper's constexprs arrive as values; blk folds them
        t = FnTranslator(self, jit, consts, {p: "?" for p in params}, is_kernel=False)
        src = t.translate(fdef, f"fn {name}({', '.join(map(ident, params))})")
        self.fns.append(src)
        self.fn_lines.append([(jit.filename, n) for n in t.line_map])
        return name
