"""Kernels run through tile._tile on the backend it provides, checked against
NumPy in float64 on random inputs; outputs are poisoned (NaN / a sentinel)
before each run. They skip only when _tile is not built."""

import numpy as np
import pytest

import tile
from tilehelp import Device, assert_close

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# -- memory ----------------------------------------------------------------------

@tile.kernel
def vadd(x, y, out, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    b = tile.load(y, index=(i,), shape=(BLOCK,))
    tile.store(out, index=(i,), tile=a + b)


@pytest.mark.parametrize("n", [1024, 1000, 7])
def test_vadd_with_a_ragged_edge(dev, rng, n):
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = dev.poisoned(n, np.float32)
    vadd[(tile.cdiv(n, 256),)](dev.put(x), dev.put(y), out, BLOCK=256)
    assert_close(dev.get(out), x.astype(np.float64) + y)


def test_callable_grid_and_launch(dev, rng):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    out = dev.poisoned(n, np.float32)
    tile.launch(vadd, lambda meta: (tile.cdiv(n, meta["BLOCK"]),), dev.put(x), dev.put(x),
                out, BLOCK=512)
    assert_close(dev.get(out), 2.0 * x)


@tile.kernel
def load_padded_transposed(x, out, PAD: tile.Constant[float]):
    i, j = tile.bid(0), tile.bid(1)
    t = tile.load(x, index=(j, i), shape=(32, 16), padding=PAD, order=(1, 0))
    tile.store(out, index=(j, i), tile=t)


@pytest.mark.parametrize("pad", [0.0, -tile.inf, 3.5])
def test_load_padding_and_order(dev, rng, pad):
    m, n = 40, 50
    x = rng.standard_normal((m, n)).astype(np.float32)
    gm, gn = tile.cdiv(m, 16), tile.cdiv(n, 32)
    out = dev.poisoned((gn * 32, gm * 16), np.float32)
    load_padded_transposed[(gm, gn)](dev.put(x), out, PAD=pad)
    want = np.full((gm * 16, gn * 32), pad)
    want[:m, :n] = x
    assert_close(dev.get(out), want.T)


@tile.kernel
def store_scalar_and_casts(out16, outi, x, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(out16, index=(0,), tile=t)        # f32 -> f16
    tile.store(outi, index=(0,), tile=t * 10.0)   # f32 -> i32 (truncation)
    tile.store(out16, index=(B,), tile=2.5)       # a scalar: one element


def test_store_casts_and_scalars(dev, rng):
    B = 64
    x = rng.uniform(-10, 10, B).astype(np.float32)
    out16 = dev.poisoned(2 * B, np.float16)
    outi = dev.poisoned(B, np.int32)
    store_scalar_and_casts[(1,)](out16, outi, dev.put(x), B=B)
    h = dev.get(out16)
    assert_close(h[:B], x.astype(np.float16), rtol=0, atol=0)
    assert h[B] == 2.5 and np.isnan(h[B + 1:]).all()
    np.testing.assert_array_equal(dev.get(outi), np.trunc(x * 10.0).astype(np.int32))


@tile.kernel
def gather_scatter(A, out, idx, B: tile.Constant[int]):
    r = tile.arange(B)
    i = tile.load(idx, index=(0,), shape=(B,))
    g = tile.gather(A, (i[:, None], r[None, :]), mask=(i[:, None] % 2) == 0, other=-1.0)
    tile.scatter(out, (r[:, None], r[None, :]), g, mask=r[None, :] < 5)


def test_gather_scatter(dev, rng):
    B = 16
    A = rng.standard_normal((20, B)).astype(np.float32)
    idx = rng.integers(0, 24, B).astype(np.int32)  # some rows out of bounds
    out = dev.poisoned((B, B), np.float32)
    gather_scatter[(1,)](dev.put(A), out, dev.put(idx), B=B)
    want = np.full((B, B), np.nan)
    for a in range(B):
        for b in range(5):
            ok = idx[a] < 20 and idx[a] % 2 == 0
            want[a, b] = A[idx[a], b] if ok else -1.0
    assert_close(dev.get(out), want)


@tile.kernel
def histogram(x, bins, old, B: tile.Constant[int]):
    v = tile.load(x, index=(tile.bid(0),), shape=(B,), padding=-1)
    prev = tile.atomic_add(bins, (v,), 1, mask=v >= 0)
    tile.atomic_max(bins, (tile.full((B,), 9, tile.int32),), v)
    tile.store(old, index=(tile.bid(0),), tile=tile.where(v >= 0, prev * 0, -1))


def test_atomics(dev, rng):
    n, B = 1000, 128
    x = rng.integers(0, 8, n).astype(np.int32)
    bins = dev.put(np.zeros(10, np.int32))
    old = dev.poisoned(tile.cdiv(n, B) * B, np.int32)
    histogram[(tile.cdiv(n, B),)](dev.put(x), bins, old, B=B)
    got = dev.get(bins)
    np.testing.assert_array_equal(got[:8], np.bincount(x, minlength=8))
    assert got[9] == x.max()
    o = dev.get(old)
    assert (o[:n] == 0).all() and (o[n:] == -1).all()


@tile.kernel
def cas_xchg(A, out, B: tile.Constant[int]):
    i = tile.arange(B)
    old = tile.atomic_cas(A, (i,), i % 2, 100)      # swaps where A == i % 2
    prev = tile.atomic_xchg(A, (i + B,), 7.0 * 0 + 7)
    tile.store(out, index=(0,), tile=old * 1000 + prev)


def test_atomic_cas_and_xchg(dev):
    B = 32
    a = np.zeros(2 * B, np.int32)
    a[B:] = np.arange(B)
    A = dev.put(a)
    out = dev.poisoned(B, np.int32)
    cas_xchg[(1,)](A, out, B=B)
    got = dev.get(A)
    i = np.arange(B)
    np.testing.assert_array_equal(got[:B], np.where(i % 2 == 0, 100, 0))
    np.testing.assert_array_equal(got[B:], 7)
    np.testing.assert_array_equal(dev.get(out), i)  # old values: 0 * 1000 + i


# -- elementwise -------------------------------------------------------------------


@tile.kernel
def scatter_add_2d(x, rows, acc, flags, B: tile.Constant[int], C: tile.Constant[int]):
    # Float atomics into a 2-d array (the atomic ops' result type used to be
    # taken from an index operand for arrays of rank 2 or more).
    v = tile.load(x, index=(tile.bid(0), 0), shape=(B, C))
    r = tile.load(rows, index=(tile.bid(0),), shape=(B,))
    cols = tile.arange(C)
    prev = tile.atomic_add(acc, (r[:, None], cols[None, :]), v,
                           memory_order=tile.MemoryOrder.RELAXED)
    # Every lane saw a finite old value (acc starts at zero).
    ok = tile.where(prev == prev, 1, 0)
    tile.atomic_cas(flags, (r[:, None] * 0, cols[None, :]), ok * 0, ok)


def test_float_atomics_on_2d_arrays(dev, rng):
    n, B, C, R = 256, 32, 16, 6
    x = rng.standard_normal((n, C)).astype(np.float32)
    rows = rng.integers(0, R + 2, n).astype(np.int32)  # rows R, R+1 out of bounds
    acc = dev.put(np.zeros((R, C), np.float32))
    flags = dev.put(np.zeros((1, C), np.int32))
    scatter_add_2d[(n // B,)](dev.put(x), dev.put(rows), acc, flags, B=B, C=C)
    want = np.zeros((R, C))
    for i in range(n):
        if rows[i] < R:
            want[rows[i]] += x[i].astype(np.float64)
    assert_close(dev.get(acc), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(dev.get(flags), 1)

UNARY = {
    "exp": (tile.exp, np.exp), "exp2": (tile.exp2, np.exp2), "log": (tile.log, np.log),
    "log2": (tile.log2, np.log2), "sqrt": (tile.sqrt, np.sqrt),
    "rsqrt": (tile.rsqrt, lambda v: 1 / np.sqrt(v)), "sin": (tile.sin, np.sin),
    "cos": (tile.cos, np.cos), "tanh": (tile.tanh, np.tanh),
    "sigmoid": (tile.sigmoid, lambda v: 1 / (1 + np.exp(-v))), "abs": (tile.abs, np.abs),
    "floor": (tile.floor, np.floor), "ceil": (tile.ceil, np.ceil),
    "neg": (lambda t: -t, np.negative),
}


def _unary_kernel(fn):
    @tile.kernel
    def k(x, out, B: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=fn(tile.load(x, index=(i,), shape=(B,))))
    return k


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions(dev, rng, name):
    fn, ref = UNARY[name]
    n = 2048
    x = rng.uniform(0.1, 4.0, n).astype(np.float32) if name in ("log", "log2", "sqrt", "rsqrt") \
        else rng.uniform(-4, 4, n).astype(np.float32)
    out = dev.poisoned(n, np.float32)
    _unary_kernel(fn)[(n // 256,)](dev.put(x), out, B=256)
    assert_close(dev.get(out), ref(x.astype(np.float64)), rtol=2e-5, atol=2e-6)


def test_erf(dev, rng):
    import math
    n = 1024
    x = rng.uniform(-3, 3, n).astype(np.float32)
    out = dev.poisoned(n, np.float32)
    _unary_kernel(tile.erf)[(n // 256,)](dev.put(x), out, B=256)
    assert_close(dev.get(out), [math.erf(v) for v in x.astype(np.float64)], atol=2e-6)


@tile.kernel
def binary_float(x, y, out, B: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(B,))
    b = tile.load(y, index=(0,), shape=(B,))
    tile.store(out, index=(0, 0), tile=tile.reshape(a + b, (1, B)))
    tile.store(out, index=(1, 0), tile=tile.reshape(a - b, (1, B)))
    tile.store(out, index=(2, 0), tile=tile.reshape(a * b, (1, B)))
    tile.store(out, index=(3, 0), tile=tile.reshape(a / b, (1, B)))
    tile.store(out, index=(4, 0), tile=tile.reshape(a // b, (1, B)))
    tile.store(out, index=(5, 0), tile=tile.reshape(a % b, (1, B)))
    tile.store(out, index=(6, 0), tile=tile.reshape(tile.abs(a) ** b, (1, B)))
    tile.store(out, index=(7, 0), tile=tile.reshape(a ** 3, (1, B)))
    tile.store(out, index=(8, 0), tile=tile.reshape(tile.maximum(a, b), (1, B)))
    tile.store(out, index=(9, 0), tile=tile.reshape(tile.minimum(a, b), (1, B)))
    tile.store(out, index=(10, 0), tile=tile.reshape(tile.fma(a, b, a), (1, B)))
    tile.store(out, index=(11, 0), tile=tile.reshape(tile.where(a < b, a, b * 2), (1, B)))
    tile.store(out, index=(12, 0), tile=tile.reshape((a >= b).astype(tile.float32), (1, B)))
    tile.store(out, index=(13, 0), tile=tile.reshape(a ** -2, (1, B)))


def test_binary_float_operators(dev, rng):
    B = 256
    x = rng.uniform(-5, 5, B).astype(np.float32)
    y = rng.uniform(0.5, 3, B).astype(np.float32) * rng.choice([-1, 1], B).astype(np.float32)
    out = dev.poisoned((14, B), np.float32)
    binary_float[(1,)](dev.put(x), dev.put(y), out, B=B)
    a, b = x.astype(np.float64), y.astype(np.float64)
    want = [a + b, a - b, a * b, a / b, np.floor(a / b), np.mod(a, b), np.abs(a) ** b,
            a ** 3, np.maximum(a, b), np.minimum(a, b), a * b + a, np.where(a < b, a, b * 2),
            (a >= b).astype(np.float64), a ** -2.0]
    assert_close(dev.get(out), np.stack(want), rtol=1e-5, atol=1e-5)


@tile.kernel
def binary_int(x, y, out, B: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(B,))
    b = tile.load(y, index=(0,), shape=(B,))
    rows = [a // b, a % b, a & b, a | b, a ^ b, ~a, a << 3, a >> 2, -a, a ** 2,
            tile.abs(a), tile.maximum(a, b), tile.minimum(a, b), tile.cdiv(tile.abs(a), 7)]
    for r, v in enumerate(rows):  # unrolled at trace time
        tile.store(out, index=(r, 0), tile=tile.reshape(v, (1, B)))


def test_integer_operators_have_python_semantics(dev, rng):
    B = 256
    x = rng.integers(-1000, 1000, B).astype(np.int32)
    y = rng.integers(1, 50, B).astype(np.int32) * rng.choice([-1, 1], B).astype(np.int32)
    out = dev.poisoned((14, B), np.int32)
    binary_int[(1,)](dev.put(x), dev.put(y), out, B=B)
    a, b = x.astype(np.int64), y.astype(np.int64)
    want = [a // b, a % b, a & b, a | b, a ^ b, ~a, a << 3, a >> 2, -a, a ** 2, np.abs(a),
            np.maximum(a, b), np.minimum(a, b), -(-np.abs(a) // 7)]
    np.testing.assert_array_equal(dev.get(out), np.stack(want))


@tile.kernel
def promotion(h, i8, f, outf, outh, s, n):
    a = tile.load(h, index=(0,), shape=(64,))
    b = tile.load(i8, index=(0,), shape=(64,))
    c = tile.load(f, index=(0,), shape=(64,))
    tile.store(outh, index=(0,), tile=a * s + n)      # stays float16
    tile.store(outf, index=(0,), tile=a + c + b / 4)  # f16 + f32 -> f32, int / int -> f32


def test_promotion(dev, rng):
    h = rng.standard_normal(64).astype(np.float16)
    i8 = rng.integers(-100, 100, 64).astype(np.int8)
    f = rng.standard_normal(64).astype(np.float32)
    outf, outh = dev.poisoned(64, np.float32), dev.poisoned(64, np.float16)
    promotion[(1,)](dev.put(h), dev.put(i8), dev.put(f), outf, outh, 1.5, 3)
    want_h = (h * np.float16(1.5) + np.float16(3)).astype(np.float16)
    assert_close(dev.get(outh), want_h, rtol=2e-3, atol=2e-3)
    assert_close(dev.get(outf), h.astype(np.float64) + f + i8 / 4.0, rtol=1e-6, atol=1e-6)


# -- reductions and scans ----------------------------------------------------------

@tile.kernel
def reduce_rows(x, s, mx, mn, pr, am, ai, tot, B: tile.Constant[int]):
    t = tile.load(x, index=(0, 0), shape=(B, B))
    tile.store(s, index=(0,), tile=tile.sum(t, axis=1))
    tile.store(mx, index=(0,), tile=tile.max(t, axis=0))
    tile.store(mn, index=(0, 0), tile=tile.min(t, axis=1, keepdims=True))
    tile.store(pr, index=(0,), tile=tile.prod(t * 0.1 + 1.0, axis=1))
    tile.store(am, index=(0,), tile=tile.argmax(t, axis=1))
    tile.store(ai, index=(0,), tile=tile.argmin(t, axis=0))
    tile.store(tot, index=(0,), tile=tile.sum(t) + tile.argmax(t))


def test_reductions(dev, rng):
    B = 32
    x = rng.integers(-3, 4, (B, B)).astype(np.float32)  # many ties for argmax/argmin
    outs = [dev.poisoned(B, np.float32), dev.poisoned(B, np.float32),
            dev.poisoned((B, 1), np.float32), dev.poisoned(B, np.float32),
            dev.poisoned(B, np.int32), dev.poisoned(B, np.int32), dev.poisoned(1, np.float32)]
    reduce_rows[(1,)](dev.put(x), *outs, B=B)
    a = x.astype(np.float64)
    assert_close(dev.get(outs[0]), a.sum(1))
    assert_close(dev.get(outs[1]), a.max(0))
    assert_close(dev.get(outs[2]), a.min(1, keepdims=True))
    assert_close(dev.get(outs[3]), (a * 0.1 + 1.0).prod(1), rtol=1e-4)
    np.testing.assert_array_equal(dev.get(outs[4]), a.argmax(1))  # first index on ties
    np.testing.assert_array_equal(dev.get(outs[5]), a.argmin(0))
    assert_close(dev.get(outs[6]), [a.sum() + a.argmax()])


@tile.kernel
def scans(x, cs, cp, B: tile.Constant[int]):
    t = tile.load(x, index=(0, 0), shape=(B, B))
    tile.store(cs, index=(0, 0), tile=tile.cumsum(t, axis=1))
    tile.store(cp, index=(0, 0), tile=tile.cumprod(t, axis=0))


def test_scans(dev, rng):
    B = 16
    x = rng.uniform(0.5, 1.5, (B, B)).astype(np.float32)
    cs, cp = dev.poisoned((B, B), np.float32), dev.poisoned((B, B), np.float32)
    scans[(1,)](dev.put(x), cs, cp, B=B)
    assert_close(dev.get(cs), np.cumsum(x.astype(np.float64), 1), rtol=1e-5)
    assert_close(dev.get(cp), np.cumprod(x.astype(np.float64), 0), rtol=1e-4)


@tile.kernel
def softmax(x, out, n_cols, BLOCK: tile.Constant[int]):
    row = tile.bid(0)
    t = tile.load(x, index=(row, 0), shape=(1, BLOCK), padding=-tile.inf)
    e = tile.exp(t - tile.max(t, axis=1, keepdims=True))
    tile.store(out, index=(row, 0), tile=e / tile.sum(e, axis=1, keepdims=True))


def test_softmax(dev, rng):
    m, n = 37, 100
    x = rng.standard_normal((m, n)).astype(np.float32) * 3
    out = dev.poisoned((m, n), np.float32)
    softmax[(m,)](dev.put(x), out, n, BLOCK=128)
    a = x.astype(np.float64)
    e = np.exp(a - a.max(1, keepdims=True))
    assert_close(dev.get(out), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


# -- matmul and loops --------------------------------------------------------------

@tile.kernel
def matmul(a, b, c, K, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(pm, pn), tile=acc)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-3)])
def test_matmul_loop(dev, rng, dtype, tol):
    M, N, K = 64, 96, 80
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = dev.poisoned((M, N), np.float32)
    matmul[(tile.cdiv(M, 32), tile.cdiv(N, 32))](dev.put(a), dev.put(b), c, K,
                                                 BM=32, BN=32, BK=16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K))


@tile.kernel
def batched(a, b, c, B: tile.Constant[int]):
    x = tile.load(a, index=(0, 0, 0), shape=(2, B, B))
    y = tile.load(b, index=(0, 0, 0), shape=(2, B, B))
    tile.store(c, index=(0, 0, 0), tile=x @ y)


def test_batched_matmul(dev, rng):
    B = 16
    a = rng.standard_normal((2, B, B)).astype(np.float32)
    b = rng.standard_normal((2, B, B)).astype(np.float32)
    c = dev.poisoned((2, B, B), np.float32)
    batched[(1,)](dev.put(a), dev.put(b), c, B=B)
    assert_close(dev.get(c), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)


@tile.kernel
def batch_grid_matmul(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
                      BK: tile.Constant[int]):
    # The usual batched kernel: a batch grid axis, (1, BM, BK) tiles and a
    # (1, BM, BN) accumulator carried by the K loop, a 2-d product inside.
    z, pm, pn = tile.bid(2), tile.bid(0), tile.bid(1)
    acc = tile.zeros((1, BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(a.shape[2], BK)):
        x = tile.load(a, index=(z, pm, k), shape=(1, BM, BK))
        y = tile.load(b, index=(z, k, pn), shape=(1, BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(z, pm, pn), tile=acc.astype(c.dtype))


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-3)])
def test_batch_grid_matmul_ragged(dev, rng, dtype, tol):
    # M, N, K not multiples of the tile, K shorter than one tile in a second
    # shape; every batch checked against float64.
    for (Z, M, N, K) in ((3, 70, 50, 90), (2, 33, 40, 10)):
        a = rng.standard_normal((Z, M, K)).astype(dtype)
        b = rng.standard_normal((Z, K, N)).astype(dtype)
        c = dev.poisoned((Z, M, N), np.float32)
        batch_grid_matmul[(tile.cdiv(M, 32), tile.cdiv(N, 32), Z)](
            dev.put(a), dev.put(b), c, BM=32, BN=32, BK=16)
        want = a.astype(np.float64) @ b.astype(np.float64)
        assert_close(dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K))


@tile.kernel
def carried(x, out, n, B: tile.Constant[int]):
    s = tile.zeros((B,), tile.float32)
    m = -tile.inf
    cnt = 0
    for i in tile.range(n):
        row = tile.zeros((B,), tile.float32)
        for j in tile.range(2):
            row = row + tile.load(x, index=(2 * i + j,), shape=(B,))
        s = s + row
        m = tile.maximum(m, tile.max(row))
        cnt = cnt + 1
        last = row
    tile.store(out, index=(0,), tile=s / cnt + m + last)


def test_loop_carried_values(dev, rng):
    B, n = 64, 5
    x = rng.standard_normal(2 * n * B).astype(np.float32)
    out = dev.poisoned(B, np.float32)
    carried[(1,)](dev.put(x), out, n, B=B)
    rows = x.astype(np.float64).reshape(n, 2, B).sum(1)
    assert_close(dev.get(out), rows.mean(0) + rows.max() + rows[-1], rtol=1e-5, atol=1e-5)


# -- scalars and dtypes ------------------------------------------------------------

@tile.kernel
def scalars(out, n, f, flag, one):
    v = tile.full((16,), n, tile.float32) * f + one
    tile.store(out, index=(0,), tile=tile.where(flag, v, -v))


def test_scalar_arguments(dev):
    out = dev.poisoned(16, np.float32)
    scalars[(1,)](out, 32, 0.25, True, 1)
    assert_close(dev.get(out), np.full(16, 9.0))
    scalars[(1,)](out, 7, 2.0, False, 1)
    assert_close(dev.get(out), np.full(16, -15.0))


@tile.kernel
def copy(x, out, B: tile.Constant[int]):
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8",
                                   "uint16", "uint32", "uint64", "float16", "float32",
                                   "float64"])
def test_every_dtype_round_trips(dev, rng, dtype):
    n = 300
    if dtype == "bool":
        x = rng.integers(0, 2, n).astype(bool)
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    else:
        x = rng.standard_normal(n).astype(dtype)
    if dev.backend == "cuda" and dtype in ("uint16", "uint32", "uint64"):
        pytest.skip("torch has no CUDA arrays of this dtype")
    out = dev.poisoned(n, dtype)
    copy[(tile.cdiv(n, 128),)](dev.put(x), out, B=128)
    np.testing.assert_array_equal(dev.get(out), x)


@pytest.mark.gpu
def test_torch_current_stream_is_used(dev, rng):
    torch = dev.torch
    n = 1 << 16
    x = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    s = torch.cuda.Stream()
    # The inputs were written on the default stream: as with any torch work
    # on a side stream, s waits for it (without the wait the NaN fill of out2
    # raced the kernel and the test failed once on an H100, 2026-12-07).
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vadd[(n // 1024,)](x, x, out, BLOCK=1024)
    s.synchronize()
    assert torch.equal(out, 2 * x)
    out2 = torch.full_like(x, float("nan"))
    s.wait_stream(torch.cuda.current_stream())
    vadd[(n // 1024,)](x, x, out2, BLOCK=1024, stream=s.cuda_stream)
    s.synchronize()
    assert torch.equal(out2, 2 * x)


@tile.kernel
def bf16_subnormal_fma(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(BLOCK,)).astype(tile.bfloat16)
    tile.store(out, index=(0,), tile=tile.fma(t, t, t).astype(tile.float32))


def test_bfloat16_keeps_subnormals(dev):
    # bf16 has f32's exponent range and keeps its subnormals: fma(t, t, t) of
    # a subnormal t is t (t * t is far below half an ulp). AVX512-BF16's
    # native conversion flushes subnormals (the CPU backend read 0 on a Zen 4
    # host); it must not be used.
    x = np.array([2.0 ** -128, -(2.0 ** -130), 2.0 ** -133, 3 * 2.0 ** -132, 1e-38,
                  -5.0e-39, 2.0 ** -127, 2.0 ** -126], np.float32)
    out = dev.poisoned(8, np.float32)
    bf16_subnormal_fma[(1,)](dev.put(x), out, BLOCK=8)
    # Each value rounded to bf16 (nearest even on the f32 bits).
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    want = rounded.view(np.float32).astype(np.float64)
    assert (want != 0).all()
    np.testing.assert_array_equal(dev.get(out).astype(np.float64), want)


@pytest.mark.gpu
def test_bfloat16_on_gpu(dev, rng):
    torch = dev.torch
    x = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    out = torch.full_like(x, float("nan"))
    vadd[(tile.cdiv(1000, 256),)](x, x, out, BLOCK=256)
    torch.cuda.synchronize()
    assert torch.equal(out, x + x)
