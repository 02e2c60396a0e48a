"""blk._consts: const values into blk_const (a launch's consts, a module's
defines), and the checks of blk.load's arguments. Imported by _kernel and
_plan both (neither imports the other for these)."""

import os
import re

from . import _ffi, _types
from ._runtime import Error


def fill_const(c, name, value, param):
    """Fills blk_const c for const `name` = value; returns the bytes that must
    stay alive with it. A type value (for a `T: const type` parameter) goes
    into the field `type` that blk.h's blk_const gains for generic kernels."""
    nb = name.encode()
    c.name = nb
    keep = [nb]
    if param is not None and param.is_type:
        tname = _types.type_name(value)
        if tname is None:
            raise Error(f"const '{name}' ({param.type}): expected a dtype or a blk type name, given {value!r}",
                        param=name)
        if not hasattr(_ffi.BlkConst, "type"):
            raise Error(f"const '{name}' ({param.type}): this libblk's blk_const has no type field", param=name)
        tb = tname.encode()
        c.type = tb
        keep.append(tb)
        return keep
    if isinstance(value, bool):
        value = int(value)
    is_float = isinstance(value, float) or (param is not None and param.kind == _ffi.PARAM_FLOAT)
    try:
        if is_float:
            c.is_float, c.f = 1, float(value)
        else:
            if isinstance(value, float) or not hasattr(value, "__index__"):
                raise TypeError
            c.is_float, c.i = 0, int(value.__index__())
    except (TypeError, ValueError, OverflowError):
        what = f"({param.type})" if param is not None else ""
        raise Error(f"const '{name}' {what}: expected a number, given {value!r}", param=name) from None
    return keep


# ---- blk.load's arguments -------------------------------------------------------

SOURCE_MAX_BYTES = 256 << 20  # as libblk reads a file (lang/diag.c)


def _what(v):
    return f"{type(v).__name__} {v!r}"[:80]


def path_arg(arg, v):
    """A file or folder name given to blk.load (str, bytes or os.PathLike)
    as a str; blk.Error naming `arg` for anything else, or a NUL byte
    (which C would take as the name's end)."""
    try:
        p = os.fsdecode(os.fspath(v))
    except TypeError:
        raise Error(f"blk.load: {arg}: expected a str, bytes or os.PathLike, given {_what(v)}") from None
    if "\0" in p:
        raise Error(f"blk.load: {arg}: {p!r} contains a NUL byte")
    if not p:
        raise Error(f"blk.load: {arg}: an empty path")
    return p


def text_arg(arg, v):
    """A name (str) with no NUL byte, in UTF-8, for a C string."""
    if not isinstance(v, str):
        raise Error(f"blk.load: {arg}: expected a str, given {_what(v)}")
    if "\0" in v:
        raise Error(f"blk.load: {arg}: {v!r} contains a NUL byte")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Error(f"blk.load: {arg}: {v!r} is not encodable as UTF-8 ({e.reason})"[:200]) from None
    return v


def source_arg(v):
    """source= as the bytes libblk compiles: str (UTF-8), bytes, bytearray
    or memoryview."""
    if isinstance(v, str):
        try:
            b = v.encode("utf-8")
        except UnicodeEncodeError as e:
            raise Error(f"blk.load: source: not encodable as UTF-8 ({e.reason} at character {e.start})") from None
    elif isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
    else:
        raise Error(f"blk.load: source: expected a str or bytes, given {_what(v)}")
    if len(b) > SOURCE_MAX_BYTES:
        raise Error(f"blk.load: source: {len(b)} bytes, more than {SOURCE_MAX_BYTES >> 20} MiB")
    return b


def dirs_arg(v):
    """include_dirs: folders, a list (or any iterable) of them; one folder
    given alone (a str, bytes or os.PathLike) is that folder, not its
    characters."""
    if v is None:
        return []
    if isinstance(v, (str, bytes, os.PathLike)):
        return [path_arg("include_dirs", v)]
    try:
        items = list(v)
    except TypeError:
        raise Error(f"blk.load: include_dirs: expected a list of folders, given {_what(v)}") from None
    return [path_arg(f"include_dirs[{i}]", d) for i, d in enumerate(items)]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def defines_arg(v):
    """defines: a mapping (or pairs) of const names (identifiers) to values
    (checked when they are filled in, fill_const)."""
    if v is None:
        return {}
    try:
        d = dict(v)
    except (TypeError, ValueError):
        raise Error(f"blk.load: defines: expected a dict of const names to values, given {_what(v)}") from None
    for k in d:
        if not isinstance(k, str) or not _IDENT.match(k):
            raise Error(f"blk.load: defines: the key {k!r} is not a const name (an identifier)")
    return d


def read_source(path):
    """The bytes of the file libblk loaded (for Module.kernel_names). Like
    libblk: a regular file only (a FIFO or a device would block or never
    end), at most SOURCE_MAX_BYTES. blk.Error on failure."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise Error(f"{path}: {e.strerror}", _ffi.ERROR_NOT_FOUND) from None
    try:
        import stat
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Error(f"{path}: not a regular file")
        chunks, n = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            n += len(b)
            if n > SOURCE_MAX_BYTES:
                raise Error(f"{path}: larger than {SOURCE_MAX_BYTES >> 20} MiB")
            chunks.append(b)
        return b"".join(chunks)
    except OSError as e:
        raise Error(f"{path}: {e.strerror}") from None
    finally:
        os.close(fd)
