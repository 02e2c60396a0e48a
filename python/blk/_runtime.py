"""blk._runtime: the library, errors, backends and contexts.

One libblk for the process. Contexts are made when first needed: one
interpreter context, and one GPU context a device, on the CUDA context torch
uses there (borrowed through blk_context_create_current, so blk and torch
share memory, streams and CUDA graphs), or, without torch, on the device's
primary context (blk_context_create)."""

import ctypes
import os
import re
import threading
from ctypes import byref, c_uint64, c_void_p

from . import _ffi


class Error(RuntimeError):
    """A failed blk call. str(e) is the whole message: for source errors every
    diagnostic with its file:line:col and caret line. Attributes: status (the
    blk_status number, 0 for errors found in Python), status_name, param (the
    parameter a bad call names, or None), kernel (its name, or None)."""

    def __init__(self, message, status=_ffi.ERROR_INVALID_ARGUMENT, param=None, kernel=None):
        super().__init__(message)
        self.status = status
        self.status_name = (_ffi.STATUS_NAMES[status] if 0 <= status < len(_ffi.STATUS_NAMES)
                            else f"status {status}")
        self.param = param
        self.kernel = kernel


def for_python(msg, call=None):
    """libblk's message as a Python caller reads it: the advice blkc's
    command line would take (-D B=VALUE) given as the launch's keyword
    argument (B=...), a missing grid as kernel[grid](...); with call, its
    own "call: " (or "call: error: ") prefix left off, for the caller puts
    the call in front."""
    if call is not None:
        for prefix in (f"{call}: error: ", f"{call}: "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
                break
    msg = re.sub(r"-D (\w+)=VALUE\b", r"\1=... (a keyword argument of the launch)", msg)
    msg = re.sub(r"-D (\w+)=(\w+)\b", r"\1='\2'", msg)
    return re.sub(r"kernel '(\w+)' has no grid\(\.\.\.\) clause: give the grid explicitly",
                  r"kernel '\1' has no grid(...) clause: give the grid at the launch, \1[grid](...)", msg)


_lock = threading.RLock()
_lib = None


class Lib:
    def __init__(self, path=None):
        self.path, self.lib, self.launch_fast = _ffi.open_library(path)
        # the kernel options (num_warps, tma, ...), as libblk's table lists them
        self.options = _ffi.options(self.lib)
        # launchers in C where the extension was built (_plan.Plan._make_launcher)
        self.fast_ext = _ffi.load_fast_launch(self.path)
        self.launch_address = ctypes.cast(self.lib.blk_launch, ctypes.c_void_p).value

    def last_error(self):
        msg = self.lib.blk_last_error()
        return for_python(msg.decode(errors="replace")) if msg else ""

    def check(self, status, call, kernel=None, param=None):
        if status != _ffi.SUCCESS:
            raise Error(f"{call}: {for_python(self.last_error(), call)}", status, param=param, kernel=kernel)


def lib():
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = Lib()
    return _lib


def version():
    """libblk's version ("0.1.0")."""
    return lib().lib.blk_version().decode()


def library_path():
    return lib().path


# ---- backends ----------------------------------------------------------------

BACKENDS = ("auto", "gpu", "interpreter")
_backend = None  # None: $BLK_BACKEND, else "auto"


def _norm_backend(name):
    if name in (None, ""):
        return "auto"
    n = str(name).lower()
    if n == "interp":
        n = "interpreter"
    if n not in BACKENDS:
        raise Error(f"blk: backend '{name}': expected one of auto, gpu, interpreter")
    return n


def set_backend(name):
    """'auto' (the default: the GPU for CUDA tensors, the interpreter for host
    arrays), 'gpu' or 'interpreter'. $BLK_BACKEND gives the first value."""
    global _backend
    _backend = _norm_backend(name)


def get_backend():
    if _backend is not None:
        return _backend
    return _norm_backend(os.environ.get("BLK_BACKEND"))


class Context:
    """A blk_context and what lives in it."""

    def __init__(self, handle, backend, device):
        self.handle = handle
        self.backend = backend      # "gpu" or "interpreter"
        self.device = device        # CUDA ordinal, or -1

    def malloc(self, nbytes):
        L = lib()
        p = c_uint64()
        L.check(L.lib.blk_malloc(self.handle, max(1, nbytes), byref(p)), "blk_malloc")
        return p.value

    def free(self, ptr):
        L = lib()
        L.check(L.lib.blk_free(self.handle, ptr), "blk_free")

    def to_device(self, dst, src_addr, nbytes):
        L = lib()
        if nbytes:
            L.check(L.lib.blk_copy_to_device(self.handle, dst, src_addr, nbytes), "blk_copy_to_device")

    def from_device(self, dst_addr, src, nbytes):
        L = lib()
        if nbytes:
            L.check(L.lib.blk_copy_from_device(self.handle, dst_addr, src, nbytes), "blk_copy_from_device")

    def synchronize(self):
        L = lib()
        L.check(L.lib.blk_synchronize(self.handle), "blk_synchronize")

    def printed(self):
        s = lib().lib.blk_context_printed(self.handle)
        return s.decode(errors="replace") if s else ""


_interp = None
_gpus = {}


def interpreter_context():
    global _interp
    if _interp is None:
        with _lock:
            if _interp is None:
                L = lib()
                h = c_void_p()
                L.check(L.lib.blk_context_create(_ffi.BACKEND_INTERPRETER, 0, byref(h)), "blk_context_create")
                _interp = Context(h, "interpreter", -1)
    return _interp


def _torch():
    """torch when the program imported it (blk never imports torch itself for
    a launch: a program without torch pays nothing for it)."""
    import sys
    return sys.modules.get("torch")


def gpu_context(device=None):
    """The GPU context of CUDA device `device` (None: torch's current device,
    else 0). Raises blk.Error when no GPU can be used."""
    torch = _torch()
    if device is None:
        device = torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else 0
    ctx = _gpus.get(device)
    if ctx is not None:
        return ctx
    with _lock:
        ctx = _gpus.get(device)
        if ctx is not None:
            return ctx
        L = lib()
        h = c_void_p()
        st = -1
        if torch is not None and torch.cuda.is_available():
            # torch's context for the device, made current on this thread by
            # torch itself, then borrowed
            with torch.cuda.device(device):
                torch.cuda.current_stream(device).synchronize()
                st = L.lib.blk_context_create_current(byref(h))
        if st != _ffi.SUCCESS:
            L.check(L.lib.blk_context_create(_ffi.BACKEND_GPU, device, byref(h)), "blk_context_create")
        ctx = Context(h, "gpu", device)
        _gpus[device] = ctx
        return ctx


def gpu_available():
    """True when a GPU context can be made (a CUDA driver and a device)."""
    try:
        gpu_context()
        return True
    except Error:
        return False


def context_for(backend, device=None):
    if backend == "gpu":
        return gpu_context(device)
    return interpreter_context()


def synchronize(device=None):
    """Waits for blk's work on the GPU (on the interpreter every launch is
    complete on return)."""
    for d, ctx in list(_gpus.items()):
        if device is None or d == device:
            ctx.synchronize()


def _cstr(s):
    return s.encode() if isinstance(s, str) else s


def addressof(buf):
    return ctypes.addressof(buf)
