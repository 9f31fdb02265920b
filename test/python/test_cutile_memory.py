"""cuTile's memory API (issue 16, group "memory"), written as `import tile as
ct` kernels: padding_mode, order ("C", "F", tuples) on load and store, the
hints check_bounds/latency/allow_tma, memory_order/memory_scope on loads,
stores and atomics, gather/scatter's keywords, advanced indexing, Array.slice,
tiled views, raw memory offsets and assume_divisible_by.

Numerics (marker `numerics`) run on the available backend against NumPy
float64 with NaN-poisoned outputs; the PTX tests compile for sm_90 (no GPU
needed, only the GPU backend and ptxas) and pin the orderings and scopes."""

import math

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, assert_close, trace

PM, MO, MS = ct.PaddingMode, ct.MemoryOrder, ct.MemoryScope


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(16)


def f32(*shape):
    return np.zeros(shape, np.float32)


numerics = pytest.mark.numerics


# -- padding_mode ------------------------------------------------------------

@ct.kernel
def pad_load(x, out, MODE: ct.Constant[int]):
    mode = [PM.ZERO, PM.NEG_ZERO, PM.NAN, PM.POS_INF, PM.NEG_INF, PM.UNDETERMINED][MODE]
    t = ct.load(x, (ct.bid(0),), shape=(16,), padding_mode=mode)
    ct.store(out, (ct.bid(0),), t)


@numerics
@pytest.mark.parametrize("mode,value", [(0, 0.0), (1, -0.0), (2, math.nan), (3, math.inf),
                                        (4, -math.inf), (5, 0.0)])
def test_padding_mode_values(dev, rng, mode, value):
    x = rng.standard_normal(21).astype(np.float32)
    out = dev.poisoned(32, np.float32)
    pad_load[(2,)](dev.put(x), out, MODE=mode)
    got = dev.get(out)
    want = np.concatenate([x, np.full(11, value)])
    assert_close(got[:21], want[:21])
    tail = got[21:]
    if math.isnan(value):
        assert np.isnan(tail).all()
    else:
        assert (tail == value).all() and (np.signbit(tail) == (math.copysign(1, value) < 0)).all()


def test_padding_mode_ir_and_errors():
    ir = trace(pad_load, f32(20), f32(32), MODE=4)
    assert "padding = 0xFF800000 : f32" in ir
    assert "padding" not in trace(pad_load, f32(20), f32(32), MODE=0).split("tile.load")[1] \
        .split("\n")[0]

    @ct.kernel
    def nan_int(x, out):
        ct.store(out, (0,), ct.load(x, (0,), shape=(16,), padding_mode=PM.NAN))

    with pytest.raises(ct.TileTypeError, match="cannot be represented"):
        nan_int.trace(np.zeros(16, np.int32), np.zeros(16, np.int32))

    @ct.kernel
    def both(x, out):
        ct.store(out, (0,), ct.load(x, (0,), (16,), padding=1.0, padding_mode=PM.ZERO))

    with pytest.raises(ct.TileValueError, match="padding_mode") as e:
        both.trace(f32(16), f32(16))
    assert e.value.kernel == "both"

    @ct.kernel
    def not_enum(x, out):
        ct.store(out, (0,), ct.load(x, (0,), (16,), padding_mode="zero"))

    with pytest.raises(ct.TileValueError, match="PaddingMode"):
        not_enum.trace(f32(16), f32(16))


# -- order ---------------------------------------------------------------------

@ct.kernel
def load_order2(x, out, TN: ct.Constant[int], TM: ct.Constant[int], F: ct.Constant[bool]):
    i, j = ct.bid(0), ct.bid(1)
    order = "F" if F else (1, 0)
    t = ct.load(x, (j, i), shape=(TN, TM), order=order, padding_mode=PM.ZERO)
    ct.store(out, (j, i), t)  # out is the transpose: block (j, i) of shape (TN, TM)


@numerics
@pytest.mark.parametrize("F", [False, True])
def test_order_2d_transposes_non_square_blocks(dev, rng, F):
    m, n, tm, tn = 40, 50, 16, 8
    x = rng.standard_normal((m, n)).astype(np.float32)
    gm, gn = ct.cdiv(m, tm), ct.cdiv(n, tn)
    out = dev.poisoned((n, m), np.float32)
    load_order2[(gm, gn)](dev.put(x), out, TN=tn, TM=tm, F=F)
    assert_close(dev.get(out), x.T.astype(np.float64))


