"""blk._types: blk's scalar type names for torch dtypes, numpy dtypes and
__cuda_array_interface__ typestrs, and what a pointer parameter accepts."""

# torch dtype names (str(dtype) without "torch.") -> blk's scalar type names
TORCH = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
}

# numpy dtype names -> blk; bfloat16 and the float8s are ml_dtypes' (the
# numpy extension types JAX and others use), known by name: blk never
# imports ml_dtypes
NUMPY = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
}

# __cuda_array_interface__ / __array_interface__ typestr (without the byte
# order character) -> blk
TYPESTR = {
    "f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64",
    "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64", "b1": "i1",
}

BLK_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "f8e4m3": 1, "f8e5m2": 1, "i8": 1, "i16": 2, "i32": 4,
             "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8, "i1": 1}

# An integer parameter's range, by its type.
INT_RANGE = {
    "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
    "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1), "u64": (-2**63, 2**64 - 1),
    "i1": (0, 1),
}


def torch_name(dtype):
    """blk's name of a torch dtype, or None."""
    s = str(dtype)
    return TORCH.get(s[6:] if s.startswith("torch.") else s)


def numpy_name(dtype):
    return NUMPY.get(getattr(dtype, "name", str(dtype)))


def typestr_name(ts):
    return TYPESTR.get(ts[1:]) if ts else None


def type_name(value):
    """blk's type name of a dtype given for a `T: const type` parameter: a
    torch dtype, a numpy dtype or type, or a blk name ("f16")."""
    if isinstance(value, str):
        if value in BLK_BYTES:
            return value
        return TORCH.get(value) or None
    n = torch_name(value)
    if n:
        return n
    try:
        import numpy
        return numpy_name(numpy.dtype(value))
    except Exception:
        return None


def accepts(pointee, elem):
    """Does a pointer parameter to `pointee` ("f32", "*f32") take memory of
    elements `elem` (a blk type name)? A pointer to pointers takes 64-bit
    integers (addresses)."""
    if pointee.startswith("*"):
        return elem in ("i64", "u64")
    return pointee == elem
