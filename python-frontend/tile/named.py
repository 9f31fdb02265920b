"""cuTile's named elementwise functions (`tile.add`, `tile.greater`, ...), its
math functions with their `rounding_mode` / `flush_to_zero` / `propagate_nan`
keywords, `RoundingMode`, and `mma_scaled` (Blackwell only).

What the keywords do in tile (docs/cutile.md lists them):
- `flush_to_zero=True` (float32 only) flushes subnormal inputs and results to
  zero of the same sign, on every backend.
- `rounding_mode` is checked (the op must take the mode, the dtype must allow
  it). `RN` is what tile computes; `RZ`/`RM`/`RP` act on float32 and float64
  add, sub, mul, truediv and sqrt (`directed` below) and are ignored on
  float16/bfloat16 (rounded to nearest); FULL/APPROX use tile's own
  implementation of the function.
- `propagate_nan` on minimum/maximum: False (cuTile's default) ignores a NaN
  operand, True gives NaN.
"""

import builtins
import enum
import math as _pymath
import numbers

from . import dtypes as D
from . import ops as _ops
from .arith import (_emit_binary, _like, _unary_math, binary, cast, compare, float_operand,
                    invert, negate, power)
from .errors import TileTypeError, TileUnsupportedFeatureError, TileValueError
from .ir import builder
from .language import (Value, as_operand, broadcast_shapes, common_dtype, constant,
                       dtype_arg, materialize, shape_of)


class RoundingMode(enum.Enum):
    """Rounding of floating-point results (cuTile's `RoundingMode`)."""

    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


_DIRECTED = frozenset({RoundingMode.RN, RoundingMode.RZ, RoundingMode.RM, RoundingMode.RP})
# The rounding modes each function takes (as in cuTile); every RoundingMode for astype.
ROUNDING_MODES = {
    "add": _DIRECTED, "sub": _DIRECTED, "mul": _DIRECTED,
    "truediv": _DIRECTED | {RoundingMode.FULL, RoundingMode.APPROX},
    "sqrt": _DIRECTED | {RoundingMode.APPROX},
    "exp": frozenset({RoundingMode.FULL, RoundingMode.APPROX}),
    "tanh": frozenset({RoundingMode.FULL, RoundingMode.APPROX}),
    "sum": _DIRECTED, "prod": _DIRECTED, "cumsum": _DIRECTED, "cumprod": _DIRECTED,
    "astype": frozenset(RoundingMode),
}
# The functions that take flush_to_zero.
FLUSH_TO_ZERO = frozenset({"add", "sub", "mul", "truediv", "maximum", "minimum", "max",
                           "min", "sum", "prod", "cumsum", "cumprod", "exp2", "sqrt",
                           "rsqrt"})
_UNRESTRICTED = (D.float16, D.bfloat16, D.float32, D.float64)
_F32_MIN_NORMAL = 1.1754943508222875e-38


def _bool_hint(fn, name, v):
    if isinstance(v, Value):
        raise TileValueError(f"{fn}: {name} must be a compile-time bool, got a runtime value")
    if not isinstance(v, (bool, numbers.Integral)) or v not in (0, 1):
        raise TileValueError(f"{fn}: {name} must be True or False, got {v!r}")
    return bool(v)


