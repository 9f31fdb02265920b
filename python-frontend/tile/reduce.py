"""Reductions (tile.reduce), scans (tile.scan) and matrix products (tile.mma).

Combiners are traced like kernel code: their block arguments are Scalars, so
`lambda a, b: a + b` emits `arith.addf` on scalars inside the region.
"""

import numbers

from . import dtypes as D
from .arith import binary, cast
from .errors import TileShapeError, TileTypeError, user_location
from .ir import builder, tensor_type
from .language import (Scalar, Tile, Value, _to_tile, as_operand, broadcast_to,
                       common_dtype, expand_dims, materialize, reshape)
from .ops import where, zeros


def _combiner_region(b, srcs, combine):
    """The `^bb0(...)` block of a reduce/scan combiner, as lines."""
    b.push(isolated=True)
    # (accumulated..., new...) scalars
    args = [Scalar(b.fresh(), s.dtype) for s in srcs]
    args += [Scalar(b.fresh(), s.dtype) for s in srcs]
    out = combine(*args)
    if not isinstance(out, (tuple, list)):
        out = (out,)
    out = [materialize(o, s.dtype, None) for o, s in zip(out, srcs)]
    b.emit(f"tile.yield {', '.join(o.name for o in out)} : "
           f"{', '.join(o.type for o in out)}", nres=0)
    lines = b.pop()
    head = "^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in args) + "):"
    return [head] + lines


def _region_op(opname, srcs, axis, combine, result_shapes, attrs=""):
    b = builder(f"tile.{opname}")
    loc = user_location()
    body = _combiner_region(b, srcs, combine)
    rtypes = [tensor_type(shape, s.dtype.mlir) for shape, s in zip(result_shapes, srcs)]
    stypes = ", ".join(s.type for s in srcs)
    rt = rtypes[0] if len(rtypes) == 1 else "(" + ", ".join(rtypes) + ")"
    head = (f"tile.{opname}({', '.join(s.name for s in srcs)}) axis = {axis}{attrs} : "
            f"({stypes}) -> {rt}")
    names = b.emit_region_op(head, body, nres=len(srcs), loc=loc)
    if len(srcs) == 1:
        names = [names]
    return [Tile(n, shape, s.dtype) for n, shape, s in zip(names, result_shapes, srcs)]


def reduce(srcs, axis, combine):
    """Reduces one tile (or a tuple of same-shape tiles) along `axis` with
    `combine(acc..., new...) -> new acc...`. Returns tile(s) without `axis`."""
    single = not isinstance(srcs, (tuple, list))
    srcs = [_to_tile(s) for s in ([srcs] if single else srcs)]
    axis = _norm_axis(axis, srcs[0].ndim)
    shape = srcs[0].shape[:axis] + srcs[0].shape[axis + 1:]
    out = _region_op("reduce", srcs, axis, combine, [shape] * len(srcs))
    return out[0] if single else tuple(out)


def scan(srcs, axis, combine, reverse=False):
    """Inclusive scan of tile(s) along `axis` with `combine`."""
    single = not isinstance(srcs, (tuple, list))
    srcs = [_to_tile(s) for s in ([srcs] if single else srcs)]
    axis = _norm_axis(axis, srcs[0].ndim)
    out = _region_op("scan", srcs, axis, combine, [srcs[0].shape] * len(srcs),
                     " attributes {reverse}" if reverse else "")
    return out[0] if single else tuple(out)


