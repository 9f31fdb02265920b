"""cuTile's array views and indexing forms: `Array.slice`, `Array.tiled_view`
(`TiledView`), `Array.get_raw_memory` (`RawArrayMemory`, offset loads, stores
and atomics), `Slice` with `load_advanced_indexing`/`store_advanced_indexing`,
and `assume_divisible_by`.

A slice and a raw view are new arrays (`tile.array_slice`, `tile.raw_view`),
so every memory op works on them; tiled views and advanced indexing are
trace-time objects that become loads, gathers and atomics on those arrays.
"""

import numbers

from . import dtypes as D
from . import memory as M
from .arith import to_i32_scalar
from .errors import TileShapeError, TileTypeError, TileValueError
from .ir import builder
from .language import Array, Tile, Value, as_operand, check_shape, reshape
from .memory_model import MemoryOrder, MemoryScope, PaddingMode, check_hints, padding_number
from .tracer import array_type


def _const_int(x, what):
    if isinstance(x, Value) or isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TileTypeError(f"{what} must be a constant int, got {x!r}")
    return int(x)


def _view(A, op, ndim, unit, text):
    """A view of `A`: an Array named by the op in `text`, `param` kept for
    messages (and for what the launch checks writes to)."""
    mask = sum(1 << k for k in unit)
    t = array_type(A.dtype, ndim, mask, False, False)
    name = builder(op).emit(f"{text} : {A.type} -> {t}")
    return Array(name, A.dtype, ndim, t, frozenset(unit), A.param)


class RawArray(Array):
    """The unbounded rank-1 view of an array's memory (tile.raw_view)."""
    __slots__ = ()
    unbounded = True  # no extent to check offsets against


def array_slice(A, axis, start, stop):
    """`A.slice(axis, start, stop)`: the elements [start, stop) along `axis`
    (a view; no data moves)."""
    M._array(A, "slice")
    axis = _const_int(axis, "Array.slice axis")
    if not -A.ndim <= axis < A.ndim:
        raise TileValueError(f"Array.slice axis {axis} is out of range for a rank-{A.ndim} "
                             "array")
    axis %= A.ndim
    lo = to_i32_scalar(start, "Array.slice start")
    hi = to_i32_scalar(stop, "Array.slice stop")
    return _view(A, "tile.array_slice", A.ndim, A.unit_strides,
                 f"tile.array_slice {A.name}[{axis}] {lo.name}, {hi.name}")


def get_raw_memory(A):
    """`A.get_raw_memory()`: loads, stores and atomics at element offsets from
    the array's base pointer."""
    M._array(A, "get_raw_memory")
    return RawArrayMemory(A)


class RawArrayMemory:
    """Offsets in elements from an array's base pointer; no bounds (masks
    say which lanes access memory)."""

    __slots__ = ("_raw",)

    def __init__(self, A):
        v = _view(A, "tile.raw_view", 1, (0,), f"tile.raw_view {A.name}")
        self._raw = RawArray(v.name, v.dtype, 1, v.type, v.unit_strides, v.param)

    @property
    def dtype(self):
        return self._raw.dtype

    def load_offset(self, offset, /, *, mask=None, padding_value=0, latency=None):
        """The elements at `offset` (a tile or scalar); lanes where `mask` is
        false read `padding_value`."""
        return M.gather(self._raw, offset, mask=mask, padding_value=padding_value,
                        latency=latency)

    def store_offset(self, offset, value, /, *, mask=None, latency=None):
        """Writes `value` (broadcast to the offsets' shape) where `mask`."""
        M.scatter(self._raw, offset, value, mask=mask, latency=latency)

    def atomic_cas_offset(self, offset, expected, desired, /, *, mask=None,
                          memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE):
        """Compare-and-swap at `offset`; returns the old values (`expected`
        where `mask` is false)."""
        return M.atomic_cas(self._raw, offset, expected, desired, mask=mask,
                            memory_order=memory_order, memory_scope=memory_scope)


def _offset_rmw(kind):
    def op(self, offset, update, /, *, mask=None, memory_order=MemoryOrder.ACQ_REL,
           memory_scope=MemoryScope.DEVICE):
        return getattr(M, "atomic_" + kind)(self._raw, offset, update, mask=mask,
                                            memory_order=memory_order,
                                            memory_scope=memory_scope)
    op.__name__ = op.__qualname__ = f"atomic_{kind}_offset"
    op.__doc__ = (f"Atomic {kind} of `update` at `offset` where `mask`; returns the old "
                  "values.")
    return op


for _k in ("xchg", "add", "max", "min", "and", "or", "xor"):
    setattr(RawArrayMemory, f"atomic_{_k}_offset", _offset_rmw(_k))


# ---------------------------------------------------------------------------
# Tiled views
# ---------------------------------------------------------------------------

