"""Values a kernel body computes with, and the rules that combine them.

- `Tile`: a static-shape tensor value (rank 0 is a scalar tile).
- `Scalar`: a runtime scalar (`tile.bid`, `A.shape[0]`, an int argument).
- `Array`: a kernel argument that points at memory.
Python numbers stay Python numbers (folded at trace time) until they meet a
traced value, which gives them a dtype by the spec's promotion rules.
"""

import math
import numbers
from functools import reduce

from . import dtypes as D
from .errors import TileShapeError, TileTypeError
from .ir import builder, tensor_type

MAX_TILE_ELEMENTS = 1 << 20


class Constant:
    """Marks a compile-time parameter: `BLOCK: tile.Constant[int]`."""

    __slots__ = ("type",)

    def __init__(self, type_=None):
        self.type = type_

    def __class_getitem__(cls, item):
        return cls(item)

    def __repr__(self):
        return f"tile.Constant[{getattr(self.type, '__name__', self.type)}]"


constexpr = Constant


def is_constant_annotation(ann):
    if ann is Constant or isinstance(ann, Constant):
        return True
    if isinstance(ann, str):  # `from __future__ import annotations`
        return "Constant" in ann or "constexpr" in ann
    return False


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

class Value:
    """What Tile and Scalar share: an SSA name, a dtype, Python operators."""

    __slots__ = ("name", "dtype")

    # Python control flow cannot see runtime values.
    def __bool__(self):
        raise TileTypeError(
            "a runtime value was used as a Python bool (`if`, `while`, `and`, "
            "`or`, `not` or a conditional expression); only tile.Constant values "
            "can steer tracing",
            "select elementwise with tile.where(cond, a, b), combine masks with "
            "`&`, `|`, `~`, or make the value a tile.Constant parameter")

    def __index__(self):
        raise TileTypeError(
            "a runtime value was used where Python needs an int (a shape, "
            "range() or an index)",
            "tile shapes must be compile-time constants (tile.Constant[int]); "
            "for a device loop over a runtime bound use tile.range(n)")

    __int__ = __index__

    def __float__(self):
        raise TileTypeError("a runtime value was used as a Python float",
                            "keep it as a tile value, or pass a tile.Constant")

    def __iter__(self):
        raise TileTypeError("tiles cannot be iterated in Python",
                            "use tile.range(...) for a device loop, or a reduction")

    __hash__ = object.__hash__

    # arithmetic
    def __add__(self, o): return binary("add", self, o)
    def __radd__(self, o): return binary("add", o, self)
    def __sub__(self, o): return binary("sub", self, o)
    def __rsub__(self, o): return binary("sub", o, self)
    def __mul__(self, o): return binary("mul", self, o)
    def __rmul__(self, o): return binary("mul", o, self)
    def __truediv__(self, o): return binary("truediv", self, o)
    def __rtruediv__(self, o): return binary("truediv", o, self)
    def __floordiv__(self, o): return binary("floordiv", self, o)
    def __rfloordiv__(self, o): return binary("floordiv", o, self)
    def __mod__(self, o): return binary("mod", self, o)
    def __rmod__(self, o): return binary("mod", o, self)
    def __pow__(self, o): return power(self, o)
    def __rpow__(self, o): return power(o, self)
    def __and__(self, o): return binary("and", self, o)
    def __rand__(self, o): return binary("and", o, self)
    def __or__(self, o): return binary("or", self, o)
    def __ror__(self, o): return binary("or", o, self)
    def __xor__(self, o): return binary("xor", self, o)
    def __rxor__(self, o): return binary("xor", o, self)
    def __lshift__(self, o): return binary("lshift", self, o)
    def __rlshift__(self, o): return binary("lshift", o, self)
    def __rshift__(self, o): return binary("rshift", self, o)
    def __rrshift__(self, o): return binary("rshift", o, self)
    def __matmul__(self, o):
        from .reduce import matmul
        return matmul(self, o)
    def __rmatmul__(self, o):
        from .reduce import matmul
        return matmul(o, self)
    # comparisons
    def __lt__(self, o): return compare("lt", self, o)
    def __le__(self, o): return compare("le", self, o)
    def __gt__(self, o): return compare("gt", self, o)
    def __ge__(self, o): return compare("ge", self, o)
    def __eq__(self, o): return compare("eq", self, o)
    def __ne__(self, o): return compare("ne", self, o)
    # unary
    def __neg__(self): return negate(self)
    def __pos__(self): return self
    def __invert__(self): return invert(self)
    def __abs__(self):
        from .ops import abs as _abs
        return _abs(self)

    def astype(self, dtype):
        return cast(self, dtype_arg(dtype))

    to = astype


