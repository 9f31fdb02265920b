"""Loads and stores: tile-indexed (load/store), element-indexed
(gather/scatter) and atomics."""

import math
import numbers

from . import dtypes as D
from .arith import cast, to_i32_scalar
from .errors import TileShapeError, TileTypeError, TileValueError
from .ir import builder, tensor_type
from .language import (Array, Tile, Value, as_operand, broadcast_shapes, check_shape,
                       constant, literal, materialize, permute, reshape, shape_of)
from .memory_model import (MemoryOrder, MemoryScope, PaddingMode, axis_order, check_hints,
                           memory_attrs, padding_number)


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


def _attr_text(attrs):
    return " {" + ", ".join(attrs) + "}" if attrs else ""


def _array_indices(idx, perm):
    """Block indices in the array's axes from the tile's (`perm`: tile axis
    i walks array axis perm[i])."""
    if perm is None:
        return idx
    out = [None] * len(idx)
    for i, p in enumerate(perm):
        out[p] = idx[i]
    return out


def load(A, index, shape, padding=0, order="C", *, padding_mode=PaddingMode.UNDETERMINED,
         check_bounds=True, latency=None, allow_tma=None, memory_order=MemoryOrder.WEAK,
         memory_scope=MemoryScope.NONE):
    """Reads a block of `A` as cuTile does: `index` and `shape` are in the
    tile's axis order, and tile axis `i` walks array axis `order[i]`, so the
    element origin along array axis `order[i]` is `index[i] * shape[i]`.
    Elements outside `A` read as `padding` (or cuTile's `padding_mode`).
    `shape=()` reads the one element at `index` as a 0-d tile."""
    A = _array(A, "load")
    b = builder("tile.load")
    idx = _block_indices(A, index, "load")
    shape = check_shape(shape, "tile.load")
    scalar = shape == () and A.ndim > 0
    if scalar:
        shape = (1,) * A.ndim
    if len(shape) != A.ndim:
        raise TileShapeError(f"tile.load of a rank-{A.ndim} array needs a rank-{A.ndim} "
                             f"shape, got {shape}")
    perm = axis_order("tile.load", order, A.ndim)
    check_hints("tile.load", check_bounds, latency, allow_tma)
    attrs = []
    if perm is not None:
        attrs.append("order = array<i64: " + ", ".join(map(str, perm)) + ">")
    pad = _padding_attr(A, padding_number("tile.load", padding, padding_mode))
    if pad:
        attrs.append(pad)
    attrs += memory_attrs("tile.load", "load", memory_order, memory_scope)
    mem = _mem_dtype(A)
    rtype = tensor_type(shape, mem.mlir)
    idx = _array_indices(idx, perm)
    name = b.emit(f"tile.load {A.name}[{', '.join(i.name for i in idx)}]{_attr_text(attrs)} : "
                  f"{A.type} -> {rtype}")
    t = _from_memory(A, Tile(name, shape, mem))
    return reshape(t, ()) if scalar else t


def store(A, index, tile, shape=None, order="C", *, check_bounds=True, latency=None,
          allow_tma=None, memory_order=MemoryOrder.WEAK, memory_scope=MemoryScope.NONE):
    """Writes `tile` into the block of `A` at `index`; elements outside `A` are
    dropped. A scalar (or lower-rank tile) is broadcast: to `shape` when given,
    else to a block of size 1 in each missing dimension. `order` as for load:
    tile axis `i` lands on array axis `order[i]`."""
    A = _array(A, "store")
    b = builder("tile.store")
    idx = _block_indices(A, index, "store")
    perm = axis_order("tile.store", order, A.ndim)
    check_hints("tile.store", check_bounds, latency, allow_tma)
    attrs = memory_attrs("tile.store", "store", memory_order, memory_scope)
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
    if perm is not None:  # array axis d holds tile axis inv[d]
        inv = [0] * A.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        v = permute(v, tuple(inv))
    idx = _array_indices(idx, perm)
    b.emit(f"tile.store {A.name}[{', '.join(i.name for i in idx)}], {v.name}"
           f"{_attr_text(attrs)} : {A.type}, {v.type}", nres=0)


def num_tiles(array, axis, shape, order="C"):
    """The number of tiles of `shape` along `axis` of the tile space of
    `array` (with `order` as for load): cdiv(extent, shape[axis])."""
    A = _array(array, "num_tiles")
    shape = check_shape(shape, "tile.num_tiles")
    if len(shape) != A.ndim:
        raise TileShapeError(f"tile.num_tiles on a rank-{A.ndim} array needs a rank-{A.ndim} "
                             f"shape, got {shape}")
    if isinstance(axis, Value) or not isinstance(axis, int) or isinstance(axis, bool) or \
            not -A.ndim <= axis < A.ndim:
        raise TileValueError(f"tile.num_tiles axis must be a constant int in "
                             f"[-{A.ndim}, {A.ndim}), got {axis!r}")
    axis %= A.ndim
    perm = axis_order("tile.num_tiles", order, A.ndim)
    extent = A.shape[perm[axis] if perm else axis]
    from .ops import cdiv
    return cdiv(extent, shape[axis])


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


def _padding_operand(other, padding_value, fn):
    """tile's `other` or cuTile's `padding_value` (one may be given)."""
    default = lambda v: not isinstance(v, Value) and isinstance(v, numbers.Number) and v == 0
    if default(padding_value):
        return other
    if default(other):
        return padding_value
    raise TileValueError(f"tile.{fn} got both other= and padding_value=", "give one of them")