def test_order_2d_spec_example_shape():
    # t[y, x] = A[i*tm + x, j*tn + y]: the result has the given (tile-order) shape
    ir = trace(load_order2, f32(40, 50), f32(50, 40), TN=8, TM=16, F=False)
    assert "{order = array<i64: 1, 0>} : " in ir and "-> tensor<8x16xf32>" in ir


ORDER4 = (2, 0, 3, 1)
SHAPE4 = (2, 4, 8, 4)  # tile shape, in tile axis order


@ct.kernel
def order4_roundtrip(x, y, out):
    i = (ct.bid(0), ct.bid(1), ct.bid(2), 0)
    t = ct.load(x, i, shape=SHAPE4, order=ORDER4, padding_mode=PM.ZERO)
    ct.store(out, i, t)                   # the tile in tile order
    ct.store(y, i, t * 2.0, order=ORDER4)  # back into x's layout


@numerics
def test_order_4d_load_and_store_against_numpy(dev, rng):
    a = (5, 3, 7, 10)  # array extents: axis order[i] is tile axis i
    x = rng.standard_normal(a).astype(np.float32)
    # the tile space of x with its axes permuted by ORDER4
    p = x.transpose(ORDER4)
    grid = [ct.cdiv(p.shape[k], SHAPE4[k]) for k in range(4)]
    assert grid[3] == 1
    padded = np.zeros([g * s for g, s in zip(grid, SHAPE4)])
    padded[tuple(slice(0, e) for e in p.shape)] = p
    out = dev.poisoned(padded.shape, np.float32)
    y = dev.poisoned(a, np.float32)
    order4_roundtrip[tuple(grid[:3])](dev.put(x), y, out)
    assert_close(dev.get(out), padded)
    assert_close(dev.get(y), 2.0 * x)


def test_order_errors():
    @ct.kernel
    def bad(x, out, O: ct.Constant[int]):
        order = [(0, 0), "X", (0, 1, 2)][O]
        ct.store(out, (0, 0), ct.load(x, (0, 0), (4, 4), order=order))

    with pytest.raises(ct.TileShapeError, match="permutation"):
        bad.trace(f32(4, 4), f32(4, 4), O=0)
    with pytest.raises(ct.TileValueError, match="'C', 'F'"):
        bad.trace(f32(4, 4), f32(4, 4), O=1)
    with pytest.raises(ct.TileShapeError, match="permutation"):
        bad.trace(f32(4, 4), f32(4, 4), O=2)


@ct.kernel
def load_scalar(x, out):
    for i in range(4):
        ct.store(out, (i,), ct.load(x, (3 - i,), shape=()))


@numerics
def test_load_shape_empty_reads_one_element(dev, rng):
    x = rng.standard_normal(4).astype(np.float32)
    out = dev.poisoned(4, np.float32)
    load_scalar[(1,)](dev.put(x), out)
    assert_close(dev.get(out), x[::-1])


# -- hints ---------------------------------------------------------------------

@ct.kernel
def hinted(x, out, LAT: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0),), shape=(32,), check_bounds=False, latency=LAT,
                allow_tma=False)
    ct.store(out, (ct.bid(0),), t + 1.0, check_bounds=True, latency=LAT, allow_tma=True)