class Scalar(Value):
    """A runtime scalar: an i32/i64/f32/... SSA value, not a tensor."""

    __slots__ = ()
    shape = ()
    ndim = 0

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    @property
    def type(self):
        return self.dtype.mlir

    def __getitem__(self, key):
        return splat(self, ()).__getitem__(key)

    def __repr__(self):
        return f"Scalar({self.name}: {self.dtype.name})"


class Tile(Value):
    """An immutable n-d value with a static power-of-two shape."""

    __slots__ = ("shape",)

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = shape
        self.dtype = dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype.mlir)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def T(self):
        return permute(self, tuple(reversed(range(len(self.shape)))))

    def __len__(self):
        if not self.shape:
            raise TileTypeError("len() of a rank-0 tile")
        return self.shape[0]

    def reshape(self, *shape):
        return reshape(self, shape[0] if len(shape) == 1 else shape)

    def permute(self, *axes):
        return permute(self, axes[0] if len(axes) == 1 else axes)

    def transpose(self, *axes):
        if not axes:
            return self.T
        return permute(self, axes[0] if len(axes) == 1 else axes)

    def expand_dims(self, axis):
        return expand_dims(self, axis)

    def broadcast_to(self, shape):
        return broadcast_to(self, shape)

    def __getitem__(self, key):
        return index_tile(self, key)

    def __repr__(self):
        return f"Tile({self.name}: {self.type})"


class _Dims:
    """`A.shape` / `A.strides`: emits tile.dim / tile.stride where used."""

    __slots__ = ("array", "op")

    def __init__(self, array, op):
        self.array = array
        self.op = op

    def __len__(self):
        return self.array.ndim

    def __getitem__(self, i):
        n = self.array.ndim
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(n)))
        if isinstance(i, Value) or not isinstance(i, numbers.Integral):
            raise TileTypeError(f"A.{'shape' if self.op == 'dim' else 'strides'}[...] "
                                "needs a constant int index")
        i = int(i)
        if not -n <= i < n:
            raise TileTypeError(f"dimension {i} is out of range for an array of rank {n}")
        i %= n
        if self.op == "stride" and i in self.array.unit_strides:
            return 1
        a = self.array
        return Scalar(builder().emit(f"tile.{self.op} {a.name}, {i} : {a.type}"), D.int32)

    def __iter__(self):
        return iter([self[i] for i in range(self.array.ndim)])

    def __repr__(self):
        return f"<{self.op}s of {self.array.name}>"


class Array:
    """A kernel argument in global memory (`!tile.array<...>`)."""

    __slots__ = ("name", "dtype", "ndim", "type", "unit_strides", "param")

    def __init__(self, name, dtype, ndim, type_text, unit_strides, param=None):
        self.name = name
        self.dtype = dtype
        self.ndim = ndim
        self.type = type_text
        self.unit_strides = unit_strides
        self.param = param

    @property
    def shape(self):
        return _Dims(self, "dim")

    @property
    def strides(self):
        return _Dims(self, "stride")

    def __bool__(self):
        raise TileTypeError("an array was used as a Python bool")

    def __repr__(self):
        return f"Array({self.param or self.name}: {self.type})"


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------

def is_number(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, Value)


def as_operand(x, what="operand"):
    """A Value or a Python number (NumPy scalars become Python numbers)."""
    if isinstance(x, Value) or isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, numbers.Number) and hasattr(x, "item"):
        return x.item()
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    if isinstance(x, Array):
        raise TileTypeError(f"an array cannot be used as a {what}",
                            "load a tile from it first with tile.load(...)")
    raise TileTypeError(f"a {type(x).__name__} cannot be used as a {what} in a kernel")