def check_math_hints(fn, dtype, rounding_mode=None, flush_to_zero=False):
    """Validates cuTile's rounding_mode / flush_to_zero of `fn` on operands of
    `dtype` (None: Python numbers only). Returns whether to flush subnormals."""
    if rounding_mode is not None:
        if not isinstance(rounding_mode, RoundingMode):
            raise TileValueError(f"{fn}: rounding_mode must be a tile.RoundingMode or None, "
                                 f"got {rounding_mode!r}")
        allowed = ROUNDING_MODES.get(fn, frozenset())
        if rounding_mode not in allowed:
            names = ", ".join(sorted(f"RoundingMode.{m.name}" for m in allowed)) or "none"
            raise TileValueError(f"{fn} does not take rounding_mode=RoundingMode."
                                 f"{rounding_mode.name}", f"it takes {names}")
        if dtype is not None and fn != "astype":
            if dtype not in _UNRESTRICTED:
                raise TileTypeError(f"{fn}: rounding_mode applies to float16, bfloat16, "
                                    f"float32 and float64 values, got {dtype.name}")
            full = (RoundingMode.FULL, RoundingMode.APPROX)
            if rounding_mode in full and dtype is not D.float32:
                raise TileTypeError(f"{fn}: rounding_mode=RoundingMode.{rounding_mode.name} "
                                    f"applies to float32 values, got {dtype.name}")
    ftz = _bool_hint(fn, "flush_to_zero", flush_to_zero)
    if ftz:
        if fn not in FLUSH_TO_ZERO:
            raise TileValueError(f"{fn} does not take flush_to_zero=True")
        if dtype is not None and dtype is not D.float32:
            raise TileTypeError(f"{fn}: flush_to_zero applies to float32 values, "
                                f"got {dtype.name}")
    return ftz


def flush_subnormals(v):
    """`v` with float32 subnormals replaced by zero of the same sign."""
    if not isinstance(v, Value):
        if isinstance(v, float) and builtins.abs(v) < _F32_MIN_NORMAL:
            return _pymath.copysign(0.0, v)
        return v
    if v.dtype is not D.float32:
        return v
    b = builder()
    mag = _unary_math("absf", v)
    small = compare("lt", mag, _F32_MIN_NORMAL)
    zero = materialize(0.0, D.float32, shape_of(v))
    signed_zero = _like(v, b.emit(f"math.copysign {zero.name}, {v.name} : {v.type}"), v.dtype)
    types = v.type if shape_of(v) is None else f"{small.type}, {v.type}"
    return _like(v, b.emit(f"arith.select {small.name}, {signed_zero.name}, {v.name} : "
                           f"{types}"), v.dtype)


def _operand_dtype(op, *vals):
    """The dtype `op` computes in (None when every operand is a Python number)."""
    if not any(isinstance(v, Value) for v in vals):
        return None
    dt = common_dtype(list(vals))
    if op == "truediv" and dt.kind != D.KIND_FLOAT:
        return D.float32
    return dt


# ---------------------------------------------------------------------------
# Directed rounding (RZ, RM, RP) of float32/float64 add, sub, mul, truediv, sqrt
# ---------------------------------------------------------------------------
#
# The result rounded to nearest, r, is one ulp step from the directed result at
# most. The sign of (exact - r) comes from an error-free transformation: the
# rounding error of a sum (TwoSum), of a product (fma(a, b, -r)), the
# remainder of a quotient (fma(-r, b, a), sign times b's) or of a square root
# (fma(-r, r, x)); a float32 quotient is computed in float64 instead. r then
# steps one ulp (its bits +-1) when the exact value lies on the wrong side of
# it; an overflow to infinity of finite operands steps back to the largest
# finite value where the mode rounds toward it.

_STEPS = (RoundingMode.RZ, RoundingMode.RM, RoundingMode.RP)
_BITS = {32: D.int32, 64: D.int64}


def _f(name, *vals):
    v = vals[0]
    args = ", ".join(x.name for x in vals)
    return _like(v, builder().emit(f"{name} {args} : {v.type}"), v.dtype)


def _sel(c, a, b):
    types = a.type if shape_of(a) is None else f"{c.type}, {a.type}"
    return _like(a, builder().emit(f"arith.select {c.name}, {a.name}, {b.name} : {types}"),
                 a.dtype)


def _bitcast(v, dt):
    t = dt.mlir if shape_of(v) is None else v.type.replace(v.dtype.mlir, dt.mlir)
    out = builder().emit(f"arith.bitcast {v.name} : {v.type} to {t}")
    return _like(v, out, dt)


