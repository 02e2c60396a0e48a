#!/usr/bin/env python3
"""tests/diff/gen.py: random valid blk kernels for differential testing.

usage: gen.py --seed S --count N --out DIR [--first I]

Writes DIR/kNNNNN.tile for case indexes FIRST .. FIRST+N-1; case I of seed S
is always the same kernel (its generator is seeded with (S, I)), so one case
can be made again alone. Each file holds one kernel and starts with two
comment lines:

    // blkc run: ARGS          the arguments after `blkc run FILE` (buffers,
                               scalars, -k, -D, --seed) that replay it
    // diff: NAME=DTYPE:CLASS ... the output buffers to compare and how

CLASS is exact (bit for bit; any NaN equals any NaN, -0 equals +0),
approx (element-wise math that the GPU approximates: f32 `/`, exp, log, sin,
...), reduce (float sums, scans and dots, whose order of addition differs).
docs/testing.md gives the tolerance of each.

Only the standard library is used. The kernels avoid what blk leaves
undefined: integer division by zero (divisors are made odd and positive),
shifts by the width or more (counts are masked), float to integer
conversion out of range or of NaN (values are clamped first), unmasked
accesses out of bounds (indexes are masked to a power of two, scatters go
through a permutation).
"""
import argparse
import os
import random

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
ALL = INTS + FLOATS
WIDTH = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
         "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1}
EPS_RANK = {"bf16": 0, "f16": 1, "f32": 2, "f64": 3}


def pick(r, weighted):
    """One of the (item, weight) pairs' items, chosen by weight."""
    x = r.uniform(0, sum(w for _, w in weighted))
    for item, w in weighted:
        x -= w
        if x <= 0:
            return item
    return weighted[-1][0]


def is_float(t):
    return t in FLOATS


def is_signed(t):
    return t[0] == "i" and t != "i1"


def promote(a, b, op=""):
    """The type a binary operator computes in (docs/language.md, Type promotion)."""
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            if "f64" in (a, b):
                r = "f64"
            elif "f32" in (a, b):
                r = "f32"
            elif "f16" in (a, b):
                r = "f32" if "bf16" in (a, b) else "f16"
            else:
                r = "bf16"
        else:
            r = a if is_float(a) else b
        if op in ("/", "%") and r in ("f16", "bf16"):
            r = "f32"
        return r
    if a == "i1":
        return b
    if b == "i1":
        return a
    if is_signed(a) == is_signed(b):
        return a if WIDTH[a] >= WIDTH[b] else b
    u, s = (a, b) if not is_signed(a) else (b, a)
    return u if WIDTH[u] >= WIDTH[s] else s


def promote_lit(t, lit_float, op=""):
    """Type of `x op LITERAL` for x of type t."""
    if lit_float:
        r = t if is_float(t) else "f32"
    else:
        r = t  # an integer literal takes the integer's type, signed or not
    if op in ("/", "%") and r in ("f16", "bf16"):
        r = "f32"
    return r


def worse(c1, c2):
    order = {"exact": 0, "approx": 1, "reduce": 2}
    return c1 if order[c1] >= order[c2] else c2


class V:
    """A value of the kernel: its name, element type, and whether it went
    through an approximate operation (then it feeds only float arithmetic)."""

    def __init__(self, name, t, approx=False):
        self.name, self.t, self.approx = name, t, approx


class Kernel:
    def __init__(self, rng, name):
        self.r = rng
        self.name = name
        self.params = []  # "a0: *f32"
        self.consts = []  # ("BLOCK", "i32", 64)
        self.args = []  # "a0=256:random"
        self.outs = []  # (name, dtype)
        self.cls = "exact"
        self.body = []
        self.grid = ""
        self.nv = 0
        self.tolt = None  # the least precise float type an inexact value went through
        self.fns = []  # helper fns, written before the kernel
        self.fn_loop = False  # gen_loop: the loop in a fn returning from inside it

    def widen_tol(self, t):
        if is_float(t) and (self.tolt is None or EPS_RANK[t] < EPS_RANK[self.tolt]):
            self.tolt = t

    def fresh(self, prefix="v"):
        self.nv += 1
        return "%s%d" % (prefix, self.nv)

    def let(self, expr, t, approx=False, indent=1):
        n = self.fresh()
        self.body.append("    " * indent + "let %s = %s;" % (n, expr))
        if approx:
            self.widen_tol(t)
        return V(n, t, approx)

    def buf(self, name, t, count, init):
        self.params.append("%s: *%s" % (name, t))
        self.args.append("%s=%d%s" % (name, count, (":" + init) if init else ""))

    def out(self, name, t, count):
        self.buf(name, t, count, "")
        self.outs.append((name, t))
        self.widen_tol(t)

    def scalar(self, name, t, value):
        self.params.append("%s: %s" % (name, t))
        self.args.append("%s=%s" % (name, value))

    def const(self, name, value, pass_d=None):
        self.consts.append((name, "i32", value))
        if pass_d is None:
            pass_d = self.r.random() < 0.3
        if pass_d:
            self.args.append("-D %s=%d" % (name, value))

    def text(self, seed):
        ps = list(self.params) + ["%s: const %s = %d" % c for c in self.consts]
        head = "// blkc run: -k %s %s --seed=%d\n" % (self.name, " ".join(self.args), seed)
        tol = ":" + self.tolt if self.cls != "exact" and self.tolt else ""
        head += "// diff: %s\n" % " ".join("%s=%s:%s%s" % (n, t, self.cls, tol) for n, t in self.outs)
        head += "".join(f + "\n" for f in self.fns)
        return head + "kernel %s(%s) grid(%s) {\n%s\n}\n" % (
            self.name, ", ".join(ps), self.grid, "\n".join(self.body))


