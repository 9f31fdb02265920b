"""Loads and stores: tile-indexed (load/store), element-indexed
(gather/scatter) and atomics."""

import math

from . import dtypes as D
from .arith import cast, to_i32_scalar
from .errors import TileShapeError, TileTypeError
from .ir import builder, tensor_type
from .language import (Array, Tile, Value, as_operand, broadcast_shapes, check_shape,
                       constant, literal, materialize, shape_of)


def _array(A, fn):
    if not isinstance(A, Array):
        raise TileTypeError(f"tile.{fn} needs an array argument of the kernel, got "
                            f"{type(A).__name__}",
                            "pass the array itself (a kernel parameter), not a tile")
    return A


def _block_indices(A, index, fn):
    if not isinstance(index, (tuple, list)):
        index = (index,)
    if len(index) != A.ndim:
        raise TileShapeError(f"tile.{fn} on a rank-{A.ndim} array needs {A.ndim} block "
                             f"indices, got {len(index)}",
                             "pass index=(i, j, ...) with one entry per array dimension")
    return [to_i32_scalar(i, f"tile.{fn} index") for i in index]


def _mem_dtype(A):
    """The dtype values have in memory (bool arrays hold bytes)."""
    return D.uint8 if A.dtype.kind == D.KIND_BOOL else A.dtype


def _from_memory(A, t):
    if A.dtype.kind == D.KIND_BOOL:
        return cast(t, D.bool_)
    return Tile(t.name, t.shape, A.dtype) if isinstance(t, Tile) else t


def _to_memory(A, v):
    v = cast(v, A.dtype)
    if A.dtype.kind == D.KIND_BOOL:
        v = cast(v, D.uint8)
    return v


def _padding_attr(A, padding):
    if isinstance(padding, Value):
        raise TileTypeError("tile.load padding must be a constant number",
                            "use tile.where on the loaded tile for runtime values")
    padding = as_operand(padding, "padding")
    if not padding:
        if not (isinstance(padding, float) and math.copysign(1.0, padding) < 0):
            return None  # zero is the default
    mem = _mem_dtype(A)
    if A.dtype.kind != D.KIND_FLOAT and isinstance(padding, float) and \
            (math.isnan(padding) or math.isinf(padding) or not padding.is_integer()):
        raise TileTypeError(f"padding {padding} cannot be represented in the array's "
                            f"dtype {A.dtype.name}",
                            "use an integer padding for integer arrays")
    if A.dtype.kind == D.KIND_BOOL:
        padding = 1 if padding else 0
    return f"padding = {literal(padding, mem)} : {mem.mlir}"


def load(A, index, shape, padding=0, order=None):
    """Reads the block of `A` whose element origin is `index[d] * shape[d]`;
    elements outside `A` read as `padding`. `order` permutes the result's
    axes (`order=(1, 0)` loads the transpose)."""
    A = _array(A, "load")
    b = builder("tile.load")
    idx = _block_indices(A, index, "load")
    shape = check_shape(shape, "tile.load")
    if len(shape) != A.ndim:
        raise TileShapeError(f"tile.load of a rank-{A.ndim} array needs a rank-{A.ndim} "
                             f"shape, got {shape}")
    attrs = []
    if order is not None:
        order = tuple(int(o) for o in order)
        if sorted(order) != list(range(A.ndim)):
            raise TileShapeError(f"tile.load order {order} is not a permutation of "
                                 f"range({A.ndim})")
        if order != tuple(range(A.ndim)):
            attrs.append("order = array<i64: " + ", ".join(map(str, order)) + ">")
            shape = tuple(shape[o] for o in order)
        else:
            order = None
    pad = _padding_attr(A, padding)
    if pad:
        attrs.append(pad)
    mem = _mem_dtype(A)
    rtype = tensor_type(shape, mem.mlir)
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    name = b.emit(f"tile.load {A.name}[{', '.join(i.name for i in idx)}]{attr} : "
                  f"{A.type} -> {rtype}")
    return _from_memory(A, Tile(name, shape, mem))


