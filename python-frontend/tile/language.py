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
from .errors import TileShapeError, TileTypeError, TileUnsupportedFeatureError
from .ir import builder, tensor_type
from .ir import current as _ir_current
from .memory_model import PaddingMode

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
    from .annotations import constant_metadata  # cuTile's Annotated[T, ConstantAnnotation()]
    if constant_metadata(ann):
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

    # NumPy defers to our operators: `np.float64(0.5) * t` reaches t.__rmul__
    # (NumPy tried to make an array of the tile and failed), and a NumPy
    # function given a tile says it does not take one.
    __array_ufunc__ = None

    # Python control flow cannot see runtime values.
    def __bool__(self):
        raise TileTypeError(
            "a runtime value was used as a Python bool (`if`, `while`, `and`, "
            "`or`, `not`, `assert`, `match` or a conditional expression); only "
            "tile.Constant values can steer tracing",
            "select elementwise with tile.where(cond, a, b), combine masks with "
            "`&`, `|`, `~`, check at run time with tile.assert_(cond, message), or make "
            "the value a tile.Constant parameter")

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

    def __setitem__(self, key, value):
        raise TileTypeError(
            "tiles are immutable values: `t[...] = v` cannot change one",
            "build a new tile, e.g. t = tile.where(tile.arange(n) == i, v, t), or "
            "write into an array with tile.store / tile.scatter")

    def __delitem__(self, key):
        raise TileTypeError("tiles are immutable values: `del t[...]` cannot change one",
                            "build a new tile with tile.where")

    __hash__ = object.__hash__

    # arithmetic
    def __add__(self, o): return _arith.binary("add", self, o)
    def __radd__(self, o): return _arith.binary("add", o, self)
    def __sub__(self, o): return _arith.binary("sub", self, o)
    def __rsub__(self, o): return _arith.binary("sub", o, self)
    def __mul__(self, o): return _arith.binary("mul", self, o)
    def __rmul__(self, o): return _arith.binary("mul", o, self)
    def __truediv__(self, o): return _arith.binary("truediv", self, o)
    def __rtruediv__(self, o): return _arith.binary("truediv", o, self)
    def __floordiv__(self, o): return _arith.binary("floordiv", self, o)
    def __rfloordiv__(self, o): return _arith.binary("floordiv", o, self)
    def __mod__(self, o): return _arith.binary("mod", self, o)
    def __rmod__(self, o): return _arith.binary("mod", o, self)
    def __pow__(self, o): return _arith.power(self, o)
    def __rpow__(self, o): return _arith.power(o, self)
    def __and__(self, o): return _arith.binary("and", self, o)
    def __rand__(self, o): return _arith.binary("and", o, self)
    def __or__(self, o): return _arith.binary("or", self, o)
    def __ror__(self, o): return _arith.binary("or", o, self)
    def __xor__(self, o): return _arith.binary("xor", self, o)
    def __rxor__(self, o): return _arith.binary("xor", o, self)
    def __lshift__(self, o): return _arith.binary("lshift", self, o)
    def __rlshift__(self, o): return _arith.binary("lshift", o, self)
    def __rshift__(self, o): return _arith.binary("rshift", self, o)
    def __rrshift__(self, o): return _arith.binary("rshift", o, self)
    def __divmod__(self, o):
        return _arith.binary("floordiv", self, o), _arith.binary("mod", self, o)

    def __rdivmod__(self, o):
        return _arith.binary("floordiv", o, self), _arith.binary("mod", o, self)

    def __matmul__(self, o):
        from .reduce import matmul
        return matmul(self, o)
    def __rmatmul__(self, o):
        from .reduce import matmul
        return matmul(o, self)
    # comparisons
    def __lt__(self, o): return _arith.compare("lt", self, o)
    def __le__(self, o): return _arith.compare("le", self, o)
    def __gt__(self, o): return _arith.compare("gt", self, o)
    def __ge__(self, o): return _arith.compare("ge", self, o)
    def __eq__(self, o): return _arith.compare("eq", self, o)
    def __ne__(self, o): return _arith.compare("ne", self, o)
    # unary
    def __neg__(self): return _arith.negate(self)
    def __pos__(self): return self
    def __invert__(self): return _arith.invert(self)
    def __abs__(self):
        from .ops import abs as _abs
        return _abs(self)

    def astype(self, dtype, *, rounding_mode=None):
        if rounding_mode is not None:  # cuTile's keyword: checked, rounds to nearest
            from .named import check_math_hints
            check_math_hints("astype", None, rounding_mode)
        return _arith.cast(self, dtype_arg(dtype))

    def __format__(self, spec):
        # f"{t}" in tile.print / tile.printf: a token they turn back into `t`
        from .debug import format_token
        return format_token(self, spec)

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

    def reshape(self, shape, *more):
        return reshape(self, (shape,) + more if more else shape)

    def permute(self, axes, *more):
        return permute(self, (axes,) + more if more else axes)

    def transpose(self, axis0=None, axis1=None, *more):
        """cuTile's transpose(axis0, axis1); t.transpose(2, 0, 1) permutes."""
        if more:
            return permute(self, (axis0, axis1) + more)
        from .shapes import transpose
        return transpose(self, axis0, axis1)

    # cuTile's subtile ops (shapes.py)
    def item(self):
        from .shapes import item
        return item(self)

    def extract(self, index, shape):
        from .shapes import extract
        return extract(self, index, shape)

    def insert(self, index, value):
        from .shapes import insert
        return insert(self, index, value)

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

    def __setitem__(self, i, value):
        what = "shape" if self.op == "dim" else "strides"
        raise TileTypeError(f"A.{what} is read-only: it comes from the array passed at "
                            "launch", f"use another variable (n = A.{what}[0] + ...), or "
                            "a tile.Constant parameter for a size known when launching")

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

    # Elements are read and written by ops that name a whole block (so that
    # out-of-bounds lanes can be masked), never by Python indexing.
    def __getitem__(self, key):
        raise TileTypeError(
            f"array argument '{self.param or self.name}' cannot be indexed with "
            "`x[...]` in a kernel",
            "read a block with tile.load(x, index=(...), shape=(...)) or single "
            "elements with tile.gather(x, indices)")

    def __setitem__(self, key, value):
        raise TileTypeError(
            f"array argument '{self.param or self.name}' cannot be assigned with "
            "`x[...] = v` in a kernel",
            "write a block with tile.store(x, index=(...), tile=t) or single elements "
            "with tile.scatter(x, indices, values)")

    def __iter__(self):
        raise TileTypeError(f"array argument '{self.param or self.name}' cannot be "
                            "iterated in Python",
                            "loop over blocks with tile.range(...) and tile.load")

    def __len__(self):
        raise TileTypeError(f"len() of array argument '{self.param or self.name}'",
                            "use x.shape[0] (a runtime value)")

    def __repr__(self):
        return f"Array({self.param or self.name}: {self.type})"

    # cuTile's views (views.py)
    def slice(self, axis, start, stop):
        """A view of the elements [start, stop) along `axis`."""
        from .views import array_slice
        return array_slice(self, axis, start, stop)

    def tiled_view(self, tile_shape, *, padding_mode=PaddingMode.UNDETERMINED,
                   traversal_steps=None):
        """A TiledView: this array as a grid of `tile_shape` tiles."""
        from .views import tiled_view
        return tiled_view(self, tile_shape, padding_mode=padding_mode,
                          traversal_steps=traversal_steps)

    def get_raw_memory(self):
        """Loads, stores and atomics at element offsets from the base pointer."""
        from .views import get_raw_memory
        return get_raw_memory(self)


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------

def as_operand(x, what="operand"):
    """A Value or a Python number (NumPy scalars become Python numbers)."""
    if isinstance(x, Tile):
        b = _ir_current()
        if b is not None and getattr(b, "capture", None) is not None:
            return b.capture(x)  # a tile a reduce/scan combiner captured
        return x
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
    if d is not None and d.needs:
        raise TileUnsupportedFeatureError(
            f"{d.name} needs {d.needs} (Blackwell); tile's targets (sm_80, sm_90, the CPU) "
            "have no such type", "use float8_e4m3fn/float8_e5m2 or a 16-bit float")
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
    x = _arith.cast(x, dt)
    if shape is None:
        if isinstance(x, Tile):
            if x.shape != ():
                raise TileTypeError("a tile cannot be used where a scalar is needed")
            return Scalar(builder().emit(f"tensor.extract {x.name}[] : {x.type}"), x.dtype)
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


# The arithmetic behind Value's operators; imported last (as a module, so
# either import order works) because it builds on the classes above.
from . import arith as _arith  # noqa: E402
