"""Block indexing, tile creation and elementwise functions of the spec."""

import builtins
import math as _pymath
import numbers

from . import dtypes as D
from .arith import (_int_divide, _like, _unary_math, _wrapped, binary, cast,
                    float_operand)
from .errors import TileTypeError
from .ir import builder, mlir_string, tensor_type
from .ir import current as _ir_current
from .language import (Scalar, Tile, Value, as_operand, broadcast_shapes, check_shape,
                       common_dtype, constant, dtype_arg, materialize, shape_of)

inf = float("inf")
nan = float("nan")


# ---------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------

def _axis(axis, what):
    if isinstance(axis, Value) or not isinstance(axis, numbers.Integral) \
            or not 0 <= axis <= 2:
        raise TileTypeError(f"{what}(axis) needs a constant axis 0, 1 or 2, got {axis!r}")
    return int(axis)


def bid(axis):
    """The index of this block along grid axis `axis` (an int32 scalar)."""
    return Scalar(builder("tile.bid").emit(f"tile.bid {_axis(axis, 'tile.bid')}"), D.int32)


def num_blocks(axis):
    """The number of blocks along grid axis `axis` (an int32 scalar)."""
    b = builder("tile.num_blocks")
    return Scalar(b.emit(f"tile.num_blocks {_axis(axis, 'tile.num_blocks')}"), D.int32)