def store(A, index, tile, shape=None):
    """Writes `tile` into the block of `A` at `index`; elements outside `A` are
    dropped. A scalar (or lower-rank tile) is broadcast: to `shape` when given,
    else to a block of size 1 in each missing dimension."""
    A = _array(A, "store")
    b = builder("tile.store")
    idx = _block_indices(A, index, "store")
    v = as_operand(tile, "stored value")
    vshape = shape_of(v) or ()
    if len(vshape) > A.ndim:
        raise TileShapeError(f"tile.store of a rank-{len(vshape)} tile into a rank-{A.ndim} "
                             "array", "reshape the tile to the array's rank")
    if shape is not None:
        target = check_shape(shape, "tile.store")
        if len(target) != A.ndim:
            raise TileShapeError(f"tile.store shape {target} must have rank {A.ndim}")
    else:
        target = (1,) * (A.ndim - len(vshape)) + tuple(vshape)
    if not isinstance(v, Value):
        v = constant(v, A.dtype, target)
    v = materialize(v, v.dtype, target)
    v = _to_memory(A, v)
    b.emit(f"tile.store {A.name}[{', '.join(i.name for i in idx)}], {v.name} : "
           f"{A.type}, {v.type}", nres=0)


# ---------------------------------------------------------------------------
# Element-indexed
# ---------------------------------------------------------------------------

def _element_indices(A, indices, fn, extra_shapes=()):
    """Index tiles of one integer type and one (broadcast) shape."""
    if not isinstance(indices, (tuple, list)):
        indices = (indices,)
    if len(indices) != A.ndim:
        raise TileShapeError(f"tile.{fn} on a rank-{A.ndim} array needs {A.ndim} index "
                             f"tiles (one per dimension), got {len(indices)}")
    vals = []
    wide = False
    for i in indices:
        i = as_operand(i, f"tile.{fn} index")
        if isinstance(i, (bool, float)) or (isinstance(i, Value) and
                                            i.dtype.kind != D.KIND_INT):
            kind = i.dtype.name if isinstance(i, Value) else type(i).__name__
            raise TileTypeError(f"tile.{fn} indices must be integers, got {kind}",
                                "convert with .astype(tile.int32)")
        if isinstance(i, Value) and i.dtype.bits == 64:
            wide = True
        vals.append(i)
    shape = broadcast_shapes(*[shape_of(v) or () for v in vals], *extra_shapes)
    it = D.int64 if wide else D.int32
    return [materialize(v, it, shape) for v in vals], shape


def _mask(mask, shape):
    if mask is None:
        return None
    m = as_operand(mask, "mask")
    if not isinstance(m, Value):
        m = bool(m)
    elif m.dtype.kind != D.KIND_BOOL:
        m = cast(m, D.bool_)
    return materialize(m, D.bool_, shape)


def _index_types(A, idx):
    return f"{A.type}[{', '.join(i.type for i in idx)}]"


def gather(A, indices, mask=None, other=0):
    """`result[i] = A[indices[0][i], ...]`; lanes out of bounds or where `mask`
    is false read `other`."""
    A = _array(A, "gather")
    b = builder("tile.gather")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, "gather", [mshape or ()])
    m = _mask(mask, shape)
    mem = _mem_dtype(A)
    text = f"tile.gather {A.name}[{', '.join(i.name for i in idx)}]"
    if m is not None:
        text += f" mask {m.name}"
    other = as_operand(other, "other")
    if isinstance(other, Value) or other:
        o = _to_memory(A, materialize(other, A.dtype, shape))
        text += f" other {o.name}"
    name = b.emit(f"{text} : {_index_types(A, idx)} -> {tensor_type(shape, mem.mlir)}")
    return _from_memory(A, Tile(name, shape, mem))