def dtype_arg(dt):
    d = D.to_dtype(dt)
    if d is None:
        raise TileTypeError(f"unsupported dtype {dt!r}",
                            "use one of tile.bool_, int8..int64, uint8..uint64, "
                            "float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2")
    return d


def literal(v, dt):
    """The MLIR literal of Python number `v` as dtype `dt`."""
    if dt.kind == D.KIND_FLOAT:
        return D.float_literal(float(v), dt)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise TileTypeError(f"{v} cannot be represented in {dt.name}")
        v = int(v)
    if dt.kind == D.KIND_BOOL:
        return "true" if v else "false"
    try:
        return D.int_literal(int(v), dt)
    except OverflowError:
        raise TileTypeError(f"the constant {v} does not fit in {dt.name}",
                            "use a wider dtype (astype) or a smaller constant") from None


def constant(v, dt, shape=None):
    """A Scalar (shape None) or Tile constant of Python number `v`."""
    b = builder()
    if shape is None:
        return Scalar(b.constant(literal(v, dt), dt.mlir), dt)
    t = tensor_type(shape, dt.mlir)
    return Tile(b.constant(literal(v, dt), t), tuple(shape), dt)


def check_shape(shape, what="tile"):
    """A tuple of Python ints, each a power of two, at most 2^20 in all."""
    if isinstance(shape, (list, tuple)):
        shape = tuple(shape)
    else:
        shape = (shape,)
    out = []
    for d in shape:
        if isinstance(d, Value):
            raise TileTypeError(
                f"{what} shape {shape} contains a runtime value; tile shapes are static",
                "pass the size as a tile.Constant[int] parameter")
        if not isinstance(d, numbers.Integral):
            raise TileTypeError(f"{what} shape must be a tuple of ints, got {shape!r}")
        out.append(int(d))
    total = 1
    for d in out:
        if d <= 0 or d & (d - 1):
            raise TileShapeError(
                f"{what} shape {tuple(out)}: every tile dimension must be a power of two",
                f"round {d} up to a power of two and let padding/masks cover the rest")
        total *= d
    if total > MAX_TILE_ELEMENTS:
        raise TileShapeError(f"{what} shape {tuple(out)} has {total} elements; "
                             "a tile holds at most 2^20", "use smaller tiles")
    return tuple(out)


def common_dtype(vals):
    """The dtype operands combine in: tiles promote as in PyTorch; runtime
    scalars and Python numbers are weak next to tiles, numbers next to scalars."""
    tiles = [v.dtype for v in vals if isinstance(v, Tile)]
    scalars = [v.dtype for v in vals if isinstance(v, Scalar)]
    pykinds = [D.python_kind(v) for v in vals if not isinstance(v, Value)]
    if tiles:
        dt = reduce(D.promote, tiles)
        for s in scalars:
            dt = D.weak_dtype(s.kind, dt)
    elif scalars:
        dt = reduce(D.promote, scalars)
    else:
        return D.default_of_kind(max(pykinds))
    for k in pykinds:
        dt = D.weak_dtype(k, dt)
    return dt


def broadcast_shapes(*shapes):
    """NumPy broadcasting of static shapes (None = a scalar)."""
    shapes = [s for s in shapes if s is not None]
    if not shapes:
        return None
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        d = 1
        for s in shapes:
            k = i - (rank - len(s))
            if k < 0:
                continue
            e = s[k]
            if e != 1:
                if d != 1 and d != e:
                    raise TileShapeError(
                        "shapes " + " and ".join(str(tuple(s)) for s in shapes)
                        + " cannot be broadcast together",
                        "insert size-1 axes with t[:, None] / tile.expand_dims, "
                        "or reshape")
                d = e
        out.append(d)
    return tuple(out)


def shape_of(v):
    return v.shape if isinstance(v, Tile) else None


