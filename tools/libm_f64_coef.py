#!/usr/bin/env python3
"""tools/libm_f64_coef.py: derives the constants and polynomial coefficients of
the f64 forms of erfc, erfinv, lgamma, tgamma and the Bessel functions
(compiler/irgen/libm_f64.c) with mpmath, and writes them as C to
compiler/irgen/libm_f64_coef.h (or to the file given as the first argument).

Each polynomial is the Chebyshev interpolant of its function on an interval
[lo, hi], at 50 digits, rewritten in powers of t = x - c (c the interval's
middle) and rounded to doubles; its degree is the smallest that brings the
largest relative error of the rounded polynomial (evaluated exactly, at 400
points of the interval) below 2^-60. The script prints each fit's degree and
error. Run: python3 tools/libm_f64_coef.py [OUT]
"""
import sys
import mpmath as mp

mp.mp.dps = 50
TARGET = mp.mpf(2) ** -60


def cheb_fit(f, lo, hi, n):
    """degree-n Chebyshev interpolant of f on [lo, hi] as coefficients of
    powers of t = x - (lo + hi) / 2 (mpf)"""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    c, h = (lo + hi) / 2, (hi - lo) / 2
    N = n + 1
    nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / N) for j in range(N)]
    vals = [f(c + h * s) for s in nodes]
    cheb = []
    for k in range(N):
        s = sum(vals[j] * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / N) for j in range(N))
        cheb.append(2 * s / N if k else s / N)
    # sum cheb[k] T_k(s) in powers of s, by T_(k+1) = 2 s T_k - T_(k-1)
    mono = [mp.mpf(0)] * N
    tkm1, tk = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]
    for k in range(N):
        t = tkm1 if k == 0 else tk
        if k >= 2:
            nxt = [mp.mpf(0)] * (k + 1)
            for i, v in enumerate(tk):
                nxt[i + 1] += 2 * v
            for i, v in enumerate(tkm1):
                nxt[i] -= v
            tkm1, tk = tk, nxt
            t = tk
        for i, v in enumerate(t):
            mono[i] += cheb[k] * v
    return [mono[i] / h ** i for i in range(N)], c


def rel_err(f, coef, c, lo, hi, pts=400, rounded=True, scale=None):
    worst = mp.mpf(0)
    dc = [mp.mpf(float(v)) for v in coef] if rounded else coef
    for i in range(pts + 1):
        x = mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * i / pts
        t = x - c
        p = mp.mpf(0)
        for v in reversed(dc):
            p = p * t + v
        fx = f(x)
        worst = max(worst, abs(p - fx) / abs(scale(x) if scale else fx))
    return worst


def fit(name, f, lo, hi, nmax=40, out=None, absolute=False):
    """absolute: the error relative to the largest |f| of the interval (an
    oscillating function, whose zeros make a relative error meaningless)"""
    g = f
    if absolute:
        scale = max(abs(f(mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * i / 64)) for i in range(65))
        g = lambda x: scale
    err = lambda coef, c, pts, rounded: rel_err(f, coef, c, lo, hi, pts, rounded, g)
    for n in range(8, nmax + 1):
        coef, c = cheb_fit(f, lo, hi, n)
        if err(coef, c, 60, False) < TARGET and err(coef, c, 400, False) < TARGET:
            break
    e = err(coef, c, 400, True)
    sys.stderr.write('%-10s [%g, %g] degree %d, rel. error with rounded coefficients %.3g (2^%.1f)\n' %
                     (name, lo, hi, n, float(e), float(mp.log(e, 2))))
    if out is not None:
        out.append((name, lo, hi, float(c), coef))
    return coef, c


def dd(v):
    hi = float(v)
    return hi, float(v - mp.mpf(hi))


def split_bits(v, bits):
    """v rounded to its leading `bits` significant bits"""
    e = mp.floor(mp.log(abs(v), 2))
    q = mp.mpf(2) ** (e - bits + 1)
    return float(mp.nint(v / q) * q)