def scatter(A, indices, value, mask=None):
    """`A[indices[0][i], ...] = value[i]` for lanes in bounds where `mask`."""
    A = _array(A, "scatter")
    b = builder("tile.scatter")
    value = as_operand(value, "value")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, "scatter", [shape_of(value) or (),
                                                          mshape or ()])
    v = _to_memory(A, materialize(value, A.dtype if not isinstance(value, Value)
                                  else value.dtype, shape))
    m = _mask(mask, shape)
    text = f"tile.scatter {A.name}[{', '.join(i.name for i in idx)}], {v.name}"
    if m is not None:
        text += f" mask {m.name}"
    b.emit(f"{text} : {_index_types(A, idx)}, {v.type}", nres=0)


def _atomic_array(A, fn):
    A = _array(A, fn)
    if A.dtype.kind == D.KIND_BOOL or A.dtype.bits not in (16, 32, 64):
        raise TileTypeError(f"tile.{fn} needs an array of 16, 32 or 64-bit elements, "
                            f"got {A.dtype.name}")
    return A


def _atomic_rmw(kind, fn, A, indices, value, mask):
    A = _atomic_array(A, fn)
    b = builder(f"tile.{fn}")
    if kind in ("and", "or", "xor") and A.dtype.kind != D.KIND_INT:
        raise TileTypeError(f"tile.{fn} needs an integer array, got {A.dtype.name}")
    value = as_operand(value, "value")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, fn, [shape_of(value) or (), mshape or ()])
    v = materialize(value, A.dtype, shape)
    m = _mask(mask, shape)
    text = f"tile.atomic_rmw {kind} {A.name}[{', '.join(i.name for i in idx)}], {v.name}"
    if m is not None:
        text += f" mask {m.name}"
    name = b.emit(f"{text} : {_index_types(A, idx)}, {v.type}")
    return Tile(name, shape, A.dtype)


def atomic_add(A, indices, value, mask=None):
    """Atomically adds `value` at `A[indices]`; returns the old values."""
    return _atomic_rmw("add", "atomic_add", A, indices, value, mask)


def atomic_max(A, indices, value, mask=None):
    """Atomic maximum at `A[indices]`; returns the old values."""
    return _atomic_rmw("max", "atomic_max", A, indices, value, mask)


def atomic_min(A, indices, value, mask=None):
    """Atomic minimum at `A[indices]`; returns the old values."""
    return _atomic_rmw("min", "atomic_min", A, indices, value, mask)


def atomic_xchg(A, indices, value, mask=None):
    """Atomically swaps `value` into `A[indices]`; returns the old values."""
    return _atomic_rmw("xchg", "atomic_xchg", A, indices, value, mask)


def atomic_and(A, indices, value, mask=None):
    """Atomic bitwise and at `A[indices]` (integer arrays)."""
    return _atomic_rmw("and", "atomic_and", A, indices, value, mask)


def atomic_or(A, indices, value, mask=None):
    """Atomic bitwise or at `A[indices]` (integer arrays)."""
    return _atomic_rmw("or", "atomic_or", A, indices, value, mask)


def atomic_xor(A, indices, value, mask=None):
    """Atomic bitwise xor at `A[indices]` (integer arrays)."""
    return _atomic_rmw("xor", "atomic_xor", A, indices, value, mask)


def atomic_cas(A, indices, cmp, value):
    """Where `A[indices] == cmp`, stores `value`; returns the old values."""
    A = _atomic_array(A, "atomic_cas")
    b = builder("tile.atomic_cas")
    cmp, value = as_operand(cmp, "cmp"), as_operand(value, "value")
    idx, shape = _element_indices(A, indices, "atomic_cas",
                                  [shape_of(cmp) or (), shape_of(value) or ()])
    c = materialize(cmp, A.dtype, shape)
    v = materialize(value, A.dtype, shape)
    name = b.emit(f"tile.atomic_cas {A.name}[{', '.join(i.name for i in idx)}], "
                  f"{c.name}, {v.name} : {_index_types(A, idx)}, {v.type}")
    return Tile(name, shape, A.dtype)