def materialize(x, dt, shape):
    """`x` (number, Scalar or Tile) as a value of dtype `dt`: a Scalar when
    `shape` is None, else a Tile broadcast to `shape`."""
    if not isinstance(x, Value):
        return constant(x, dt, shape)
    x = cast(x, dt)
    if shape is None:
        if isinstance(x, Tile):
            raise TileTypeError("a tile cannot be used where a scalar is needed")
        return x
    if isinstance(x, Scalar):
        return splat(x, shape)
    return broadcast_to(x, shape)


# ---------------------------------------------------------------------------
# Shape ops (used by broadcasting, so they live here)
# ---------------------------------------------------------------------------

def splat(s, shape):
    shape = tuple(shape)
    return Tile(builder().emit(f"tile.splat {s.name} : {tensor_type(shape, s.dtype.mlir)}"),
                shape, s.dtype)


def _to_tile(x):
    x = as_operand(x)
    if isinstance(x, Tile):
        return x
    if isinstance(x, Scalar):
        return splat(x, ())
    return constant(x, common_dtype([x]), ())


def expand_dims(t, axis):
    """Inserts a size-1 axis at `axis` (negative counts from the end)."""
    t = _to_tile(t)
    if isinstance(axis, (tuple, list)):
        for a in sorted(int(a) % (t.ndim + len(axis)) for a in axis):
            t = expand_dims(t, a)
        return t
    n = len(t.shape)
    if not isinstance(axis, numbers.Integral) or not -n - 1 <= axis <= n:
        raise TileShapeError(f"expand_dims axis {axis!r} is out of range for a rank-{n} tile")
    axis = int(axis) % (n + 1)
    shape = t.shape[:axis] + (1,) + t.shape[axis:]
    name = builder().emit(f"tile.expand_dims {t.name}, {axis} : {t.type} -> "
                          f"{tensor_type(shape, t.dtype.mlir)}")
    return Tile(name, shape, t.dtype)


def broadcast_to(t, shape):
    """Broadcasts size-1 (and missing leading) axes to `shape`."""
    shape = check_shape(shape, "broadcast")
    t = as_operand(t)
    if not isinstance(t, Value):
        return constant(t, common_dtype([t]), shape)
    if isinstance(t, Scalar):
        return splat(t, shape)
    if len(t.shape) > len(shape):
        raise TileShapeError(f"cannot broadcast a tile of shape {t.shape} to {shape}")
    if broadcast_shapes(t.shape, shape) != shape:
        raise TileShapeError(f"cannot broadcast a tile of shape {t.shape} to {shape}",
                             "only size-1 axes broadcast")
    while len(t.shape) < len(shape):
        t = expand_dims(t, 0)
    if t.shape == shape:
        return t
    name = builder().emit(f"tile.broadcast {t.name} : {t.type} -> "
                          f"{tensor_type(shape, t.dtype.mlir)}")
    return Tile(name, shape, t.dtype)


def reshape(t, shape):
    """Row-major reshape; one entry may be -1."""
    t = _to_tile(t)
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = list(shape)
    total = 1
    for d in t.shape:
        total *= d
    if shape.count(-1) == 1:
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        shape[shape.index(-1)] = total // known if known else 0
    shape = check_shape(shape, "reshape")
    n = 1
    for d in shape:
        n *= d
    if n != total:
        raise TileShapeError(f"cannot reshape a tile of shape {t.shape} ({total} elements) "
                             f"to {shape} ({n} elements)")
    if shape == t.shape:
        return t
    name = builder().emit(f"tile.reshape {t.name} : {t.type} -> "
                          f"{tensor_type(shape, t.dtype.mlir)}")
    return Tile(name, shape, t.dtype)


def permute(t, axes):
    """`result.shape[i] == t.shape[axes[i]]`."""
    t = _to_tile(t)
    axes = tuple(int(a) % max(t.ndim, 1) for a in axes)
    if sorted(axes) != list(range(t.ndim)):
        raise TileShapeError(f"permute axes {axes} are not a permutation of "
                             f"range({t.ndim})")
    if axes == tuple(range(t.ndim)):
        return t
    shape = tuple(t.shape[a] for a in axes)
    perm = ", ".join(map(str, axes))
    name = builder().emit(f"tile.permute {t.name}, [{perm}] : {t.type} -> "
                          f"{tensor_type(shape, t.dtype.mlir)}")
    return Tile(name, shape, t.dtype)


