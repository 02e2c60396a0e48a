"""blk._ffi: libblk.so through ctypes: the structs of runtime/blk.h, their layout
check, the library found and its functions typed.

The structs that cross the boundary (blk_arg, blk_const, blk_launch_options,
blk_param_info, blk_module_options, blk_compile_info, blk_tune_result) are
mirrored here, and at import their sizes and field offsets are compared with
the numbers bench/layout.c prints for blk.h on x86-64 Linux
(EXPECTED_LAYOUT): a change of layout in blk.h fails here, loudly, instead of
passing garbage to blk_launch. bench/selftest.py recompiles layout.c and
compares.
"""

import ctypes
import os
from ctypes import (POINTER, Structure, Union, c_char, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint,
                    c_uint64, c_void_p)

HERE = os.path.dirname(os.path.abspath(__file__))

# enum blk_status
SUCCESS = 0
STATUS_NAMES = ["BLK_SUCCESS", "BLK_ERROR_INVALID_ARGUMENT", "BLK_ERROR_SOURCE", "BLK_ERROR_OUT_OF_MEMORY",
                "BLK_ERROR_NOT_FOUND", "BLK_ERROR_NO_DEVICE", "BLK_ERROR_LAUNCH"]
ERROR_INVALID_ARGUMENT, ERROR_SOURCE, ERROR_OUT_OF_MEMORY, ERROR_NOT_FOUND, ERROR_NO_DEVICE, ERROR_LAUNCH = range(1, 7)
# enum blk_backend
BACKEND_AUTO, BACKEND_GPU, BACKEND_INTERPRETER = 0, 1, 2
# enum blk_param_kind
PARAM_POINTER, PARAM_INT, PARAM_FLOAT = 0, 1, 2
# enum blk_arg_kind
ARG_PTR, ARG_INT, ARG_FLOAT = 0, 1, 2


class _ArgValue(Union):
    _fields_ = [("ptr", c_uint64), ("i", c_int64), ("f", c_double)]


class BlkArg(Structure):
    """blk_arg: an enum (int) then an 8-byte union, 16 bytes in all."""
    _fields_ = [("kind", c_int), ("v", _ArgValue)]


class BlkConst(Structure):
    # type: a `T: const type` parameter's type name ("f16"), NULL for numbers
    _fields_ = [("name", c_char_p), ("is_float", c_int), ("i", c_int64), ("f", c_double), ("type", c_char_p)]


class BlkLaunchOptions(Structure):
    _fields_ = [("grid", c_uint * 3), ("consts", POINTER(BlkConst)), ("n_consts", c_int), ("num_warps", c_int),
                ("num_stages", c_int), ("stream", c_void_p), ("threads", c_int)]


class BlkParamInfo(Structure):
    _fields_ = [("name", c_char_p), ("type", c_char_p), ("kind", c_int), ("is_const", c_int),
                ("elem_bytes", c_int)]


class BlkModuleOptions(Structure):
    _fields_ = [("include_dirs", POINTER(c_char_p)), ("n_include_dirs", c_int), ("defines", POINTER(BlkConst)),
                ("n_defines", c_int)]


class BlkCompileInfo(Structure):
    _fields_ = [("ptx", c_char_p), ("ptx_len", c_size_t), ("shared_bytes", c_int), ("num_warps", c_int),
                ("num_stages", c_int), ("ms_parse", c_double), ("ms_irgen", c_double), ("ms_passes", c_double),
                ("ms_llvm", c_double), ("ms_ptx", c_double), ("ms_cubin", c_double), ("from_disk_cache", c_int),
                ("spill_bytes", c_int), ("warnings", c_char_p), ("registers", c_int)]


TUNE_MAX_CONFIGS = 64
TUNE_PRUNED = -2.0  # BLK_TUNE_PRUNED: a blk_tune_result time of a config pruned before timing


class BlkTuneResult(Structure):
    _fields_ = [("n_configs", c_int), ("best", c_int), ("ms", c_double * TUNE_MAX_CONFIGS),
                ("note", (c_char * 96) * TUNE_MAX_CONFIGS)]


# The phases of blk_compile_info, in order, with short names.
COMPILE_PHASES = [("ms_parse", "parse"), ("ms_irgen", "irgen"), ("ms_passes", "passes"), ("ms_llvm", "LLVM"),
                  ("ms_ptx", "PTX"), ("ms_cubin", "cubin")]