def gather(A, indices, mask=None, other=0, *, padding_value=0, check_bounds=True,
           latency=None):
    """`result[i] = A[indices[0][i], ...]`; lanes out of bounds or where `mask`
    is false read `other` (cuTile's `padding_value`). `check_bounds=False`
    and `latency` are accepted and checked; tile always checks bounds."""
    A = _array(A, "gather")
    check_hints("tile.gather", check_bounds, latency)
    b = builder("tile.gather")
    other = as_operand(_padding_operand(other, padding_value, "gather"), "other")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, "gather", [mshape or (), shape_of(other) or ()])
    m = _mask(mask, shape)
    mem = _mem_dtype(A)
    text = f"tile.gather {A.name}[{', '.join(i.name for i in idx)}]"
    if m is not None:
        text += f" mask {m.name}"
    if isinstance(other, Value) or other or \
            (isinstance(other, float) and math.copysign(1.0, other) < 0):
        o = _to_memory(A, materialize(other, A.dtype, shape))
        text += f" other {o.name}"
    name = b.emit(f"{text} : {_index_types(A, idx)} -> {tensor_type(shape, mem.mlir)}")
    return _from_memory(A, Tile(name, shape, mem))


def scatter(A, indices, value, mask=None, *, check_bounds=True, latency=None):
    """`A[indices[0][i], ...] = value[i]` for lanes in bounds where `mask`."""
    A = _array(A, "scatter")
    check_hints("tile.scatter", check_bounds, latency)
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


def _atomic_rmw(kind, fn, A, indices, value, mask, check_bounds, memory_order,
                memory_scope):
    A = _atomic_array(A, fn)
    check_hints(f"tile.{fn}", check_bounds)
    attrs = memory_attrs(f"tile.{fn}", "atomic", memory_order, memory_scope)
    b = builder(f"tile.{fn}")
    if kind in ("and", "or", "xor") and A.dtype.kind != D.KIND_INT:
        raise TileTypeError(f"tile.{fn} needs an integer array, got {A.dtype.name}")
    if kind in ("max", "min") and A.dtype.is_unsigned:
        kind = "u" + kind  # the IR's integers are signless
    value = as_operand(value, "value")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, fn, [shape_of(value) or (), mshape or ()])
    v = materialize(value, A.dtype, shape)
    m = _mask(mask, shape)
    text = f"tile.atomic_rmw {kind} {A.name}[{', '.join(i.name for i in idx)}], {v.name}"
    if m is not None:
        text += f" mask {m.name}"
    name = b.emit(f"{text}{_attr_text(attrs)} : {_index_types(A, idx)}, {v.type}")
    return Tile(name, shape, A.dtype)


def _rmw(kind, doc):
    fn = "atomic_" + kind

    def op(A, indices, value, mask=None, *, check_bounds=True,
           memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
        return _atomic_rmw(kind, fn, A, indices, value, mask, check_bounds, memory_order,
                           memory_scope)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = doc + (" Lanes out of bounds or where `mask` is false do nothing. "
                        "`memory_order`/`memory_scope` as in cuTile (default acq_rel "
                        "at device scope).")
    return op


atomic_add = _rmw("add", "Atomically adds `value` at `A[indices]`; returns the old values.")
atomic_max = _rmw("max", "Atomic maximum at `A[indices]`; returns the old values.")
atomic_min = _rmw("min", "Atomic minimum at `A[indices]`; returns the old values.")
atomic_xchg = _rmw("xchg", "Atomically swaps `value` into `A[indices]`; returns the old "
                   "values.")
atomic_and = _rmw("and", "Atomic bitwise and at `A[indices]` (integer arrays).")
atomic_or = _rmw("or", "Atomic bitwise or at `A[indices]` (integer arrays).")
atomic_xor = _rmw("xor", "Atomic bitwise xor at `A[indices]` (integer arrays).")


def _in_bounds(A, idx):
    """An i1 tile: every index of the lane lies inside `A`."""
    ok = None
    for d, i in enumerate(idx):
        c = (i >= 0) & (i < A.shape[d])
        ok = c if ok is None else ok & c
    return ok


def atomic_cas(A, indices, cmp, value, mask=None, *, check_bounds=True,
               memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
    """Where `A[indices] == cmp`, stores `value`; returns the old values, and
    `cmp` for lanes out of bounds or where `mask` is false (as cuTile)."""
    from .ops import where
    A = _atomic_array(A, "atomic_cas")
    check_hints("tile.atomic_cas", check_bounds)
    attrs = memory_attrs("tile.atomic_cas", "atomic", memory_order, memory_scope)
    b = builder("tile.atomic_cas")
    cmp, value = as_operand(cmp, "cmp"), as_operand(value, "value")
    mshape = shape_of(as_operand(mask, "mask")) if mask is not None else None
    idx, shape = _element_indices(A, indices, "atomic_cas",
                                  [shape_of(cmp) or (), shape_of(value) or (), mshape or ()])
    c = materialize(cmp, A.dtype, shape)
    v = materialize(value, A.dtype, shape)
    # a raw view (get_raw_memory) has no extent: only the mask counts
    valid = None if getattr(A, "unbounded", False) else _in_bounds(A, idx)
    if mask is not None:
        # a masked lane addresses no element: its first index is pushed out
        m = _mask(mask, shape)
        valid = m if valid is None else valid & m
        idx = [where(valid, idx[0], -1)] + list(idx[1:])
    name = b.emit(f"tile.atomic_cas {A.name}[{', '.join(i.name for i in idx)}], "
                  f"{c.name}, {v.name}{_attr_text(attrs)} : {_index_types(A, idx)}, "
                  f"{v.type}")
    old = Tile(name, shape, A.dtype)
    return old if valid is None else where(valid, old, c)
