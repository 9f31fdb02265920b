"""An interval model of the spec's elementwise numerics in NumPy.

Every model value `MV` holds, per element, the nominal result and whether
it is known (`unk` marks elements the spec leaves open or that the model
cannot pin down: a float -> int cast of an interval across an integer, a
comparison of values within rounding error of each other...). Float values
also carry an interval [lo, hi] that contains every result an implementation
meeting the spec may give: each operation is evaluated in float64 at the corners of its operands'
intervals and rounded to the dtype, so correctly rounded `+ - * / sqrt` keep
exact inputs exact, and approximate functions widen it by their error bound
(`Semantics`). NaN positions, inf signs and integers are compared exactly."""

import itertools
import math

import numpy as np

from . import numeric as N
from .numeric import BOOL, FLOAT

_erf = np.frompyfunc(math.erf, 1, 1)


def erf64(x):
    return np.asarray(_erf(np.asarray(x, np.float64)), np.float64)  # 0-d gives a float


class MV:
    """A model value: `nom` (floats: float64 values of the dtype; ints and
    bools: an array of the dtype), `lo`/`hi` (floats only), `unk`."""

    __slots__ = ("dt", "nom", "lo", "hi", "unk", "lit")

    def __init__(self, dt, nom, lo=None, hi=None, unk=None, lit=None):
        self.dt = dt
        self.nom = np.asarray(nom)
        if dt.kind == FLOAT:
            self.nom = self.nom.astype(np.float64)
            self.lo = self.nom.copy() if lo is None else np.asarray(lo, np.float64)
            self.hi = self.nom.copy() if hi is None else np.asarray(hi, np.float64)
        else:
            self.lo = self.hi = None
        self.unk = np.zeros(self.nom.shape, bool) if unk is None else np.asarray(unk, bool)
        self.lit = lit  # a Python number: literals convert exactly

    @property
    def shape(self):
        return self.nom.shape

    def exact(self):
        """Per element: a single value (zeros of one sign)."""
        if self.dt.kind != FLOAT:
            return ~self.unk
        same = (self.lo == self.hi) & (np.signbit(self.lo) == np.signbit(self.hi))
        return (same | (np.isnan(self.lo) & np.isnan(self.hi))) & ~self.unk

    def broadcast(self, shape):
        b = lambda a: None if a is None else np.broadcast_to(a, shape)  # noqa: E731
        return MV(self.dt, b(self.nom), b(self.lo), b(self.hi), b(self.unk), self.lit)


def literal(value, dt):
    """A Python number as a weak operand of dtype `dt` (exact conversion)."""
    return MV(dt, _convert_number(value, dt), lit=value)


def _convert_number(value, dt):
    if dt.kind == FLOAT:
        return N.round_to(np.float64(value), dt)
    if dt.kind == BOOL:
        return np.bool_(bool(value))
    v = int(value)
    assert dt.lo <= v <= dt.hi, (value, dt)
    return np.asarray(v).astype(dt.np)


# ---------------------------------------------------------------------------
# Casts (C semantics; float -> int saturates, NaN 0)
# ---------------------------------------------------------------------------

def _saturated(x, dt):
    """Float64 values truncated to integer dtype `dt`, clamped to its range."""
    t = np.trunc(np.where(np.isnan(x), 0.0, x))
    over, under = t >= float(dt.hi + 1), t < float(dt.lo)  # both bounds exact
    out = np.where(over | under, 0.0, t).astype(dt.np)
    return np.where(over, dt.np.type(dt.hi), np.where(under, dt.np.type(dt.lo), out))