# What bench/layout.c prints for runtime/blk.h (x86-64, LP64). Keep in step
# with blk.h; bench/selftest.py recompiles layout.c and compares.
EXPECTED_LAYOUT = {
    "blk_arg sizeof": 16, "blk_arg alignof": 8, "blk_arg.kind": 0, "blk_arg.v": 8,
    "blk_const sizeof": 40, "blk_const alignof": 8, "blk_const.name": 0, "blk_const.is_float": 8,
    "blk_const.i": 16, "blk_const.f": 24, "blk_const.type": 32,
    "blk_launch_options sizeof": 56, "blk_launch_options alignof": 8, "blk_launch_options.grid": 0,
    "blk_launch_options.consts": 16, "blk_launch_options.n_consts": 24, "blk_launch_options.num_warps": 28,
    "blk_launch_options.num_stages": 32, "blk_launch_options.stream": 40, "blk_launch_options.threads": 48,
    "blk_param_info sizeof": 32, "blk_param_info alignof": 8, "blk_param_info.name": 0,
    "blk_param_info.type": 8, "blk_param_info.kind": 16, "blk_param_info.is_const": 20,
    "blk_param_info.elem_bytes": 24,
    "blk_module_options sizeof": 32, "blk_module_options alignof": 8, "blk_module_options.include_dirs": 0,
    "blk_module_options.n_include_dirs": 8, "blk_module_options.defines": 16, "blk_module_options.n_defines": 24,
    "blk_compile_info sizeof": 104, "blk_compile_info alignof": 8, "blk_compile_info.ptx": 0,
    "blk_compile_info.ptx_len": 8, "blk_compile_info.shared_bytes": 16, "blk_compile_info.num_warps": 20,
    "blk_compile_info.num_stages": 24, "blk_compile_info.ms_parse": 32, "blk_compile_info.ms_irgen": 40,
    "blk_compile_info.ms_passes": 48, "blk_compile_info.ms_llvm": 56, "blk_compile_info.ms_ptx": 64,
    "blk_compile_info.ms_cubin": 72, "blk_compile_info.from_disk_cache": 80,
    "blk_compile_info.spill_bytes": 84, "blk_compile_info.warnings": 88,
    "blk_compile_info.registers": 96,
    "blk_tune_result sizeof": 6664, "blk_tune_result alignof": 8, "blk_tune_result.n_configs": 0,
    "blk_tune_result.best": 4, "blk_tune_result.ms": 8, "blk_tune_result.note": 520,
}

STRUCTS = {"blk_arg": BlkArg, "blk_const": BlkConst, "blk_launch_options": BlkLaunchOptions,
           "blk_param_info": BlkParamInfo, "blk_module_options": BlkModuleOptions,
           "blk_compile_info": BlkCompileInfo, "blk_tune_result": BlkTuneResult}

# Byte offsets the launch fast path writes through memoryviews (checked below).
ARG_BYTES = 16          # one blk_arg; its value at byte 8
OPT_STREAM_WORD = 5     # blk_launch_options.stream as the 5th 8-byte word (offset 40)


def ctypes_layout():
    """The ctypes side of EXPECTED_LAYOUT: the same keys, measured."""
    out = {}
    for cname, cls in STRUCTS.items():
        out[cname + " sizeof"] = ctypes.sizeof(cls)
        out[cname + " alignof"] = ctypes.alignment(cls)
        for fname, _ in cls._fields_:
            out[cname + "." + fname] = getattr(cls, fname).offset
    return out


def check_layout(expected=EXPECTED_LAYOUT):
    """Raises AssertionError naming every number that differs."""
    got = ctypes_layout()
    bad = [f"{key}: blk.h {expected.get(key)}, ctypes {got.get(key)}"
           for key in sorted(set(expected) | set(got)) if expected.get(key) != got.get(key)]
    assert not bad, "ctypes mirrors of blk.h disagree with its layout:\n  " + "\n  ".join(bad)
    assert ctypes.sizeof(BlkArg) == ARG_BYTES and BlkArg.v.offset == 8
    assert BlkLaunchOptions.stream.offset == OPT_STREAM_WORD * 8 and BlkLaunchOptions.grid.offset == 0


check_layout()


def find_library():
    """Where libblk.so is: $BLK_LIB, else inside the installed package
    (blk/lib/libblk.so, its standard library at blk/stdlib), else the
    checkout's build/libblk.so when the package runs from python/ of a
    checkout (its standard library at stdlib/)."""
    env = os.environ.get("BLK_LIB")
    if env:
        return env
    for cand in (os.path.join(HERE, "lib", "libblk.so"),
                 os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "libblk.so")):
        if os.path.exists(cand):
            return cand
    raise OSError("blk: no libblk.so: not in the package (blk/lib), not in the checkout's build/ "
                  "(run `make` there), and $BLK_LIB is not set")


