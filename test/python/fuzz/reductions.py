"""The interval model of reductions and scans: sum/prod accumulate in a
dtype at least as wide as float32 (the order of the additions is the
implementation's; the bound is n * eps * sum|x| and any risk of an
intermediate overflow or underflow makes the element unknown)."""

import warnings

import numpy as np

from . import numeric as N
from .model import MV, cast
from .numeric import BOOL, FLOAT


def acc_dtypes(dt):
    """(accumulate in, result) of sum/prod/cumsum/cumprod: as Triton does,
    narrow integers and bools count in 32 bits, narrow floats in float32."""
    if dt.kind == BOOL:
        return N.int32, N.int32
    if dt.kind != FLOAT and dt.bits < 32:
        return (N.int32, N.int32) if dt.signed else (N.uint32, N.uint32)
    if dt.kind == FLOAT and dt.bits < 32:
        return N.float32, dt
    return dt, dt


def _lowest_bit_exponent(x):
    """Per element of finite float64 `x`: the exponent of its lowest set bit
    (large for zero)."""
    m, e = np.frexp(x)
    mant = np.abs(m * 2.0 ** 53).astype(np.int64)
    low = mant & -mant
    with np.errstate(divide="ignore"):
        tz = np.where(mant == 0, 4096, np.log2(np.maximum(low, 1)).astype(np.int64))
    return np.where(mant == 0, 4096, e - 53 + tz)


def _fsum(lo, hi, nom, exact, acc):
    """Sums along the last axis; returns (nom, lo, hi, unk)."""
    with np.errstate(all="ignore"):
        n = lo.shape[-1]
        big = np.maximum(np.abs(lo), np.abs(hi))
        finite = np.isfinite(lo) & np.isfinite(hi)
        sum_abs = np.where(finite, big, 0).sum(-1)
        nonfinite = ~finite
        # Inf/NaN terms decide the result, if they are exact.
        unk = (nonfinite & ~exact).any(-1)
        unk |= sum_abs >= N.max_finite(acc) / 4  # an intermediate overflow may happen
        s_nom, s_lo, s_hi = nom.sum(-1), lo.sum(-1), hi.sum(-1)
        # Exact when every partial sum is representable: all terms multiples
        # of 2**k, |sum| <= 2**(mant + k).
        k = np.where(finite & (lo != 0), _lowest_bit_exponent(np.where(finite, lo, 0)),
                     4096).min(-1)
        k = np.minimum(k, np.where(finite & (hi != 0), _lowest_bit_exponent(
            np.where(finite, hi, 0)), 4096).min(-1))
        exact_sum = sum_abs <= np.exp2(np.minimum(k, 1000) + acc.mant)
        slack = np.where(exact_sum, 0.0, n * acc.eps * sum_abs)
        nf = nonfinite.any(-1)
        s_lo = np.where(nf, s_nom, s_lo - slack)
        s_hi = np.where(nf, s_nom, s_hi + slack)
        # A zero sum has no certain sign: NumPy adds to +0 (-0.0 sums to
        # +0.0), tile keeps a lone -0.0; the spec says neither.
        s_lo = np.where(s_lo == 0, -0.0, s_lo)
        s_hi = np.where(s_hi == 0, 0.0, s_hi)
    return s_nom, s_lo, s_hi, unk


def _fprod(lo, hi, nom, exact, acc):
    with np.errstate(all="ignore"):
        n = lo.shape[-1]
        plo, phi = np.ones(lo.shape[:-1]), np.ones(lo.shape[:-1])
        for i in range(n):
            c = np.stack([plo * lo[..., i], plo * hi[..., i], phi * lo[..., i],
                          phi * hi[..., i]])
            plo, phi = np.nanmin(c, 0), np.nanmax(c, 0)
        mag = np.maximum(np.abs(lo), np.abs(hi))
        finite = np.isfinite(lo) & np.isfinite(hi)
        upper = np.where(finite, np.maximum(mag, 1.0), 1.0).prod(-1)
        small = np.where(finite & (mag > 0), np.minimum(np.minimum(np.abs(lo), np.abs(hi)),
                                                        1.0), 1.0)
        lower = small.prod(-1)
        zero = ((lo == 0) & (hi == 0)).any(-1)
        unk = (~finite).any(-1)
        unk |= upper >= N.max_finite(acc) / 4
        unk |= (lower < acc.tiny * 2.0 ** acc.mant) & ~zero
        unk |= np.isnan(plo) | np.isnan(phi)
        s_nom = nom.prod(-1)
        slack = (n + 1) * acc.eps * np.maximum(np.abs(plo), np.abs(phi))
        lo_, hi_ = plo - slack, phi + slack
        lo_ = np.where(zero, np.minimum(lo_, -0.0), lo_)
        hi_ = np.where(zero, np.maximum(hi_, 0.0), hi_)
    return s_nom, lo_, hi_, unk


