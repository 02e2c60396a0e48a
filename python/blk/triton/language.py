"""blk.triton.language: the names a Triton kernel's source uses through
`tl.` (`import blk.triton.language as tl`). Inside a @blk.triton.jit
function they are never called: the translator reads them from the
source and writes blk. Outside one they are markers: `tl.constexpr` for
annotations, the dtypes for arguments and comparisons."""


class constexpr:
    """An annotation (x: tl.constexpr) or a module-level constant
    (BLOCK = tl.constexpr(128)), as in Triton."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr({self.value!r})"


class dtype:
    """A Triton element type; .blk is blk's name for it."""

    def __init__(self, name, blk):
        self.name, self.blk = name, blk

    def __repr__(self):
        return f"triton.language.{self.name}"

    def __eq__(self, other):
        return isinstance(other, dtype) and other.blk == self.blk

    def __hash__(self):
        return hash(self.blk)


DTYPES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "float8e4nv": "f8e4m3", "float8e5": "f8e5m2",
}
for _name, _blk in DTYPES.items():
    globals()[_name] = dtype(_name, _blk)
# Triton's aliases
float8_e4m3fn = globals()["float8e4nv"]
float8_e5m2 = globals()["float8e5"]


class _Namespace:
    """tl.math, tl.extra.cuda.libdevice: read by the translator, by name."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Builtin(f"{self._name}.{attr}")


class _Builtin:
    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kw):
        raise RuntimeError(f"tl.{self.name} is only meaningful inside a @blk.triton.jit function")


math = _Namespace("math")
extra = _Namespace("extra")
libdevice = _Namespace("libdevice")


def __getattr__(name):
    # tl.load, tl.arange, ...: markers the translator maps to blk's builtins
    if name.startswith("__"):
        raise AttributeError(name)
    return _Builtin(name)
