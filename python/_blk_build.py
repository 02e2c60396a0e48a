"""_blk_build: the PEP 517 build backend of the blk package (pyproject.toml).

build_wheel makes a wheel of python/blk (its subpackages, blk.nn, included)
with libblk.so at blk/lib/libblk.so (and the launchers in C,
_blkfast.abi3.so, beside it where they were built), the standard library
(stdlib/ and its folders, std/nn) at blk/stdlib/ (where libblk looks for it,
beside itself at ../stdlib) and blk.h at blk/include/. libblk.so comes from
$BLK_LIB when set (`make wheel` and the test suite set it: nothing is
rebuilt), else from `make build/libblk.so` in the checkout this folder
belongs to (a no-op when the build is up to date). The wheel is tagged
py3-none-<platform>: pure Python over a shared library that needs only
glibc and, to reach a GPU, the CUDA driver.
"""

import base64
import hashlib
import os
import platform
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NAME, VERSION = "blk", "0.1.0"


def _log(msg):
    print(f"blk build: {msg}", file=sys.stderr, flush=True)


def _libblk():
    lib = os.environ.get("BLK_LIB")
    if lib:
        if not os.path.isfile(lib):
            raise RuntimeError(f"BLK_LIB={lib}: no such file")
        return lib
    if not os.path.isfile(os.path.join(REPO, "Makefile")):
        raise RuntimeError("no checkout around python/ to build libblk.so in: set BLK_LIB to a built libblk.so")
    jobs = str(os.cpu_count() or 2)
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # a make above us (make wheel) is not ours to join
        env.pop(k, None)
    _log(f"make -j{jobs} build/libblk.so in {REPO}")
    subprocess.run(["make", "-C", REPO, f"-j{jobs}", "build/libblk.so"], check=True, env=env,
                   stdout=sys.stderr)
    return os.path.join(REPO, "build", "libblk.so")


def _fast_launch(lib):
    """The launchers in C (python/blk/_fastlaunch.c) beside libblk.so: made
    there when this is the checkout's build (where python3 has its headers);
    None where there is none (the package runs without it)."""
    path = os.path.join(os.path.dirname(lib), "_blkfast.abi3.so")
    build = os.path.join(REPO, "build")
    if not os.path.isfile(path) and os.path.abspath(os.path.dirname(lib)) == build and \
            os.path.isfile(os.path.join(REPO, "Makefile")):
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        subprocess.run(["make", "-C", REPO, "build/_blkfast.abi3.so"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if os.path.isfile(path):
        return path
    _log("no _blkfast.abi3.so beside libblk.so: the package launches through its Python launchers")
    return None


def _tag():
    machine = platform.machine().lower() or "x86_64"
    plat = f"{sys.platform}_{machine}" if sys.platform.startswith("linux") else f"{sys.platform}_{machine}"
    return f"py3-none-{plat.replace('-', '_').replace('.', '_')}"


# pip install "./python[numpy]": the optional packages, by extra (as
# pyproject.toml's [project.optional-dependencies] lists them)
EXTRAS = {"numpy": ["numpy"], "ml-dtypes": ["numpy", "ml_dtypes"]}


def _metadata():
    extras = "".join(f"Provides-Extra: {x}\n" + "".join(f'Requires-Dist: {r}; extra == "{x}"\n' for r in reqs)
                     for x, reqs in EXTRAS.items())
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Tile kernels for GPUs, from Python and PyTorch\nRequires-Python: >=3.8\n" + extras)


def _tree(top, arc_top, suffix):
    """(path in the wheel, path on disk) of the files under top whose names
    end in suffix, subfolders included, in a stable order."""
    out = []
    for root, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(root, top)
        for name in sorted(names):
            if name.endswith(suffix):
                arc = name if rel == "." else f"{rel}/{name}"
                out.append((f"{arc_top}/{arc}", os.path.join(root, name)))
    return out


def _files():
    """(path in the wheel, path on disk) of everything but the dist-info."""
    out = []
    out += _tree(os.path.join(HERE, "blk"), "blk", ".py")   # blk/ and its subpackages (blk/nn)
    lib = _libblk()
    out.append(("blk/lib/libblk.so", lib))
    fast = _fast_launch(lib)
    if fast:
        out.append(("blk/lib/_blkfast.abi3.so", fast))
    stdlib = os.path.join(REPO, "stdlib")
    if os.path.isdir(stdlib):
        out += _tree(stdlib, "blk/stdlib", ".tile")   # std/*.tile and its folders (std/nn)
    header = os.path.join(REPO, "runtime", "blk.h")
    if os.path.isfile(header):
        out.append(("blk/include/blk.h", header))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _dist_info_files(tag):
    di = f"{NAME}-{VERSION}.dist-info"
    wheel = f"Wheel-Version: 1.0\nGenerator: blk _blk_build\nRoot-Is-Purelib: false\nTag: {tag}\n"
    return di, [(f"{di}/METADATA", _metadata().encode()), (f"{di}/WHEEL", wheel.encode())]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    fname = f"{NAME}-{VERSION}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, fname)
    di, meta = _dist_info_files(tag)
    records = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arc, disk in _files():
            with open(disk, "rb") as f:
                data = f.read()
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arc.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(_record_line(arc, data))
        for arc, data in meta:
            z.writestr(zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0)), data)
            records.append(_record_line(arc, data))
        records.append(f"{di}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{di}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(records) + "\n")
    _log(f"wrote {path}")
    return fname


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di, meta = _dist_info_files(_tag())
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for arc, data in meta:
        with open(os.path.join(metadata_directory, arc), "wb") as f:
            f.write(data)
    return di


if __name__ == "__main__":  # python3 python/_blk_build.py OUTDIR: the wheel, without pip
    print(os.path.join(sys.argv[1], build_wheel(sys.argv[1] if len(sys.argv) > 1 else "dist")))