_VP = c_void_p
SIGNATURES = {
    "blk_version": (c_char_p, []),
    "blk_last_error": (c_char_p, []),
    "blk_option": (c_char_p, [c_int, POINTER(c_int), POINTER(c_int), POINTER(c_int)]),
    "blk_check_source": (c_int, [c_char_p, c_char_p, c_size_t]),
    "blk_context_create": (c_int, [c_int, c_int, POINTER(_VP)]),
    "blk_context_create_current": (c_int, [POINTER(_VP)]),
    "blk_context_destroy": (None, [_VP]),
    "blk_context_backend": (c_int, [_VP]),
    "blk_context_printed": (c_char_p, [_VP]),
    "blk_malloc": (c_int, [_VP, c_size_t, POINTER(c_uint64)]),
    "blk_free": (c_int, [_VP, c_uint64]),
    "blk_copy_to_device": (c_int, [_VP, c_uint64, _VP, c_size_t]),
    "blk_copy_from_device": (c_int, [_VP, _VP, c_uint64, c_size_t]),
    "blk_module_load_file": (c_int, [_VP, c_char_p, POINTER(BlkModuleOptions), POINTER(_VP)]),
    "blk_module_load_source": (c_int, [_VP, c_char_p, c_char_p, c_size_t, POINTER(BlkModuleOptions),
                                       POINTER(_VP)]),
    "blk_module_destroy": (None, [_VP]),
    "blk_kernel_get": (c_int, [_VP, c_char_p, POINTER(_VP)]),
    "blk_kernel_num_params": (c_int, [_VP]),
    "blk_kernel_param": (c_int, [_VP, c_int, POINTER(BlkParamInfo)]),
    "blk_launch": (c_int, [_VP, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions)]),
    "blk_synchronize": (c_int, [_VP]),
    "blk_kernel_compile": (c_int, [_VP, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions),
                                   POINTER(BlkCompileInfo)]),
    "blk_time_launch": (c_int, [_VP, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions), c_int,
                                POINTER(c_double)]),
    "blk_autotune": (c_int, [_VP, POINTER(BlkArg), c_int, POINTER(BlkLaunchOptions), POINTER(BlkTuneResult)]),
}


class Option:
    """A kernel option as libblk's table has it (blk_option): name, lo, hi
    (the values it takes), pow2 (powers of two alone)."""

    def __init__(self, name, lo, hi, pow2):
        self.name, self.lo, self.hi, self.pow2 = name, lo, hi, pow2

    def error(self, v):
        """None when v is a value this option takes, else what it takes."""
        if isinstance(v, int) and self.lo <= v <= self.hi and not (self.pow2 and v & (v - 1)):
            return None
        if (self.lo, self.hi) == (0, 1):
            return "0 or 1 (False or True)"
        return f"{'a power of two' if self.pow2 else 'an integer'} in {self.lo}..{self.hi}"


def options(lib):
    """The kernel options of libblk `lib` (a ctypes.CDLL), by name, in the
    table's order: num_warps, num_stages, tma, fp_fusion, ..."""
    fn = lib.blk_option
    fn.restype, fn.argtypes = SIGNATURES["blk_option"]
    out = {}
    lo, hi, pow2 = c_int(), c_int(), c_int()
    i = 0
    while (name := fn(i, ctypes.byref(lo), ctypes.byref(hi), ctypes.byref(pow2))) is not None:
        out[name.decode()] = Option(name.decode(), lo.value, hi.value, bool(pow2.value))
        i += 1
    return out


def open_library(path=None):
    """(path, ctypes.CDLL of libblk with every function of SIGNATURES typed,
    an untyped blk_launch for the launch fast path). The fast path's
    arguments are ctypes objects already: skipping argtypes conversion saves
    a few hundred nanoseconds a call."""
    path = path or find_library()
    lib = ctypes.CDLL(path)
    for name, (res, args) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    # PyDLL: the GIL stays held through the call, so that a plan's argument
    # buffers, shared by all its launches, cannot change under blk_launch.
    fast = ctypes.PyDLL(path)["blk_launch"]
    fast.restype = c_int
    return path, lib, fast


FAST_EXT = "_blkfast.abi3.so"


def load_fast_launch(lib_path):
    """The module _blkfast (python/blk/_fastlaunch.c: launchers in C), from
    beside libblk.so (build/, or blk/lib/ in the package), or None: where
    it was not built (no Python headers), cannot load, or BLK_FAST_LAUNCH=0
    asks for the launchers in Python."""
    if os.environ.get("BLK_FAST_LAUNCH", "1") == "0":
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(lib_path)), FAST_EXT)
    if not os.path.exists(path):
        return None
    try:
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.ExtensionFileLoader("_blkfast", path)
        spec = importlib.util.spec_from_file_location("_blkfast", path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod
    except (ImportError, OSError):
        return None