def _broadcast_shape(shape, ndim, what):
    shape = check_shape(shape, what)
    if shape == ():
        shape = (1,) * ndim
    if len(shape) != ndim:
        raise TileShapeError(f"{what} {shape} must have the array's rank {ndim}")
    return shape


def tiled_view(A, tile_shape, *, padding_mode=PaddingMode.UNDETERMINED, traversal_steps=None):
    """`A.tiled_view(tile_shape, padding_mode=..., traversal_steps=...)`."""
    M._array(A, "tiled_view")
    return TiledView(A, tile_shape, padding_mode, traversal_steps)


class TiledView:
    """An array seen as a grid of `tile_shape` tiles whose origins lie
    `traversal_steps` elements apart (the tile shape by default)."""

    __slots__ = ("_array", "_shape", "_steps", "_padding", "_scalar")

    def __init__(self, A, tile_shape, padding_mode, traversal_steps):
        self._scalar = tile_shape == ()
        self._array = A
        self._shape = _broadcast_shape(tile_shape, A.ndim, "TiledView tile_shape")
        padding_number("Array.tiled_view", 0, padding_mode)  # checks the member
        self._padding = padding_mode
        if traversal_steps is None:
            self._steps = self._shape
        else:
            steps = (traversal_steps,) if isinstance(traversal_steps, int) else traversal_steps
            steps = tuple(_const_int(s, "traversal_steps entry") for s in steps)
            if len(steps) != A.ndim or any(s <= 0 for s in steps):
                raise TileValueError(f"traversal_steps {steps} must be {A.ndim} positive "
                                     "ints")
            self._steps = steps

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def tile_shape(self):
        return () if self._scalar else self._shape

    @property
    def traversal_steps(self):
        return self._steps

    def num_tiles(self, axis):
        """The number of tile origins along `axis`: cdiv(extent, step)."""
        from .ops import cdiv
        axis = _const_int(axis, "TiledView.num_tiles axis")
        if not -self._array.ndim <= axis < self._array.ndim:
            raise TileValueError(f"axis {axis} is out of range for the view's rank")
        axis %= self._array.ndim
        return cdiv(self._array.shape[axis], self._steps[axis])

    def _at(self, index, what):
        """(array, block indices) addressing tile `index`: axes whose step is
        the tile's use block indices, others a slice starting at the origin."""
        A = self._array
        if not isinstance(index, (tuple, list)):
            index = (index,)
        if len(index) != A.ndim:
            raise TileShapeError(f"TiledView.{what} needs {A.ndim} indices, got {len(index)}")
        idx = []
        for d, (i, s, step) in enumerate(zip(index, self._shape, self._steps)):
            if step == s:
                idx.append(i)
                continue
            start = to_i32_scalar(i, f"TiledView.{what} index") * step
            A = array_slice(A, d, start, A.shape[d])
            idx.append(0)
        return A, tuple(idx)

    def load(self, index, *, check_bounds=True, latency=None, allow_tma=None):
        """The tile at `index`; elements outside the array read the view's
        padding."""
        A, idx = self._at(index, "load")
        t = M.load(A, idx, self._shape, padding_mode=self._padding,
                   check_bounds=check_bounds, latency=latency, allow_tma=allow_tma)
        return reshape(t, ()) if self._scalar else t

    def store(self, index, tile, *, check_bounds=True, latency=None, allow_tma=None):
        """Writes `tile` (broadcast to the tile shape, cast to the dtype)."""
        A, idx = self._at(index, "store")
        M.store(A, idx, tile, shape=self._shape, check_bounds=check_bounds, latency=latency,
                allow_tma=allow_tma)

    def _element_indices(self, index):
        from .ops import arange
        A, idx = self._at(index, "atomic_store")
        n = A.ndim
        out = []
        for d, (i, s) in enumerate(zip(idx, self._shape)):
            lane = arange(s) + to_i32_scalar(i, "TiledView index") * s
            out.append(reshape(lane, tuple(s if k == d else 1 for k in range(n))))
        return A, out


def _tv_atomic(kind):
    def op(self, index, update, /):
        A, idx = self._element_indices(index)
        u = as_operand(update, "update")
        if kind in ("and", "or", "xor") and isinstance(u, Value) and u.dtype != A.dtype:
            raise TileTypeError(f"TiledView.atomic_store_{kind} needs an update of the "
                                f"view's dtype {A.dtype.name}, got {u.dtype.name}")
        shape = self._shape
        idx = [M.materialize(i, i.dtype, shape) for i in idx]
        getattr(M, "atomic_" + kind)(A, tuple(idx), M.materialize(u, A.dtype, shape))
    op.__name__ = op.__qualname__ = f"atomic_store_{kind}"
    op.__doc__ = f"Atomic {kind} of `update` into tile `index` (no result)."
    return op


