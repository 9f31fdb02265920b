"""Reductions (tile.reduce), scans (tile.scan) and matrix products (tile.mma).

Combiners are traced like kernel code: their block arguments are Scalars, so
`lambda a, b: a + b` emits `arith.addf` on scalars inside the region.
"""

import numbers

from . import dtypes as D, global_watch
from .arith import cast
from .errors import TileShapeError, TileTypeError, TileValueError, user_location
from .ir import builder, tensor_type
from .language import (Scalar, Tile, Value, _to_tile, as_operand, broadcast_shapes,
                       broadcast_to, common_dtype, expand_dims, materialize, reshape)
from .ops import where, zeros


def _combiner_region(b, srcs, combine):
    """The `^bb0(...)` block of a reduce/scan combiner, as lines."""
    block = b.push(isolated=True)
    start = b.counter
    # (accumulated..., new...) scalars
    args = [Scalar(b.fresh(), s.dtype) for s in srcs]
    args += [Scalar(b.fresh(), s.dtype) for s in srcs]
    prev = getattr(b, "capture", None)
    b.capture = _capturer(b, block, start)
    global_watch.record(combine)  # a user's combiner reads globals too
    try:
        out = combine(*args)
        if not isinstance(out, (tuple, list)):
            out = (out,)
        if len(out) != len(srcs):
            raise TileTypeError(f"the combiner returned {len(out)} values for {len(srcs)} "
                                "operands", "return one combined value per operand")
        out = [_scalar_of(b.capture(o) if isinstance(o, Tile) else o, s.dtype)
               for o, s in zip(out, srcs)]
    finally:
        b.capture = prev
    b.emit(f"tile.yield {', '.join(o.name for o in out)} : "
           f"{', '.join(o.type for o in out)}", nres=0)
    lines = b.pop()
    head = "^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in args) + "):"
    return [head] + lines


def _defined_before(name, start):
    num = name[1:].split("#")[0]
    return not num.isdigit() or int(num) <= start


def _capturer(b, block, start):
    """What a combiner sees of a tile made outside it (cuTile's captured
    values): a 0-d tile becomes a scalar extracted before the reduce/scan op,
    so the combiner stays scalar code."""
    seen = {}

    def capture(x):
        if not isinstance(x, Tile) or not _defined_before(x.name, start):
            return x
        if x.shape != ():
            raise TileTypeError(f"the combiner uses a tile of shape {x.shape} made outside "
                                "it; it combines scalars", "capture scalars or 0-d tiles "
                                "(e.g. tile.max(t)), or pass the tile as another operand")
        if x.name not in seen:
            inner, b.block = b.block, block.parent
            try:
                seen[x.name] = Scalar(b.emit(f"tensor.extract {x.name}[] : {x.type}"),
                                      x.dtype)
            finally:
                b.block = inner
        return seen[x.name]
    return capture


def _scalar_of(o, dt):
    if isinstance(o, Tile):
        if o.shape != ():
            raise TileTypeError(f"the combiner returned a tile of shape {o.shape}",
                                "it must return scalars (0-d tiles)")
        o = Scalar(builder().emit(f"tensor.extract {o.name}[] : {o.type}"), o.dtype)
    return materialize(o, dt, None)


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


def _operands(x, identity, what):
    """(single, tiles broadcast to one shape) of reduce/scan's `x`, after
    checking cuTile's `identity` (constants, one per operand; tile's
    reductions start from the first element, so it is not used)."""
    single = not isinstance(x, (tuple, list))
    srcs = [_to_tile(s) for s in ([x] if single else x)]
    if not srcs:
        raise TileTypeError(f"{what} needs at least one tile")
    shape = broadcast_shapes(*[s.shape for s in srcs])
    srcs = [broadcast_to(s, shape) for s in srcs]
    if identity is not None:
        ids = identity if isinstance(identity, (tuple, list)) else (identity,)
        if len(ids) != len(srcs):
            raise TileValueError(f"{what}: identity must give one constant per operand "
                                 f"({len(srcs)})", "e.g. identity=(0.0, 0) for two tiles")
        for v in ids:
            if isinstance(v, Value) or not isinstance(v, (bool, numbers.Number)):
                raise TileValueError(f"{what}: identity must be constant scalars, got {v!r}")
    return single, srcs