def _fextreme(op, lo, hi, nom):
    """max/min ignore NaNs (cuTile's propagate_nan=False): NaN only if all are."""
    f = np.nanmax if op == "max" else np.nanmin
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        r_nom = f(nom, -1)
        r_lo, r_hi = f(lo, -1), f(hi, -1)
        z = r_nom == 0  # NumPy and IEEE maximum disagree on the sign of zero
        r_lo = np.where(z & (r_lo == 0), -0.0, r_lo)
        r_hi = np.where(z & (r_hi == 0), 0.0, r_hi)
    return r_nom, r_lo, r_hi


def _farg(op, lo, hi, nom, exact):
    """argmax/argmin ignore NaNs (propagate_nan=False): the first best
    non-NaN value (a NaN is worse than -inf), index 0 when all are NaN."""
    with np.errstate(all="ignore"):
        isnan = np.isnan(nom)
        key = np.where(isnan, -np.inf, nom if op == "argmax" else -nom)
        klo, khi = (lo, hi) if op == "argmax" else (-hi, -lo)
        best = np.argmax(~isnan & (key == key.max(-1, keepdims=True)), -1)
        b_lo = np.take_along_axis(klo, best[..., None], -1)
        idx = np.arange(nom.shape[-1])
        other = idx != best[..., None]
        # another non-NaN element may be better (or equal and earlier); NaN
        # bounds compare false, so certain NaNs are never rivals
        rival = other & ((khi > b_lo) | ((khi == b_lo) & (idx < best[..., None])))
        exact_rival = other & exact & np.take_along_axis(exact, best[..., None], -1) & \
            (khi == b_lo) & (idx > best[..., None])
        unk = (rival & ~exact_rival).any(-1)
    return best.astype(np.int32), unk


def reduce(op, v, axis, keepdims):
    """tile.sum/prod/max/min/argmax/argmin(v, axis, keepdims) per the spec."""
    ndim = v.nom.ndim
    axes = tuple(range(ndim)) if axis is None else (axis % ndim,)
    moved = lambda a: np.moveaxis(a, axes, range(-len(axes), 0)).reshape(  # noqa: E731
        a.shape[:0] + tuple(s for i, s in enumerate(a.shape) if i not in axes) + (-1,))
    kept = tuple(1 if i in axes else s for i, s in enumerate(v.shape))
    out_shape = kept if keepdims else tuple(s for i, s in enumerate(v.shape) if i not in axes)
    unk_in = moved(v.unk).any(-1)
    if op in ("argmax", "argmin"):
        if v.dt.kind == FLOAT:
            r, unk = _farg(op, moved(v.lo), moved(v.hi), moved(v.nom), moved(v.exact()))
        else:
            f = np.argmax if op == "argmax" else np.argmin
            r, unk = f(moved(v.nom), -1).astype(np.int32), np.zeros(unk_in.shape, bool)
        return MV(N.int32, r.reshape(out_shape), unk=(unk | unk_in).reshape(out_shape))
    if op in ("max", "min"):
        if v.dt.kind != FLOAT:
            f = np.max if op == "max" else np.min
            return MV(v.dt, f(moved(v.nom), -1).reshape(out_shape),
                      unk=unk_in.reshape(out_shape))
        r_nom, r_lo, r_hi = _fextreme(op, moved(v.lo), moved(v.hi), moved(v.nom))
        return MV(v.dt, r_nom.reshape(out_shape), r_lo.reshape(out_shape),
                  r_hi.reshape(out_shape), unk_in.reshape(out_shape))
    acc, res = acc_dtypes(v.dt)
    a = cast(v, acc)
    if acc.kind != FLOAT:
        with np.errstate(all="ignore"):
            f = np.sum if op == "sum" else np.prod
            r = f(moved(a.nom), -1, dtype=acc.np)
        return cast(MV(acc, r.reshape(out_shape), unk=unk_in.reshape(out_shape)), res)
    fn = _fsum if op == "sum" else _fprod
    s_nom, s_lo, s_hi, unk = fn(moved(a.lo), moved(a.hi), moved(a.nom), moved(a.exact()), acc)
    shape = lambda x: N.round_to(x, acc).reshape(out_shape)  # noqa: E731
    return cast(MV(acc, shape(s_nom), shape(s_lo), shape(s_hi),
                   (unk | unk_in).reshape(out_shape)), res)


def scan(op, v, axis):
    """tile.cumsum/cumprod(v, axis): each prefix reduced as `reduce` does."""
    axis %= v.nom.ndim
    n = v.shape[axis]
    parts = []
    for p in range(n):
        sl = [slice(None)] * v.nom.ndim
        sl[axis] = slice(0, p + 1)
        sl = tuple(sl)
        pre = MV(v.dt, v.nom[sl], None if v.lo is None else v.lo[sl],
                 None if v.hi is None else v.hi[sl], v.unk[sl])
        parts.append(reduce("sum" if op == "cumsum" else "prod", pre, axis, True))
    dt = parts[0].dt
    cat = lambda f: np.concatenate([f(p) for p in parts], axis)  # noqa: E731
    if dt.kind == FLOAT:
        return MV(dt, cat(lambda p: p.nom), cat(lambda p: p.lo), cat(lambda p: p.hi),
                  cat(lambda p: p.unk))
    return MV(dt, cat(lambda p: p.nom), unk=cat(lambda p: p.unk))