def init_for(r, t):
    if is_float(t):
        return r.choice(["random", "randn", "randn", "arange"])
    return r.choice(["random", "random", "arange", "ones"])


def int_lits(t):
    """Integer literals that fit t (a literal next to a value takes its type)."""
    if is_float(t):
        return [1, 2, 3, 7, -5, 100, 1000]
    hi = (1 << (WIDTH[t] - 1)) - 1 if is_signed(t) else (1 << WIDTH[t]) - 1
    return [v for v in [1, 2, 3, 7, -5, 100, 1000, 65535] if (-hi - 1 if is_signed(t) else 0) <= v <= hi]


def zero_lit(t):
    return "0.0" if is_float(t) else "0"


def other_lit(r, t):
    if is_float(t):
        return r.choice(["0.0", "1.5", "-2.0"])
    return r.choice(["0", "1", "7"])


# ---- element-wise chains ---------------------------------------------------

def clamp_to_int(v, t):
    """v (a float value) clamped into t's range, then converted."""
    lo, hi = (-100, 100) if is_signed(t) else (0, 200)
    lit = ".0"
    return "clamp(%s, %d%s, %d%s).to(%s)" % (v.name, lo, lit, hi, lit, t)


def convert(v, t):
    if v.t == t:
        return v.name
    if is_float(v.t) and not is_float(t):
        return clamp_to_int(v, t)
    return "%s.to(%s)" % (v.name, t)