def _norm_axis(axis, ndim):
    if isinstance(axis, Value) or not isinstance(axis, numbers.Integral):
        raise TileTypeError(f"axis must be a constant int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise TileShapeError(f"axis {axis} is out of range for a rank-{ndim} tile")
    return int(axis) % ndim


def _axes(axis, ndim):
    """Sorted, normalized axes; None means all."""
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = sorted({_norm_axis(a, ndim) for a in axis})
    else:
        axes = [_norm_axis(axis, ndim)]
    return axes


def _keepdims(t, axes, ndim, keepdims):
    if not keepdims:
        return t
    if not axes:
        return t
    if len(axes) == ndim:
        return reshape(t, (1,) * ndim)
    for a in axes:  # ascending: each insertion lands at its original place
        t = expand_dims(t, a)
    return t


def _reduce_axes(t, axis, keepdims, combine):
    t = _to_tile(t)
    ndim = t.ndim
    axes = _axes(axis, ndim)
    if not axes:
        return t
    if len(axes) == ndim and ndim > 1:  # all axes: flatten once
        r = reduce(reshape(t, (-1,)), 0, combine)
    else:
        r = t
        for a in reversed(axes):
            r = reduce(r, a, combine)
    return _keepdims(r, axes, ndim, keepdims)


def _acc_dtype(dt, dtype):
    """The dtype sums/products accumulate in, and the one they return."""
    if dtype is not None:
        d = D.to_dtype(dtype)
        if d is None:
            raise TileTypeError(f"unsupported dtype {dtype!r}")
        return d, d
    if dt.kind == D.KIND_BOOL:
        return D.int32, D.int32
    if dt.kind == D.KIND_INT and dt.bits < 32:
        r = D.int32 if dt.signed else D.uint32
        return r, r
    if dt.kind == D.KIND_FLOAT and dt.bits < 32:
        return D.float32, dt  # accumulate narrow floats in f32
    return dt, dt


def _arith_reduction(t, axis, keepdims, dtype, combine):
    t = _to_tile(t)
    acc, res = _acc_dtype(t.dtype, dtype)
    return cast(_reduce_axes(cast(t, acc), axis, keepdims, combine), res)


def sum(t, axis=None, keepdims=False, dtype=None):
    """Sum along `axis` (all axes when None, giving a rank-0 tile)."""
    return _arith_reduction(t, axis, keepdims, dtype, lambda a, b: a + b)


def prod(t, axis=None, keepdims=False, dtype=None):
    """Product along `axis` (all axes when None)."""
    return _arith_reduction(t, axis, keepdims, dtype, lambda a, b: a * b)


def _max_combine(a, b):
    return binary("max", a, b)


def _min_combine(a, b):
    return binary("min", a, b)


def max(t, axis=None, keepdims=False):
    """Maximum along `axis` (NaN-propagating for floats)."""
    return _reduce_axes(t, axis, keepdims, _max_combine)


def min(t, axis=None, keepdims=False):
    """Minimum along `axis` (NaN-propagating for floats)."""
    return _reduce_axes(t, axis, keepdims, _min_combine)


def _arg_combine(better):
    """(value, index) combiner: keeps the better value, the first index on
    ties; a NaN counts as the best (as torch.argmax/argmin do)."""
    def combine(v0, i0, v1, i1):
        first = i1 < i0
        if v0.dtype.kind == D.KIND_FLOAT:
            nan0, nan1 = v0 != v0, v1 != v1
            take = better(v1, v0) | (((nan0 & nan1) | (v1 == v0)) & first) | (nan1 & ~nan0)
        else:
            take = better(v1, v0) | ((v1 == v0) & first)
        return where(take, v1, v0), where(take, i1, i0)
    return combine


def _arg_reduce(t, axis, keepdims, better):
    t = _to_tile(t)
    if t.ndim == 0:
        t = reshape(t, (1,))
    ndim = t.ndim
    if axis is None:
        flat = reshape(t, (-1,))
        n = flat.shape[0]
        idx = _iota(n)
        _, r = reduce((flat, idx), 0, _arg_combine(better))
        return reshape(r, (1,) * ndim) if keepdims else r
    a = _norm_axis(axis, ndim)
    n = t.shape[a]
    idx = reshape(_iota(n), tuple(n if k == a else 1 for k in range(ndim)))
    idx = broadcast_to(idx, t.shape)
    _, r = reduce((t, idx), a, _arg_combine(better))
    return expand_dims(r, a) if keepdims else r


def _iota(n):
    return Tile(builder().emit(f"tile.iota : {tensor_type((n,), 'i32')}"), (n,), D.int32)


def argmax(t, axis=None, keepdims=False):
    """Index (int32) of the maximum along `axis`; the first one on ties."""
    return _arg_reduce(t, axis, keepdims, lambda a, b: a > b)


def argmin(t, axis=None, keepdims=False):
    """Index (int32) of the minimum along `axis`; the first one on ties."""
    return _arg_reduce(t, axis, keepdims, lambda a, b: a < b)


def _scan(t, axis, reverse, dtype, combine):
    t = _to_tile(t)
    acc, res = _acc_dtype(t.dtype, dtype)
    return cast(scan(cast(t, acc), axis, combine, reverse=reverse), res)


def cumsum(t, axis=0, reverse=False, dtype=None):
    """Inclusive cumulative sum along `axis`."""
    return _scan(t, axis, reverse, dtype, lambda a, b: a + b)


def cumprod(t, axis=0, reverse=False, dtype=None):
    """Inclusive cumulative product along `axis`."""
    return _scan(t, axis, reverse, dtype, lambda a, b: a * b)


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

def _mma_acc_ok(inp, acc):
    if inp is D.float16:
        return acc in (D.float32, D.float16)
    if inp is D.bfloat16:
        return acc is D.float32
    if inp in (D.float32, D.float64):
        return acc is inp
    if inp in (D.int8, D.uint8):
        return acc is D.int32
    if inp in (D.float8_e4m3fn, D.float8_e5m2):
        return acc is D.float32
    return False


def _check_mma_shapes(a, b, c):
    r = a.ndim
    if r not in (2, 3) or b.ndim != r or (c is not None and c.ndim != r):
        shapes = [a.shape, b.shape] + ([c.shape] if c is not None else [])
        raise TileShapeError(f"mma operands must all be 2-d (or all 3-d batched), got "
                             f"shapes {', '.join(map(str, shapes))}")
    o = r - 2
    if a.shape[o + 1] != b.shape[o]:
        raise TileShapeError(f"mma contraction dimensions differ: a is {a.shape} and "
                             f"b is {b.shape}", "a must be MxK and b KxN")
    if r == 3 and a.shape[0] != b.shape[0]:
        raise TileShapeError(f"mma batch dimensions differ: {a.shape[0]} and {b.shape[0]}")
    out = a.shape[:o] + (a.shape[o], b.shape[o + 1])
    if c is not None and c.shape != out:
        raise TileShapeError(f"mma accumulator has shape {c.shape}, expected {out}")
    return out


def mma(a, b, acc, allow_tf32=False):
    """`a @ b + acc` in acc's dtype. Inputs f16/bf16 (f32 or f16 acc), f32
    (tf32 with allow_tf32=True), f64, int8 (int32 acc); 2-d or 3-d batched."""
    a, b, acc = (_as_matrix(x, n) for x, n in ((a, "a"), (b, "b"), (acc, "acc")))
    _check_mma_shapes(a, b, acc)
    if a.dtype is not b.dtype:
        raise TileTypeError(f"mma inputs must have one dtype, got {a.dtype.name} and "
                            f"{b.dtype.name}", "cast one with .astype(...)")
    if not _mma_acc_ok(a.dtype, acc.dtype):
        raise TileTypeError(
            f"unsupported mma: {a.dtype.name} inputs with a {acc.dtype.name} accumulator",
            "supported: float16 -> float32/float16, bfloat16 -> float32, float32 -> "
            "float32, float64 -> float64, int8 -> int32")
    bld = builder("tile.mma")
    attr = " {allow_tf32}" if allow_tf32 else ""
    name = bld.emit(f"tile.mma {a.name}, {b.name}, {acc.name}{attr} : {a.type}, "
                    f"{b.type} -> {acc.type}")
    return Tile(name, acc.shape, acc.dtype)


def _as_matrix(x, what):
    x = as_operand(x, f"mma operand {what}")
    if not isinstance(x, Tile):
        raise TileTypeError(f"mma operand {what} must be a 2-d or 3-d tile, got {x!r}")
    return x


def matmul(a, b):
    """`a @ b`: accumulates narrow floats in float32 and returns the inputs'
    (promoted) dtype, as torch does; int8 @ int8 gives int32."""
    a, b = _as_matrix(a, "a"), _as_matrix(b, "b")
    dt = common_dtype([a, b])
    a, b = cast(a, dt), cast(b, dt)
    out = _check_mma_shapes(a, b, None)
    if dt in (D.float16, D.bfloat16, D.float8_e4m3fn, D.float8_e5m2):
        acc, res = D.float32, dt
    elif dt in (D.float32, D.float64):
        acc, res = dt, dt
    elif dt in (D.int8, D.uint8):
        acc, res = D.int32, D.int32
    else:
        raise TileTypeError(f"`@` is not supported for {dt.name} tiles",
                            "cast to a float dtype first")
    return cast(mma(a, b, zeros(out, acc)), res)