def index_tile(t, key):
    """`t[:, None]`, `t[None]`, `t[..., None]`: only full slices and new axes."""
    if not isinstance(key, tuple):
        key = (key,)
    n_slices = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise TileTypeError("a tile index can hold one `...`")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (t.ndim - n_slices))
        else:
            expanded.append(k)
    pos = 0
    for k in expanded:
        if k is None:
            t = expand_dims(t, pos)
            pos += 1
        elif isinstance(k, slice) and k == slice(None):
            pos += 1
        else:
            raise TileTypeError(
                f"tiles can only be indexed with `:` and `None`, got {k!r}",
                "extract elements with a reduction or a mask; use tile.gather for "
                "element indexing of arrays")
    if pos > t.ndim:
        raise TileTypeError(f"too many indices for a rank-{t.ndim} tile")
    return t


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------

def _emit_cast(op, v, dt):
    return builder().emit(f"arith.{op} {v.name} : {v.type} to {_retype(v, dt)}")


def _retype(v, dt):
    return dt.mlir if isinstance(v, Scalar) else tensor_type(v.shape, dt.mlir)


def _like(v, name, dt):
    return Scalar(name, dt) if isinstance(v, Scalar) else Tile(name, v.shape, dt)


def _zero_like(v, dt):
    return constant(0, dt, None if isinstance(v, Scalar) else v.shape)


def cast(v, dt):
    """`v` converted to dtype `dt` with arith casts (C semantics)."""
    if not isinstance(v, Value):
        return v
    src = v.dtype
    if src is dt:
        return v
    if src.mlir == dt.mlir and src.kind == dt.kind:  # int8 <-> uint8: same bits
        return _like(v, v.name, dt)
    b = builder()
    if dt.kind == D.KIND_BOOL:
        z = _zero_like(v, src)
        if src.kind == D.KIND_FLOAT:
            name = b.emit(f"arith.cmpf une, {v.name}, {z.name} : {v.type}")
        else:
            name = b.emit(f"arith.cmpi ne, {v.name}, {z.name} : {v.type}")
        return _like(v, name, dt)
    if src.kind == D.KIND_BOOL:
        op = "uitofp" if dt.kind == D.KIND_FLOAT else "extui"
        return _like(v, _emit_cast(op, v, dt), dt)
    if src.kind == D.KIND_INT and dt.kind == D.KIND_INT:
        if dt.bits > src.bits:
            op = "extsi" if src.signed else "extui"
        elif dt.bits < src.bits:
            op = "trunci"
        else:
            return _like(v, v.name, dt)
        return _like(v, _emit_cast(op, v, dt), dt)
    if src.kind == D.KIND_INT:
        op = "sitofp" if src.signed else "uitofp"
        return _like(v, _emit_cast(op, v, dt), dt)
    if dt.kind == D.KIND_INT:
        op = "fptosi" if dt.signed else "fptoui"
        return _like(v, _emit_cast(op, v, dt), dt)
    # float -> float
    if dt.bits == src.bits:  # f16 <-> bf16, e4m3 <-> e5m2: through f32
        return cast(cast(v, D.float32), dt)
    op = "extf" if dt.bits > src.bits else "truncf"
    return _like(v, _emit_cast(op, v, dt), dt)


# ---------------------------------------------------------------------------
# Elementwise arithmetic
# ---------------------------------------------------------------------------

