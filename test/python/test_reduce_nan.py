"""NaN rules of the max/min/argmax/argmin reductions (cuTile's keywords):
propagate_nan=False (the default) ignores NaNs as np.nanmax does (an all-NaN
max is NaN; argmax gives the first best non-NaN value's index, 0 if all are NaN); propagate_nan=True gives
NaN, and the first NaN's index, as np.max/np.argmax do. flush_to_zero on
max/min flushes float32 subnormals.

Numerics against NumPy float64 on random data with NaNs placed where the
rules differ; outputs are poisoned first (with a finite sentinel, since NaN
is a valid answer here). CPU here; GPU in the GPU suite (marker `numerics`).
The sm_90 test checks the PTX of both combiners (no GPU needed)."""

import warnings

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, line_of, sm90_module

pytestmark = pytest.mark.numerics
C = ct.Constant[int]
SENTINEL = 12345.0


@pytest.fixture(scope="module")
def dev():
    return Device()


@ct.kernel
def extremes(x, mx, mn, amx, amn, M: C, N: C, AX: C, P: C):
    t = ct.load(x, (0, 0), shape=(M, N))
    ax = None if AX < 0 else AX
    ct.store(mx, (0,), ct.reshape(ct.max(t, ax, propagate_nan=P), (-1,)))
    ct.store(mn, (0,), ct.reshape(ct.min(t, axis=ax, propagate_nan=P), (-1,)))
    ct.store(amx, (0,), ct.reshape(ct.argmax(t, ax, propagate_nan=P), (-1,)))
    ct.store(amn, (0,), ct.reshape(ct.argmin(t, ax, propagate_nan=P), (-1,)))


@ct.kernel
def extremes_default(x, mx, amn, M: C, N: C):
    t = ct.load(x, (0, 0), shape=(M, N))
    ct.store(mx, (0,), ct.max(t, 1))
    ct.store(amn, (0,), ct.argmin(t, 1, keepdims=True).reshape((-1,)))


def nan_rows(rng, M, N, dtype):
    """Random rows, each with its own NaN pattern."""
    x = rng.standard_normal((M, N))
    x[0] = np.nan                      # all NaN
    x[1, 0] = np.nan                   # NaN first
    x[2, -1] = np.nan                  # NaN last
    x[3, ::3] = np.nan                 # several NaNs
    x[4] = -np.inf                     # NaN before -inf: skipped (not by np.nanargmax)
    x[4, :2] = np.nan
    x[5] = np.inf
    x[5, 1] = np.nan
    x[6, 2], x[6, 5] = np.nan, 9.0     # a best value after a NaN
    x[8:] = np.where(rng.random((M - 8, N)) < 0.2, np.nan, x[8:])
    x[7] = rng.standard_normal(N)      # no NaN
    return x.astype(dtype)