def cast(v, dt):
    src = v.dt
    if src is dt:
        return v
    if v.lit is not None:
        return literal(v.lit, dt)
    with np.errstate(all="ignore"):
        if dt.kind == FLOAT:
            if src.kind == FLOAT:
                return MV(dt, N.round_to(v.nom, dt), N.round_to(v.lo, dt),
                          N.round_to(v.hi, dt), v.unk)
            # int64 -> float goes through float64: exact below 2**53
            return MV(dt, N.round_to(v.nom.astype(np.float64), dt), unk=v.unk)
        if src.kind == FLOAT:
            if dt.kind == BOOL:
                zero_in = (v.lo <= 0) & (v.hi >= 0)
                return MV(dt, v.nom != 0, unk=v.unk | (zero_in & ~v.exact()))
            # Truncation saturating at dt's range, NaN 0 (docs/numerics.md):
            # monotone, so the interval's ends bound it.
            lo, hi = _saturated(v.lo, dt), _saturated(v.hi, dt)
            nan = np.isnan(v.nom)
            bad = (lo != hi) | (np.isnan(v.lo) != nan) | (np.isnan(v.hi) != nan)
            return MV(dt, _saturated(v.nom, dt), unk=v.unk | bad)
        if dt.kind == BOOL:
            return MV(dt, v.nom != 0, unk=v.unk)
        return MV(dt, v.nom.astype(np.int64).astype(dt.np) if src.kind == BOOL
                  else v.nom.astype(dt.np), unk=v.unk)


# ---------------------------------------------------------------------------
# Float operations on intervals
# ---------------------------------------------------------------------------

def fmap(fn, args, dt, slack=None):
    """`fn` (float64, monotone in each argument on the operands' intervals, or
    multilinear) applied to float MVs of dtype dt of one shape."""
    with np.errstate(all="ignore"):
        nom = N.round_to(fn(*[a.nom for a in args]), dt)
        vals = [nom]
        if not all(a.exact().all() for a in args):
            for corner in itertools.product(*[(a.lo, a.hi) for a in args]):
                vals.append(N.round_to(fn(*corner), dt))
        stack = np.stack(np.broadcast_arrays(*vals))
        nan = np.isnan(stack)
        finite_or_inf = np.where(nan, np.nan, stack)
        lo = np.nanmin(finite_or_inf, axis=0) if len(vals) > 1 else nom
        hi = np.nanmax(finite_or_inf, axis=0) if len(vals) > 1 else nom
    unk = np.logical_or.reduce([a.unk for a in args]) | (nan.any(0) & ~nan.all(0))
    lo = np.where(nan.all(0), np.nan, lo)
    hi = np.where(nan.all(0), np.nan, hi)
    # A zero whose sign differs between corners has no certain sign.
    zsign = (stack == 0) & (np.signbit(stack) != np.signbit(nom))
    sign_open = (nom == 0) & zsign.any(0)
    lo = np.where(sign_open, -0.0, lo)
    hi = np.where(sign_open, 0.0, hi)
    out = MV(dt, nom, lo, hi, unk)
    if slack is not None:
        s = slack([a.nom for a in args], nom)
        out.lo, out.hi = N.widen(out.lo, out.hi, dt, s)
    return out


def zero_sign_open(v):
    """Marks zeros of `v` as of either sign (NumPy and IEEE maximum differ)."""
    z = v.nom == 0
    v.lo = np.where(z & (v.lo == 0), -0.0, v.lo)
    v.hi = np.where(z & (v.hi == 0), 0.0, v.hi)
    return v


def divides_by_open_zero(b):
    """Per element: the divisor's interval holds a zero of no certain sign."""
    return (b.lo <= 0) & (b.hi >= 0) & ~b.exact()


def fdiv(a, b, dt, sem):
    out = fmap(np.divide, [a, b], dt, sem.arith_slack(dt))
    out.unk |= divides_by_open_zero(b)
    return out


def _np_in(dt):
    """The NumPy dtype `//` and `%` of `dt` run in (bfloat16: float32)."""
    return np.float32 if dt is N.bfloat16 else dt.np