def reduce(x, /, axis, func, identity=None, *, keepdims=False):
    """Reduces a tile (or a tuple of tiles, broadcast together) along `axis`
    with `func(acc..., new...) -> acc...` on scalars (cuTile's 0-d tiles);
    `func` may use scalars and 0-d tiles of the kernel. Returns tile(s)
    without `axis` (kept as size 1 with keepdims). `identity` (cuTile's) is
    checked: constants, one per operand."""
    single, srcs = _operands(x, identity, "reduce")
    ndim = srcs[0].ndim
    axis = _norm_axis(axis, ndim)
    shape = srcs[0].shape[:axis] + srcs[0].shape[axis + 1:]
    out = _region_op("reduce", srcs, axis, func, [shape] * len(srcs))
    if keepdims:
        out = [expand_dims(o, axis) for o in out]
    return out[0] if single else tuple(out)


def scan(x, /, axis, func, identity=None, *, reverse=False):
    """Inclusive scan of a tile (or a tuple of tiles, broadcast together)
    along `axis` with `func`, as for reduce; from the end when `reverse`."""
    single, srcs = _operands(x, identity, "scan")
    axis = _norm_axis(axis, srcs[0].ndim)
    if isinstance(reverse, Value) or not isinstance(reverse, (bool, numbers.Integral)):
        raise TileValueError(f"scan: reverse must be a constant bool, got {reverse!r}")
    out = _region_op("scan", srcs, axis, func, [srcs[0].shape] * len(srcs),
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


def _hinted(fn, t, rounding_mode, flush_to_zero, combine):
    """(t, combine) under cuTile's rounding_mode (checked; tile rounds to
    nearest) and flush_to_zero (float32 subnormals flushed in every step)."""
    from .named import check_math_hints, flush_subnormals
    t = _to_tile(t)
    if not check_math_hints(fn, t.dtype, rounding_mode, flush_to_zero):
        return t, combine
    return flush_subnormals(t), lambda a, b: flush_subnormals(combine(a, b))


def _arith_reduction(t, axis, keepdims, dtype, combine):
    t = _to_tile(t)
    acc, res = _acc_dtype(t.dtype, dtype)
    return cast(_reduce_axes(cast(t, acc), axis, keepdims, combine), res)


def sum(t, axis=None, keepdims=False, dtype=None, *, rounding_mode=None,
        flush_to_zero=False):
    """Sum along `axis` (all axes when None, giving a rank-0 tile)."""
    t, combine = _hinted("sum", t, rounding_mode, flush_to_zero, lambda a, b: a + b)
    return _arith_reduction(t, axis, keepdims, dtype, combine)


def prod(t, axis=None, keepdims=False, dtype=None, *, rounding_mode=None,
         flush_to_zero=False):
    """Product along `axis` (all axes when None)."""
    t, combine = _hinted("prod", t, rounding_mode, flush_to_zero, lambda a, b: a * b)
    return _arith_reduction(t, axis, keepdims, dtype, combine)


def _extreme_combine(fn, nan):
    from . import named
    extreme = named.maximum if fn == "max" else named.minimum
    return lambda a, b: extreme(a, b, propagate_nan=nan)


def _extreme(fn, t, axis, keepdims, flush_to_zero, propagate_nan):
    """max/min: a NaN is ignored (maxnum/minnum; NaN only when all are NaN)
    unless propagate_nan. flush_to_zero flushes the float32 input's
    subnormals once: the extremum of flushed values is flushed."""
    from .named import _bool_hint, check_math_hints, flush_subnormals
    t = _to_tile(t)
    nan = _bool_hint(fn, "propagate_nan", propagate_nan)
    if check_math_hints(fn, t.dtype, None, flush_to_zero):
        t = flush_subnormals(t)
    return _reduce_axes(t, axis, keepdims, _extreme_combine(fn, nan))


def max(t, axis=None, keepdims=False, *, flush_to_zero=False, propagate_nan=False):
    """Maximum along `axis`; NaNs are ignored unless propagate_nan=True
    (cuTile's default; NumPy's nanmax, or max with propagate_nan)."""
    return _extreme("max", t, axis, keepdims, flush_to_zero, propagate_nan)


def min(t, axis=None, keepdims=False, *, flush_to_zero=False, propagate_nan=False):
    """Minimum along `axis`; NaNs are ignored unless propagate_nan=True."""
    return _extreme("min", t, axis, keepdims, flush_to_zero, propagate_nan)


def _arg_combine(better, nan_wins):
    """(value, index) combiner: keeps the better value, the first index on
    ties. A NaN is the best value when nan_wins (as np.argmax), else the
    worst (even below -inf; all NaN gives index 0); two NaNs tie."""
    def combine(v0, i0, v1, i1):
        first = i1 < i0
        if v0.dtype.kind == D.KIND_FLOAT:
            nan0, nan1 = v0 != v0, v1 != v1
            tie = (nan0 & nan1) | (v1 == v0)
            take = better(v1, v0) | (tie & first)
            take = take | ((nan1 & ~nan0) if nan_wins else (nan0 & ~nan1))
        else:
            take = better(v1, v0) | ((v1 == v0) & first)
        return where(take, v1, v0), where(take, i1, i0)
    return combine


def _arg_reduce(fn, t, axis, keepdims, better, propagate_nan):
    from .named import _bool_hint
    nan = _bool_hint(fn, "propagate_nan", propagate_nan)
    t = _to_tile(t)
    if t.ndim == 0:
        t = reshape(t, (1,))
    ndim = t.ndim
    if axis is None:
        flat = reshape(t, (-1,))
        n = flat.shape[0]
        idx = _iota(n)
        _, r = reduce((flat, idx), 0, _arg_combine(better, nan))
        return reshape(r, (1,) * ndim) if keepdims else r
    a = _norm_axis(axis, ndim)
    n = t.shape[a]
    idx = reshape(_iota(n), tuple(n if k == a else 1 for k in range(ndim)))
    idx = broadcast_to(idx, t.shape)
    _, r = reduce((t, idx), a, _arg_combine(better, nan))
    return expand_dims(r, a) if keepdims else r


def _iota(n):
    return Tile(builder().emit(f"tile.iota : {tensor_type((n,), 'i32')}"), (n,), D.int32)


def argmax(t, axis=None, keepdims=False, *, propagate_nan=False):
    """Index (int32) of the maximum along `axis`; the first one on ties.
    NaNs are ignored (all NaN gives 0) unless propagate_nan=True: then the
    first NaN's index (np.argmax)."""
    return _arg_reduce("argmax", t, axis, keepdims, lambda a, b: a > b, propagate_nan)


def argmin(t, axis=None, keepdims=False, *, propagate_nan=False):
    """Index (int32) of the minimum along `axis`, as argmax."""
    return _arg_reduce("argmin", t, axis, keepdims, lambda a, b: a < b, propagate_nan)


def _scan(t, axis, reverse, dtype, combine):
    t = _to_tile(t)
    acc, res = _acc_dtype(t.dtype, dtype)
    return cast(scan(cast(t, acc), axis, combine, reverse=reverse), res)


def cumsum(t, axis=0, reverse=False, dtype=None, *, rounding_mode=None,
           flush_to_zero=False):
    """Inclusive cumulative sum along `axis`."""
    t, combine = _hinted("cumsum", t, rounding_mode, flush_to_zero, lambda a, b: a + b)
    return _scan(t, axis, reverse, dtype, combine)


def cumprod(t, axis=0, reverse=False, dtype=None, *, rounding_mode=None,
            flush_to_zero=False):
    """Inclusive cumulative product along `axis`."""
    t, combine = _hinted("cumprod", t, rounding_mode, flush_to_zero, lambda a, b: a * b)
    return _scan(t, axis, reverse, dtype, combine)


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


def _tf32(x):
    """`x` as the f32 tile it is stored in, and whether it was tfloat32."""
    if x.dtype is D.tfloat32:
        return Tile(x.name, x.shape, D.float32), True
    return x, False


def _batch_broadcast(x, y, acc):
    """x, y (and acc) broadcast along their batch axes (all but the last two),
    as cuTile does: a (B, M, K) tile times a (K, N) one."""
    for t, what in ((x, "x"), (y, "y")) + (((acc, "acc"),) if acc is not None else ()):
        if t.ndim not in (2, 3):
            raise TileShapeError(f"mma operand {what} must be 2-d or 3-d (batched), got "
                                 f"shape {t.shape}")
    shapes = [x.shape[:-2], y.shape[:-2]] + ([acc.shape[:-2]] if acc is not None else [])
    batch = broadcast_shapes(*shapes)
    if not batch:
        return x, y, acc
    x = broadcast_to(x, batch + x.shape[-2:])
    y = broadcast_to(y, batch + y.shape[-2:])
    if acc is not None:
        acc = broadcast_to(acc, batch + acc.shape[-2:])
    return x, y, acc


def mma(x, y, /, acc, allow_tf32=False, *, use_fast_acc=False):
    """`x @ y + acc` in acc's dtype. Inputs f16/bf16 (f32 or f16 acc), f32
    (tf32 when allow_tf32=True or the inputs are tile.tfloat32), f64, int8
    (int32 acc), fp8 (f32 acc); 2-d, or 3-d batched with the batch axis
    broadcast (cuTile). `use_fast_acc` (cuTile's, fp8 inputs only) is
    exact in f32 by default; `use_fast_acc=True` lets sm_90 use the fp8
    tensor cores (TN layout), whose accumulation keeps fewer bits (about
    1e-4 of the sum of |products|, as the H200 measured)."""
    from .named import _bool_hint
    a, b, acc = (_as_matrix(v, n) for v, n in ((x, "x"), (y, "y"), (acc, "acc")))
    fast = _bool_hint("mma", "use_fast_acc", use_fast_acc)
    tf32 = _bool_hint("mma", "allow_tf32", allow_tf32)
    a, ta = _tf32(a)
    b, tb = _tf32(b)
    tf32 = tf32 or ta or tb
    if fast and a.dtype not in (D.float8_e4m3fn, D.float8_e5m2):
        raise TileValueError(f"mma: use_fast_acc=True needs float8 inputs, got "
                             f"{a.dtype.name}", "drop use_fast_acc")
    a, b, acc = _batch_broadcast(a, b, acc)
    _check_mma_shapes(a, b, acc)
    if a.dtype is not b.dtype:
        raise TileTypeError(f"mma inputs must have one dtype, got {a.dtype.name} and "
                            f"{b.dtype.name}", "cast one with .astype(...)")
    if not _mma_acc_ok(a.dtype, acc.dtype):
        raise TileTypeError(
            f"unsupported mma: {a.dtype.name} inputs with a {acc.dtype.name} accumulator",
            "supported: float16 -> float32/float16, bfloat16 -> float32, float32 "
            "(tfloat32) -> float32, float64 -> float64, int8 -> int32, float8 -> float32")
    if a.dtype in (D.float8_e4m3fn, D.float8_e5m2):
        # Every fp8 value is an f16 and f16 products are exact in f32, so an
        # f16 mma with the f32 accumulator computes the fp8 product exactly.
        # With use_fast_acc, tile-tiling narrows it back to an fp8 wgmma on
        # sm_90 where both operands can stream K-major (B given transposed,
        # N x K); the CPU and every other case run the widened form.
        a, b = cast(a, D.float16), cast(b, D.float16)
    if a.ndim == 3 and a.shape[0] == 1:
        # A batch of one (the usual batched kernel: each block loads (1, BM,
        # BK) and (1, BK, BN) tiles of a batch grid axis) is a 2-d product:
        # the tensor-core lowering takes 2-d mmas, where a 3-d one ran as FMA
        # code (0.03x of torch.bmm on the H200).
        from .language import reshape
        flat = [reshape(t, t.shape[1:]) for t in (a, b, acc)]
        out = _emit_mma(*flat, tf32, fast)
        return reshape(out, acc.shape)
    return _emit_mma(a, b, acc, tf32, fast)


def _emit_mma(a, b, acc, tf32, fast):
    bld = builder("tile.mma")
    attr = " {allow_tf32}" if tf32 and a.dtype is D.float32 else ""
    if fast:  # fp8 only (checked above): fp8 tensor cores may compute it
        attr = " {fast_accumulation}"
    name = bld.emit(f"tile.mma {a.name}, {b.name}, {acc.name}{attr} : {a.type}, "
                    f"{b.type} -> {acc.type}")
    return Tile(name, acc.shape, acc.dtype)


def _as_matrix(x, what):
    x = as_operand(x, f"mma operand {what}")
    if not isinstance(x, Tile):
        raise TileTypeError(f"mma operand {what} must be a 2-d or 3-d tile, got {x!r}")
    return x


def _matmul_dtypes(dt):
    """(accumulator, result) dtypes of `@` on inputs of dtype dt."""
    if dt in (D.float16, D.bfloat16, D.float8_e4m3fn, D.float8_e5m2):
        return D.float32, dt
    if dt in (D.float32, D.float64):
        return dt, dt
    if dt in (D.int8, D.uint8):
        return D.int32, D.int32
    raise TileTypeError(f"`@` is not supported for {dt.name} tiles",
                        "cast to a float dtype first")


def matmul(x, y, /):
    """`x @ y` as NumPy's matmul: 1-d operands are vectors (a dot product
    for two), leading batch axes broadcast. Narrow floats accumulate in
    float32 and return the inputs' (promoted) dtype, as torch does; int8 @
    int8 gives int32; tfloat32 inputs run as tf32 and give float32."""
    a, b = _as_matrix(x, "x"), _as_matrix(y, "y")
    a, ta = _tf32(a)
    b, tb = _tf32(b)
    dt = common_dtype([a, b])
    a, b = cast(a, dt), cast(b, dt)
    acc, res = _matmul_dtypes(dt)
    if a.ndim == 1 or b.ndim == 1:
        return cast(_vector_product(cast(a, acc), cast(b, acc)), res)
    a, b, _ = _batch_broadcast(a, b, None)
    out = _check_mma_shapes(a, b, None)
    return cast(mma(a, b, zeros(out, acc), allow_tf32=ta or tb), res)


def _vector_product(a, b):
    """matmul with a 1-d operand, as a product and a sum in the accumulator's
    dtype (an mma needs matrices of tensor-core shapes)."""
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise TileShapeError(f"matmul contraction dimensions differ: {a.shape} @ {b.shape}")
    add = lambda u, v: u + v  # noqa: E731
    if a.ndim == 1 and b.ndim == 1:
        return _reduce_axes(a * b, None, False, add)
    if a.ndim == 1:  # (K,) @ (..., K, N) -> (..., N)
        return _reduce_axes(reshape(a, (k_a, 1)) * b, b.ndim - 2, False, add)
    return _reduce_axes(a * b, a.ndim - 1, False, add)  # (..., M, K) @ (K,) -> (..., M)