def _arg(f, best, x, axis, propagate):
    """np.argmax/argmin, or with NaNs ignored: the first index of the best
    non-NaN value (np.nanargmax takes a NaN before a -inf; all NaN: 0)."""
    if propagate:
        return f(x, axis=axis)  # NumPy: the first NaN wins
    xs = x.reshape(1, -1) if axis is None else np.moveaxis(x, axis, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        b = best(xs, axis=-1, keepdims=True)
    return np.argmax(xs == b, axis=-1)


def want(x, axis, propagate):
    x = x.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mx = np.max(x, axis) if propagate else np.nanmax(x, axis)
        mn = np.min(x, axis) if propagate else np.nanmin(x, axis)
    amx = _arg(np.argmax, np.nanmax, x, axis, propagate)
    amn = _arg(np.argmin, np.nanmin, x, axis, propagate)
    return [np.atleast_1d(np.asarray(v)).ravel() for v in (mx, mn, amx, amn)]


def poisoned(dev, n, dtype):
    return dev.put(np.full(n, SENTINEL if np.dtype(dtype).kind == "f" else -7, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [1, 0, -1])
@pytest.mark.parametrize("propagate", [False, True])
def test_nan_rules_match_numpy(dev, dtype, axis, propagate):
    M, N = 16, 32
    x = nan_rows(np.random.default_rng(M + axis + 7 * propagate), M, N, dtype)
    ax = None if axis < 0 else axis
    n = 1 if ax is None else (N if ax == 0 else M)
    outs = [poisoned(dev, n, dtype), poisoned(dev, n, dtype), poisoned(dev, n, np.int32),
            poisoned(dev, n, np.int32)]
    extremes[(1,)](dev.put(x), *outs, M=M, N=N, AX=axis, P=int(propagate))
    got = [dev.get(o) for o in outs]
    for g, w, what in zip(got, want(x, ax, propagate), ("max", "min", "argmax", "argmin")):
        assert not (g == SENTINEL).any() and not (g == -7).any(), f"{what} left unwritten"
        if what.startswith("arg"):
            assert np.array_equal(g, w), (what, g, w)
        else:
            np.testing.assert_array_equal(g.astype(np.float64), w, err_msg=what)


def test_defaults_ignore_nan(dev):
    """Without the keyword a NaN is skipped: np.nanmax / np.nanargmin."""
    M, N = 16, 32
    x = nan_rows(np.random.default_rng(3), M, N, np.float32)
    mx, amn = poisoned(dev, M, np.float32), poisoned(dev, M, np.int32)
    extremes_default[(1,)](dev.put(x), mx, amn, M=M, N=N)
    w = want(x, 1, False)
    np.testing.assert_array_equal(dev.get(mx).astype(np.float64), w[0])
    assert np.array_equal(dev.get(amn), w[3])
    assert np.isnan(dev.get(mx)[0]) and not np.isnan(dev.get(mx)[1:]).any()


@ct.kernel
def int_extremes(x, mx, amx, N: C, P: C):
    t = ct.load(x, (0,), shape=(N,))
    ct.store(mx, (0,), ct.reshape(ct.max(t, propagate_nan=P), (1,)))
    ct.store(amx, (0,), ct.reshape(ct.argmax(t, propagate_nan=P), (1,)))


@pytest.mark.parametrize("propagate", [False, True])
def test_int_ignores_the_keyword(dev, propagate):
    x = np.random.default_rng(5).integers(-100, 100, 64).astype(np.int32)
    mx, amx = poisoned(dev, 1, np.int32), poisoned(dev, 1, np.int32)
    int_extremes[(1,)](dev.put(x), mx, amx, N=64, P=int(propagate))
    assert dev.get(mx)[0] == x.max() and dev.get(amx)[0] == np.argmax(x)


@ct.kernel
def flushed(x, mx, mn, N: C):
    t = ct.load(x, (0,), shape=(N,))
    ct.store(mx, (0,), ct.reshape(ct.max(t, flush_to_zero=True), (1,)))
    ct.store(mn, (0,), ct.reshape(ct.min(t, 0, flush_to_zero=True, propagate_nan=True),
                                  (1,)))


def test_flush_to_zero(dev):
    x = np.full(16, -1.0, np.float32)
    x[3], x[9] = 1e-40, np.nan  # subnormal: flushed to +0
    mx, mn = poisoned(dev, 1, np.float32), poisoned(dev, 1, np.float32)
    flushed[(1,)](dev.put(x), mx, mn, N=16)
    assert dev.get(mx)[0] == 0.0 and np.isnan(dev.get(mn)[0])


@ct.kernel
def bad(x, out, WHICH: C):
    t = ct.load(x, (0,), shape=(16,))
    if WHICH == 0:
        r = ct.max(t, propagate_nan="yes")  # reduce here
    elif WHICH == 1:
        r = ct.argmin(t, propagate_nan=2)
    elif WHICH == 2:
        r = ct.min(t.astype(ct.float16), flush_to_zero=True).astype(ct.float32)
    else:
        r = ct.argmax(t, (0,))
    ct.store(out, (0,), ct.reshape(r.astype(ct.float32), (1,)))


@pytest.mark.parametrize("which,exc,text", [
    (0, ct.TileValueError, "max: propagate_nan must be True or False"),
    (1, ct.TileValueError, "argmin: propagate_nan must be True or False"),
    (2, ct.TileTypeError, "min: flush_to_zero applies to float32"),
    (3, ct.TileTypeError, "axis must be a constant int"),
])
def test_bad_keywords(which, exc, text):
    x, out = np.zeros(16, np.float32), np.zeros(1, np.float32)
    with pytest.raises(exc, match=text) as e:
        bad.trace(x, out, WHICH=which)
    assert e.value.kernel == "bad"
    if which == 0:
        assert e.value.lineno == line_of(bad, "reduce here")


def test_argmax_takes_no_flush_to_zero():
    with pytest.raises(TypeError):
        ct.argmax(None, flush_to_zero=True)


@ct.kernel
def one_max(x, out, P: C):
    ct.store(out, (0,), ct.reshape(ct.max(ct.load(x, (0,), shape=(256,)),
                                          propagate_nan=P), (1,)))


def test_sm90_combiners(request):
    """maxnum lowers to PTX max.f32 (NaN ignored), maximum to max.NaN.f32."""
    mod = sm90_module(request)
    x, out = np.zeros(256, np.float32), np.zeros(1, np.float32)
    ptx = {p: mod.compile(one_max.trace(x, out, P=p), "sm_90", {}).asm["ptx"]
           for p in (0, 1)}
    assert "max.f32" in ptx[0] and "max.NaN" not in ptx[0]
    assert "max.NaN.f32" in ptx[1]
    args = (np.zeros((16, 32), np.float32), np.zeros(16, np.float32),
            np.zeros(16, np.float32), np.zeros(16, np.int32), np.zeros(16, np.int32))
    for p in (0, 1):
        ptx = mod.compile(extremes.trace(*args, M=16, N=32, AX=1, P=p), "sm_90", {}).asm["ptx"]
        assert ".entry extremes" in ptx