def f_floordiv_mod(op, a, b, dt):
    """Python's float `//` and `%` (npy_divmod) in the dtype's precision:
    exact for exact operands; otherwise known when the quotient's floor is
    the same at every corner."""
    t = _np_in(dt)
    npop = np.floor_divide if op == "floordiv" else np.remainder

    def run(x, y):
        with np.errstate(all="ignore"):
            return N.round_to(npop(x.astype(t), y.astype(t)).astype(np.float64), dt)

    nom = run(a.nom, b.nom)
    unk = a.unk | b.unk
    exact = a.exact() & b.exact()
    if exact.all():
        return MV(dt, nom, unk=unk)
    qs = [np.floor_divide(x.astype(t), y.astype(t)) for x in (a.lo, a.hi, a.nom)
          for y in (b.lo, b.hi, b.nom)]
    with np.errstate(all="ignore"):
        same_q = np.logical_and.reduce([(q == qs[0]) | (np.isnan(q) & np.isnan(qs[0]))
                                        for q in qs])
    # Past the precision's integers (inf included) equal quotients say
    # nothing of their floors: one ulp of b moves a % b anywhere in [0, b)
    # (seed 20261210: 1.7e38 % rsqrt(1.7e38)).
    with np.errstate(invalid="ignore"):
        huge = np.logical_or.reduce([np.abs(q) >= 2.0 ** (np.finfo(t).nmant + 1)
                                     for q in qs])
    unk = unk | (~exact & (~same_q | huge | divides_by_open_zero(b)))
    if op == "floordiv":
        return MV(dt, nom, unk=unk)
    # Same quotient q at every corner: a % b = a - q*b is bilinear there.
    rs = [run(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)] + [nom]
    with np.errstate(all="ignore"):
        lo = np.nanmin(np.stack(rs), 0)
        hi = np.nanmax(np.stack(rs), 0)
    lo, hi = N.widen(lo, hi, dt, N.ulp(np.maximum(np.abs(lo), np.abs(hi)), dt))
    return MV(dt, nom, np.where(exact, nom, lo), np.where(exact, nom, hi), unk)


def fcompare(op, a, b):
    npop = {"lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}[op]
    with np.errstate(all="ignore"):
        nom = npop(a.nom, b.nom)
        exact = a.exact() & b.exact()
        if op in ("eq", "ne"):
            disjoint = (a.hi < b.lo) | (b.hi < a.lo)
            known = exact | disjoint
        else:  # monotone in each operand: the corners decide
            corners = [npop(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
            known = exact | np.logical_and.reduce([c == nom for c in corners])
    return MV(N.bool_, nom, unk=a.unk | b.unk | ~known)


def fabs(a, dt):
    with np.errstate(all="ignore"):
        cross = (a.lo < 0) & (a.hi > 0)
        out = fmap(np.abs, [a], dt)
        out.lo = np.where(cross, 0.0, out.lo)
        out.hi = np.where(cross, np.maximum(-a.lo, a.hi), out.hi)
    return out


def fperiodic(fn, a, dt, slack):
    """sin/cos: 1-Lipschitz, not monotone: the nominal value +- the width."""
    with np.errstate(all="ignore"):
        nom = N.round_to(fn(a.nom), dt)
        w = a.hi - a.lo
        lo = np.where(w > 0, np.maximum(nom - w, -1.0), nom)
        hi = np.where(w > 0, np.minimum(nom + w, 1.0), nom)
        unk = a.unk | ((w > 0) & ~np.isfinite(w))
    lo, hi = N.widen(lo, hi, dt, slack([a.nom], nom))
    return MV(dt, nom, lo, hi, unk)


class Semantics:
    """The error bounds of the backend under test, per operation, in units of
    the result dtype. The CPU computes `+ - * / sqrt` correctly rounded;
    functions come from polynomial approximations; f16/bf16 functions are
    computed in f32 and rounded (<= 1 ulp). On CUDA, `mul`+`add` may be
    contracted into an fma and functions use the `.approx` instructions."""

    # f32 ulps of the CPU's approximations, and an absolute bound (in f32
    # epsilons) where the function crosses zero away from x = 0.
    CPU_F32 = {"exp": (3, 0), "exp2": (3, 0), "log": (3, 1), "log2": (3, 1),
               "sqrt": (0, 0), "rsqrt": (2, 0), "sin": (3, 1), "cos": (3, 1),
               "tanh": (4, 1), "erf": (4, 1), "sigmoid": (6, 0), "pow": (4, 0),
               "fma": (1, 0)}

    def __init__(self, backend="cpu"):
        self.backend = backend

    def arith_slack(self, dt):
        if self.backend != "cuda":
            return None
        # fma contraction: off by up to an ulp of the operands' magnitude
        return lambda xs, r: 2 * N.ulp(np.maximum.reduce([np.abs(x) for x in xs] + [r]), dt)

    def fn_slack(self, name, dt):
        ulps, absolute = self.CPU_F32.get(name, (4, 1))
        if self.backend == "cuda":
            ulps, absolute = ulps + 4, absolute + 8
        if dt.mant < 24:  # computed in f32, rounded once or (composites) a few times
            ulps, absolute = (3 if name == "sigmoid" else 1), 0

        def slack(xs, r):
            s = ulps * N.ulp(r, dt) + absolute * dt.eps * (dt.mant >= 24)
            if name == "sigmoid":  # 1/(1+exp(-x)): 0 once exp(-x) overflows
                s = s + 2.0 / N.max_finite(dt)
            if self.backend == "cuda" and name in ("exp", "log"):  # x*log2e rounding
                s = s + N.ulp(r, dt) * np.abs(np.where(np.isfinite(xs[0]), xs[0], 0)) * 2
            return s
        return slack


UNARY_F64 = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "erf": erf64,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "floor": np.floor, "ceil": np.ceil,
    "neg": np.negative,
}


def funary(name, a, dt, sem):
    if name in ("sin", "cos"):
        return fperiodic(np.sin if name == "sin" else np.cos, a, dt, sem.fn_slack(name, dt))
    if name == "abs":
        return fabs(a, dt)
    slack = None if name in ("floor", "ceil", "neg") else sem.fn_slack(name, dt)
    out = fmap(UNARY_F64[name], [a], dt, slack)
    if name == "rsqrt":
        out.unk |= divides_by_open_zero(a)
    return out


# ---------------------------------------------------------------------------
# Dispatch: an operation of the spec on operands already typed by kernelgen
# ---------------------------------------------------------------------------

_INT_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "max": np.maximum, "min": np.minimum,
    # NumPy's semantics, which the spec follows: x // 0 == x % 0 == 0,
    # INT_MIN // -1 == INT_MIN, shifts by >= the width give 0 (or -1 for
    # a negative x >> n), shifts by a negative amount likewise.
    "floordiv": np.floor_divide, "mod": np.remainder, "lshift": np.left_shift,
    "rshift": np.right_shift,
}
_CMP = ("lt", "le", "gt", "ge", "eq", "ne")
# tile.maximum/minimum ignore a NaN operand (cuTile's propagate_nan=False).
_F_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
             "max": np.fmax, "min": np.fmin}


