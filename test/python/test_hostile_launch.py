"""Issue 13, launch side: arguments a careless or hostile caller passes.

Big-endian arrays, DLPack capsules of temporaries, read-only arrays written
by a kernel, grids that overflow or exceed the hardware limits, exporters
that raise, duplicate arguments. The FakeTile tests run through both
launchers (the generated Python one and the C dispatcher); the numerics
tests run real kernels on the backend `_tile` provides.
"""

import gc

import numpy as np
import pytest

import tile
from tilehelp import LAUNCHERS, Device, fake_tile, line_of


@pytest.fixture(params=LAUNCHERS)
def fake(request, monkeypatch):
    return fake_tile(monkeypatch, request.param)


@pytest.fixture
def dev():
    return Device()


def make_add():
    @tile.kernel
    def add(x, y, out, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=a + b)
    return add


def make_vadd():
    @tile.kernel
    def vadd(x, y, out, n, scale, flag, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        r = tile.where(flag, a + b * scale, a)
        tile.store(out, index=(i,), tile=r + n)
    return vadd


def ptr(a):
    return a.__array_interface__["data"][0]


class CudaArray:
    def __init__(self, shape, typestr, strides=None, addr=1 << 33, readonly=False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (addr, readonly), "strides": strides,
                                         "version": 3}


# -- item 3: byte order -------------------------------------------------------

@pytest.mark.parametrize("typestr", [">f4", ">i4", ">f2", ">i8"])
def test_big_endian_numpy_is_rejected(fake, typestr):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    big = np.zeros(1024, np.dtype(typestr))
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)  # a cached native call first
    for args, name in [((x, big, x), "y"), ((big, x, x), "x"), ((x, x, big), "out")]:
        with pytest.raises(tile.TileTypeError) as e:
            k[(1,)](*args, 3, 1.0, True, BLOCK=128)  # @call
        msg = str(e.value)
        assert f"argument '{name}'" in msg and "byte order" in msg, msg
        assert e.value.kernel == "vadd"
        assert e.value.lineno == line_of(test_big_endian_numpy_is_rejected, "@call")
        assert ".astype(" in e.value.hint and "byteswap" in e.value.hint
    assert len(fake.launches) == 1
    with pytest.raises(tile.TileTypeError, match="byte order"):
        k.compile(x, big, x, 3, 1.0, True, BLOCK=128)


def test_single_byte_and_native_orders_are_fine(fake):
    k = make_vadd()
    for dt in ["|i1", "|u1", "|b1", "<f4", "=f4", "<i2"]:
        a = np.zeros(256, np.dtype(dt))
        k[(1,)](a, a, a, 3, 1.0, True, BLOCK=128)
        assert fake.launches[-1][1][0] == ptr(a)


def test_big_endian_cuda_array_interface_is_rejected(fake):
    fake.gpus = 1
    k = make_vadd()
    x = CudaArray((1024,), "<f4")
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="argument 'y'.*byte order"):
        k[(1,)](x, CudaArray((1024,), ">f4"), x, 3, 1.0, True, BLOCK=128)
    k[(1,)](x, CudaArray((1024,), "|i1"), x, 3, 1.0, True, BLOCK=128)
    assert len(fake.launches) == 2


@pytest.mark.numerics
def test_big_endian_never_runs(launcher, dev):
    if dev.backend != "cpu":
        pytest.skip("NumPy arrays are host memory")
    k = make_add()
    a = np.arange(256, dtype=">f4")
    out = np.full(256, np.nan, np.float32)
    with pytest.raises(tile.TileTypeError, match="argument 'x'.*byte order"):
        k[(2,)](a, a.astype("<f4"), out, BLOCK=128)
    assert np.isnan(out).all()
    k[(2,)](a.astype("<f4"), a.astype("<f4"), out, BLOCK=128)
    np.testing.assert_array_equal(out, 2 * np.arange(256, dtype=np.float32))


# -- item 5: DLPack lifetime --------------------------------------------------

N_TEMP = 4096  # 16 KiB of float32: heap memory that a later malloc reuses


class TempExporter:
    """__dlpack__ hands out the capsule of a fresh array that only the
    capsule owns (as exporters that convert on the fly do)."""

    def __init__(self, make, poison=False):
        self.make = make
        self.poison = poison
        self.kept = []

    def __dlpack__(self, **kwargs):
        if self.poison:  # reuse whatever an earlier argument's capsule freed
            gc.collect()
            self.kept = [np.full(N_TEMP, -7.0, np.float32) for _ in range(64)]
        return self.make().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.make().__dlpack_device__()


class LegacyTempExporter(TempExporter):
    """An exporter that knows no keywords (DLPack before 1.0)."""

    def __dlpack__(self):
        return super().__dlpack__()


