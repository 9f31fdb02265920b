"""cuTile's tile names (issue 16) in `import tile as ct` kernels: extract,
insert, cat, item, astile, ones/full/arange with cuTile's keywords,
transpose(x, axis0, axis1), bitcast, pack_to_bytes/unpack_from_bytes,
mma/matmul with batch broadcasting and 1-d operands, tfloat32, use_fast_acc,
reduce/scan in cuTile's form (identity, keepdims, broadcast operands, captured
values) and the rounding_mode/flush_to_zero keywords of sum/prod/cumsum/cumprod.

Numerics against NumPy float64 on random data, outputs poisoned (NaN or a
sentinel) first; they run on the CPU here and on the GPU in the GPU suite
(marker `numerics`). The sm_90 tests compile the kernels to PTX and a cubin
(no GPU needed)."""

import operator

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, assert_close, line_of, sm90_module

pytestmark = pytest.mark.numerics
C = ct.Constant[int]


@pytest.fixture(scope="module")
def dev():
    return Device()


def rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def run(dev, kernel, inputs, outs, grid=(1,), **consts):
    """Launches on device copies; returns the outputs as NumPy arrays."""
    ins = [dev.put(a) if isinstance(a, np.ndarray) else a for a in inputs]
    outs = [dev.poisoned(s, d) for s, d in outs]
    kernel[grid](*ins, *outs, **consts)
    return [dev.get(o) for o in outs]


# -- extract / insert / cat / item ---------------------------------------------

@ct.kernel
def extract_2d(x, i, j, out, M: C, N: C, SM: C, SN: C):
    t = ct.load(x, (0, 0), shape=(M, N))
    ct.store(out, (0, 0), ct.extract(t, (i, j), shape=(SM, SN)))


