"""tests/python/harness.py: what the package's test scripts (here and in
tests/gpu) share: @case runs a test function at once and counts it (what
the function returns, if anything, is printed after its name), raises()
expects a blk.Error naming a parameter, finish() prints "N passed, N
failed" and exits."""

import sys
import traceback

counts = {"passed": 0, "failed": 0}


def case(name):
    def wrap(fn):
        try:
            detail = fn()
            print(f"ok   {name}" + (f": {detail}" if detail else ""))
            counts["passed"] += 1
        except Exception:
            print(f"FAIL {name}")
            traceback.print_exc(file=sys.stdout)
            counts["failed"] += 1
        return fn
    return wrap


def raises(fn, param, *words):
    """fn() raises a blk.Error whose .param is param, whose message names it
    ('param') and holds each of words; returns the error."""
    import blk
    try:
        fn()
    except blk.Error as e:
        msg = str(e)
        assert e.param == param, f"param {e.param!r}, expected {param!r}: {msg}"
        assert param is None or f"'{param}'" in msg, f"message does not name '{param}': {msg}"
        for w in words:
            assert w in msg, f"{w!r} not in: {msg}"
        return e
    raise AssertionError("no blk.Error raised")


def finish():
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)


def close(got, want, rtol, atol, what):
    """torch's assert_close of got and want in float64, the message led by what."""
    import torch
    torch.testing.assert_close(got.to(torch.float64), want.to(torch.float64), rtol=rtol, atol=atol,
                               msg=lambda m: f"{what}: {m}")


def torch_compile_works():
    """None where torch.compile(fullgraph=True) runs on this machine, else why
    not (no C++ compiler for Inductor's CPU code, and the like)."""
    import torch
    try:
        torch.compile(lambda t: torch.sin(t) * 2, fullgraph=True)(torch.ones(3))
        return None
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