@numerics
def test_hints_accepted(dev, rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = dev.poisoned(64, np.float32)
    hinted[(2,)](dev.put(x), out, LAT=10)
    assert_close(dev.get(out), x + 1.0)


@pytest.mark.parametrize("kw,match", [({"latency": 11}, "latency"),
                                      ({"latency": 0}, "latency"),
                                      ({"allow_tma": 1}, "allow_tma"),
                                      ({"check_bounds": "no"}, "check_bounds")])
def test_hints_checked(kw, match):
    @ct.kernel
    def k(x, out):
        ct.store(out, (0,), ct.load(x, (0,), (16,), **kw))

    with pytest.raises(ct.TileValueError, match=match):
        k.trace(f32(16), f32(16))

    @ct.kernel
    def g(x, out):
        ct.scatter(out, ct.arange(16), ct.gather(x, ct.arange(16), **kw), **kw)

    if "allow_tma" not in kw:
        with pytest.raises(ct.TileValueError, match=match):
            g.trace(f32(16), f32(16))


# -- memory_order / memory_scope: checks and IR ----------------------------------

@pytest.mark.parametrize("op,order,scope", [
    ("load", MO.RELEASE, MS.DEVICE), ("load", MO.ACQ_REL, MS.DEVICE),
    ("store", MO.ACQUIRE, MS.DEVICE), ("load", MO.WEAK, MS.DEVICE),
    ("load", MO.RELAXED, MS.NONE), ("store", MO.RELEASE, MS.CLUSTER),
    ("atomic", MO.WEAK, MS.NONE), ("atomic", MO.RELAXED, MS.NONE)])
def test_memory_order_checked(op, order, scope):
    @ct.kernel
    def k(x):
        if op == "load":
            ct.store(x, (1,), ct.load(x, (0,), (16,), memory_order=order, memory_scope=scope))
        elif op == "store":
            ct.store(x, (0,), 1.0, memory_order=order, memory_scope=scope)
        else:
            ct.atomic_add(x, ct.arange(16), 1.0, memory_order=order, memory_scope=scope)

    with pytest.raises(ct.TileValueError, match="memory_") as e:
        k.trace(f32(32))
    assert e.value.kernel == "k"


@ct.kernel
def ordered(x, flag, out):
    t = ct.load(x, (0,), (16,), memory_order=MO.ACQUIRE, memory_scope=MS.DEVICE)
    ct.store(out, (0,), t, memory_order=MO.RELEASE, memory_scope=MS.BLOCK)
    ct.atomic_add(flag, (0,), 1, memory_order=MO.RELAXED, memory_scope=MS.BLOCK)
    ct.atomic_cas(flag, (1,), 0, 1, memory_order=MO.ACQUIRE, memory_scope=MS.SYS)
    ct.atomic_xchg(flag, (2,), 5)


def test_memory_order_ir():
    ir = trace(ordered, f32(16), np.zeros(4, np.int32), f32(16))
    lines = {op: [ln for ln in ir.splitlines() if op in ln]
             for op in ("tile.load", "tile.store", "tile.atomic_rmw", "tile.atomic_cas")}
    assert "#tile.memory_order<acquire>" in lines["tile.load"][0]
    assert "#tile.memory_scope<device>" in lines["tile.load"][0]
    assert "#tile.memory_order<release>" in lines["tile.store"][0]
    assert "#tile.memory_scope<block>" in lines["tile.store"][0]
    add, xchg = lines["tile.atomic_rmw"]
    assert "#tile.memory_order<relaxed>" in add and "#tile.memory_scope<block>" in add
    assert "memory_order" not in xchg  # the default: acq_rel at device scope
    assert "#tile.memory_scope<sys>" in lines["tile.atomic_cas"][0]


@numerics
def test_ordered_accesses_compute_the_same(dev, rng):
    x = rng.standard_normal(16).astype(np.float32)
    flag = dev.put(np.array([0, 0, 0, 0], np.int32))
    out = dev.poisoned(16, np.float32)
    ordered[(3,)](dev.put(x), flag, out)
    assert_close(dev.get(out), x)
    assert dev.get(flag).tolist() == [3, 1, 5, 0]


# -- gather / scatter / atomics keywords ------------------------------------------

@ct.kernel
def gather_pad(x, out, PAD: ct.Constant[float]):
    i = ct.arange(32) - 4
    t = ct.gather(x, i, padding_value=PAD, check_bounds=True, latency=3)
    ct.scatter(out, (ct.arange(32),), t, check_bounds=False, latency=2)


@numerics
@pytest.mark.parametrize("pad", [0.0, -1.5, -ct.inf])
def test_gather_padding_value(dev, rng, pad):
    x = rng.standard_normal(20).astype(np.float32)
    out = dev.poisoned(32, np.float32)
    gather_pad[(1,)](dev.put(x), out, PAD=pad)
    want = np.full(32, pad)
    want[4:24] = x
    assert_close(dev.get(out), want)


def test_gather_other_and_padding_value_conflict():
    @ct.kernel
    def k(x, out):
        ct.scatter(out, ct.arange(16), ct.gather(x, ct.arange(16), other=1.0,
                                                 padding_value=2.0))

    with pytest.raises(ct.TileValueError, match="padding_value"):
        k.trace(f32(16), f32(16))


@ct.kernel
def cas_oob(x, old):
    i = ct.arange(8) * 2 - 4  # -4 .. 10 on an array of 6: lanes 0, 1, 5, 6, 7 outside
    r = ct.atomic_cas(x, i, ct.full((8,), 7, ct.int32), 9, check_bounds=True)
    ct.store(old, (0,), r)


@numerics
def test_atomic_cas_out_of_bounds_returns_expected(dev):
    x = dev.put(np.array([7, 0, 7, 3, 7, 7], np.int32))
    old = dev.poisoned(8, np.int32)
    cas_oob[(1,)](x, old)
    assert dev.get(old).tolist() == [7, 7, 7, 7, 7, 7, 7, 7]
    assert dev.get(x).tolist() == [9, 0, 9, 3, 9, 7]


# -- advanced indexing ----------------------------------------------------------

@ct.kernel
def adv(x, rows, y, c0):
    r = ct.load(rows, (0,), (8,))
    t = ct.load_advanced_indexing(x, (r, ct.Slice(c0, 16)), padding_mode=PM.NEG_INF,
                                  latency=4, allow_tma=False)
    ct.store_advanced_indexing(y, (ct.arange(8) * 2, ct.Slice(c0 - 1, 16)), t)


@numerics
def test_advanced_indexing_against_numpy(dev, rng):
    x = rng.standard_normal((12, 20)).astype(np.float32)
    rows = np.array([3, 0, 11, 12, 5, -1, 7, 7], np.int32)  # 12 and -1 are outside
    c0 = 9  # columns 9..24: 20..24 outside
    y0 = np.full((16, 19), np.nan, np.float32)
    y = dev.put(y0)
    adv[(1,)](dev.put(x), dev.put(rows), y, c0)
    block = np.full((8, 16), -np.inf)
    for k, r in enumerate(rows):
        if 0 <= r < 12:
            block[k, :11] = x[r, 9:20]
    want = y0.astype(np.float64)
    for k in range(8):
        want[2 * k, 8:19] = block[k, :11]  # columns c0-1 .. c0+14, 19.. dropped
    assert_close(dev.get(y), want)


def test_advanced_indexing_errors():
    @ct.kernel
    def two_tiles(x, y):
        t = ct.load_advanced_indexing(x, (ct.arange(4), ct.arange(4)))
        ct.store(y, (0, 0), t)

    with pytest.raises(ct.TileTypeError, match="exactly one"):
        two_tiles.trace(f32(8, 8), f32(8, 8))

    @ct.kernel
    def wrong_shape(y):
        ct.store_advanced_indexing(y, (ct.arange(4), ct.Slice(0, 8)), ct.zeros((4, 4),
                                                                             ct.float32))

    with pytest.raises(ct.TileShapeError, match="match"):
        wrong_shape.trace(f32(8, 8))


# -- Array.slice, tiled views, raw memory ---------------------------------------

@ct.kernel
def sliced(x, out, lo, hi):
    sub = x.slice(axis=0, start=lo, stop=hi)
    t = ct.load(sub, (0, 0), shape=(8, 16), padding_mode=PM.ZERO)
    ct.store(out, (0, 0), t)
    # a store through a view stops at the view's end, inside the array
    cols = x.slice(-1, 2, 6)
    ct.store(cols, (1, 0), ct.full((4, 8), -1.0, ct.float32))


@numerics
def test_array_slice(dev, rng):
    x = rng.standard_normal((10, 12)).astype(np.float32)
    out = dev.poisoned((8, 16), np.float32)
    xd = dev.put(x)
    sliced[(1,)](xd, out, 3, 8)
    want = np.zeros((8, 16))
    want[:5, :12] = x[3:8]
    assert_close(dev.get(out), want)
    x2 = x.copy()
    x2[4:8, 2:6] = -1.0
    assert_close(dev.get(xd), x2)


def test_array_slice_ir_and_read_only_views():
    ir = trace(sliced, f32(10, 12), f32(8, 16), 3, 8)
    assert ir.count("tile.array_slice") == 2
    assert "-> !tile.array<?x?xf32, strides = [?, 1], align = 4>" in ir


@ct.kernel
def views(x, out, steps_out):
    tv = x.tiled_view((4, 8), padding_mode=PM.POS_INF)
    ct.store(out, (0, 0), tv.load((1, 1)))
    ct.store(out, (1, 0), ct.full((4, 8), tv.num_tiles(0) * 10 + tv.num_tiles(1),
                                  ct.float32))
    tv2 = x.tiled_view((4, 8), traversal_steps=(1, 3))
    ct.store(steps_out, (0, 0), tv2.load((ct.bid(0), 2)))


@numerics
def test_tiled_view_load_num_tiles_and_steps(dev, rng):
    x = rng.standard_normal((6, 13)).astype(np.float32)
    out = dev.poisoned((8, 8), np.float32)
    steps = dev.poisoned((4, 8), np.float32)
    views[(1,)](dev.put(x), out, steps)
    got = dev.get(out)
    want = np.full((4, 8), np.inf)
    want[:2, :5] = x[4:6, 8:13]
    assert_close(got[:4], want)
    assert_close(got[4:], np.full((4, 8), 2 * 10 + 2))
    want = np.zeros((4, 8))  # origin (0, 6); UNDETERMINED pads with 0 in tile
    want[:, :7] = x[0:4, 6:13]
    assert_close(dev.get(steps), want)


@ct.kernel
def view_store_atomic(acc, y):
    tv = acc.tiled_view(8)
    tv.atomic_store_add(ct.bid(0) % 2, ct.full((8,), 1, ct.int32))
    yv = y.tiled_view((4,), traversal_steps=(3,))
    yv.store(ct.bid(0), ct.arange(4).astype(ct.float32) + ct.bid(0) * 10)


@numerics
def test_tiled_view_store_and_atomic_store(dev):
    acc = dev.put(np.zeros(12, np.int32))
    y = dev.poisoned(12, np.float32)
    view_store_atomic[(4,)](acc, y)
    assert dev.get(acc).tolist() == [2] * 8 + [2] * 4
    got = dev.get(y)
    # block b writes [3b, 3b+4), so 3b is also block b-1's: check the others
    for b in range(4):
        assert got[3 * b + 1] == 10 * b + 1 and got[3 * b + 2] == 10 * b + 2
    assert got[0] == 0


@ct.kernel
def raw(x, out):
    mem = x.get_raw_memory()
    off = ct.arange(16) * 3
    t = mem.load_offset(off, mask=off < 40, padding_value=-1.0, latency=2)
    ct.store(out, (0,), t)
    mem.store_offset(off + 1, t * 2.0, mask=off < 30)
    mem.atomic_add_offset(2, 0.5, memory_order=MO.RELAXED, memory_scope=MS.BLOCK)


@numerics
def test_raw_memory_offsets_ignore_strides(dev, rng):
    base = rng.standard_normal((8, 6)).astype(np.float32)
    flat = base.reshape(-1).copy()
    xd = dev.put(base)
    out = dev.poisoned(16, np.float32)
    raw[(1,)](xd, out)
    off = np.arange(16) * 3
    want = np.where(off < 40, flat[np.minimum(off, 47)], -1.0)
    assert_close(dev.get(out), want)
    flat2 = flat.copy()
    for o, v in zip(off, want):
        if o < 30:
            flat2[o + 1] = 2 * v
    flat2[2] += 0.5
    assert_close(dev.get(xd).reshape(-1), flat2)


@ct.kernel
def raw_cas(x, old):
    mem = x.get_raw_memory()
    off = ct.arange(8)
    r = mem.atomic_cas_offset(off, 0, 5, mask=off % 2 == 0)
    ct.store(old, (0,), r)
    mem.atomic_max_offset(off + 8, off, mask=off < 4)


@numerics
def test_raw_memory_atomics(dev):
    x = dev.put(np.array([0, 0, 1, 1, 0, 0, 3, 3] + [2] * 8, np.int32))
    old = dev.poisoned(8, np.int32)
    raw_cas[(1,)](x, old)
    assert dev.get(old).tolist() == [0, 0, 1, 0, 0, 0, 3, 0]
    assert dev.get(x).tolist() == [5, 0, 1, 1, 5, 0, 3, 3] + [2, 2, 2, 3] + [2] * 4


# -- num_tiles, assume_divisible_by -------------------------------------------

@ct.kernel
def counts(x, out):
    n = ct.assume_divisible_by(x.shape[1], 1)
    a = ct.num_tiles(x, 0, shape=(4, 8))
    b = ct.num_tiles(x, 1, shape=(4, 8))
    c = ct.num_tiles(x, 0, shape=(4, 8), order="F")  # tile axis 0 walks array axis 1
    ct.store(out, (0,), ct.full((4,), a * 10000 + b * 100 + c, ct.int32) + n * 0)


@numerics
def test_num_tiles_and_assume_divisible_by(dev):
    out = dev.poisoned(4, np.int32)
    counts[(1,)](dev.put(f32(42, 64)), out)
    assert dev.get(out).tolist() == [11 * 10000 + 8 * 100 + 16] * 4


def test_assume_divisible_by_checks():
    assert ct.assume_divisible_by(128, 64) == 128
    for bad, err in [((128, 0), ct.TileValueError), ((127, 2), ct.TileValueError),
                     ((1.5, 2), ct.TileTypeError)]:
        with pytest.raises(err):
            ct.assume_divisible_by(*bad)


# -- the GPU lowering: orderings and scopes in PTX (sm_90, ptxas, no GPU) ---------

def _ptx(kernel, *args):
    from tile import backend
    mod = backend.load()
    ir = trace(kernel, *args)
    try:
        k = mod.compile(ir, "sm_90", {"num_warps": 4, "opt_level": 3, "dump_dir": "",
                                      "always_compile": True})
    except Exception as e:  # no GPU backend or ptxas here
        if "sm_90" in str(e) or "ptxas" in str(e) or "not built" in str(e):
            pytest.skip(f"no sm_90 compile here: {e}")
        raise
    return k.asm["ptx"]


def _gpu_ready():
    try:
        from tile import backend
        return backend.load() is not None
    except Exception:
        return False


gpu_compile = pytest.mark.skipif(not _gpu_ready(), reason="needs _tile")


@ct.kernel
def ptx_orders(x, flag, out):
    t = ct.load(x, (0,), (128,), memory_order=MO.ACQUIRE, memory_scope=MS.DEVICE)
    ct.store(out, (0,), t, memory_order=MO.RELEASE, memory_scope=MS.BLOCK)
    u = ct.load(x, (1,), (128,), memory_order=MO.RELAXED, memory_scope=MS.SYS)
    ct.store(out, (1,), u)


@gpu_compile
def test_ptx_load_store_orderings():
    ptx = _ptx(ptx_orders, f32(256), np.zeros(4, np.int32), f32(256))
    assert "ld.acquire.gpu.global" in ptx
    assert "st.release.cta.global" in ptx
    assert "ld.relaxed.sys.global" in ptx
    assert ptx.count("st.global") >= 1  # the weak store stays weak


@ct.kernel
def ptx_relaxed_block(flag):
    ct.atomic_add(flag, ct.arange(128), 1, memory_order=MO.RELAXED, memory_scope=MS.BLOCK)


@gpu_compile
def test_ptx_relaxed_block_atomic_has_no_fence_or_barrier():
    ptx = _ptx(ptx_relaxed_block, np.zeros(128, np.int32))
    assert "atom.relaxed.cta.global.add.u32" in ptx
    assert "fence" not in ptx and "bar.sync" not in ptx and "barrier" not in ptx


@ct.kernel
def ptx_sys(flag):
    ct.atomic_add(flag, ct.arange(128), 1, memory_order=MO.ACQ_REL, memory_scope=MS.SYS)
    ct.atomic_cas(flag, (0,), 0, 1, memory_order=MO.ACQUIRE, memory_scope=MS.BLOCK)
    ct.atomic_xchg(flag, (1,), 2)  # the default: acq_rel at gpu scope


@gpu_compile
def test_ptx_scopes_of_atomics():
    ptx = _ptx(ptx_sys, np.zeros(128, np.int32))
    assert "atom.relaxed.sys.global.add.u32" in ptx
    assert "fence.acq_rel.sys" in ptx
    assert "atom.acquire.cta.global.cas.b32" in ptx
    assert "fence.acq_rel.gpu" in ptx and "atom.global.exch.b32" in ptx


@gpu_compile
def test_ptx_views_compile():
    ptx = _ptx(sliced, f32(10, 12), f32(8, 16), 3, 8)
    assert "st.global" in ptx
    _ptx(raw, f32(8, 6), f32(16))
    _ptx(views, f32(6, 13), f32(8, 8), f32(4, 8))


@ct.kernel
def view_writes(x, y, z):
    t = ct.load(x.slice(0, 1, 5), (0,), (4,))
    ct.store(y.slice(0, 0, 4), (0,), t)
    z.get_raw_memory().store_offset(ct.arange(4), t)


@numerics
def test_views_write_the_viewed_array():
    # what a launch checks read-only arrays against: a view's writes are its array's
    assert view_writes.compile(f32(8), f32(8), f32(8)).written == frozenset({"y", "z"})