for _k in ("add", "max", "min", "and", "or", "xor"):
    setattr(TiledView, f"atomic_store_{_k}", _tv_atomic(_k))


# ---------------------------------------------------------------------------
# Advanced indexing
# ---------------------------------------------------------------------------

class Slice:
    """`Slice(start, length)`: the `length` (a constant power of two)
    elements from `start` along one axis, for load/store_advanced_indexing."""

    __slots__ = ("start", "length")

    def __init__(self, start, length, /):
        self.start = start
        self.length = length

    def __repr__(self):
        return f"Slice({self.start!r}, {self.length!r})"


def _advanced(A, indices, fn):
    """The element-index tiles of the block `indices` names, and its shape."""
    from .ops import arange
    M._array(A, fn)
    if not isinstance(indices, (tuple, list)) or len(indices) != A.ndim:
        raise TileShapeError(f"tile.{fn} needs a tuple of {A.ndim} entries (one per axis)")
    sparse = [d for d, e in enumerate(indices) if isinstance(e, Value)]
    if len(sparse) != 1 or any(not isinstance(e, (Slice, Value)) for e in indices):
        raise TileTypeError(f"tile.{fn} needs exactly one 1-d integer tile and a "
                            "tile.Slice(start, length) for every other axis",
                            "e.g. (rows, tile.Slice(col0, 16))")
    d0 = sparse[0]
    rows = indices[d0]
    if not isinstance(rows, Tile) or len(rows.shape) != 1 or rows.dtype.kind != D.KIND_INT:
        raise TileTypeError(f"tile.{fn}'s sparse index must be a 1-d integer tile, got "
                            f"{rows!r}")
    shape = tuple(rows.shape[0] if d == d0 else
                  check_shape((_const_int(e.length, "Slice length"),), "Slice")[0]
                  for d, e in enumerate(indices))
    out = []
    for d, e in enumerate(indices):
        along = tuple(shape[d] if k == d else 1 for k in range(A.ndim))
        if d == d0:
            out.append(reshape(rows, along))
        else:
            lane = arange(shape[d]) + to_i32_scalar(e.start, "Slice start")
            out.append(reshape(lane, along))
    return out, shape


def load_advanced_indexing(array, indices, /, *, padding_mode=PaddingMode.UNDETERMINED,
                           latency=None, allow_tma=None):
    """The block of `array` whose sparse axis takes the rows of a 1-d index
    tile and whose other axes take `Slice`s; elements outside read the
    padding."""
    check_hints("tile.load_advanced_indexing", True, latency, allow_tma)
    idx, shape = _advanced(array, indices, "load_advanced_indexing")
    pad = padding_number("tile.load_advanced_indexing", 0, padding_mode)
    idx = [M.materialize(i, i.dtype, shape) for i in idx]
    return M.gather(array, tuple(idx), other=pad)


def store_advanced_indexing(array, indices, tile, /, *, latency=None, allow_tma=None):
    """Writes `tile` (exactly the block's shape, or a scalar) into the block
    `indices` names; elements outside are dropped."""
    check_hints("tile.store_advanced_indexing", True, latency, allow_tma)
    idx, shape = _advanced(array, indices, "store_advanced_indexing")
    v = as_operand(tile, "tile")
    if isinstance(v, Tile) and v.shape != shape:
        raise TileShapeError(f"tile.store_advanced_indexing of a {v.shape} tile into a "
                             f"{shape} block", "the tile's shape must match the indices'")
    idx = [M.materialize(i, i.dtype, shape) for i in idx]
    M.scatter(array, tuple(idx), v)


def assume_divisible_by(x, divisor):
    """Returns `x`: the claim that it divides by `divisor` is checked for
    constants and otherwise accepted (tile's compiler does not use it)."""
    divisor = _const_int(divisor, "assume_divisible_by divisor")
    if divisor <= 0:
        raise TileValueError(f"assume_divisible_by divisor must be positive, got {divisor}")
    x = as_operand(x, "assume_divisible_by value")
    if isinstance(x, (bool, float)) or (isinstance(x, Value) and x.dtype.kind != D.KIND_INT):
        raise TileTypeError("assume_divisible_by needs an integer scalar")
    if isinstance(x, Tile) and x.shape != ():
        raise TileTypeError("assume_divisible_by needs a scalar, got a tile")
    if isinstance(x, int) and x % divisor:
        raise TileValueError(f"assume_divisible_by: {x} is not divisible by {divisor}")
    return x


__all__ = ["RawArrayMemory", "Slice", "TiledView", "array_slice", "assume_divisible_by",
           "get_raw_memory", "load_advanced_indexing", "store_advanced_indexing",
           "tiled_view"]