@pytest.mark.parametrize("M,N,SM,SN", [(8, 16, 2, 4), (4, 32, 4, 8), (16, 8, 1, 8)])
def test_extract_runtime_index(dev, M, N, SM, SN):
    rng = np.random.default_rng(M * N + SM)
    x = rand(rng, (M, N))
    x[0, 0], x[-1, -1] = -0.0, np.nan  # kept bit for bit
    for i, j in [(0, 0), (M // SM - 1, N // SN - 1), (M // SM // 2, 0)]:
        (got,) = run(dev, extract_2d, [x, i, j], [((SM, SN), np.float32)],
                     M=M, N=N, SM=SM, SN=SN)
        want = x[i * SM:(i + 1) * SM, j * SN:(j + 1) * SN]
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@ct.kernel
def extract_const(x, out, outb):
    t = ct.load(x, (0,), shape=(32,))
    ct.store(out, (0,), t.extract((3,), (8,)))
    ct.store(outb, (0,), ct.extract(t > 0, 1, shape=8))


def test_extract_constant_index_int_and_bool(dev):
    x = np.random.default_rng(1).integers(-50, 50, 32).astype(np.int32)
    got, gotb = run(dev, extract_const, [x], [((8,), np.int32), ((8,), np.bool_)])
    assert np.array_equal(got, x[24:32])
    assert np.array_equal(gotb, x[8:16] > 0)


@ct.kernel
def insert_2d(x, i, j, out, SM: C, SN: C):
    t = ct.load(x, (0, 0), shape=(8, 16))
    v = ct.full((SM, SN), -7.5, dtype=ct.float32) + ct.arange(SN, dtype=ct.float32)[None, :]
    r = ct.insert(t, (i, j), v)
    ct.store(out, (0, 0), r.insert((0, 0), ct.extract(r, (i, j), (SM, SN)) * 2))


@pytest.mark.parametrize("SM,SN", [(2, 4), (8, 16), (1, 1)])
def test_insert_runtime_index_and_round_trip(dev, SM, SN):
    x = rand(np.random.default_rng(2), (8, 16))
    i, j = 8 // SM - 1, 0
    (got,) = run(dev, insert_2d, [x, i, j], [((8, 16), np.float32)], SM=SM, SN=SN)
    want = x.astype(np.float64)
    v = -7.5 + np.arange(SN)[None, :] + np.zeros((SM, 1))
    want[i * SM:(i + 1) * SM, j * SN:(j + 1) * SN] = v
    want[0:SM, 0:SN] = 2 * v
    assert_close(got, want, rtol=0, atol=0)


@ct.kernel
def insert_scalar(x, k, out):
    t = ct.load(x, (0,), shape=(16,))
    s = ct.load(x, (0,), shape=(16,)).extract((15,), (1,)).item()  # a 0-d value
    ct.store(out, (0,), ct.insert(t, (k,), s))


def test_insert_0d_value_is_a_unit_subtile(dev):
    x = rand(np.random.default_rng(3), (16,))
    (got,) = run(dev, insert_scalar, [x, 4], [((16,), np.float32)])
    want = x.copy()
    want[4] = x[15]
    assert np.array_equal(got, want)


@ct.kernel
def cat_kernel(x, y, out0, out1, out4):
    a = ct.load(x, (0, 0), shape=(4, 8))
    b = ct.load(y, (0, 0), shape=(4, 8))
    ct.store(out0, (0, 0), ct.cat((a, b), 0))
    ct.store(out1, (0, 0), ct.cat((a, b.astype(ct.float16)), axis=-1))
    ct.store(out4, (0, 0), ct.cat([a, b, b, a], 1))


def test_cat(dev):
    rng = np.random.default_rng(4)
    x, y = rand(rng, (4, 8)), rand(rng, (4, 8))
    g0, g1, g4 = run(dev, cat_kernel, [x, y], [((8, 8), np.float32), ((4, 16), np.float32),
                                               ((4, 32), np.float32)])
    assert np.array_equal(g0, np.concatenate([x, y], 0))
    assert np.array_equal(g1, np.concatenate([x, y.astype(np.float16).astype(np.float32)], 1))
    assert np.array_equal(g4, np.concatenate([x, y, y, x], 1))


@ct.kernel
def item_index(x, idx, out, B: C):
    i = ct.load(idx, (ct.bid(0),), shape=(1,)).item()  # a 0-d tile as a block index
    ct.store(out, (ct.bid(0),), ct.load(x, (i,), shape=(B,)))


def test_item_as_block_index(dev):
    x = rand(np.random.default_rng(5), (64,))
    idx = np.array([3, 0, 2, 1], np.int32)
    (got,) = run(dev, item_index, [x, idx], [((64,), np.float32)], grid=(4,), B=16)
    want = np.concatenate([x[16 * k:16 * k + 16] for k in idx])
    assert np.array_equal(got, want)


# -- creation ----------------------------------------------------------------------

@ct.kernel
def creation(start, step, out_i, out_f, out_c):
    ct.store(out_i, (0,), ct.arange(16, dtype=ct.int32, start=start, step=step) +
             ct.ones((16,), ct.int32))
    f = ct.arange(8, start=0.5, step=-0.25, dtype=ct.float32)
    ct.store(out_f, (0,), f * ct.full(shape=(8,), fill_value=2.0, dtype=ct.float32))
    t = ct.astile(((1, 2, 3, 4), (5, start, 7, 8)), dtype=ct.float32)
    ct.store(out_c, (0, 0), t + ct.astile(0.5, dtype=ct.float32))


def test_arange_ones_full_astile(dev):
    gi, gf, gc = run(dev, creation, [7, -3], [((16,), np.int32), ((8,), np.float32),
                                              ((2, 4), np.float32)])
    assert np.array_equal(gi, 7 - 3 * np.arange(16) + 1)
    assert_close(gf, 2 * (0.5 - 0.25 * np.arange(8)), rtol=0, atol=0)
    assert_close(gc, np.array([[1, 2, 3, 4], [5, 7, 7, 8]]) + 0.5, rtol=0, atol=0)


@ct.kernel
def astile_specials(out):
    ct.store(out, (0,), ct.astile((ct.inf, -0.0, ct.nan, 1e-3), dtype=ct.float16))


def test_astile_special_values(dev):
    (got,) = run(dev, astile_specials, [], [((4,), np.float16)])
    want = np.array([np.inf, -0.0, np.nan, 1e-3], np.float16)
    assert np.array_equal(got.view(np.uint16)[[0, 1, 3]], want.view(np.uint16)[[0, 1, 3]])
    assert np.isnan(got[2])


# -- transpose -----------------------------------------------------------------

@ct.kernel
def transposes(x, y, o02, o12, o2, oT, operm):
    t = ct.load(x, (0, 0, 0), shape=(2, 4, 8))
    ct.store(o02, (0, 0, 0), ct.transpose(t, 0, 2))
    ct.store(o12, (0, 0, 0), t.transpose(1, 2))
    m = ct.load(y, (0, 0), shape=(4, 8))
    ct.store(o2, (0, 0), ct.transpose(m))
    ct.store(oT, (0, 0), m.transpose())
    ct.store(operm, (0, 0, 0), t.transpose(2, 0, 1))


def test_transpose_axis0_axis1(dev):
    rng = np.random.default_rng(6)
    x, y = rand(rng, (2, 4, 8)), rand(rng, (4, 8))
    g02, g12, g2, gT, gp = run(dev, transposes, [x, y], [
        ((8, 4, 2), np.float32), ((2, 8, 4), np.float32), ((8, 4), np.float32),
        ((8, 4), np.float32), ((8, 2, 4), np.float32)])
    assert np.array_equal(g02, np.swapaxes(x, 0, 2))
    assert np.array_equal(g12, np.swapaxes(x, 1, 2))
    assert np.array_equal(g2, y.T) and np.array_equal(gT, y.T)
    assert np.array_equal(gp, np.transpose(x, (2, 0, 1)))


# -- bits ----------------------------------------------------------------------------

@ct.kernel
def bitcasts(x, h, o_u, o_back, o_h, o_s):
    t = ct.load(x, (0,), shape=(16,))
    u = ct.bitcast(t, ct.uint32)
    ct.store(o_u, (0,), u)
    ct.store(o_back, (0,), ct.bitcast(u ^ 0x80000000, ct.float32))  # flips the sign bit
    ct.store(o_h, (0,), ct.bitcast(ct.load(h, (0,), shape=(16,)), ct.int16))
    ct.store(o_s, (0,), ct.full((1,), ct.bitcast(1.0, ct.uint32), dtype=ct.uint32))


def test_bitcast(dev):
    rng = np.random.default_rng(7)
    x, h = rand(rng, (16,)), rand(rng, (16,), np.float16)
    gu, gb, gh, gs = run(dev, bitcasts, [x, h], [((16,), np.uint32), ((16,), np.float32),
                                                 ((16,), np.int16), ((1,), np.uint32)])
    assert np.array_equal(gu, x.view(np.uint32))
    assert np.array_equal(gb, -x)
    assert np.array_equal(gh, h.view(np.int16))
    assert gs[0] == 0x3F800000


def _pack_kernel(dt):
    @ct.kernel
    def pack(x, obytes, oback, N: C):
        t = ct.load(x, (0, 0), shape=(2, N))
        b = ct.pack_to_bytes(t)
        ct.store(obytes, (0,), b)
        ct.store(oback, (0, 0), ct.unpack_from_bytes(b, dt).reshape((2, N)))
    return pack


@pytest.mark.parametrize("np_dt,ct_dt", [(np.float32, ct.float32), (np.int16, ct.int16),
                                         (np.float64, ct.float64), (np.uint8, ct.uint8),
                                         (np.int64, ct.int64)])
def test_pack_unpack_bytes(dev, np_dt, ct_dt):
    rng = np.random.default_rng(8)
    if np.dtype(np_dt).kind == "f":
        x = rand(rng, (2, 8), np_dt)
    else:
        info = np.iinfo(np_dt)
        x = rng.integers(info.min, info.max, (2, 8), dtype=np_dt)
    n = x.nbytes
    gb, gx = run(dev, _pack_kernel(ct_dt), [x], [((n,), np.uint8), ((2, 8), np_dt)], N=8)
    assert np.array_equal(gb, x.view(np.uint8).reshape(-1))  # little-endian, as in memory
    assert np.array_equal(gx, x)


@ct.kernel
def unpack_other(b, out):
    ct.store(out, (0,), ct.unpack_from_bytes(ct.load(b, (0,), shape=(16,)), ct.int32))


def test_unpack_bytes_from_memory(dev):
    b = np.arange(16, dtype=np.uint8) + 1
    (got,) = run(dev, unpack_other, [b], [((4,), np.int32)])
    assert np.array_equal(got, b.view(np.int32))
    assert got[0] == 0x04030201


# -- mma / matmul ----------------------------------------------------------------

@ct.kernel
def batched(a, b, acc, out, out_mm):
    x = ct.load(a, (0, 0, 0), shape=(2, 16, 32))
    y = ct.load(b, (0, 0), shape=(32, 16))
    c = ct.load(acc, (0, 0, 0), shape=(2, 16, 16))
    ct.store(out, (0, 0, 0), ct.mma(x, y, acc=c))
    ct.store(out_mm, (0, 0, 0), ct.matmul(y.reshape((1, 32, 16)).transpose(1, 2), x.transpose(1, 2)))


def test_mma_batch_broadcast(dev):
    rng = np.random.default_rng(9)
    a, b = rand(rng, (2, 16, 32), np.float16), rand(rng, (32, 16), np.float16)
    acc = rand(rng, (2, 16, 16))
    g, gmm = run(dev, batched, [a, b, acc], [((2, 16, 16), np.float32),
                                             ((2, 16, 16), np.float16)])
    A, B = a.astype(np.float64), b.astype(np.float64)
    assert_close(g, A @ B + acc, rtol=1e-3, atol=1e-3)
    assert_close(gmm, B.T[None] @ np.swapaxes(A, 1, 2), rtol=2e-3, atol=2e-2)


@ct.kernel
def vectors(v, m, t, o_dot, o_vm, o_mv, o_tv):
    x = ct.load(v, (0,), shape=(32,))
    y = ct.load(m, (0, 0), shape=(32, 16))
    z = ct.load(t, (0, 0, 0), shape=(2, 16, 32))
    ct.store(o_dot, (0,), (x @ x).reshape((1,)))
    ct.store(o_vm, (0,), ct.matmul(x, y))
    ct.store(o_mv, (0,), ct.matmul(y.transpose(), x))
    ct.store(o_tv, (0, 0), z @ x)


def test_matmul_1d_operands(dev):
    rng = np.random.default_rng(10)
    v, m, t = rand(rng, (32,)), rand(rng, (32, 16)), rand(rng, (2, 16, 32))
    gd, gvm, gmv, gtv = run(dev, vectors, [v, m, t], [
        ((1,), np.float32), ((16,), np.float32), ((16,), np.float32), ((2, 16), np.float32)])
    V, M, T = (a.astype(np.float64) for a in (v, m, t))
    assert_close(gd, [V @ V], rtol=1e-5, atol=1e-5)
    assert_close(gvm, V @ M, rtol=1e-5, atol=1e-5)
    assert_close(gmv, M.T @ V, rtol=1e-5, atol=1e-5)
    assert_close(gtv, T @ V, rtol=1e-5, atol=1e-5)


@ct.kernel
def vectors_i8(v, m, o):
    x = ct.load(v, (0,), shape=(32,))
    ct.store(o, (0,), x @ ct.load(m, (0, 0), shape=(32, 16)))


def test_matmul_1d_int8_gives_int32(dev):
    rng = np.random.default_rng(11)
    v = rng.integers(-128, 128, 32).astype(np.int8)
    m = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    (got,) = run(dev, vectors_i8, [v, m], [((16,), np.int32)])
    assert np.array_equal(got, v.astype(np.int64) @ m.astype(np.int64))


@ct.kernel
def tf32_mma(a, b, out, out_mm):
    x = ct.load(a, (0, 0), shape=(32, 32)).astype(ct.tfloat32)
    y = ct.load(b, (0, 0), shape=(32, 32)).astype(ct.tfloat32)
    ct.store(out, (0, 0), ct.mma(x, y, ct.zeros((32, 32), dtype=ct.float32)))
    ct.store(out_mm, (0, 0), x @ y)


def test_tfloat32_operands(dev):
    rng = np.random.default_rng(12)
    a, b = rand(rng, (32, 32)), rand(rng, (32, 32))
    g, gmm = run(dev, tf32_mma, [a, b], [((32, 32), np.float32)] * 2)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(g, want, rtol=1e-2, atol=5e-2)  # tf32: 10 mantissa bits on tensor cores
    assert_close(gmm, want, rtol=1e-2, atol=5e-2)
    assert ct.tfloat32.bits == 32 and ct.tfloat32.name == "tfloat32"
    assert "allow_tf32" in tf32_mma.trace(a, b, a, a)


@ct.kernel
def fast_acc(a, out, FAST: ct.Constant[bool]):
    x = ct.load(a, (0, 0), shape=(16, 16))
    ct.store(out, (0, 0), ct.mma(x, x, ct.zeros((16, 16), dtype=ct.float32),  # mma here
                                 use_fast_acc=FAST))


def test_use_fast_acc_checked():
    a = np.zeros((16, 16), np.float16)
    out = np.zeros((16, 16), np.float32)
    fast_acc.trace(a, out, FAST=False)
    with pytest.raises(ct.TileValueError, match="use_fast_acc=True needs float8") as e:
        fast_acc.trace(a, out, FAST=True)
    assert e.value.kernel == "fast_acc" and e.value.lineno == line_of(fast_acc, "mma here")


# -- reduce / scan in cuTile's form ------------------------------------------------

@ct.kernel
def reductions(x, y, hi, o_sum, o_keep, o_clip, o_pair, o_scan):
    t = ct.load(x, (0, 0), shape=(4, 32))
    ct.store(o_sum, (0,), ct.reduce(t, 1, operator.add, 0.0))
    ct.store(o_keep, (0, 0), ct.reduce(t, axis=0, func=ct.maximum, identity=-ct.inf,
                                       keepdims=True))
    cap = ct.sum(t) / 128.0  # a 0-d tile captured by the combiner
    ct.store(o_clip, (0,), ct.reduce(
        t, 1, lambda a, b: ct.maximum(ct.minimum(a, cap + hi), ct.minimum(b, cap + hi)), 0.0))
    # two operands broadcast to one shape: (value, index) pairs, a max that
    # keeps the first index
    u = ct.load(y, (0, 0), shape=(4, 32))
    idx = ct.arange(32, dtype=ct.int32)[None, :]

    def better(v0, i0, v1, i1):
        take = (v1 > v0) | ((v1 == v0) & (i1 < i0))
        return ct.where(take, v1, v0), ct.where(take, i1, i0)
    _, arg = ct.reduce((u, idx), 1, better, (-ct.inf, 0))
    ct.store(o_pair, (0,), arg)
    ct.store(o_scan, (0, 0), ct.scan(t, 1, lambda a, b: ct.maximum(a, ct.minimum(b, hi)),
                                     -ct.inf, reverse=True))


def test_reduce_scan_cutile_form(dev):
    rng = np.random.default_rng(13)
    x = rand(rng, (4, 32))
    y = rng.integers(-3, 3, (4, 32)).astype(np.float32)  # ties
    hi = 0.25
    gs, gk, gc, gp, gsc = run(dev, reductions, [x, y, hi], [
        ((4,), np.float32), ((1, 32), np.float32), ((4,), np.float32), ((4,), np.int32),
        ((4, 32), np.float32)])
    X = x.astype(np.float64)
    assert_close(gs, X.sum(1), rtol=1e-5, atol=1e-5)
    assert_close(gk, X.max(0, keepdims=True), rtol=0, atol=0)
    cap = np.float32(x.sum(dtype=np.float32) / 128.0) + hi
    assert_close(gc, np.minimum(X.max(1), cap), rtol=1e-5, atol=1e-5)
    assert np.array_equal(gp, y.argmax(1))
    # from the end: the last element, then the maximum with the others
    # clipped to the captured scalar
    want = np.empty_like(X)
    want[:, -1] = X[:, -1]
    for k in range(30, -1, -1):
        want[:, k] = np.maximum(want[:, k + 1], np.minimum(X[:, k], hi))
    assert_close(gsc, want, rtol=0, atol=0)


@ct.kernel
def bad_identity(x, out, WHICH: C):
    t = ct.load(x, (0,), shape=(16,))
    if WHICH == 0:
        r = ct.reduce(t, 0, operator.add, (0.0, 1.0))  # reduce here
    elif WHICH == 1:
        r = ct.reduce(t, 0, operator.add, t)
    else:
        r = ct.reduce(t, 0, lambda a, b: a + ct.sum(t * b))
    ct.store(out, (0,), r.reshape((1,)))


def test_reduce_errors_name_the_line():
    x, out = np.zeros(16, np.float32), np.zeros(1, np.float32)
    with pytest.raises(ct.TileValueError, match="one constant per operand") as e:
        bad_identity.trace(x, out, WHICH=0)
    assert e.value.kernel == "bad_identity"
    assert e.value.lineno == line_of(bad_identity, "reduce here")
    with pytest.raises(ct.TileValueError, match="constant"):
        bad_identity.trace(x, out, WHICH=1)
    with pytest.raises(ct.TileTypeError, match="made outside it"):
        bad_identity.trace(x, out, WHICH=2)


@ct.kernel
def flushing(x, o_sum, o_ftz, o_cum, o_prod):
    t = ct.load(x, (0,), shape=(16,))
    ct.store(o_sum, (0,), ct.sum(t, rounding_mode=ct.RoundingMode.RN).reshape((1,)))
    ct.store(o_ftz, (0,), ct.sum(t, 0, keepdims=True, flush_to_zero=True))
    ct.store(o_cum, (0,), ct.cumsum(t, 0, flush_to_zero=True))
    ct.store(o_prod, (0,), ct.prod(t, rounding_mode=ct.RoundingMode.RZ).reshape((1,)))


def test_sum_cumsum_flush_to_zero(dev):
    x = np.full(16, 1e-39, np.float32)  # subnormals, whose sum is normal
    x[3] = 2e-38
    gs, gf, gc, gp = run(dev, flushing, [x], [((1,), np.float32)] * 2 +
                         [((16,), np.float32), ((1,), np.float32)])
    assert_close(gs, [x.astype(np.float64).sum()], rtol=1e-5, atol=0)
    assert gf[0] == np.float32(2e-38)  # only the normal element counts
    assert np.array_equal(gc, np.where(np.arange(16) >= 3, x[3], 0.0).astype(np.float32))
    assert gp[0] == 0.0


def test_reduction_hints_checked():
    @ct.kernel
    def k(x, out):
        t = ct.load(x, (0,), shape=(16,))
        ct.store(out, (0,), ct.cumsum(t, rounding_mode=ct.RoundingMode.APPROX))

    with pytest.raises(ct.TileValueError, match="rounding_mode"):
        k.trace(np.zeros(16, np.float32), np.zeros(16, np.float32))

    @ct.kernel
    def k2(x, out):
        t = ct.load(x, (0,), shape=(16,))
        ct.store(out, (0,), ct.sum(t, flush_to_zero=True).reshape((1,)))

    with pytest.raises(ct.TileTypeError, match="float32"):
        k2.trace(np.zeros(16, np.float16), np.zeros(1, np.float16))


# -- errors ----------------------------------------------------------------------

def test_shape_errors():
    @ct.kernel
    def k(x, out, WHICH: C):
        t = ct.load(x, (0, 0), shape=(8, 8))
        if WHICH == 0:
            t = ct.extract(t, (0, 0), shape=(3, 8))
        elif WHICH == 1:
            t = ct.cat((t, t.reshape((4, 16))), 0)
        elif WHICH == 2:
            t = t.item()
        elif WHICH == 3:
            t = ct.bitcast(t, ct.float16)
        elif WHICH == 4:
            t = ct.unpack_from_bytes(t.reshape((64,)).astype(ct.uint8)[:, None], ct.int32)
        ct.store(out, (0, 0), t)

    x, out = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    for which, exc, text in [(0, ct.TileShapeError, "power of two|divide"),
                             (1, ct.TileShapeError, "one shape"),
                             (2, ct.TileShapeError, "exactly one element"),
                             (3, ct.TileTypeError, "widths differ"),
                             (4, ct.TileTypeError, "1-d uint8")]:
        with pytest.raises(exc, match=text) as e:
            k.trace(x, out, WHICH=which)
        assert e.value.kernel == "k"


# -- sm_90: these kernels compile to PTX and a cubin (no GPU needed) ---------------

def _sm90(request, kernel, *args, **consts):
    mod = sm90_module(request)
    return mod.compile(kernel.trace(*args, **consts), "sm_90", {}).asm["ptx"]


def test_sm90_compiles(request):
    f32 = np.float32
    z = np.zeros
    cases = [
        (extract_2d, (z((8, 16), f32), 1, 1, z((2, 4), f32)), dict(M=8, N=16, SM=2, SN=4)),
        (insert_2d, (z((8, 16), f32), 1, 0, z((8, 16), f32)), dict(SM=2, SN=4)),
        (cat_kernel, (z((4, 8), f32), z((4, 8), f32), z((8, 8), f32), z((4, 16), f32),
                      z((4, 32), f32)), {}),
        (creation, (1, 2, z(16, np.int32), z(8, f32), z((2, 4), f32)), {}),
        (transposes, (z((2, 4, 8), f32), z((4, 8), f32), z((8, 4, 2), f32), z((2, 8, 4), f32),
                      z((8, 4), f32), z((8, 4), f32), z((8, 2, 4), f32)), {}),
        (bitcasts, (z(16, f32), z(16, np.float16), z(16, np.uint32), z(16, f32),
                    z(16, np.int16), z(1, np.uint32)), {}),
        (_pack_kernel(ct.float32), (z((2, 8), f32), z(64, np.uint8), z((2, 8), f32)),
         dict(N=8)),
        (batched, (z((2, 16, 32), np.float16), z((32, 16), np.float16), z((2, 16, 16), f32),
                   z((2, 16, 16), f32), z((2, 16, 16), np.float16)), {}),
        (vectors, (z(32, f32), z((32, 16), f32), z((2, 16, 32), f32), z(1, f32), z(16, f32),
                   z(16, f32), z((2, 16), f32)), {}),
        (tf32_mma, (z((32, 32), f32), z((32, 32), f32), z((32, 32), f32), z((32, 32), f32)),
         {}),
        (reductions, (z((4, 32), f32), z((4, 32), f32), 0.5, z(4, f32), z((1, 32), f32),
                      z(4, f32), z(4, np.int32), z((4, 32), f32)), {}),
        (flushing, (z(16, f32), z(1, f32), z(1, f32), z(16, f32), z(1, f32)), {}),
    ]
    for kernel, args, consts in cases:
        ptx = _sm90(request, kernel, *args, **consts)
        assert f".entry {kernel.__name__}" in ptx, kernel.__name__