def directed(op, mode, a, b=None):
    """`op` ("add", "sub", "mul", "truediv", "sqrt") of float32/float64 values
    `a`, `b` (same dtype and shape) rounded by `mode` (RZ, RM or RP)."""
    dt, shape = a.dtype, shape_of(a)
    zero = materialize(0.0, dt, shape)
    if op == "sqrt":
        r = _unary_math("sqrt", a)
        err = _f("math.fma", negate(r), r, a)
    elif op == "mul":
        r = _f("arith.mulf", a, b)
        err = _f("math.fma", a, b, negate(r))
    elif op == "truediv" and dt is D.float32:
        # through float64, not the float32 residual: the GPU's float32 divide
        # is not correctly rounded, and the float64 quotient is never on the
        # wrong side of a float32 value it does not equal
        q = _f("arith.divf", cast(a, D.float64), cast(b, D.float64))
        r = cast(q, D.float32)
        err = _f("arith.subf", q, cast(r, D.float64))
    elif op == "truediv":
        r = _f("arith.divf", a, b)
        rem = _f("math.fma", negate(r), b, a)
        err = _sel(compare("lt", b, zero), negate(rem), rem)
    else:
        if op == "sub":
            b = negate(b)
        r = _f("arith.addf", a, b)  # TwoSum
        bv = _f("arith.subf", r, a)
        av = _f("arith.subf", r, bv)
        err = _f("arith.addf", _f("arith.subf", a, av), _f("arith.subf", b, bv))
    above, below = compare("gt", err, 0.0), compare("lt", err, 0.0)  # exact vs r
    positive, negative_r = compare("gt", r, zero), compare("lt", r, zero)
    it = _BITS[dt.bits]
    bits = _bitcast(r, it)
    one = materialize(1, it, shape)
    up = _bitcast(_sel(negative_r, _f("arith.subi", bits, one), _f("arith.addi", bits, one)), dt)
    down = _bitcast(_sel(positive, _f("arith.subi", bits, one), _f("arith.addi", bits, one)), dt)
    if mode is RoundingMode.RP:
        out = _sel(above, up, r)
    elif mode is RoundingMode.RM:
        out = _sel(below, down, r)
    else:  # toward zero: down from a positive r, up from a negative one
        out = _sel(binary("and", positive, below), down, _sel(binary("and", negative_r, above),
                                                               up, r))
    # finite operands that overflowed to +-inf: toward zero / the bound
    inf = materialize(float("inf"), dt, shape)
    big = materialize(dt._limits[0], dt, shape)
    finite = compare("lt", _unary_math("absf", a), inf)
    if b is not None:
        finite = binary("and", finite, compare("lt", _unary_math("absf", b), inf))
    if op == "truediv":  # x / 0 is an exact infinity
        finite = binary("and", finite, compare("ne", b, zero))
    overflow = binary("and", finite, compare("eq", _unary_math("absf", r), inf))
    bound = {RoundingMode.RZ: _f("math.copysign", big, r),
             RoundingMode.RM: _sel(positive, big, r),
             RoundingMode.RP: _sel(negative_r, negate(big), r)}[mode]
    return _sel(overflow, bound, out)


# ---------------------------------------------------------------------------
# Arithmetic with cuTile's keywords
# ---------------------------------------------------------------------------

def _rounded_binary(op):
    def fn(x, y, /, *, rounding_mode=None, flush_to_zero=False):
        x, y = as_operand(x), as_operand(y)
        dt = _operand_dtype(op, x, y)
        ftz = check_math_hints(op, dt, rounding_mode, flush_to_zero)
        if ftz:
            x, y = flush_subnormals(x), flush_subnormals(y)
        if rounding_mode in _STEPS and dt in (D.float32, D.float64):
            shape = broadcast_shapes(shape_of(x), shape_of(y))
            out = directed(op, rounding_mode, materialize(x, dt, shape),
                           materialize(y, dt, shape))
        else:
            out = binary(op, x, y)
        return flush_subnormals(out) if ftz else out
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"Elementwise `{op}` of `x` and `y` (broadcast, promoted); `rounding_mode` "
                  "and `flush_to_zero` as in cuTile (see docs/cutile.md).")
    return fn