def same_shape(args):
    shape = np.broadcast_shapes(*[a.shape for a in args])
    return [a.broadcast(shape) for a in args]


def binary(op, a, b, dt, sem):
    """`a op b` computed in dtype `dt` (comparisons: operands in dt, result bool)."""
    a, b = same_shape([cast(a, dt), cast(b, dt)])
    if dt.kind != FLOAT:
        with np.errstate(all="ignore"):
            if op in _CMP:
                npop = {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                        "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}[op]
                return MV(N.bool_, npop(a.nom, b.nom), unk=a.unk | b.unk)
            # (NumPy shifts by a negative amount as by a huge one:
            # npy_lshift/npy_rshift cast the count to unsigned.)
            r = _INT_BINARY[op](a.nom, b.nom)
        return MV(dt, np.asarray(r).astype(dt.np), unk=a.unk | b.unk)
    if op in _CMP:
        return fcompare(op, a, b)
    if op in ("floordiv", "mod"):
        return f_floordiv_mod(op, a, b, dt)
    if op == "truediv":
        return fdiv(a, b, dt, sem)
    out = fmap(_F_BINARY[op], [a, b], dt, None if op in ("max", "min") else
               sem.arith_slack(dt))
    if op == "mul":
        out.unk |= zero_times_inf(a, b)
    return zero_sign_open(out) if op in ("max", "min") else out


def unary(op, a, dt, sem):
    """Unary `op` with result dtype `dt` (math functions: operand cast to dt)."""
    if op == "astype":
        return cast(a, dt)
    a = cast(a, dt)
    if dt.kind != FLOAT:
        with np.errstate(all="ignore"):
            if op == "neg":
                return MV(dt, np.negative(a.nom), unk=a.unk)
            if op == "invert":
                return MV(dt, np.invert(a.nom), unk=a.unk)
            if op == "abs":
                return MV(dt, np.abs(a.nom), unk=a.unk)
            if op in ("floor", "ceil"):
                return a  # integers are whole
        raise AssertionError(f"{op} on {dt}")
    return funary(op, a, dt, sem)


def power(a, exponent, dt, sem):
    """`a ** exponent`; exponent a Python int (small) or an MV."""
    a = cast(a, dt)
    if isinstance(exponent, int) and dt.kind != FLOAT:
        # Square and multiply, wrapping after each product: the same as
        # repeated multiplication (products mod 2^n associate), in 31 steps
        # for the generator's 2147483647 rather than 2^31 (seed 20261210 hung).
        with np.errstate(all="ignore"):
            r, base, e = np.ones_like(a.nom), a.nom, exponent
            while e > 0:
                if e & 1:
                    r = (r * base).astype(dt.np)
                base = (base * base).astype(dt.np)
                e >>= 1
        return MV(dt, r, unk=a.unk)
    if isinstance(exponent, int):
        n = abs(exponent)
        slack = lambda xs, r: (2 * n + 2) * N.ulp(r, dt)  # noqa: E731 - squarings
        out = fmap(lambda x: np.power(x, float(exponent)), [a], dt, slack)
        if exponent < 0:
            out.unk |= divides_by_open_zero(a)
        if exponent % 2 == 0 and exponent != 0:  # not monotone around 0
            cross = (a.lo < 0) & (a.hi > 0)
            out.unk |= cross
        return out
    b = cast(exponent, dt)
    a, b = same_shape([a, b])
    out = fmap(np.power, [a, b], dt, sem.fn_slack("pow", dt))
    out.unk |= ~(a.exact() & b.exact()) & ~(a.lo > 0)  # monotone for a positive base only
    return out


def where(c, a, b, dt):
    c, a, b = same_shape([c, cast(a, dt), cast(b, dt)])
    cn = c.nom.astype(bool)
    if dt.kind != FLOAT:
        return MV(dt, np.where(cn, a.nom, b.nom), unk=c.unk | np.where(cn, a.unk, b.unk))
    return MV(dt, np.where(cn, a.nom, b.nom), np.where(cn, a.lo, b.lo),
              np.where(cn, a.hi, b.hi), c.unk | np.where(cn, a.unk, b.unk))


def exact_fma(x, y, z, sign=1.0, zsign=1.0):
    """sign*x*y + zsign*z with one rounding, in x87 extended precision: a
    float64 product that overflows float64 stays finite there."""
    ld = np.longdouble
    return (ld(sign) * x.astype(ld) * y.astype(ld) + ld(zsign) * z.astype(ld)).astype(
        np.float64)


def zero_times_inf(a, b):
    """Where a * b may be 0 * inf (nan) or not: one factor's interval holds
    0 without being 0, the other reaches an infinity. The corners of fmap
    miss it (a function that underflows to 0, widened by its slack to both
    sides of 0, times inf: -inf or inf at the corners, nan at 0; seed
    20270106)."""
    def open_zero(x):
        return (x.lo <= 0) & (x.hi >= 0) & ~((x.lo == 0) & (x.hi == 0))

    def reaches_inf(x):
        return np.isinf(x.lo) | np.isinf(x.hi)
    with np.errstate(all="ignore"):
        return (open_zero(a) & reaches_inf(b)) | (open_zero(b) & reaches_inf(a))


def fma(a, b, c, dt, sem):
    a, b, c = same_shape([cast(a, dt), cast(b, dt), cast(c, dt)])
    out = fmap(exact_fma, [a, b, c], dt, sem.fn_slack("fma", dt))
    out.unk |= zero_times_inf(a, b)
    return out


def hull(a, b):
    """Either result (the implementation may compute one or the other)."""
    if a.dt.kind != FLOAT:
        return MV(a.dt, a.nom, unk=a.unk | b.unk | (a.nom != b.nom))
    a, b = same_shape([a, b])
    with np.errstate(all="ignore"):
        nan_a, nan_b = np.isnan(a.lo) | np.isnan(a.hi), np.isnan(b.lo) | np.isnan(b.hi)
        lo, hi = np.fmin(a.lo, b.lo), np.fmax(a.hi, b.hi)
    unk = a.unk | b.unk | (nan_a != nan_b)
    lo = np.where(nan_a & nan_b, np.nan, lo)
    hi = np.where(nan_a & nan_b, np.nan, hi)
    # zeros of different signs: either sign
    zs = (a.nom == 0) & (b.nom == 0) & (np.signbit(a.nom) != np.signbit(b.nom))
    lo, hi = np.where(zs, -0.0, lo), np.where(zs, 0.0, hi)
    return MV(a.dt, a.nom, lo, hi, unk)
