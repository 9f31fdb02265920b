"""cuTile's named arithmetic, comparison, bitwise and math functions, their
hints (rounding_mode, flush_to_zero, propagate_nan), dtype constructors,
static_eval/static_assert/ensure_constant, printf/print/assert_, the
annotations and the error classes, written as `import tile as ct` kernels.

Numerics run on the backend tile._tile provides (the CPU here, the GPU in the
GPU suite) against NumPy in float64 on random inputs, with poisoned outputs.
"""

import re
import typing

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, assert_close, line_of

B = 128
N = 300  # a ragged last block


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(16)


@ct.kernel
def binop(x, y, out, OP: ct.Constant[str], BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    ct.store(out, index=(i,), tile=getattr(ct, OP)(a, b))


@ct.kernel
def unop(x, out, OP: ct.Constant[str], BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    ct.store(out, index=(i,), tile=getattr(ct, OP)(a))


def run_binop(dev, op, x, y, out_dtype):
    out = dev.poisoned(x.shape, out_dtype)
    binop[(ct.cdiv(x.size, B),)](dev.put(x), dev.put(y), out, OP=op, BLOCK=B)
    return dev.get(out)


def run_unop(dev, op, x, out_dtype):
    out = dev.poisoned(x.shape, out_dtype)
    unop[(ct.cdiv(x.size, B),)](dev.put(x), out, OP=op, BLOCK=B)
    return dev.get(out)


FLOAT_BINOPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
    "floordiv": np.floor_divide, "mod": np.mod, "pow": np.power, "atan2": np.arctan2,
    "maximum": np.fmax, "minimum": np.fmin,
}


@pytest.mark.numerics
@pytest.mark.parametrize("op", sorted(FLOAT_BINOPS))
def test_float_binary_functions(dev, rng, op):
    x = rng.uniform(0.5, 4.0, N).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, N).astype(np.float32)
    if op == "pow":
        y = rng.uniform(-2.0, 2.0, N).astype(np.float32)
    else:
        x = x * np.where(rng.random(N) < 0.5, -1, 1).astype(np.float32)
    y[np.abs(y) < 0.1] = 0.75
    got = run_binop(dev, op, x, y, np.float32)
    want = FLOAT_BINOPS[op](x.astype(np.float64), y.astype(np.float64))
    if op in ("floordiv", "mod"):  # f32 rounding of x / y near an integer
        want = FLOAT_BINOPS[op](x, y).astype(np.float64)
    assert_close(got, want, rtol=3e-6, atol=2e-6)


INT_BINOPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "floordiv": np.floor_divide,
    "mod": np.mod, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_lshift": np.left_shift,
    "bitwise_rshift": np.right_shift, "maximum": np.maximum, "minimum": np.minimum,
}


@pytest.mark.numerics
@pytest.mark.parametrize("op", sorted(INT_BINOPS))
def test_int_binary_functions(dev, rng, op):
    x = rng.integers(-1000, 1000, N).astype(np.int32)
    y = rng.integers(-50, 50, N).astype(np.int32)
    if op in ("bitwise_lshift", "bitwise_rshift"):
        y = rng.integers(0, 31, N).astype(np.int32)
    y[y == 0] = 7
    got = run_binop(dev, op, x, y, np.int32)
    np.testing.assert_array_equal(got, INT_BINOPS[op](x, y))


CMPS = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
        "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal}


@ct.kernel
def cmpop(x, y, out, OP: ct.Constant[str], BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    c = getattr(ct, OP)(a, b)
    ct.store(out, index=(i,), tile=ct.where(c, 1, 0).astype(ct.int32))


@pytest.mark.numerics
@pytest.mark.parametrize("op", sorted(CMPS))
def test_comparisons(dev, rng, op):
    x = rng.integers(-3, 3, N).astype(np.float32)
    y = rng.integers(-3, 3, N).astype(np.float32)
    x[::17] = np.nan  # every comparison with NaN is false but !=
    out = dev.poisoned(N, np.int32)
    cmpop[(ct.cdiv(N, B),)](dev.put(x), dev.put(y), out, OP=op, BLOCK=B)
    np.testing.assert_array_equal(dev.get(out), CMPS[op](x, y).astype(np.int32))


UNARY = {"tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "negative": np.negative,
         "exp": np.exp, "exp2": np.exp2, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v),
         "tanh": np.tanh, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
         "floor": np.floor, "ceil": np.ceil, "abs": np.abs}