add = _rounded_binary("add")
sub = _rounded_binary("sub")
mul = _rounded_binary("mul")
truediv = _rounded_binary("truediv")


def _plain_binary(name, op, doc):
    def fn(x, y, /):
        return binary(op, x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


floordiv = _plain_binary("floordiv", "floordiv", "Elementwise `x // y` (Python's floor).")
mod = _plain_binary("mod", "mod", "Elementwise `x % y` (the divisor's sign, as Python).")
bitwise_and = _plain_binary("bitwise_and", "and", "Elementwise `x & y`.")
bitwise_or = _plain_binary("bitwise_or", "or", "Elementwise `x | y`.")
bitwise_xor = _plain_binary("bitwise_xor", "xor", "Elementwise `x ^ y`.")
bitwise_lshift = _plain_binary("bitwise_lshift", "lshift", "Elementwise `x << y`.")
bitwise_rshift = _plain_binary("bitwise_rshift", "rshift",
                               "Elementwise `x >> y` (arithmetic for signed types).")


def pow(x, y, /):
    """Elementwise `x ** y`."""
    return power(x, y)


def divmod(x, y, /):
    """`(x // y, x % y)` elementwise, as Python's divmod."""
    return binary("floordiv", x, y), binary("mod", x, y)


def bitwise_not(x, /):
    """Elementwise `~x`; `not x` for a Python bool."""
    x = as_operand(x)
    if isinstance(x, bool):
        return not x
    return invert(x)


def negative(x, /):
    """Elementwise `-x`."""
    return negate(x)


def _comparison(name, op):
    def fn(x, y, /):
        return compare(op, x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise comparison ({name}); a bool tile."
    return fn


equal = _comparison("equal", "eq")
not_equal = _comparison("not_equal", "ne")
greater = _comparison("greater", "gt")
greater_equal = _comparison("greater_equal", "ge")
less = _comparison("less", "lt")
less_equal = _comparison("less_equal", "le")


def _extremum(name, op):
    numf = {"max": "arith.maxnumf", "min": "arith.minnumf"}[op]

    def fn(x, y, /, *, flush_to_zero=False, propagate_nan=False):
        x, y = as_operand(x), as_operand(y)
        dt = _operand_dtype(op, x, y)
        ftz = check_math_hints(name, dt, None, flush_to_zero)
        nan = _bool_hint(name, "propagate_nan", propagate_nan)
        if ftz:
            x, y = flush_subnormals(x), flush_subnormals(y)
        if dt is None or dt.kind != D.KIND_FLOAT or nan:
            out = binary(op, x, y)  # maximumf / minimumf: NaN wins
            if dt is None and not nan:  # Python numbers: NaN ignored
                out = y if _pymath.isnan(x) else x if _pymath.isnan(y) else out
        else:
            shape = broadcast_shapes(shape_of(x), shape_of(y))
            out = _emit_binary(numf, materialize(x, dt, shape), materialize(y, dt, shape),
                               dt, shape)
        return flush_subnormals(out) if ftz else out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name}. A NaN operand is ignored unless propagate_nan=True "
                  "(then the result is NaN).")
    return fn


maximum = _extremum("maximum", "max")
minimum = _extremum("minimum", "min")


# ---------------------------------------------------------------------------
# Math functions
# ---------------------------------------------------------------------------

def exp(x, /, *, rounding_mode=None):
    """e**x elementwise (rounding_mode FULL/APPROX: accepted, tile's exp)."""
    x = float_operand(x, "exp")
    check_math_hints("exp", _operand_dtype("exp", x), rounding_mode)
    return _ops.exp(x)


