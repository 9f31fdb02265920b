"""cuTile's tile-shaped ops, composed from the tile dialect's own: `extract`,
`insert`, `cat`, `Tile.item`, `astile`, `bitcast`, `pack_to_bytes`,
`unpack_from_bytes` and `transpose(x, axis0, axis1)`.

The dialect has no slicing op (its GPU lowering maps whole tiles onto
threads), so subtiles are selected the way a thread layout can: the tile is
reshaped to a grid of subtiles, `extract` reduces over the grid keeping the
lane whose grid index matches (exact for every value, NaN and -0.0
included), and `insert`/`cat` select with `where`. A runtime index costs
nothing more than a constant one.
"""

import numbers

from . import dtypes as D
from .arith import _emit_binary, cast
from .errors import TileShapeError, TileTypeError
from .ir import builder, tensor_type
from .language import (Scalar, Tile, Value, _to_tile, as_operand, broadcast_to,
                       check_shape, common_dtype, constant, dtype_arg, literal, permute,
                       reshape)


def _const_axis(axis, ndim, what):
    if isinstance(axis, Value) or not isinstance(axis, numbers.Integral) or \
            isinstance(axis, bool):
        raise TileTypeError(f"{what}: axis must be a constant int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise TileShapeError(f"{what}: axis {axis} is out of range for a rank-{ndim} tile")
    return int(axis) % ndim


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _grid(x, sub, what):
    """Subtiles per axis of `x` for subtile shape `sub`."""
    if len(sub) != x.ndim:
        raise TileShapeError(f"{what}: a rank-{x.ndim} tile needs a rank-{x.ndim} subtile "
                             f"shape, got {sub}")
    for d, s in zip(x.shape, sub):
        if d % s:
            raise TileShapeError(f"{what}: subtile shape {sub} does not divide the tile's "
                                 f"shape {x.shape}")
    return tuple(d // s for d, s in zip(x.shape, sub))


def _grid_indices(index, ndim, what):
    index = _tuple(index)
    if len(index) != ndim:
        raise TileShapeError(f"{what}: a rank-{ndim} tile needs {ndim} subtile indices, got "
                             f"{len(index)}", "pass index=(i, j, ...), one per axis")
    out = []
    for i in index:
        i = as_operand(i, f"{what} index")
        if isinstance(i, (bool, float)) or (isinstance(i, Value) and
                                            i.dtype.kind != D.KIND_INT):
            raise TileTypeError(f"{what}: subtile indices must be integers, got {i!r}")
        if isinstance(i, Tile) and i.shape != ():
            raise TileTypeError(f"{what}: a subtile index must be a scalar, got a tile of "
                                f"shape {i.shape}")
        out.append(i)
    return out


def _iota(n):
    return Tile(builder().emit(f"tile.iota : {tensor_type((n,), 'i32')}"), (n,), D.int32)


def _axis_is(n, i, axis, rank):
    """A bool tile of `rank` dims, size `n` along `axis` and 1 elsewhere:
    true where the position along `axis` equals `i`."""
    hit = _iota(n) == cast(_to_tile(i), D.int32) if isinstance(i, Value) else _iota(n) == i
    return reshape(hit, tuple(n if a == axis else 1 for a in range(rank)))


def _blocked(x, grid, sub):
    """`x` as (g0, s0, g1, s1, ...) for its grid of subtiles."""
    return reshape(x, tuple(d for g, s in zip(grid, sub) for d in (g, s)))


def _grid_mask(grid, sub, index):
    """The (g0, s0, g1, s1, ...)-broadcastable mask of subtile `index`."""
    rank = 2 * len(grid)
    mask = None
    for a, (g, i) in enumerate(zip(grid, index)):
        if g == 1:
            continue
        m = _axis_is(g, i, 2 * a, rank)
        mask = m if mask is None else mask & m
    return mask


def _select_combine(v0, m0, v1, m1):
    from .ops import where
    return where(m1, v1, v0), m0 | m1


def extract(x, /, index, shape):
    """The subtile of `x` at grid `index` for subtile `shape` (each entry of
    `shape` divides `x.shape`): `x[i*s0:(i+1)*s0, ...]`. Indices may be
    runtime values."""
    from .reduce import reduce
    x = _to_tile(x)
    sub = check_shape(shape, "extract")
    grid = _grid(x, sub, "extract")
    index = _grid_indices(index, x.ndim, "extract")
    if all(g == 1 for g in grid):
        return x
    rank = x.ndim
    # grid axes first, flattened into one, then keep the matching lane
    blocked = _blocked(x, grid, sub)
    order = [2 * a for a in range(rank)] + [2 * a + 1 for a in range(rank)]
    total = 1
    for g in grid:
        total *= g
    flat_shape = (total,) + sub
    vals = reshape(permute(blocked, order), flat_shape)
    target = 0
    for g, i in zip(grid, index):
        target = target * g + i
    hit = _iota(total) == (cast(_to_tile(target), D.int32) if isinstance(target, Value)
                           else target)
    mask = broadcast_to(reshape(hit, (total,) + (1,) * rank), flat_shape)
    out, _ = reduce((vals, mask), 0, _select_combine)
    return out


def insert(x, /, index, value):
    """`x` with the subtile at grid `index` replaced by `value` (whose shape
    divides `x.shape`; a 0-d value is a unit subtile). A new tile."""
    from .ops import where
    x = _to_tile(x)
    value = as_operand(value, "insert value")
    vshape = value.shape if isinstance(value, Tile) else ()
    sub = vshape if vshape else (1,) * x.ndim
    if len(sub) != x.ndim:
        raise TileShapeError(f"insert: a rank-{len(sub)} value into a rank-{x.ndim} tile",
                             "reshape the value to the tile's rank")
    grid = _grid(x, sub, "insert")
    index = _grid_indices(index, x.ndim, "insert")
    v = _to_tile(value) if isinstance(value, Value) else constant(value, x.dtype, ())
    v = cast(v, x.dtype)
    if all(g == 1 for g in grid):
        return reshape(v, x.shape)
    blocked = _blocked(x, grid, sub)
    v = broadcast_to(reshape(v, tuple(d for s in sub for d in (1, s))), blocked.shape)
    out = where(_grid_mask(grid, sub, index), v, blocked)
    return reshape(out, x.shape)


def cat(tiles, /, axis):
    """Concatenates tiles of one shape along `axis` (cuTile takes a pair; any
    power-of-two count works here). Dtypes promote as for arithmetic."""
    from .ops import where
    if not isinstance(tiles, (tuple, list)) or not tiles:
        raise TileTypeError("cat needs a tuple of tiles, e.g. cat((a, b), axis=0)")
    ts = [_to_tile(t) for t in tiles]
    n = len(ts)
    if n & (n - 1):
        raise TileShapeError(f"cat of {n} tiles: the result would not have a power-of-two "
                             "shape", "concatenate a pair (or 4, 8, ... tiles)")
    shape = ts[0].shape
    for t in ts[1:]:
        if t.shape != shape:
            raise TileShapeError(f"cat needs tiles of one shape, got {shape} and {t.shape}",
                                 "tile shapes are powers of two: pad the smaller one")
    if not shape:
        raise TileShapeError("cat of 0-d tiles", "reshape them to (1,) first")
    axis = _const_axis(axis, len(shape), "cat")
    dt = common_dtype(ts)
    if n == 1:
        return cast(ts[0], dt)
    stacked = shape[:axis] + (n,) + shape[axis:]
    parts = [broadcast_to(reshape(cast(t, dt), shape[:axis] + (1,) + shape[axis:]), stacked)
             for t in ts]
    out = parts[-1]
    for k in range(n - 2, -1, -1):
        out = where(_axis_is(n, k, axis, len(stacked)), parts[k], out)
    return reshape(out, shape[:axis] + (n * shape[axis],) + shape[axis + 1:])


def item(x):
    """`x` (one element) as a 0-d tile: `x.reshape(())`."""
    x = _to_tile(x)
    size = 1
    for d in x.shape:
        size *= d
    if size != 1:
        raise TileShapeError(f"item() of a tile of shape {x.shape}: it needs exactly one "
                             "element", "reduce it first (tile.sum, tile.max) or extract one")
    return reshape(x, ())


def _nested(value, what):
    """(shape, flat elements) of a nested tuple of scalars."""
    if not isinstance(value, (tuple, list)):
        return (), [value]
    if not value:
        raise TileShapeError(f"{what}: an empty tuple has no tile shape")
    parts = [_nested(v, what) for v in value]
    inner = parts[0][0]
    if any(p[0] != inner for p in parts):
        raise TileShapeError(f"{what}: sibling tuples must have one length at every level")
    return (len(value),) + inner, [e for p in parts for e in p[1]]


def astile(value, /, *, dtype):
    """A tile from a scalar (0-d) or a nested tuple of scalars (its nesting is
    the shape; lengths powers of two), elements converted to `dtype`."""
    dt = dtype_arg(dtype)
    shape, elems = _nested(value, "astile")
    shape = check_shape(shape, "astile") if shape else ()
    elems = [as_operand(e, "astile element") for e in elems]
    for e in elems:
        if isinstance(e, Tile) and e.shape != ():
            raise TileTypeError(f"astile elements must be scalars, got a tile of shape "
                                f"{e.shape}", "use tile.cat or tile.broadcast_to for tiles")
    if not shape:
        e = elems[0]
        return cast(_to_tile(e), dt) if isinstance(e, Value) else constant(e, dt, ())
    # a splat of the most common constant, the other elements selected in
    # (the GPU lowering takes splat constants only; astile's tiles are small)
    from .ops import where
    lits = [literal(e, dt) for e in elems if not isinstance(e, Value)]
    base = max(set(lits), key=lits.count) if lits else literal(0, dt)
    n = len(elems)
    flat = Tile(builder().constant(base, tensor_type((n,), dt.mlir)), (n,), dt)
    pos = _iota(n)
    for k, e in enumerate(elems):
        if isinstance(e, Value):
            flat = where(pos == k, cast(_to_tile(e), dt), flat)
        elif literal(e, dt) != base:
            flat = where(pos == k, constant(e, dt, ()), flat)
    return reshape(flat, shape)


# ---------------------------------------------------------------------------
# Bits
# ---------------------------------------------------------------------------

def _bits_operand(x, what):
    x = as_operand(x, what)
    if not isinstance(x, Value):
        x = constant(x, common_dtype([x]), None)
    return x


def bitcast(x, /, dtype):
    """`x`'s bits reinterpreted as `dtype` (of the same width)."""
    x = _bits_operand(x, "bitcast operand")
    dt = dtype_arg(dtype)
    if dt.bits != x.dtype.bits or D.KIND_BOOL in (dt.kind, x.dtype.kind) and \
            dt.kind != x.dtype.kind:
        raise TileTypeError(f"bitcast from {x.dtype.name} ({x.dtype.bits} bits) to {dt.name} "
                            f"({dt.bits} bits): the widths differ",
                            "bitcast to a type of the same width, or use pack_to_bytes / "
                            "unpack_from_bytes, or astype to convert values")
    if x.dtype.mlir == dt.mlir:
        return Tile(x.name, x.shape, dt) if isinstance(x, Tile) else Scalar(x.name, dt)
    out = dt.mlir if isinstance(x, Scalar) else tensor_type(x.shape, dt.mlir)
    name = builder().emit(f"arith.bitcast {x.name} : {x.type} to {out}")
    return Tile(name, x.shape, dt) if isinstance(x, Tile) else Scalar(name, dt)


_UINT = {8: D.uint8, 16: D.uint16, 32: D.uint32, 64: D.uint64}


def _byte_width(dt, what):
    if dt.kind == D.KIND_BOOL or dt.bits % 8 or dt.bits not in _UINT:
        raise TileTypeError(f"{what}: {dt.name} is not a whole number of bytes",
                            "cast bools with astype(tile.uint8) first")
    return dt.bits // 8


def pack_to_bytes(x, /):
    """`x` flattened and its bytes as a 1-d uint8 tile (little-endian, as in
    memory): `x.size * itemsize` elements."""
    x = _to_tile(_bits_operand(x, "pack_to_bytes operand"))
    k = _byte_width(x.dtype, "pack_to_bytes")
    n = 1
    for d in x.shape:
        n *= d
    u = bitcast(reshape(x, (n,)), _UINT[x.dtype.bits])
    if k == 1:
        return u
    ut = u.dtype
    shifts = cast(_iota(k), ut) * 8  # byte j of an element is bits [8j, 8j+8)
    wide = broadcast_to(reshape(u, (n, 1)), (n, k))
    shifted = _emit_binary("arith.shrui", wide, broadcast_to(reshape(shifts, (1, k)), (n, k)),
                           ut, (n, k))
    return reshape(cast(shifted, D.uint8), (n * k,))


def unpack_from_bytes(x, /, dtype):
    """The inverse of pack_to_bytes: a 1-d uint8 tile's bytes read as `dtype`
    elements (little-endian)."""
    from .reduce import reduce
    x = _to_tile(x)
    dt = dtype_arg(dtype)
    if x.ndim != 1 or x.dtype.kind != D.KIND_INT or x.dtype.bits != 8:
        raise TileTypeError(f"unpack_from_bytes needs a 1-d uint8 tile, got {x.dtype.name} "
                            f"of shape {x.shape}", "pack_to_bytes(t) makes one")
    k = _byte_width(dt, "unpack_from_bytes")
    n = x.shape[0]
    if n % k:
        raise TileShapeError(f"unpack_from_bytes: {n} bytes are not a whole number of "
                             f"{dt.name} elements ({k} bytes each)")
    x = bitcast(x, D.uint8)
    if k == 1:
        return bitcast(x, dt)
    ut = _UINT[dt.bits]
    m = n // k
    wide = cast(reshape(x, (m, k)), ut)  # zero-extends
    shifts = broadcast_to(reshape(cast(_iota(k), ut) * 8, (1, k)), (m, k))
    placed = _emit_binary("arith.shli", wide, shifts, ut, (m, k))
    word = reduce(placed, 1, lambda a, b: a | b)
    return bitcast(word, dt)


# ---------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------

def transpose(x, /, axis0=None, axis1=None):
    """Swaps axes `axis0` and `axis1` of `x` (cuTile's form); with neither,
    swaps the two axes of a 2-d tile (reverses the axes of others, as
    `t.T`). tile's own `transpose(t, axes)` with a tuple permutes."""
    x = _to_tile(x)
    if isinstance(axis0, (tuple, list)) and axis1 is None:
        return permute(x, axis0)
    if axis0 is None and axis1 is None:
        return x.T
    if axis0 is None or axis1 is None:
        raise TileTypeError("transpose needs both axis0 and axis1, or neither",
                            "e.g. transpose(t, 0, 2)")
    a = _const_axis(axis0, x.ndim, "transpose")
    b = _const_axis(axis1, x.ndim, "transpose")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(x, perm)