# op -> (float, signed int, unsigned int) arith op names
_ARITH = {
    "add": ("addf", "addi", "addi"),
    "sub": ("subf", "subi", "subi"),
    "mul": ("mulf", "muli", "muli"),
    "truediv": ("divf", None, None),
    "and": (None, "andi", "andi"),
    "or": (None, "ori", "ori"),
    "xor": (None, "xori", "xori"),
    "lshift": (None, "shli", "shli"),
    "rshift": (None, "shrsi", "shrui"),
    "max": ("maximumf", "maxsi", "maxui"),
    "min": ("minimumf", "minsi", "minui"),
}
_PYOPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "lshift": lambda a, b: a << b,
    "rshift": lambda a, b: a >> b, "max": max, "min": min,
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
           "mod": "%", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
           "rshift": ">>", "max": "maximum", "min": "minimum"}
_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod")


def _operands(a, b, what):
    a, b = as_operand(a, what), as_operand(b, what)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    return a, b, dt, shape


def _emit_binary(op, a, b, dt, shape):
    """`arith.<op>` on two values already of dtype dt and shape `shape`."""
    t = dt.mlir if shape is None else tensor_type(shape, dt.mlir)
    name = builder().emit(f"{op} {a.name}, {b.name} : {t}")
    return Scalar(name, dt) if shape is None else Tile(name, shape, dt)


def _arith_name(op, dt):
    f, s, u = _ARITH[op]
    if dt.kind == D.KIND_FLOAT:
        name = f
    else:  # bools compare and shift as unsigned
        name = s if dt.kind == D.KIND_INT and dt.signed else u
    return name and "arith." + name


def binary(op, a, b):
    """`a <op> b` with promotion and broadcasting."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return _PYOPS[op](a, b)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    if op in _ARITHMETIC and dt.kind == D.KIND_BOOL:
        dt = D.int32  # arithmetic on bools counts in int32
    if op == "truediv" and dt.kind != D.KIND_FLOAT:
        dt = D.float32  # `/` on integers gives float32
    if op in ("and", "or", "xor", "lshift", "rshift") and dt.kind == D.KIND_FLOAT:
        raise TileTypeError(f"`{_SYMBOL[op]}` needs integer or bool operands, got {dt.name}",
                            "cast with .astype(tile.int32) first")
    if op in ("lshift", "rshift") and dt.kind == D.KIND_BOOL:
        dt = D.int32
    A = materialize(a, dt, shape)
    B = materialize(b, dt, shape)
    if op == "floordiv":
        return _floordiv(A, B, dt, shape)
    if op == "mod":
        return _mod(A, B, dt, shape)
    return _emit_binary(_arith_name(op, dt), A, B, dt, shape)


def _floordiv(A, B, dt, shape):
    if dt.kind == D.KIND_FLOAT:
        q = _emit_binary("arith.divf", A, B, dt, shape)
        return _unary_math("floor", q)
    op = "arith.floordivsi" if dt.signed else "arith.divui"
    return _emit_binary(op, A, B, dt, shape)


def _mod(A, B, dt, shape):
    """Python's `%`: the remainder takes the divisor's sign."""
    if dt.kind == D.KIND_INT and not dt.signed:
        return _emit_binary("arith.remui", A, B, dt, shape)
    isf = dt.kind == D.KIND_FLOAT
    r = _emit_binary("arith.remf" if isf else "arith.remsi", A, B, dt, shape)
    zero = materialize(0, dt, shape)
    cmp = "arith.cmpf" if isf else "arith.cmpi"
    ne, lt = ("une", "olt") if isf else ("ne", "slt")
    b = builder()
    t = r.type
    r_nz = b.emit(f"{cmp} {ne}, {r.name}, {zero.name} : {t}")
    r_neg = b.emit(f"{cmp} {lt}, {r.name}, {zero.name} : {t}")
    b_neg = b.emit(f"{cmp} {lt}, {B.name}, {zero.name} : {t}")
    bt = "i1" if shape is None else tensor_type(shape, "i1")
    signs = b.emit(f"arith.xori {r_neg}, {b_neg} : {bt}")
    fix = b.emit(f"arith.andi {r_nz}, {signs} : {bt}")
    adj = _emit_binary("arith.addf" if isf else "arith.addi", r, B, dt, shape)
    name = b.emit(f"arith.select {fix}, {adj.name}, {r.name} : "
                  + (f"{bt}, {t}" if shape is not None else t))
    return _like(r, name, dt)


_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI_S = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMPI_U = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
_PYCMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
          "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def compare(op, a, b):
    """Elementwise comparison; gives a bool (i1) tile or scalar."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return _PYCMP[op](a, b)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    if dt.kind == D.KIND_FLOAT:
        pred, cmp = _CMPF[op], "arith.cmpf"
    else:
        pred = (_CMPI_S if dt.signed and dt.kind == D.KIND_INT else _CMPI_U)[op]
        cmp = "arith.cmpi"
    name = builder().emit(f"{cmp} {pred}, {A.name}, {B.name} : {A.type}")
    return _like(A, name, D.bool_)