def tanh(x, /, *, rounding_mode=None):
    """Hyperbolic tangent elementwise (rounding_mode FULL/APPROX: accepted)."""
    x = float_operand(x, "tanh")
    check_math_hints("tanh", _operand_dtype("tanh", x), rounding_mode)
    return _ops.tanh(x)


def _flushing_unary(name, impl, doc, rounding=False):
    def body(x, rounding_mode, flush_to_zero):
        x = float_operand(x, name)
        ftz = check_math_hints(name, _operand_dtype(name, x), rounding_mode, flush_to_zero)
        if ftz:
            x = flush_subnormals(x)
        out = impl(x, rounding_mode) if rounding else impl(x)
        return flush_subnormals(out) if ftz else out

    if rounding:
        def fn(x, /, *, rounding_mode=None, flush_to_zero=False):
            return body(x, rounding_mode, flush_to_zero)
    else:
        def fn(x, /, *, flush_to_zero=False):
            return body(x, None, flush_to_zero)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _sqrt(x, rounding_mode=None):
    if rounding_mode in _STEPS and isinstance(x, Value) and x.dtype in (D.float32, D.float64):
        return directed("sqrt", rounding_mode, x)
    return _ops.sqrt(x)


exp2 = _flushing_unary("exp2", _ops.exp2, "2**x elementwise.")
rsqrt = _flushing_unary("rsqrt", _ops.rsqrt, "1/sqrt(x) elementwise.")
sqrt = _flushing_unary("sqrt", _sqrt, "Square root elementwise.", rounding=True)


def _math(name, pyfn, doc):
    def fn(x, /):
        x = float_operand(x, name)
        if not isinstance(x, Value):
            return pyfn(x)
        return _unary_math(name, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


tan = _math("tan", _pymath.tan, "Tangent elementwise.")
sinh = _math("sinh", _pymath.sinh, "Hyperbolic sine elementwise.")
cosh = _math("cosh", _pymath.cosh, "Hyperbolic cosine elementwise.")


def atan2(x1, x2, /):
    """The angle of (x2, x1) in radians, in [-pi, pi], elementwise."""
    x1, x2 = float_operand(x1, "atan2"), float_operand(x2, "atan2")
    if not isinstance(x1, Value) and not isinstance(x2, Value):
        return _pymath.atan2(x1, x2)
    dt = common_dtype([x1, x2])
    shape = broadcast_shapes(shape_of(x1), shape_of(x2))
    return _emit_binary("math.atan2", materialize(x1, dt, shape), materialize(x2, dt, shape),
                        dt, shape)


def isnan(x, /):
    """True where `x` is NaN (never for integers and bools)."""
    x = as_operand(x, "isnan")
    if not isinstance(x, Value):
        return isinstance(x, float) and _pymath.isnan(x)
    if x.dtype.kind != D.KIND_FLOAT:
        return materialize(False, D.bool_, shape_of(x))
    name = builder().emit(f"arith.cmpf uno, {x.name}, {x.name} : {x.type}")
    return _like(x, name, D.bool_)


def astype(x, dtype, /, *, rounding_mode=None):
    """`x` converted to `dtype` (rounding_mode: checked, then round to nearest)."""
    check_math_hints("astype", None, rounding_mode)
    return _ops.astype(x, dtype)


def mma_scaled(x, x_scale, y, y_scale, /, acc):
    """Block-scaled matrix product: Blackwell (sm_100) tensor cores only."""
    raise TileUnsupportedFeatureError(
        "mma_scaled needs block-scaled tensor cores of sm_100 (Blackwell); tile's targets "
        "(sm_80/sm_90 and the CPU) have none",
        "scale the operands explicitly: tile.mma(x * x_scale, y * y_scale, acc)")


def dtype_call(dt, value):
    """`tile.int16(5)`: a scalar of dtype `dt` (a cast of a traced value)."""
    dt = dtype_arg(dt)
    value = as_operand(value, f"{dt.name}() argument")
    if isinstance(value, Value):
        return cast(value, dt)
    return constant(value, dt)