def elementwise_step(k, r, pool, indent=1):
    """One random operation on values of the pool; returns the new value."""
    exact = [v for v in pool if not v.approx]
    ints = [v for v in exact if not is_float(v.t)]
    floats = [v for v in pool if is_float(v.t)]
    exact_floats = [v for v in exact if is_float(v.t)]
    kinds = [("arith", 6), ("lit", 3), ("cast", 4), ("where", 2), ("minmax", 2), ("unary", 2)]
    if ints:
        kinds += [("bit", 2), ("shift", 2), ("idiv", 2), ("umulhi", 1)]
    if floats:
        kinds += [("math", 2), ("fma", 1)]
    if exact_floats:
        kinds += [("fdiv", 1), ("exactmath", 1), ("libm", 1)]
    if ints and exact_floats:
        kinds += [("bitcast", 1)]
    kind = pick(r, kinds)
    L = lambda e, t, a=False: k.let(e, t, a, indent)
    if kind == "arith":
        a, b = r.choice(pool), r.choice(pool)
        t = promote(a.t, b.t)
        if not is_float(t) and (a.approx or b.approx):
            a, b = r.choice(exact), r.choice(exact)
            t = promote(a.t, b.t)
        op = r.choice("+-*")
        return L("%s %s %s" % (a.name, op, b.name), t, a.approx or b.approx)
    if kind == "lit":
        a = r.choice(pool)
        fl = is_float(a.t) and r.random() < 0.6
        if a.approx and not is_float(promote_lit(a.t, fl)):
            a = r.choice(exact)
            fl = False
        lit = r.choice(["0.5", "3.0", "-1.25", "1e3"]) if fl else str(r.choice(int_lits(promote_lit(a.t, fl))))
        op = r.choice("+-*")
        e = "%s %s %s" % (a.name, op, lit) if r.random() < 0.7 else "%s %s %s" % (lit, op, a.name)
        return L(e, promote_lit(a.t, fl), a.approx)
    if kind == "cast":
        a = r.choice(exact)
        t = r.choice(ALL)
        return L(convert(a, t), t)
    if kind == "where":
        a, b = r.choice(exact), r.choice(exact)
        c, d = r.choice(pool), r.choice(pool)
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        ct = promote(a.t, b.t)
        if (is_signed(a.t) != is_signed(b.t)) and not is_float(ct):
            b = V(convert(b, a.t), a.t)
        t = promote(c.t, d.t)
        if not is_float(t) and (c.approx or d.approx):
            c, d = r.choice(exact), r.choice(exact)
            t = promote(c.t, d.t)
        return L("where(%s %s %s, %s, %s)" % (a.name, op, b.name, c.name, d.name), t, c.approx or d.approx)
    if kind == "minmax":
        a, b = r.choice(exact), r.choice(exact)
        f = r.choice(["maximum", "minimum"])
        return L("%s(%s, %s)" % (f, a.name, b.name), promote(a.t, b.t))
    if kind == "unary":
        a = r.choice(pool)
        if not is_float(a.t) and a.approx:
            a = r.choice(exact)
        choices = ["abs"]
        if is_float(a.t) or is_signed(a.t):
            choices.append("neg")
        if not is_float(a.t):
            choices.append("not")
        f = r.choice(choices)
        e = {"abs": "abs(%s)", "neg": "-%s", "not": "~%s"}[f] % a.name
        return L(e, a.t, a.approx)
    if kind == "bit":
        a, b = r.choice(ints), r.choice(ints)
        op = r.choice("&|^")
        return L("%s %s %s" % (a.name, op, b.name), promote(a.t, b.t))
    if kind == "shift":
        a, b = r.choice(ints), r.choice(ints)
        amt = "(%s & %d).to(%s)" % (b.name, WIDTH[a.t] - 1, a.t)
        op = r.choice(["<<", ">>"])
        return L("%s %s %s" % (a.name, op, amt), a.t)
    if kind == "idiv":
        a, b = r.choice(ints), r.choice(ints)
        d = "((%s & 63) | 1).to(%s)" % (b.name, a.t)
        op = r.choice("/%")
        return L("%s %s %s" % (a.name, op, d), a.t)
    if kind == "umulhi":
        a, b = r.choice(ints), r.choice(ints)
        t = r.choice(["i32", "u32", "i64", "u64"])
        return L("umulhi(%s, %s)" % (convert(a, t), convert(b, t)), t)
    if kind == "bitcast":
        a = r.choice(ints)
        # an integer's bits as a float of its width, or as the other signedness
        cands = [t for t in ALL if WIDTH[t] == WIDTH[a.t] and t != a.t]
        t = r.choice(cands)
        if is_float(t):
            # arbitrary bits may be NaN, whose payload is not part of the
            # semantics: only the comparison's any-NaN rule sees it
            return L("bitcast(%s, %s)" % (a.name, t), t)
        return L("bitcast(%s, %s)" % (a.name, t), t)
    if kind == "math":
        a = r.choice(floats)
        f = r.choice(["exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "tanh", "erf", "sigmoid"])
        t = a.t
        if f in ("exp", "exp2"):
            e = "%s(clamp(%s, -20.0, 20.0))" % (f, a.name)
        elif f in ("log", "log2", "rsqrt"):
            e = "%s(abs(%s) + 0.25)" % (f, a.name)
        elif f in ("sin", "cos"):
            e = "%s(clamp(%s, -50.0, 50.0))" % (f, a.name)
        else:
            e = "%s(%s)" % (f, a.name)
        k.cls = worse(k.cls, "approx")
        return L(e, t, True)
    if kind == "exactmath":
        a = r.choice(exact_floats)
        f = r.choice(["sqrt_abs", "floor", "ceil"])
        if f == "sqrt_abs":
            return L("sqrt(abs(%s))" % a.name, a.t, a.approx)
        return L("%s(%s)" % (f, a.name), a.t, a.approx)
    if kind == "libm":
        # the functions compiler/irgen/libm.c writes as IR ops that both
        # backends compute to the bit (language.md, "Math functions in IR")
        a, b = r.choice(exact_floats), r.choice(exact_floats)
        t = a.t
        bs = b.name if b.t == t else convert(b, t)
        fns = ["sinh(clamp(%s, -80.0, 80.0))", "cosh(clamp(%s, -80.0, 80.0))", "tan(clamp(%s, -50.0, 50.0))",
               "atan(%s)", "asin(clamp(%s, -1.0, 1.0))", "acos(clamp(%s, -1.0, 1.0))", "asinh(%s)",
               "acosh(abs(%s) + 1.0)", "atanh(clamp(%s, -0.99, 0.99))", "log1p(abs(%s))",
               "expm1(clamp(%s, -20.0, 20.0))", "log10(abs(%s) + 0.25)", "exp10(clamp(%s, -8.0, 8.0))",
               "trunc(%s)", "round(%s)", "rint(%s)", "atan2(%s, $B)", "remainder(%s, $B)", "copysign(%s, $B)"]
        fns += ["cbrt(%s)", "hypot(%s, $B)", "pow(abs(%s) + 0.25, clamp($B, -4.0, 4.0))"]
        if t != "f64":
            fns += ["erfc(%s)", "erfinv(clamp(%s, -1.0, 1.0))", "lgamma(%s)", "tgamma(clamp(%s, -20.0, 30.0))", "i0(%s)", "i1(%s)", "j0(%s)", "j1(%s)",
                    "y0(abs(%s))", "y1(abs(%s) + 0.5)"]
        if not t.startswith("f8"):
            fns += ["nextafter(%s, $B)"]
        e = (r.choice(fns) % a.name).replace("$B", bs)
        return L(e, t, a.approx or b.approx)
    if kind == "fdiv":
        a, b = r.choice(floats), r.choice(exact)  # an inexact divisor near 0 would blow up
        if not a.approx and r.random() < 0.3:
            # float % is exact on both backends (fmod); an inexact dividend
            # could jump by a whole divisor
            if is_float(b.t) or r.random() < 0.5:
                return L("%s %% %s" % (a.name, b.name), promote(a.t, b.t, "%"))
        t = promote(a.t, b.t, "/")
        ap = a.approx or b.approx
        if t != "f64":
            k.cls = worse(k.cls, "approx")
            ap = True
        return L("%s / %s" % (a.name, b.name), t, ap)
    if kind == "fma":
        a = r.choice(floats)
        t = a.t
        b, c = r.choice(pool), r.choice(pool)
        bs = b.name if b.t == t else convert(b, t) if not b.approx or is_float(b.t) else a.name
        cs = c.name if c.t == t else convert(c, t) if not c.approx or is_float(c.t) else a.name
        ap = a.approx or b.approx or c.approx
        return L("fma(%s, %s, %s)" % (a.name, bs, cs), t, ap)
    raise AssertionError(kind)


def gen_elementwise(k, r, big=False):
    block = r.choice([16, 32, 64, 128, 256])
    n = r.randint(1, 4 * block)
    if big:
        # blocks past a thread's registers on one warp (256 or 512 elements a
        # thread: 64-bit values need 512 or 1024 registers): on the GPU ptxas
        # spills them to local memory (docs/runtime.md, "Warnings: register
        # spills"); larger ones take ptxas 20 s each
        block = r.choice([8192, 16384])
        n = r.randint(1, 2 * block)
        k.args.append("-D num_warps=1")
    k.const("BLOCK", block)
    k.grid = "cdiv(n, BLOCK)"
    k.body.append("    let offs = program_id(0) * BLOCK + arange(0, BLOCK);")
    k.body.append("    let mask = offs < n;")
    pool = []
    ninputs = r.randint(1, 3)
    focus = r.choice(ALL)  # most chains stay in one dtype, to cover each
    for i in range(ninputs):
        t = focus if r.random() < 0.6 else r.choice(ALL)
        name = "a%d" % i
        k.buf(name, t, n, init_for(r, t))
        if r.random() < 0.7:
            e = "load(%s + offs, mask = mask, other = %s)" % (name, other_lit(r, t))
        else:
            # pointer arithmetic: move, then come back
            d = r.randint(1, 9)
            e = "load((%s + %d) + (offs - %d), mask = mask, other = %s)" % (name, d, d, other_lit(r, t))
        pool.append(k.let(e, t))
    k.scalar("n", "i32", n)
    if r.random() < 0.5:
        st = r.choice(["i32", "i64", "f32", "f64", "u32"])
        val = r.choice([0, 1, 3, 17, 1000]) if not is_float(st) else r.choice(["0.5", "-2.25", "3.0"])
        k.scalar("s0", st, val)
        pool.append(V("s0", st))
    if r.random() < 0.3:
        pool.append(V("offs", "i32"))
    for _ in range(r.randint(1, 8)):
        pool.append(elementwise_step(k, r, pool))
    res = pool[-1]
    tout = res.t if r.random() < 0.6 else r.choice(ALL)
    if res.approx and not is_float(tout):
        tout = res.t
    if res.approx and EPS_RANK.get(tout, 9) < EPS_RANK.get(res.t, 9):
        tout = res.t  # an approximate value narrowed stays within its tolerance of the wider type
    k.out("out", tout, n)
    k.body.append("    store(out + offs, %s, mask = mask);" % convert(res, tout))


# ---- 2-D: broadcasting, reductions, scans -------------------------------------

def gen_2d(k, r):
    bm = r.choice([1, 2, 4, 8, 16, 32])
    bn = r.choice([2, 4, 8, 16, 32, 64])
    m = r.randint(1, 3 * bm)
    k.const("BM", bm)
    k.const("BN", bn)
    k.grid = "cdiv(m, BM)"
    tx = r.choice(ALL)
    ty = tx if r.random() < 0.5 else r.choice(ALL)
    k.buf("x", tx, m, init_for(r, tx))
    k.buf("y", ty, bn, init_for(r, ty))
    k.scalar("m", "i32", m)
    b = k.body
    b.append("    let rows = program_id(0) * BM + arange(0, BM);")
    b.append("    let cols = arange(0, BN);")
    b.append("    let rmask = rows < m;")
    b.append("    let xv = load(x + rows, mask = rmask, other = %s);" % other_lit(r, tx))
    b.append("    let yv = load(y + cols);")
    t = promote(tx, ty)
    op = r.choice(["+", "-", "*", "max", "min"])
    if op in ("max", "min"):
        e = "%simum(xv[:, None], yv[None, :])" % op
    else:
        e = "xv[:, None] %s yv[None, :]" % op
    if r.random() < 0.3:
        e = "yv[None, :] %s xv[:, None]" % op if op not in ("max", "min") else e
    b.append("    let t = %s;" % e)
    if r.random() < 0.3:
        # a second source: a 2-D load
        tz = r.choice(ALL)
        k.buf("z", tz, m * bn, init_for(r, tz))
        b.append("    let zv = load(z + rows[:, None] * BN + cols[None, :], mask = rmask[:, None], other = %s);"
                 % zero_lit(tz))
        t2 = promote(t, tz)
        b.append("    let t2 = t %s zv;" % r.choice("+-*"))
        t = t2
        tname = "t2"
    else:
        tname = "t"
    what = r.choice(["store", "sum", "sum", "max", "min", "argmax", "argmin", "cumsum", "cumsum_rev", "cumprod",
                     "scan_affine"])
    if what in ("cumprod", "scan_affine") and (is_float(t) or t == "i1"):
        what = "cumsum"  # float products and compositions depend on the order: integers only (they wrap)
    axis = r.choice([0, 1])
    tout = r.choice(ALL) if r.random() < 0.3 else None
    if what == "store":
        tout = tout or t
        k.out("out", tout, m * bn)
        b.append("    store(out + rows[:, None] * BN + cols[None, :], %s, mask = rmask[:, None]);"
                 % convert(V(tname, t), tout))
        return
    if what.startswith("cumsum"):
        rev = ", reverse = true" if what == "cumsum_rev" else ""
        st = t
        if not is_float(t) and WIDTH[t] < 32:
            st = "i32" if is_signed(t) else "u32"
        if is_float(t):
            k.cls = "reduce"
            k.widen_tol(st)
        # rows past m hold `other`, the same on both backends
        b.append("    let c = cumsum(%s, axis = %d%s);" % (tname, axis, rev))
        tout = tout if tout and not (is_float(st) and not is_float(tout)) else st
        k.out("out", tout, m * bn)
        b.append("    store(out + rows[:, None] * BN + cols[None, :], %s, mask = rmask[:, None]);"
                 % convert(V("c", st), tout))
        return
    if what in ("cumprod", "scan_affine"):
        # integers: exact in any order. scan_affine composes the maps x -> a x + b
        # in order, (a, b) then (c, d) = (a c, b c + d): not commutative
        rev = ", reverse = true" if r.random() < 0.5 else ""
        if what == "cumprod":
            b.append("    let c = cumprod(%s, axis = %d%s);" % (tname, axis, rev))
        else:
            k.fns.append("fn compose(a, b, c, d) {\n    return a * c, b * c + d;\n}")
            b.append("    let ca, cb = associative_scan((%s, %s + %s), %d, compose%s);" % (tname, tname, tname, axis, rev))
            b.append("    let c = ca + cb;")
        tout = tout if tout and not is_float(tout) else t
        k.out("out", tout, m * bn)
        b.append("    store(out + rows[:, None] * BN + cols[None, :], %s, mask = rmask[:, None]);"
                 % convert(V("c", t), tout))
        return
    if what == "sum":
        st = t
        if not is_float(t) and WIDTH[t] < 32:
            st = "i32" if is_signed(t) else "u32"
        if is_float(t):
            k.cls = "reduce"
            k.widen_tol(st)
        e = "sum(%s, axis = %d)" % (tname, axis)
    elif what in ("max", "min"):
        st = t
        e = "%s(%s, axis = %d)" % (what, tname, axis)
    else:
        st = "i32"
        e = "%s(%s, %d)" % (what, tname, axis)
    if tout is None or (is_float(st) and not is_float(tout)) or (k.cls == "reduce" and EPS_RANK.get(tout, 9) < EPS_RANK.get(st, 9)):
        tout = st
    b.append("    let red = %s;" % e)
    if axis == 1:
        k.out("out", tout, m)
        b.append("    store(out + rows, %s, mask = rmask);" % convert(V("red", st), tout))
    else:
        grid_n = (m + bm - 1) // bm
        k.out("out", tout, grid_n * bn)
        b.append("    store(out + program_id(0) * BN + cols, %s);" % convert(V("red", st), tout))


# ---- dots --------------------------------------------------------------------

def gen_dot(k, r):
    ti = r.choice(["f16", "f16", "bf16", "bf16", "i8", "f32", "fp8"])
    # fp8: e4m3 or e5m2 on each side (tensor cores from sm_89, FMAs below);
    # f32: input_precision tf32 (the default, truncated as tensor cores read it,
    # in the interpreter too), tf32x3 or ieee
    ta = tb = ti
    prec = ""
    if ti == "fp8":
        ta, tb = r.choice(["f8e4m3", "f8e5m2"]), r.choice(["f8e4m3", "f8e5m2"])
    elif ti == "f32":
        prec = r.choice(["", ", input_precision = \"tf32\"", ", input_precision = \"tf32x3\"",
                         ", input_precision = \"ieee\""])
    bm, bn, bk = r.choice([16, 32, 64]), r.choice([16, 32, 64]), r.choice([16, 32])
    if bm * bn > 2048:
        bn = 16
    M = r.randint(1, 2 * bm)
    N = r.randint(1, 2 * bn)
    K = r.randint(1, 3 * bk)
    k.const("BM", bm)
    k.const("BN", bn)
    k.const("BK", bk)
    k.grid = "cdiv(M, BM), cdiv(N, BN)"
    tacc = "i32" if ti == "i8" else "f32"
    k.buf("a", ta, M * K, "random" if ti == "i8" else r.choice(["random", "randn"]))
    k.buf("b", tb, K * N, "random" if ti == "i8" else r.choice(["random", "randn"]))
    tout = tacc if r.random() < 0.7 or ti == "i8" else r.choice(["f32", "f16", "bf16"])
    k.out("c", tout, M * N)
    k.scalar("M", "i32", M)
    k.scalar("N", "i32", N)
    k.scalar("K", "i32", K)
    k.cls = "exact" if ti == "i8" else "reduce"
    if ti == "fp8":
        k.widen_tol("f16")  # fp8 tensor cores keep about 14 bits of the sum
    b = k.body
    b.append("    let rm = program_id(0) * BM + arange(0, BM);")
    b.append("    let rn = program_id(1) * BN + arange(0, BN);")
    b.append("    var acc = zeros((BM, BN), %s);" % tacc)
    b.append("    for k0 in range(0, K, BK) {")
    b.append("        let rk = k0 + arange(0, BK);")
    sub = " - 64" if ti == "i8" else ""
    b.append("        let av = load(a + rm[:, None] * K + rk[None, :], mask = (rm[:, None] < M) & (rk[None, :] < K), other = 0)%s;" % sub)
    b.append("        let bv = load(b + rk[:, None] * N + rn[None, :], mask = (rk[:, None] < K) & (rn[None, :] < N), other = 0)%s;" % sub)
    if ti == "i8":
        # masked elements are 0 - 64: zero them again so that K's tail adds nothing
        b.append("        let av2 = where((rm[:, None] < M) & (rk[None, :] < K), av, 0);")
        b.append("        let bv2 = where((rk[:, None] < K) & (rn[None, :] < N), bv, 0);")
        b.append("        acc = dot(av2, bv2, acc);")
    else:
        b.append("        acc = dot(av, bv, acc%s);" % prec)
    b.append("    }")
    res = "acc" if tout == tacc else "acc.to(%s)" % tout
    if r.random() < 0.3 and tacc == "f32":
        res = "maximum(%s, 0.0)" % res
    b.append("    store(c + rm[:, None] * N + rn[None, :], %s, mask = (rm[:, None] < M) & (rn[None, :] < N));" % res)


# ---- loops and branches ------------------------------------------------------

def gen_loop(k, r):
    block = r.choice([16, 32, 64, 128])
    n = r.randint(1, 3 * block)
    iters = r.randint(0, 5)
    k.const("BLOCK", block)
    k.grid = "cdiv(n, BLOCK)"
    t = r.choice(ALL)
    ta = t if r.random() < 0.5 else r.choice(ALL)
    k.buf("a", t, n * max(iters, 1), init_for(r, t))
    k.scalar("n", "i32", n)
    k.scalar("iters", "i32", iters)
    lim = r.randint(0, 6)
    k.scalar("lim", "i32", lim)
    b = k.body
    b.append("    let offs = program_id(0) * BLOCK + arange(0, BLOCK);")
    b.append("    let mask = offs < n;")
    # now and then the loop is a fn's, which returns a tuple (the block, a
    # pointer, the index) from inside it at a runtime iteration
    if k.fn_loop:
        b = []
    b.append("    var acc = %s;" % ("acc0" if k.fn_loop else "zeros((BLOCK,), %s)" % ta))
    b.append("    for i in range(0, iters) {")
    b.append("        let v = load(a + i * n + offs, mask = mask, other = %s);" % zero_lit(t))
    vv = V("v", t)
    cv = convert(vv, ta)
    # runtime ifs inside the loop; a break or continue now and then
    style = pick(r, [("ifelse", 1), ("below", 1), ("skip", 1), ("plain", 1), ("break", 0.4), ("continue", 0.4)])
    one = "1.0" if is_float(ta) else "1"
    wrap = (lambda e: e) if is_float(ta) or is_signed(ta) else (lambda e: "(%s).to(%s)" % (e, ta))
    if style == "ifelse":
        b.append("        if i %% 2 == %d {" % r.randint(0, 1))
        b.append("            acc = acc + %s;" % cv)
        b.append("        } else {")
        b.append("            acc = %s;" % wrap("maximum(acc, %s) - %s" % (cv, one)))
        b.append("        }")
    elif style == "below":
        b.append("        if i < lim {")
        b.append("            acc = %s;" % wrap("acc * %s + %s" % ("2.0" if is_float(ta) else "3", cv)))
        b.append("        }")
    elif style == "skip":
        b.append("        if i != lim && lim >= 0 {")
        b.append("            acc = acc ^ %s;" % cv if not is_float(ta) else "            acc = acc - %s;" % cv)
        b.append("        }")
    elif style in ("break", "continue"):
        b.append("        if i == lim { %s; }" % style)
        b.append("        acc = %s;" % wrap("acc * %s + %s" % ("2.0" if is_float(ta) else "3", cv)))
    else:
        b.append("        acc += %s;" % cv)
    if k.fn_loop:
        b.append("        if i == iters - 1 - lim { return acc, a + i * n, i; }")
    b.append("    }")
    if k.fn_loop:
        b.append("    return acc, a, iters;")
        k.fns.append("fn run_loop(a, acc0, offs, mask, n: i32, iters: i32, lim: i32) {\n%s\n}" % "\n".join(b))
        b = k.body
        b.append("    let acc1, p, it = run_loop(a, zeros((BLOCK,), %s), offs, mask, n, iters, lim);" % ta)
        b.append("    let w = load(p + offs, mask = mask, other = %s);" % zero_lit(t))
        b.append("    var acc = %s;" % wrap("acc1 + %s + it.to(%s)" % (convert(V("w", t), ta), ta)))
    if r.random() < 0.5:
        b.append("    if program_id(0) % 2 == 1 {")
        b.append("        acc = %s;" % wrap("acc * %s" % ("-1.5" if is_float(ta) else "5")))
        b.append("    }")
    if r.random() < 0.3:
        b.append("    var j = 0;")
        b.append("    while j < lim {")
        b.append("        acc = %s;" % wrap("acc + %s" % ("0.25" if is_float(ta) else "1")))
        b.append("        j += 1;")
        b.append("    }")
    k.out("out", ta, n)
    b.append("    store(out + offs, acc, mask = mask);")


# ---- atomics -----------------------------------------------------------------

def gen_atomic(k, r):
    block = r.choice([16, 32, 64, 128])
    n = r.randint(1, 4 * block)
    k.const("BLOCK", block)
    k.grid = "cdiv(n, BLOCK)"
    ti = r.choice(INTS)
    tc = r.choice(["i32", "i32", "u32", "i64", "u64", "i16", "u16"])
    nb = r.choice([1, 2, 8, 32])
    k.buf("a", ti, n, r.choice(["random", "arange"]))
    k.scalar("n", "i32", n)
    k.out("cnt", tc, nb + 1)
    b = k.body
    b.append("    let offs = program_id(0) * BLOCK + arange(0, BLOCK);")
    b.append("    let mask = offs < n;")
    b.append("    let v = load(a + offs, mask = mask, other = 0);")
    op = r.choice(["atomic_add", "atomic_add", "atomic_add", "atomic_max", "atomic_min", "atomic_or",
                   "atomic_and", "atomic_xor"])
    sem = r.choice(["", "", ", sem = \"relaxed\"", ", sem = \"acq_rel\"", ", scope = \"cta\""])
    if op == "atomic_and":
        b.append("    let w = (v * 7 + 3).to(%s) | ~(1 << (offs & 7)).to(%s);" % (tc, tc))
    else:
        b.append("    let w = (v * 7 + 3).to(%s);" % tc)
    b.append("    let old = %s(cnt + (v & %d).to(i32), w, mask = mask%s);" % (op, nb - 1, sem))
    if op == "atomic_and":
        pass
    b.append("    atomic_add(cnt + %d, %s);" % (nb, "1"))


# ---- gathers and scatters ----------------------------------------------------

def gen_gather(k, r):
    block = r.choice([16, 32, 64, 128])
    n = r.randint(1, 4 * block)
    k.const("BLOCK", block)
    k.grid = "cdiv(n, BLOCK)"
    tx = r.choice(ALL)
    nx = r.choice([1, 4, 64, 256])
    ti = r.choice(["i32", "i32", "i64", "u8", "i16", "u32"])
    k.buf("x", tx, nx, init_for(r, tx))
    k.buf("idx", ti, n, r.choice(["random", "arange"]))
    k.scalar("n", "i32", n)
    b = k.body
    b.append("    let offs = program_id(0) * BLOCK + arange(0, BLOCK);")
    b.append("    let mask = offs < n;")
    b.append("    let j = load(idx + offs, mask = mask, other = 0);")
    b.append("    let jj = ((j * 5).to(i32) + offs) & %d;" % (nx - 1))
    b.append("    let g = load(x + jj, mask = mask, other = %s);" % zero_lit(tx))
    if r.random() < 0.5:
        # a scalar gather: one index per program
        b.append("    let s = load(x + (load(idx + program_id(0) %% n).to(i32) & %d));" % (nx - 1))
        val = "g + s"
        tv = promote(tx, tx)
    else:
        val = "g"
        tv = tx
    if r.random() < 0.5:
        # scatter through a permutation of [0, NP)
        np_ = 1
        grid_n = (n + block - 1) // block
        while np_ < grid_n * block:
            np_ *= 2
        odd = r.choice([1, 3, 5, 37, 129, 1025])
        c = r.randint(0, 1000)
        k.out("out", tv, np_)
        b.append("    let p = (offs * %d + %d) & %d;" % (odd, c, np_ - 1))
        b.append("    store(out + p, %s, mask = mask);" % val)
    else:
        k.out("out", tv, n)
        b.append("    store(out + offs, %s, mask = mask);" % val)


# ---- sort, argsort, topk, histogram -------------------------------------------

def gen_sort(k, r, big=False):
    """Each program sorts (sort, argsort or topk) or counts (histogram) its
    block, 1-D or 2-D along either axis. big: a block whose network is too
    large to unroll on one warp (lower/sort.c runs it as loops), or a
    histogram of more bins than shared memory counts at once."""
    t = r.choice(ALL)
    kind = r.choice(["sort", "sort", "argsort", "topk", "histogram"])
    if big:
        if kind != "histogram":  # its bins are the large part (on 4 warps)
            k.args.append("-D num_warps=1")
        shape = r.choice([(4096,), (8, 1024), (2048, 4), (8192,)])
    else:
        shape = r.choice([(8,), (64,), (256,), (1024,), (4, 32), (16, 8), (2, 256)])
    axis = r.randint(0, len(shape) - 1)
    numel = 1
    for d in shape:
        numel *= d
    progs = r.choice([1, 2, 3])
    k.grid = "%d" % progs
    b = k.body
    if len(shape) == 1:
        offs = "arange(0, %d)" % shape[0]
    else:
        offs = "arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]" % (shape[0], shape[1], shape[1])
    k.buf("x", t, numel * progs, init_for(r, t))
    b.append("    let offs = program_id(0) * %d + %s;" % (numel, offs))
    x = k.let("load(x + offs)", t)
    if kind == "histogram":
        ti = r.choice(INTS)
        bins = r.choice([65536, 32768]) if big else r.choice([1, 16, 256, 1024])
        m = r.choice(["", ", mask = %s" % "(offs % 3) != 0"])
        k.out("out", "i32", bins * progs)
        b.append("    let h = histogram(%s, %d%s);" % (hist_input(x, ti, bins), bins, m))
        b.append("    store(out + program_id(0) * %d + arange(0, %d), h);" % (bins, bins))
        return
    if kind == "topk":
        n = shape[axis]
        kk = r.choice([q for q in [1, 2, 8, 64] if q <= n])
        rshape = list(shape)
        rshape[axis] = kk
        rn = numel // n * kk
        if len(shape) == 1:
            roffs = "arange(0, %d)" % kk
        else:
            roffs = "arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]" % (rshape[0], rshape[1], rshape[1])
        k.out("v", t, rn * progs)
        k.out("vi", "i32", rn * progs)
        b.append("    let ro = program_id(0) * %d + %s;" % (rn, roffs))
        b.append("    let (tv, ti) = topk(%s, %d, axis = %d);" % (x.name, kk, axis))
        b.append("    store(v + ro, tv);")
        b.append("    store(vi + ro, ti);")
        return
    desc = "true" if r.random() < 0.5 else "false"
    if kind == "argsort":
        k.out("ai", "i32", numel * progs)
        b.append("    store(ai + offs, argsort(%s, %d, descending = %s));" % (x.name, axis, desc))
        return
    k.out("v", t, numel * progs)
    if r.random() < 0.5:
        k.out("vi", "i32", numel * progs)
        b.append("    let (sv, si) = sort(%s, %d, %s, return_indices = true);" % (x.name, axis, desc))
        b.append("    store(v + offs, sv);")
        b.append("    store(vi + offs, si);")
    else:
        b.append("    store(v + offs, sort(%s, axis = %d, descending = %s));" % (x.name, axis, desc))


def hist_input(x, ti, bins):
    """An integer block of type ti from x, in [0, 2 bins) (or ti's positive
    range): about half of the values outside the bins."""
    v = x.name if not is_float(x.t) else clamp_to_int(x, "i32")
    hi = min(2 * bins, 1 << (WIDTH[ti] - 1 if is_signed(ti) else WIDTH[ti])) - 1
    return "(%s.to(i64) & %d).to(%s)" % (v, hi, ti) if not is_float(x.t) else "(%s & %d).to(%s)" % (v, hi, ti)


# ---- tensor descriptors ------------------------------------------------------

def gen_desc(k, r):
    """A 2-D box through tensor descriptors: each program loads the box of
    its tile shifted by a few rows and columns (either way, so that edges
    read zeros), and stores it, changed, to its own tile of out (each
    element of [0, m) x [0, n) once; the rows' padding past n stays 0)."""
    bm = r.choice([1, 2, 4, 8, 16, 32])
    bn = r.choice([2, 4, 8, 16, 32, 64])
    m = r.randint(1, 3 * bm)
    n = r.randint(1, 3 * bn)
    ld = n + r.choice([0, 0, 1, 3, 8])
    k.const("BM", bm)
    k.const("BN", bn)
    k.grid = "cdiv(m, BM), cdiv(n, BN)"
    t = r.choice(ALL)
    k.buf("x", t, m * ld, init_for(r, t))
    k.out("out", t, m * ld)
    k.scalar("m", "i32", m)
    k.scalar("n", "i32", n)
    k.scalar("ld", "i32", ld)
    dm, dn = r.randint(-bm, bm), r.randint(-bn, bn)
    b = k.body
    b.append("    let src = tensor_desc(x, (m, n), (ld, 1), (BM, BN));")
    b.append("    let dst = tensor_desc(out, (m, n), (ld, 1), (BM, BN));")
    b.append("    let r0 = program_id(0) * BM;")
    b.append("    let c0 = program_id(1) * BN;")
    b.append("    let v = src.load((r0 + %d, c0 + %d));" % (dm, dn))
    op = r.choice(["", " + %s" % other_lit(r, t), " * %s" % other_lit(r, t)])
    b.append("    dst.store((r0, c0), (v%s)%s);" % (op, "" if not op or is_float(t) else ".to(%s)" % t))


TEMPLATES = [(gen_elementwise, 10), (gen_2d, 4), (gen_dot, 2), (gen_loop, 2), (gen_atomic, 2), (gen_gather, 2)]


def generate(seed, index):
    r = random.Random(seed * 1000003 + index)
    fn = pick(r, TEMPLATES)
    # a few kernels through tensor descriptors, chosen by a generator of
    # their own so that every other case stays what it was
    if random.Random((seed * 1000003 + index) * 7919 + 17).random() < 0.04:
        fn = gen_desc
    # and a few elementwise ones on blocks too big for registers
    big = fn is gen_elementwise and random.Random((seed * 1000003 + index) * 7919 + 43).random() < 0.015
    # and a few sorts, topks and histograms, a third of them large (their own
    # generator again)
    u = random.Random((seed * 1000003 + index) * 7919 + 61).random()
    if u < 0.012:
        fn, big = gen_sort, u < 0.004
    name = "k%d" % index
    k = Kernel(r, name)
    # so is a loop kernel's loop put in a fn (the same kernel otherwise)
    k.fn_loop = random.Random((seed * 1000003 + index) * 7919 + 29).random() < 0.3
    if big:
        fn(k, r, big=True)
    else:
        fn(k, r)
    return k.text(seed * 1000003 + index & 0x7FFFFFFF)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.first, a.first + a.count):
        with open(os.path.join(a.out, "k%05d.tile" % i), "w") as f:
            f.write(generate(a.seed, i))


if __name__ == "__main__":
    main()