@pytest.mark.numerics
@pytest.mark.parametrize("cls", [TempExporter, LegacyTempExporter])
def test_dlpack_temporary_lives_through_the_launch(launcher, dev, cls):
    want = np.arange(N_TEMP, dtype=np.float32) + 1
    ones = np.ones(N_TEMP, np.float32)
    if dev.torch is not None:
        torch = dev.torch
        x = cls(lambda: torch.from_numpy(want).cuda())
        y = cls(lambda: torch.from_numpy(ones).cuda(), poison=True)
    else:
        x = cls(lambda: want.copy())
        y = cls(lambda: ones.copy(), poison=True)
    k = make_add()
    for _ in range(3):
        out = dev.poisoned(N_TEMP, np.float32)
        k[(N_TEMP // 256,)](x, y, out, BLOCK=256)
        np.testing.assert_array_equal(dev.get(out), want + 1)


# -- item 6: read-only arrays -------------------------------------------------

def read_only(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def make_scatter():
    @tile.kernel
    def scat(x, out, BLOCK: tile.Constant[int]):
        i = tile.arange(BLOCK)
        tile.scatter(out, (i,), tile.gather(x, (i,)) * 2)
    return scat


def make_atomic():
    @tile.kernel
    def atom(x, out, BLOCK: tile.Constant[int]):
        i = tile.arange(BLOCK)
        tile.atomic_add(out, (i,), tile.gather(x, (i,)))
    return atom


def test_written_parameters_are_known(fake):
    x = np.zeros(256, np.float32)
    add = make_add()
    assert add.compile(x, x, x, BLOCK=128).written == frozenset({"out"})
    assert make_scatter().compile(x, x, BLOCK=128).written == frozenset({"out"})
    assert make_atomic().compile(x, x, BLOCK=128).written == frozenset({"out"})


def test_read_only_output_is_rejected(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    ro = read_only(x)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)  # the writable key is cached
    k[(1,)](ro, ro, x, 3, 1.0, True, BLOCK=128)  # read-only inputs are fine
    k[(1,)](ro, ro, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.launches) == 3 and k.compile_count == 1
    for _ in range(2):
        with pytest.raises(tile.TileTypeError) as e:
            k[(1,)](x, x, ro, 3, 1.0, True, BLOCK=128)  # @ro
        msg = str(e.value)
        assert "argument 'out'" in msg and "read-only" in msg, msg
        assert e.value.kernel == "vadd"
        assert e.value.lineno == line_of(test_read_only_output_is_rejected, "@ro")
        assert "tile.store" in msg and "writeable" in e.value.hint
    assert len(fake.launches) == 3 and k.compile_count == 1


def test_read_only_cuda_arrays_and_dlpack(fake):
    fake.gpus = 1
    k = make_vadd()
    w, ro = CudaArray((1024,), "<f4"), CudaArray((1024,), "<f4", readonly=True)
    k[(1,)](ro, ro, w, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="argument 'out'.*read-only"):
        k[(1,)](w, w, ro, 3, 1.0, True, BLOCK=128)
    fake.gpus = 0
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    dl_ro = TempExporter(lambda: read_only(x))
    k[(1,)](dl_ro, dl_ro, x, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="argument 'out'.*read-only"):
        k[(1,)](x, x, dl_ro, 3, 1.0, True, BLOCK=128)


@pytest.mark.numerics
@pytest.mark.parametrize("make", [make_add, make_scatter, make_atomic])
def test_read_only_array_is_never_written(launcher, dev, make):
    if dev.backend != "cpu":
        pytest.skip("NumPy arrays are host memory")
    k = make()
    x = np.arange(128, dtype=np.float32)
    args = (x, x) if make is make_add else (x,)
    out = np.full(128, 5.0, np.float32)
    k[(1,)](*args, out, BLOCK=128)
    want = out.copy()
    ro = read_only(np.full(128, 5.0, np.float32))
    for _ in range(2):
        with pytest.raises(tile.TileTypeError, match="argument 'out'.*read-only"):
            k[(1,)](*args, ro, BLOCK=128)
        np.testing.assert_array_equal(ro, np.full(128, 5.0, np.float32))
    # read-only inputs keep working, on both the cached and a new key
    out2 = np.full(128, 5.0, np.float32)
    roargs = tuple(read_only(a) for a in args)
    k[(1,)](*roargs, out2, BLOCK=128)
    np.testing.assert_array_equal(out2, want)


# -- item 7 and 18: grids -----------------------------------------------------

@pytest.mark.parametrize("grid, what", [
    ((2**32, 2**32, 1), "x"), ((2**21,) * 3, "y"), ((2**31,), "x"), (2**31, "x"),
    ((1, 65536), "y"), ((1, 1, 65536), "z"), ((2**64,), "x"), ((1, 2**70), "y")])
def test_grid_above_the_limits(fake, grid, what):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    for _ in range(2):  # also after the bound launcher is cached
        with pytest.raises(tile.TileLaunchError) as e:
            k[grid](x, x, x, 3, 1.0, True, BLOCK=128)  # @grid
        assert f"grid dimension {what}" in str(e.value) and "limit" in str(e.value)
        assert e.value.kernel == "vadd"
        assert e.value.lineno == line_of(test_grid_above_the_limits, "@grid")
    assert fake.launches == []


def test_grid_at_the_limits(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    for g in [(2**31 - 1, 65535, 65535), (2**31 - 1,), (1, 65535), [2, 3, 65535]]:
        k[g](x, x, x, 3, 1.0, True, BLOCK=128)
        assert fake.launches[-1][0] == tuple(g) + (1,) * (3 - len(g))


@pytest.mark.parametrize("grid", [(4.5,), 4.5, "4", ("4",), (4.0,), (2, 1.0),
                                  (np.float64(4),), (None,), b"4"])
def test_grid_of_non_ints(fake, grid):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileLaunchError, match="grid") as e:
        k[grid](x, x, x, 3, 1.0, True, BLOCK=128)  # @grid
    assert e.value.kernel == "vadd"
    assert e.value.lineno == line_of(test_grid_of_non_ints, "@grid")
    assert len(fake.launches) == 1


@pytest.mark.numerics
def test_overflowing_grid_runs_nothing_silently(launcher, dev):
    @tile.kernel
    def mark(out):
        tile.store(out, index=(0,), tile=tile.full((1,), 1.0, tile.float32))

    out = dev.poisoned(1, np.float32)
    for grid in [(2**32, 2**32, 1), (2**21,) * 3]:
        with pytest.raises(tile.TileLaunchError, match="limit"):
            mark[grid](out)
    mark[(1,)](out)
    assert dev.get(out)[0] == 1.0
    # The compiled kernel itself checks too (a grid that reaches it unchecked).
    ck = next(iter(mark.cache.values()))
    flat = (out.data_ptr() if dev.torch is not None else ptr(out), 1, 1)
    for grid in [(2**32, 2**32, 1), (2**21, 2**21, 2**21), (1, 65536, 1)]:
        with pytest.raises(Exception, match="limit"):
            ck.binary.launch(grid, flat, 0)


# -- item 18: exporters that raise, duplicate arguments ------------------------

class BrokenExporter:
    def __dlpack__(self, **kwargs):
        raise RuntimeError("the exporter broke")

    def __dlpack_device__(self):
        return (1, 0)


class NotACapsule:
    def __dlpack__(self, **kwargs):
        return "not a capsule"


def test_dlpack_that_raises(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    with pytest.raises(tile.TileLaunchError) as e:
        k[(1,)](x, BrokenExporter(), x, 3, 1.0, True, BLOCK=128)  # @dl
    assert "argument 'y'" in str(e.value) and "__dlpack__" in str(e.value)
    assert isinstance(e.value.__cause__, RuntimeError)
    assert e.value.lineno == line_of(test_dlpack_that_raises, "@dl")
    with pytest.raises(tile.TileLaunchError, match="argument 'out'.*capsule"):
        k[(1,)](x, x, NotACapsule(), 3, 1.0, True, BLOCK=128)
    assert fake.launches == []


def test_duplicate_argument(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    calls = [lambda: k[(1,)](x, x, x, 3, 1.0, True, x=x, BLOCK=128),  # @dup
             lambda: k[(1,)](x, x, x, 3, 1.0, True, 128, BLOCK=128),  # @dup
             lambda: tile.launch(k, (1,), x, x, x, 3, 1.0, True, n=4, BLOCK=128)]  # @dup
    for call, name in zip(calls, ["x", "BLOCK", "n"]):
        with pytest.raises(tile.TileTypeError) as e:
            call()
        msg = str(e.value)
        assert f"'{name}'" in msg and "more than once" in msg, msg
        assert e.value.kernel == "vadd"
        assert e.value.lineno == line_of(test_duplicate_argument, "@dup") + \
            calls.index(call)
    assert len(fake.launches) == 1


class BrokenCudaArray:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("the interface broke")


def test_cuda_array_interface_that_raises(fake):
    fake.gpus = 1
    k = make_vadd()
    x = CudaArray((1024,), "<f4")
    bad = CudaArray((1024,), "<f4")
    del bad.__cuda_array_interface__["shape"]
    for arg, cause in [(BrokenCudaArray(), RuntimeError), (bad, KeyError)]:
        with pytest.raises(tile.TileLaunchError, match="argument 'y'.*__cuda_array_"
                                                       "interface__") as e:
            k[(1,)](x, arg, x, 3, 1.0, True, BLOCK=128)
        assert isinstance(e.value.__cause__, cause)
    assert fake.launches == []