def c_double(v):
    return float(v).hex() if False else repr(float(v))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'compiler/irgen/libm_f64_coef.h'
    fits = []
    # erfc: erfcx(a) = e^(a^2) erfc(a) on [0.5, 8)
    erfcx = lambda a: mp.exp(a * a) * mp.erfc(a)
    for lo, hi in [(0.5, 1), (1, 1.5), (1.5, 2), (2, 3), (3, 4), (4, 6), (6, 8)]:
        fit('erfcx', erfcx, lo, hi, out=fits)
    # lgamma: lgamma(1 + t) / t and lgamma(2 + t) / t on t in [-0.5, 0.5];
    # lgamma on [2.5, 8)
    def g1(t):
        with mp.workdps(120):
            return -mp.euler if t == 0 else mp.loggamma(1 + t) / t
    def g2(t):
        with mp.workdps(120):
            return 1 - mp.euler if t == 0 else mp.loggamma(2 + t) / t
    fit('lgamma1', g1, -0.5, 0.5, out=fits)
    fit('lgamma2', g2, -0.5, 0.5, out=fits)
    for lo, hi in [(2.5, 3.5), (3.5, 4.5), (4.5, 6), (6, 8)]:
        fit('lgamma', mp.loggamma, lo, hi, out=fits)
    # e^-x I0(x), e^-x I1(x) on [3, 21)
    for nu in (0, 1):
        f = (lambda nu: lambda x: mp.exp(-x) * mp.besseli(nu, x))(nu)
        for lo, hi in [(3, 6), (6, 10), (10, 15), (15, 21)]:
            fit('ie%d' % nu, f, lo, hi, out=fits)
    # Bessel: J0, J1, Y0, Y1 on [2, 8] (below, their series; above, Hankel)
    for nm, nu, y in [('j0', 0, False), ('j1', 1, False), ('y0', 0, True), ('y1', 1, True)]:
        f = (lambda nu, y: lambda x: (mp.bessely if y else mp.besselj)(nu, x))(nu, y)
        for lo, hi in [(2, 4), (4, 6), (6, 8)]:
            fit(nm, f, lo, hi, out=fits, absolute=True)
    # Hankel's P and Q on [8, 22): J = A (P cos c - Q sin c), Y = A (P sin c +
    # Q cos c), A = sqrt(2 / (pi x)), c = x - (2 nu + 1) pi / 4
    def pq(nu, which):
        def f(x):
            c = x - (2 * nu + 1) * mp.pi / 4
            a = mp.sqrt(2 / (mp.pi * x))
            j, y = mp.besselj(nu, x), mp.bessely(nu, x)
            return (j * mp.cos(c) + y * mp.sin(c)) / a if which == 'p' else (y * mp.cos(c) - j * mp.sin(c)) / a
        return f
    for nu in (0, 1):
        for w in ('p', 'q'):
            for lo, hi in [(8, 11), (11, 15), (15, 22)]:
                fit('%s%d' % (w, nu), pq(nu, w), lo, hi, out=fits)
    consts = []
    def const(name, v, parts=2, why=''):
        v = mp.mpf(v)
        hi = float(v)
        consts.append((name + '_HI' if parts == 2 else name, hi, why))
        if parts == 2:
            consts.append((name + '_LO', float(v - mp.mpf(hi)), ''))
    const('LM_2_SQRTPI', 2 / mp.sqrt(mp.pi), why='2 / sqrt(pi)')
    const('LM_SQRTPI_2', mp.sqrt(mp.pi) / 2, why='sqrt(pi) / 2')
    const('LM_1_SQRTPI', 1 / mp.sqrt(mp.pi), why='1 / sqrt(pi)')
    const('LM_LOG_2PI_2', mp.log(2 * mp.pi) / 2, why='log(2 pi) / 2')
    const('LM_PI', mp.pi, why='pi')
    const('LM_LOG_PI', mp.log(mp.pi), why='log(pi)')
    const('LM_2_PI', 2 / mp.pi, why='2 / pi')
    const('LM_EULER', mp.euler, why="Euler's gamma")
    const('LM_LN2', mp.log(2), why='log 2')
    # pi/2 in three parts, the first two of 23 bits (k pi/2 exact for k < 2^30)
    p1 = split_bits(mp.pi / 2, 23)
    p2 = split_bits(mp.pi / 2 - p1, 23)
    p3 = float(mp.pi / 2 - p1 - p2)
    consts += [('LM_PIO2_1', p1, 'pi/2 = LM_PIO2_1 + LM_PIO2_2 + LM_PIO2_3, the first two of 23 bits'),
               ('LM_PIO2_2', p2, ''), ('LM_PIO2_3', p3, '')]
    # Stirling: B_2k / (2k (2k - 1)), k = 1..14
    st = [mp.bernoulli(2 * k) / (2 * k * (2 * k - 1)) for k in range(1, 15)]
    with open(path, 'w') as fo:
        fo.write('/* libm_f64_coef.h: generated by tools/libm_f64_coef.py (mpmath); do not edit.\n'
                 ' * The polynomials of libm_f64.c: coefficients of t^0, t^1, ... with\n'
                 ' * t = x - center, on [lo, hi). */\n')
        fo.write('#ifndef BLK_IRGEN_LIBM_F64_COEF_H\n#define BLK_IRGEN_LIBM_F64_COEF_H\n\n')
        for name, v, why in consts:
            if why:
                fo.write('/* %s */\n' % why)
            fo.write('static const double %s = %s;\n' % (name, v.hex()))
        fo.write('/* B_2k / (2k (2k - 1)), k = 1.. (Stirling) */\nstatic const double LM_STIRLING[] = {\n')
        for v in st:
            fo.write('\t%s,\n' % float(v).hex())
        fo.write('};\n\n')
        fo.write('/* c[0] + c0lo + c[1] t + ... */\n')
        fo.write('typedef struct LmFit {\n\tdouble lo, hi, center, c0lo;\n\tint n;\n\tconst double *c;\n} LmFit;\n\n')
        groups = {}
        for name, lo, hi, c, coef in fits:
            groups.setdefault(name, []).append((lo, hi, c, coef))
        for name, lst in groups.items():
            for i, (lo, hi, c, coef) in enumerate(lst):
                fo.write('static const double %s_c%d[] = {\n' % (name.upper(), i))
                for v in coef:
                    fo.write('\t%s,\n' % float(v).hex())
                fo.write('};\n')
            fo.write('static const LmFit %s_FITS[] = {\n' % name.upper())
            for i, (lo, hi, c, coef) in enumerate(lst):
                c0lo = float(coef[0] - mp.mpf(float(coef[0])))
                fo.write('\t{%r, %r, %r, %s, %d, %s_c%d},\n' % (lo, hi, c, c0lo.hex(), len(coef), name.upper(), i))
            fo.write('};\n\n')
        fo.write('#endif\n')


if __name__ == '__main__':
    main()