@pytest.mark.numerics
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_math(dev, rng, op):
    lo = 0.05 if op in ("sqrt", "rsqrt", "log", "log2") else -1.4
    x = rng.uniform(lo, 1.4, N).astype(np.float32)
    got = run_unop(dev, op, x, np.float32)
    assert_close(got, UNARY[op](x.astype(np.float64)), rtol=2e-5, atol=2e-6)


@pytest.mark.numerics
def test_isnan_and_bitwise_not(dev, rng):
    x = rng.standard_normal(N).astype(np.float32)
    x[rng.random(N) < 0.3] = np.nan
    x[5] = np.inf
    got = run_unop(dev, "isnan", x, np.bool_)
    np.testing.assert_array_equal(got, np.isnan(x))
    i = rng.integers(-2 ** 31, 2 ** 31 - 1, N).astype(np.int32)
    np.testing.assert_array_equal(run_unop(dev, "bitwise_not", i, np.int32), ~i)


@ct.kernel
def divmods(x, y, q, r, q2, r2, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    d, m = divmod(a, b)  # Python's divmod on tiles: Tile.__divmod__
    ct.store(q, index=(i,), tile=d)
    ct.store(r, index=(i,), tile=m)
    d2, m2 = ct.divmod(a, 3)
    ct.store(q2, index=(i,), tile=d2)
    ct.store(r2, index=(i,), tile=m2)


@pytest.mark.numerics
def test_divmod(dev, rng):
    x = rng.integers(-100, 100, N).astype(np.int32)
    y = rng.integers(1, 9, N).astype(np.int32) * rng.choice([-1, 1], N).astype(np.int32)
    outs = [dev.poisoned(N, np.int32) for _ in range(4)]
    divmods[(ct.cdiv(N, B),)](dev.put(x), dev.put(y), *outs, BLOCK=B)
    q, r, q2, r2 = (dev.get(o) for o in outs)
    np.testing.assert_array_equal(q, x // y)
    np.testing.assert_array_equal(r, x % y)
    np.testing.assert_array_equal(q2, x // 3)
    np.testing.assert_array_equal(r2, x % 3)


# -- hints -----------------------------------------------------------------

@ct.kernel
def nan_minmax(x, y, lo, hi, lo_nan, hi_nan, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    ct.store(lo, index=(i,), tile=ct.minimum(a, b))
    ct.store(hi, index=(i,), tile=ct.maximum(a, b, propagate_nan=False))
    ct.store(lo_nan, index=(i,), tile=ct.minimum(a, b, propagate_nan=True))
    ct.store(hi_nan, index=(i,), tile=ct.maximum(a, b, propagate_nan=True))


@pytest.mark.numerics
def test_minimum_maximum_propagate_nan(dev, rng):
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    x[rng.random(N) < 0.2] = np.nan
    y[rng.random(N) < 0.2] = np.nan
    outs = [dev.poisoned(N, np.float32) for _ in range(4)]
    nan_minmax[(ct.cdiv(N, B),)](dev.put(x), dev.put(y), *outs, BLOCK=B)
    lo, hi, lo_nan, hi_nan = (dev.get(o) for o in outs)
    np.testing.assert_array_equal(lo, np.fmin(x, y))  # a NaN operand is ignored
    np.testing.assert_array_equal(hi, np.fmax(x, y))
    np.testing.assert_array_equal(lo_nan, np.minimum(x, y))  # NaN wins
    np.testing.assert_array_equal(hi_nan, np.maximum(x, y))


TINY = np.float32(1.1754944e-38)  # the smallest normal float32


def ftz(v):
    v = np.asarray(v, np.float32)
    return np.where(np.abs(v) < TINY, np.copysign(np.float32(0), v), v)


@ct.kernel
def flushing(x, y, s, p, q, m, r, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    ct.store(s, index=(i,), tile=ct.add(a, b, flush_to_zero=True))
    ct.store(p, index=(i,), tile=ct.mul(a, b, flush_to_zero=True,
                                        rounding_mode=ct.RoundingMode.RN))
    ct.store(q, index=(i,), tile=ct.sub(a, b, flush_to_zero=False))
    ct.store(m, index=(i,), tile=ct.maximum(a, b, flush_to_zero=True))
    ct.store(r, index=(i,), tile=ct.sqrt(a * a, flush_to_zero=True))


@pytest.mark.numerics
def test_flush_to_zero_flushes_subnormal_inputs_and_results(dev, rng):
    x = (rng.standard_normal(N) * 1e-38).astype(np.float32)  # many subnormals
    y = (rng.standard_normal(N) * 1e-38).astype(np.float32)
    y[::3] = rng.standard_normal(len(y[::3])).astype(np.float32)
    assert (np.abs(x) < TINY).sum() > N // 3
    outs = [dev.poisoned(N, np.float32) for _ in range(5)]
    flushing[(ct.cdiv(N, B),)](dev.put(x), dev.put(y), *outs, BLOCK=B)
    s, p, q, m, r = (dev.get(o) for o in outs)
    fx, fy = ftz(x).astype(np.float64), ftz(y).astype(np.float64)
    np.testing.assert_array_equal(s, ftz((fx + fy).astype(np.float32)))
    np.testing.assert_array_equal(p, ftz((fx * fy).astype(np.float32)))
    np.testing.assert_array_equal(q, (x.astype(np.float64) - y).astype(np.float32))
    np.testing.assert_array_equal(m, ftz(np.fmax(fx, fy).astype(np.float32)))
    np.testing.assert_array_equal(np.signbit(s), np.signbit(ftz((fx + fy).astype(np.float32))))
    # x * x of a subnormal-scale x underflows: flushed before the sqrt sees it
    want_r = np.sqrt(ftz((x.astype(np.float64) * x).astype(np.float32)).astype(np.float64))
    assert_close(r, want_r, rtol=1e-6, atol=0)


@ct.kernel
def exp2_flushing(x, flushed, kept, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    ct.store(flushed, index=(i,), tile=ct.exp2(a, flush_to_zero=True))
    ct.store(kept, index=(i,), tile=ct.exp2(a))


@pytest.mark.numerics
def test_exp2_flush_to_zero_flushes_subnormal_results(dev, rng):
    """exp2(x, flush_to_zero=True) is one ex2.approx.ftz on CUDA (no flush
    selects left): results below 2^-126 (x < -126) are zero, subnormal x is
    exp2(0) = 1; plain exp2 keeps its subnormal results."""
    x = rng.uniform(-160.0, 20.0, N).astype(np.float32)
    x[np.abs(x + 126.0) < 0.01] = -130.0  # not at the boundary, where 2 ulp decide
    x[::7] = (rng.standard_normal(len(x[::7])) * 1e-39).astype(np.float32)  # subnormal x
    x[1::7] = rng.uniform(-148.0, -127.0, len(x[1::7])).astype(np.float32)  # subnormal 2^x
    flushed, kept = dev.poisoned(N, np.float32), dev.poisoned(N, np.float32)
    exp2_flushing[(ct.cdiv(N, B),)](dev.put(x), flushed, kept, BLOCK=B)
    flushed, kept = dev.get(flushed), dev.get(kept)
    exact = np.exp2(ftz(x).astype(np.float64))
    normal = exact >= TINY
    np.testing.assert_array_equal(flushed[~normal], 0.0)
    assert_close(flushed[normal], exact[normal], rtol=1e-6, atol=0)
    np.testing.assert_array_equal(flushed[::7], 1.0)
    sub = (x > -148.0) & (x < -127.0)
    assert sub.sum() > N // 8
    assert (kept[sub] > 0).all() and (kept[sub] < TINY).all()
    # subnormals keep fewer bits: within one of the smallest (1.4e-45)
    assert_close(kept[sub], np.exp2(x[sub].astype(np.float64)), rtol=1e-5, atol=1.5e-45)


@ct.kernel
def rsqrt_flushing(x, flushed, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(flushed, index=(i,), tile=ct.rsqrt(ct.load(x, index=(i,), shape=(BLOCK,)),
                                                flush_to_zero=True))


@pytest.mark.numerics
def test_rsqrt_flush_to_zero_of_subnormals_is_infinite(dev, rng):
    """rsqrt(x, flush_to_zero=True) (one rsqrt.approx.ftz on CUDA): a
    subnormal x reads as zero, so its result is inf; normal x as rsqrt."""
    x = np.exp(rng.uniform(-80.0, 80.0, N)).astype(np.float32)
    x[::5] = rng.uniform(1e-45, 1e-38, len(x[::5])).astype(np.float32)
    flushed = dev.poisoned(N, np.float32)
    rsqrt_flushing[(ct.cdiv(N, B),)](dev.put(x), flushed, BLOCK=B)
    flushed = dev.get(flushed)
    sub = x < TINY
    assert sub.sum() >= N // 5
    np.testing.assert_array_equal(flushed[sub], np.inf)
    assert_close(flushed[~sub], 1.0 / np.sqrt(x[~sub].astype(np.float64)), rtol=1e-6, atol=0)


@ct.kernel
def rounding_hints(x, out, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    rm = ct.RoundingMode
    t = ct.add(a, 1.0, rounding_mode=rm.RZ) + ct.truediv(a, 3.0, rounding_mode=rm.APPROX)
    t = t + ct.exp(a, rounding_mode=rm.FULL) + ct.tanh(a, rounding_mode=rm.APPROX)
    t = t + ct.sqrt(ct.abs(a), rounding_mode=rm.RP) + ct.exp2(a, flush_to_zero=True)
    t = t + ct.rsqrt(ct.abs(a) + 1.0, flush_to_zero=False)
    ct.store(out, index=(i,), tile=ct.astype(t, ct.float32, rounding_mode=rm.RN)
             + a.astype(ct.float16, rounding_mode=rm.RZ).astype(ct.float32))


@pytest.mark.numerics
def test_rounding_modes_are_accepted(dev, rng):
    x = rng.uniform(-2, 2, N).astype(np.float32)
    out = dev.poisoned(N, np.float32)
    rounding_hints[(ct.cdiv(N, B),)](dev.put(x), out, BLOCK=B)
    a = x.astype(np.float64)
    want = (a + 1 + a / 3 + np.exp(a) + np.tanh(a) + np.sqrt(np.abs(a)) + np.exp2(a)
            + 1 / np.sqrt(np.abs(a) + 1) + x.astype(np.float16))
    assert_close(dev.get(out), want, rtol=2e-5, atol=2e-5)


@ct.kernel
def directed_op(x, y, out, OP: ct.Constant[str], MODE: ct.Constant[str],
                BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    mode = getattr(ct.RoundingMode, MODE)
    if OP == "sqrt":
        r = ct.sqrt(a, rounding_mode=mode)
    else:
        r = getattr(ct, OP)(a, b, rounding_mode=mode)
    ct.store(out, index=(i,), tile=r)


def _directed_reference(op, mode, x, y):
    """NumPy's round-to-nearest result stepped one ulp by the side the exact
    value (fractions.Fraction) lies on."""
    from fractions import Fraction
    import math
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide}
    with np.errstate(all="ignore"):
        rn = np.sqrt(x) if op == "sqrt" else fn[op](x, y)
    big = np.finfo(x.dtype).max
    out = rn.copy()
    for k in range(x.size):
        a, b, r = float(x[k]), float(y[k]), rn[k]
        if math.isnan(r) or not (math.isfinite(a) and math.isfinite(b)):
            continue
        if math.isinf(r):
            if op == "truediv" and b == 0:
                continue
            if mode == "RZ" or (mode == "RM" and r > 0) or (mode == "RP" and r < 0):
                out[k] = math.copysign(big, r)
            continue
        if op == "sqrt":
            side = (Fraction(a) > Fraction(float(r)) ** 2) - (Fraction(a) < Fraction(float(r)) ** 2)
        else:
            A, Bf = Fraction(a), Fraction(b)
            exact = {"add": A + Bf, "sub": A - Bf, "mul": A * Bf,
                     "truediv": A / Bf if b else None}[op]
            if exact is None:
                continue
            side = (exact > Fraction(float(r))) - (exact < Fraction(float(r)))
        step = (mode == "RP" and side > 0) or (mode == "RM" and side < 0) or \
            (mode == "RZ" and ((side < 0 and r > 0) or (side > 0 and r < 0)))
        if step:
            out[k] = np.nextafter(r, x.dtype.type(np.inf if side > 0 else -np.inf))
    return out


@pytest.mark.numerics
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "sqrt"])
@pytest.mark.parametrize("mode", ["RZ", "RM", "RP"])
def test_directed_rounding_modes(dev, rng, dtype, op, mode):
    x = (rng.standard_normal(N) * 10.0 ** rng.integers(-3, 4, N)).astype(dtype)
    y = (rng.standard_normal(N) * 10.0 ** rng.integers(-3, 4, N)).astype(dtype)
    if op == "sqrt":
        x = np.abs(x)
    big = np.finfo(dtype).max
    x[:8] = [big, -big, big / 2, np.inf, np.nan, 0.0, -0.0, 1.0]  # overflow, specials
    y[:8] = [big, -big, 4.0, 1.0, 1.0, 0.0, 1.0, 3.0]
    if op == "sqrt":
        x[:8] = np.abs(x[:8])
    out = dev.poisoned(N, dtype)
    directed_op[(ct.cdiv(N, B),)](dev.put(x), dev.put(y), out, OP=op, MODE=mode, BLOCK=B)
    got, want = dev.get(out), _directed_reference(op, mode, x, y)
    np.testing.assert_array_equal(got, want)
    with np.errstate(all="ignore"):
        rn = np.sqrt(x) if op == "sqrt" else {"add": np.add, "sub": np.subtract,
                                              "mul": np.multiply, "truediv": np.divide}[op](x, y)
    assert (got != rn).sum() > N // 8  # the mode changed many results


def _hint_kernel(expr):
    """A kernel evaluating `expr` on f32 tile `a` (and i32 tile `n`)."""
    src = (f"def k(x):\n"
           f"    a = ct.load(x, index=(0,), shape=(16,))\n"
           f"    n = ct.arange(16, dtype=ct.int32)\n"
           f"    h = ct.zeros((16,), dtype=ct.float16)\n"
           f"    r = {expr}  # here\n")
    return src


@pytest.mark.parametrize("expr, err, match", [
    ("ct.add(a, a, rounding_mode='RN')", ct.TileValueError, "tile.RoundingMode"),
    ("ct.add(a, a, rounding_mode=ct.RoundingMode.FULL)", ct.TileValueError,
     "add does not take rounding_mode=RoundingMode.FULL"),
    ("ct.exp(a, rounding_mode=ct.RoundingMode.RZ)", ct.TileValueError, "exp does not take"),
    ("ct.add(n, n, rounding_mode=ct.RoundingMode.RZ)", ct.TileTypeError, "got int32"),
    ("ct.truediv(h, h, rounding_mode=ct.RoundingMode.APPROX)", ct.TileTypeError,
     "applies to float32 values, got float16"),
    ("ct.add(h, h, flush_to_zero=True)", ct.TileTypeError, "float32 values, got float16"),
    ("ct.add(a, a, flush_to_zero=2)", ct.TileValueError, "True or False"),
    ("ct.add(a, a, flush_to_zero=ct.bid(0) > 0)", ct.TileValueError, "compile-time bool"),
    ("ct.minimum(a, a, propagate_nan='yes')", ct.TileValueError, "True or False"),
    ("a.astype(ct.float16, rounding_mode=3)", ct.TileValueError, "tile.RoundingMode"),
    ("ct.mma_scaled(a, a, a, a, a)", ct.TileUnsupportedFeatureError, "sm_100"),
    ("ct.float4_e2m1fn(1.0)", ct.TileUnsupportedFeatureError, "sm_100"),
    ("ct.zeros((4,), dtype=ct.float8_e8m0fnu)", ct.TileUnsupportedFeatureError, "sm_100"),
    ("ct.printf('%d %d', n)", ct.TileValueError, "more conversions than the 1"),
    ("ct.printf('%d', n, n)", ct.TileValueError, "1 conversion"),
    ("ct.printf('%q', n)", ct.TileValueError, "incomplete conversion"),
    ("ct.print(x)", ct.TileTypeError, "cannot print an array"),
    ("ct.static_assert(a.dtype == ct.int32, f'want int32, got {a.dtype}')",
     ct.TileStaticAssertionError, r"Static assertion failed: want int32, got tile.float32"),
    ("ct.static_assert(ct.bid(0) == 0)", ct.TileStaticEvalError, "compile-time condition"),
    ("ct.ensure_constant(ct.bid(0))", ct.TileStaticAssertionError,
     "not a compile-time constant"),
])
def test_hint_and_static_errors_name_the_users_line(tmp_path, expr, err, match):
    path = tmp_path / "hint_kernel.py"
    path.write_text("import tile as ct\n\n" + _hint_kernel(expr))
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    k = ct.kernel(ns["k"])
    with pytest.raises(err, match=match) as e:
        k.trace(np.zeros(16, np.float32))
    assert e.value.kernel == "k"
    assert e.value.filename == str(path)
    assert e.value.lineno == 7, str(e.value)


# -- dtype constructors, static helpers -------------------------------------

@ct.kernel
def typed_scalars(x, out, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    s = ct.int16(30000)
    wrapped = s + s  # int16 arithmetic wraps: -5536
    f = ct.float32(ct.bid(0))  # a runtime scalar converted
    ct.static_assert(s.dtype == ct.int16, "a typed scalar")
    ct.static_assert(ct.static_eval(x.ndim * 2) == 2)
    n = ct.ensure_constant(BLOCK // 2)
    t = ct.load(x, index=(i,), shape=(BLOCK,))
    t = t + wrapped.astype(ct.float32) + f + ct.arange(n * 2, dtype=ct.float32)
    ct.store(out, index=(i,), tile=t)


@pytest.mark.numerics
def test_dtype_constructors_and_static_helpers(dev, rng):
    x = rng.standard_normal(N).astype(np.float32)
    out = dev.poisoned(N, np.float32)
    typed_scalars[(ct.cdiv(N, B),)](dev.put(x), out, BLOCK=B)
    blocks = np.arange(N) // B
    want = x.astype(np.float64) - 5536 + blocks + np.arange(N) % B
    assert_close(dev.get(out), want)
    ir = typed_scalars.trace(x, x, BLOCK=B)
    assert re.search(r"arith\.constant 30000 : i16", ir), ir


def test_dtype_constructor_of_a_python_value_is_typed():
    @ct.kernel
    def k(out):
        v = ct.uint8(300 % 256) + ct.float16(0.5)
        ct.static_assert(v.dtype == ct.float16)
        ct.store(out, index=(0,), tile=ct.full((16,), v, dtype=ct.float32))

    ir = k.trace(np.zeros(16, np.float32))
    assert re.search(r"arith\.constant 44 : i8", ir) and ": f16" in ir, ir


# -- printing and assertions -------------------------------------------------

@ct.kernel
def show(x, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(BLOCK,))
    s = ct.sum(t)
    ct.printf("total: %d\n", s)
    ct.print(f"first={t[None]} sum={s}", "end", sep="|")
    ct.assert_(s >= 0, "sum is negative")


@pytest.mark.numerics
def test_printf_print_assert_on_the_device(dev, capfd):
    if dev.backend != "cpu":
        pytest.skip("the GPU print format is tested by test_gpu_debug.py")
    x = np.arange(4, dtype=np.int32)
    show[(1,)](dev.put(x), BLOCK=4)
    out = capfd.readouterr().out
    assert re.search(r"^pid \(0, 0, 0\) total: 6$", out, re.M), out
    assert re.search(r"^pid \(0, 0, 0\) first=\{\} sum=\{\}\|end \[\[0, 1, 2, 3\]\] 6$", out,
                     re.M), out


def test_print_and_assert_ir():
    ir = show.trace(np.arange(4, dtype=np.int32), BLOCK=4)
    assert 'tile.print "total:"' in ir
    assert 'tile.print "first={} sum={}|end"' in ir
    assert re.search(r'tile\.assert %\w+, "sum is negative"', ir), ir


# -- annotations ---------------------------------------------------------------

def test_annotations_are_checked_and_accepted():
    Big = typing.Annotated[ct.Array, ct.ArrayAnnotation(index_dtype=ct.int64,
                                                        static_shape_dims=(0,))]

    @ct.kernel
    def k(x: Big, y: ct.IndexedWithInt64, n: ct.ScalarInt64,
          W: typing.Annotated[int, ct.ConstantAnnotation()]):
        t = ct.load(x, index=(0,), shape=(W,)) + ct.load(y, index=(0,), shape=(W,))
        ct.store(x, index=(0,), tile=t + n)

    z = np.zeros(16, np.float32)
    ir = k.trace(z, z, 3, W=16)  # W is a constant: it can be a shape
    assert "tensor<16xf32>" in ir
    with pytest.raises(ValueError, match="int32 or int64"):
        ct.ArrayAnnotation(index_dtype=ct.float32)
    with pytest.raises(TypeError, match="tuple"):
        ct.ArrayAnnotation(static_shape_dims=[0])
    with pytest.raises(ValueError, match="int32 or int64"):
        ct.ScalarAnnotation(dtype=ct.int16)
    assert ct.ListAnnotation(element=ct.IndexedWithInt64).element.index_dtype is ct.int64
    with pytest.raises(TypeError, match="ArrayAnnotation"):
        ct.ListAnnotation(element=3)


# -- error classes -------------------------------------------------------------

def test_error_classes_sit_under_tiles_own():
    assert issubclass(ct.TileRecursionError, ct.TileTypeError)
    assert issubclass(ct.TileSyntaxError, ct.TileTypeError)
    assert issubclass(ct.TileUnsupportedFeatureError, ct.TileTypeError)
    assert issubclass(ct.TileStaticEvalError, ct.TileTypeError)
    assert issubclass(ct.TileValueError, ValueError)
    assert issubclass(ct.TileStaticAssertionError, AssertionError)
    for e in (ct.TileInternalError, ct.TileCompilerExecutionError,
              ct.TileCompilerTimeoutError):
        assert issubclass(e, ct.TileCompileError)
    assert issubclass(ct.TileCompilerExecutionError, ct.TileInternalError)


def _recurse(t, n):
    return _recurse(t + 1, n)  # recursion


def test_recursion_raises_tile_recursion_error():
    @ct.kernel
    def k(x):
        t = ct.load(x, index=(0,), shape=(16,))
        ct.store(x, index=(0,), tile=_recurse(t, 3))

    with pytest.raises(ct.TileRecursionError, match="recursion") as e:
        k.trace(np.zeros(16, np.float32))
    assert e.value.lineno == line_of(_recurse, "recursion")


def test_try_raises_tile_syntax_error():
    @ct.kernel
    def k(x):
        try:  # try
            ct.store(x, index=(0,), tile=ct.zeros((16,), ct.float32))
        except ValueError:
            pass

    with pytest.raises(ct.TileSyntaxError) as e:
        k.trace(np.zeros(16, np.float32))
    assert e.value.lineno == line_of(k, "try")