def negate(v):
    v = as_operand(v)
    if not isinstance(v, Value):
        return -v
    if v.dtype.kind == D.KIND_FLOAT:
        return _like(v, builder().emit(f"arith.negf {v.name} : {v.type}"), v.dtype)
    if v.dtype.kind == D.KIND_BOOL:
        v = cast(v, D.int32)
    return binary("sub", 0, v)


def invert(v):
    v = as_operand(v)
    if not isinstance(v, Value):
        return ~v
    if v.dtype.kind == D.KIND_FLOAT:
        raise TileTypeError("`~` needs an integer or bool operand, got " + v.dtype.name,
                            "for a logical not of a comparison use `~(a < b)` on the "
                            "comparison itself, or `x == 0`")
    ones = materialize(True if v.dtype.kind == D.KIND_BOOL else -1, v.dtype, shape_of(v))
    return _emit_binary("arith.xori", v, ones, v.dtype, shape_of(v))


def _unary_math(fn, v):
    """`math.<fn>` on a float value."""
    return _like(v, builder().emit(f"math.{fn} {v.name} : {v.type}"), v.dtype)


def float_operand(x, what):
    """A float value for a math function: ints and bools become float32."""
    x = as_operand(x, what)
    if not isinstance(x, Value):
        return x
    if x.dtype.kind != D.KIND_FLOAT:
        x = cast(x, D.float32)
    return x


def power(a, b):
    """`a ** b`: repeated multiplication for small constant integer
    exponents, math.powf / math.ipowi otherwise."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return a ** b
    if isinstance(b, float) and b.is_integer() and abs(b) <= 64:
        if isinstance(a, Value) and a.dtype.kind == D.KIND_FLOAT:
            b = int(b)
    if isinstance(a, Value) and isinstance(b, int) and not isinstance(b, bool) \
            and abs(b) <= 64:
        if a.dtype.kind == D.KIND_BOOL:
            a = cast(a, D.int32)
        if b < 0:
            a = float_operand(a, "base")
            return binary("truediv", 1, power(a, -b))
        if b == 0:
            return materialize(1, a.dtype, shape_of(a))
        result, base = None, a
        while b:  # exponentiation by squaring
            if b & 1:
                result = base if result is None else binary("mul", result, base)
            b >>= 1
            if b:
                base = binary("mul", base, base)
        return result
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    if dt.kind == D.KIND_BOOL:
        dt = D.int32
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    op = "math.powf" if dt.kind == D.KIND_FLOAT else "math.ipowi"
    return _emit_binary(op, A, B, dt, shape)


def to_i32_scalar(x, what):
    """A runtime i32 Scalar from an int, Scalar or rank-0 tile."""
    x = as_operand(x, what)
    if isinstance(x, bool) or isinstance(x, float):
        raise TileTypeError(f"{what} must be an integer, got {x!r}")
    if isinstance(x, int):
        return constant(x, D.int32)
    if isinstance(x, Tile):
        if x.shape != ():
            raise TileTypeError(f"{what} must be a scalar, got a tile of shape {x.shape}")
        name = builder().emit(f"tensor.extract {x.name}[] : {x.type}")
        x = Scalar(name, x.dtype)
    if x.dtype.kind == D.KIND_FLOAT:
        raise TileTypeError(f"{what} must be an integer, got a {x.dtype.name} value",
                            "convert with .astype(tile.int32)")
    return cast(x, D.int32) if x.dtype is not D.int32 else x