def cdiv(a, b):
    """ceil(a / b) for integers; works on the host and in kernels."""
    if _ir_current() is None and not isinstance(a, Value) and not isinstance(b, Value):
        return -(-a // b)  # the host: also torch's SymInts while torch traces
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return -(-a // b)
    dt = common_dtype([a, b])
    if dt.kind != D.KIND_INT:
        raise TileTypeError(f"tile.cdiv needs integers, got {dt.name}")
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    # cdiv(a, 0) is 0, like a // 0 (arith.ceildivsi would be undefined)
    known = None if isinstance(b, Value) else _wrapped(b, dt)
    return _int_divide("ceildiv", A, B, dt, shape, known)


# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------

def full(shape, fill_value, dtype=None):
    """A tile of `shape` filled with `fill_value` (a number or a runtime scalar)."""
    shape = check_shape(shape)
    value = as_operand(fill_value, "fill value")
    dt = common_dtype([value]) if dtype is None else dtype_arg(dtype)
    if isinstance(value, Tile) and value.shape != ():
        raise TileTypeError(f"tile.full needs a scalar fill value, got a tile of shape {value.shape}",
                            "use tile.broadcast_to(t, shape)")
    builder("tile.full")
    return materialize(value, dt, shape)


def zeros(shape, dtype=D.float32):
    """A tile of zeros."""
    return full(shape, 0, dtype)


def ones(shape, dtype=D.float32):
    """A tile of ones."""
    return full(shape, 1, dtype)


def arange(size, dtype=D.int32, *, start=0, step=1):
    """The 1-d tile [start, start + step, ..., start + (size-1) * step] of
    `dtype`; `size` a power of two, `start` and `step` numbers or runtime
    scalars (computed in `dtype`)."""
    (n,) = check_shape((size,), "arange")
    dt = dtype_arg(dtype)
    b = builder("tile.arange")
    it = dt if dt.kind == D.KIND_INT else D.int32
    t = cast(Tile(b.emit(f"tile.iota : {tensor_type((n,), it.mlir)}"), (n,), it), dt)
    start, step = as_operand(start, "arange start"), as_operand(step, "arange step")
    if isinstance(step, Value) or step != 1:
        t = cast(binary("mul", t, step), dt)
    if isinstance(start, Value) or start != 0:
        t = cast(binary("add", t, start), dt)
    return t


# ---------------------------------------------------------------------------
# Elementwise functions
# ---------------------------------------------------------------------------

def _math_fn(name, pyfn, doc):
    def fn(x):
        x = float_operand(x, name)
        if not isinstance(x, Value):
            return pyfn(x)
        return _unary_math(name, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _pyerf(x):
    return _pymath.erf(x)


exp = _math_fn("exp", _pymath.exp, "e**x elementwise.")
exp2 = _math_fn("exp2", lambda x: 2.0 ** x, "2**x elementwise.")
log = _math_fn("log", _pymath.log, "Natural logarithm elementwise.")
log2 = _math_fn("log2", _pymath.log2, "Base-2 logarithm elementwise.")
sqrt = _math_fn("sqrt", _pymath.sqrt, "Square root elementwise.")
rsqrt = _math_fn("rsqrt", lambda x: 1.0 / _pymath.sqrt(x), "1/sqrt(x) elementwise.")
sin = _math_fn("sin", _pymath.sin, "Sine elementwise.")
cos = _math_fn("cos", _pymath.cos, "Cosine elementwise.")
tanh = _math_fn("tanh", _pymath.tanh, "Hyperbolic tangent elementwise.")
erf = _math_fn("erf", _pyerf, "The error function elementwise.")


def sigmoid(x):
    """1 / (1 + exp(-x)) elementwise."""
    x = float_operand(x, "sigmoid")
    if not isinstance(x, Value):
        return 1.0 / (1.0 + _pymath.exp(-x))
    return binary("truediv", 1.0, binary("add", 1.0, exp(-x)))


def abs(x):
    """|x| elementwise (math.absf; max(x, -x) for signed integers)."""
    x = as_operand(x, "abs")
    if not isinstance(x, Value):
        return builtins.abs(x)
    if x.dtype.kind == D.KIND_FLOAT:
        return _unary_math("absf", x)
    if x.dtype.kind == D.KIND_BOOL or not x.dtype.signed:
        return x
    # max(x, 0 - x), not math.absi: the GPU lowers absi only for i32 (a
    # libdevice call) and failed on i8/i16/i64 tiles; abs(INT_MIN) wraps to
    # INT_MIN, as in NumPy.
    return binary("max", x, binary("sub", 0, x))


def _rounding(name, pyfn):
    def fn(x):
        x = as_operand(x, name)
        if not isinstance(x, Value):
            return pyfn(x)
        if x.dtype.kind != D.KIND_FLOAT:
            return x  # integers are already whole
        return _unary_math(name, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(x) elementwise; integers pass through."
    return fn


floor = _rounding("floor", _pymath.floor)
ceil = _rounding("ceil", _pymath.ceil)


def maximum(a, b):
    """Elementwise maximum (NaN-propagating for floats, like torch.maximum)."""
    return binary("max", a, b)


def minimum(a, b):
    """Elementwise minimum (NaN-propagating for floats, like torch.minimum)."""
    return binary("min", a, b)


def where(cond, a, b):
    """`a` where `cond` is true, else `b`; all three broadcast together."""
    cond, a, b = as_operand(cond, "condition"), as_operand(a), as_operand(b)
    if not isinstance(cond, Value):
        return a if cond else b
    if cond.dtype.kind != D.KIND_BOOL:
        cond = cast(cond, D.bool_)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(cond), shape_of(a), shape_of(b))
    C = materialize(cond, D.bool_, shape)
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    types = A.type if shape is None else f"{C.type}, {A.type}"
    return _like(A, builder().emit(f"arith.select {C.name}, {A.name}, {B.name} : {types}"), dt)


def fma(a, b, c):
    """a * b + c elementwise (math.fma for floats)."""
    a, b, c = as_operand(a), as_operand(b), as_operand(c)
    if not any(isinstance(v, Value) for v in (a, b, c)):
        return a * b + c
    dt = common_dtype([a, b, c])
    if dt.kind != D.KIND_FLOAT:
        return binary("add", binary("mul", a, b), c)
    shape = broadcast_shapes(shape_of(a), shape_of(b), shape_of(c))
    A, B, C = (materialize(v, dt, shape) for v in (a, b, c))
    t = A.type
    return _like(A, builder().emit(f"math.fma {A.name}, {B.name}, {C.name} : {t}"), dt)


def astype(x, dtype):
    """`x` converted to `dtype`."""
    x = as_operand(x)
    dt = dtype_arg(dtype)
    if not isinstance(x, Value):
        return constant(x, dt, None)
    return cast(x, dt)


# ---------------------------------------------------------------------------
# Debugging
# ---------------------------------------------------------------------------

def device_print(prefix, *args):
    """Prints scalars and tiles from every block (tile.print)."""
    b = builder("tile.device_print")
    vals = []
    for a in args:
        a = as_operand(a)
        if not isinstance(a, Value):
            a = constant(a, common_dtype([a]))
        vals.append(a)
    text = f"tile.print {mlir_string(prefix)}"
    if vals:
        text += " " + ", ".join(v.name for v in vals) + " : " + ", ".join(v.type for v in vals)
    b.emit(text, nres=0)


def device_assert(cond, message=""):
    """Aborts the kernel when any lane of `cond` is false (tile.assert)."""
    cond = as_operand(cond, "condition")
    if not isinstance(cond, Value):
        if not cond:
            raise TileTypeError(f"assertion failed at trace time: {message}")
        return
    if cond.dtype.kind != D.KIND_BOOL:
        cond = cast(cond, D.bool_)
    builder().emit(f"tile.assert {cond.name}, {mlir_string(message)} : {cond.type}", nres=0)
