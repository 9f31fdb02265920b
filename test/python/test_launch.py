"""The launch path, specialization keys and the dispatch cache, with a
stand-in for tile._tile (these run without C++)."""

import contextlib
import importlib
import sys
import types

import numpy as np
import pytest

import tile

tile_backend = importlib.import_module("tile.backend")
tile_kernel = importlib.import_module("tile.kernel")  # `tile.kernel` is the decorator
from tilehelp import LAUNCHERS, fake_tile, line_of


@pytest.fixture(params=LAUNCHERS)
def fake(request, monkeypatch):
    """FakeTile as tile._tile, behind the Python launcher and behind the C
    dispatcher (`_tile.Dispatcher` of the build, when there is one)."""
    return fake_tile(monkeypatch, request.param)


def make_vadd(**opts):
    @tile.kernel(**opts)
    def vadd(x, y, out, n, scale, flag, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        r = tile.where(flag, a + b * scale, a)
        tile.store(out, index=(i,), tile=r + n)
    return vadd


def ptr(a):
    return a.__array_interface__["data"][0]


def test_flat_arguments_and_grid(fake):
    k = make_vadd()
    x, y, out = (np.zeros(1000, np.float32) for _ in range(3))
    k[(4,)](x, y, out, 7, 0.5, True, BLOCK=256)
    (launch,) = fake.launches
    grid, args, stream = launch
    assert grid == (4, 1, 1) and stream == 0
    assert args == (ptr(x), 1000, 1, ptr(y), 1000, 1, ptr(out), 1000, 1, 7, 0.5, 1)
    assert fake.compiled[0].target == "cpu"


def test_grid_forms(fake):
    k = make_vadd()
    x = np.zeros(1000, np.float32)
    run = lambda g: k[g](x, x, x, 3, 1.0, False, BLOCK=256)  # noqa: E731
    for g, want in [(5, (5, 1, 1)), ((5,), (5, 1, 1)), ((2, 3), (2, 3, 1)),
                    ((1, 2, 3), (1, 2, 3)), ([3], (3, 1, 1)), (np.int64(4), (4, 1, 1)),
                    ((np.int32(2), 2), (2, 2, 1)),
                    (lambda meta: (tile.cdiv(1000, meta["BLOCK"]),), (4, 1, 1))]:
        run(g)
        assert fake.launches[-1][0] == want, g
    n = len(fake.launches)
    run((0,))
    assert len(fake.launches) == n  # an empty grid launches nothing
    with pytest.raises(tile.TileLaunchError, match="1 to 3"):
        run((1, 1, 1, 1))
    with pytest.raises(tile.TileLaunchError, match="negative"):
        run((-1,))
    tile.launch(k, (6,), x, x, x, 3, 1.0, False, BLOCK=256)
    assert fake.launches[-1][0] == (6, 1, 1)


def test_same_key_compiles_once(fake):
    k = make_vadd()
    a = [np.zeros(1024, np.float32) for _ in range(6)]
    k[(1,)](a[0], a[1], a[2], 32, 1.0, True, BLOCK=128)
    k[(1,)](a[3], a[4], a[5], 48, 2.0, False, BLOCK=128)   # same key
    assert len(fake.compiled) == 1 and k.compile_count == 1
    assert len(fake.launches) == 2
    k[(1,)](a[3], a[4], a[5], 47, 2.0, False, BLOCK=128)   # n % 16 != 0
    k[(1,)](a[3], a[4], a[5], 1, 2.0, False, BLOCK=128)    # n == 1
    k[(1,)](a[3], a[4], a[5], 47, 2.0, False, BLOCK=64)    # another Constant
    assert len(fake.compiled) == 4
    assert "%n = arith.constant 1 : i32" in fake.compiled[2].asm["fused"]


def test_array_properties_in_the_key(fake):
    k = make_vadd()
    base = np.zeros(4096, np.float32)

    def ir_for(x):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=16)
        return fake.compiled[-1].asm["fused"]

    assert "?xf32, strides = [1], align = 16, div = 16>" in ir_for(base[:1024])
    assert "?xf32, strides = [1], align = 4, div = 16>" in ir_for(base[1:1025])
    assert "?xf32, strides = [1], align = 16>" in ir_for(base[:1000])
    assert "?xf32, align = 16, div = 16>" in ir_for(base[::4])
    assert "?xf32, align = 4, div = 16>" in ir_for(base[::2][:1024])
    assert len(fake.compiled) == 5
    ir_for(base[16:1040])   # same properties as base[:1024]
    assert len(fake.compiled) == 5
    k[(1,)](base.astype(np.float16), base.astype(np.float16), base.astype(np.float16),
            3, 1.0, True, BLOCK=16)
    assert len(fake.compiled) == 6 and "f16" in fake.compiled[-1].asm["fused"]


def test_compile_and_asm(fake):
    k = make_vadd(num_warps=8, opt_level=2)
    x = np.zeros(1024, np.float32)
    ck = k.compile(x, x, x, 3, 1.0, True, BLOCK=128)
    assert ck.asm["tile"] == ck.ir and ck.asm["llvm"] == "; llvm"
    assert ck.num_warps == 8 and ck.shared_mem == 128
    opts = fake.compiled[0].options
    assert opts == {"num_warps": 8, "opt_level": 2, "num_stages": 0, "dump_dir": "",
                    "always_compile": False, "mma_pipeline": "tma",
                    "warpgroup_mma": True, "nvptx_register_scheduling": True,
                    "warp_specialize": "attention", "stage_stores": True,
                    "ping_pong": False, "mma_overlap": True, "late_ops_first": False,
                    "tied_fence": True,
                    "split_masks": True, "bulk_reduce": False,
                    "staged_mma": False, "defer_mma_waits": False, "move_deferred_mmas": True,
                    "delay_staged_mma": False,
                    "tma_stores": True,
                    "prefetch_tmaps": False,
                    "ws_registers": (40, 232)}
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)  # reuses the compiled kernel
    assert len(fake.compiled) == 1


def test_environment_options(fake, monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("TILE_ALWAYS_COMPILE", "1")
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k.compile(x, x, x, 3, 1.0, True, BLOCK=128)
    opts = fake.compiled[0].options
    assert opts["dump_dir"] == str(tmp_path) and opts["always_compile"] is True
    assert opts["num_warps"] == 0 and opts["opt_level"] == 3
    monkeypatch.setenv("TILE_WS_REGISTERS", " 24, 240")
    make_vadd().compile(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.compiled[-1].options["ws_registers"] == (24, 240)


def test_kernel_register_split_hint_wins(fake, monkeypatch):
    """@tile.kernel(ws_registers=(P, C)) sets the split of that kernel's
    compiles over TILE_WS_REGISTERS; replace_hints and tile.Config carry
    it; a bad pair is refused where it is written."""
    monkeypatch.setenv("TILE_WS_REGISTERS", "40,232")
    x = np.zeros(1024, np.float32)
    make_vadd(ws_registers=(24, 240)).compile(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.compiled[-1].options["ws_registers"] == (24, 240)
    k = make_vadd().replace_hints(ws_registers=[32, 224])
    assert k.ws_registers == (32, 224)
    k.compile(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.compiled[-1].options["ws_registers"] == (32, 224)
    make_vadd().compile(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.compiled[-1].options["ws_registers"] == (40, 232)
    assert tile.Config({"BLOCK": 128}, ws_registers=(24, 240)).hints() == {
        "ws_registers": (24, 240)}
    for bad in ((24, 236), (16, 240), (24,), "24,240", (24.0, 240)):
        with pytest.raises(tile.TileValueError, match="ws_registers"):
            make_vadd(ws_registers=bad)
        with pytest.raises(tile.TileValueError, match="ws_registers"):
            tile.Config({}, ws_registers=bad)


@pytest.mark.parametrize("value", ["240", "24,236", "16,240", "24,264", "a,b", "24,240,8"])
def test_bad_warpgroup_register_split_is_refused(fake, monkeypatch, value):
    """TILE_WS_REGISTERS must be P,C, multiples of 8 from 24 to 256
    (setmaxnreg's range): anything else names the variable, not a crash in
    the compiler."""
    monkeypatch.setenv("TILE_WS_REGISTERS", value)
    x = np.zeros(1024, np.float32)
    with pytest.raises(tile.TileValueError, match="TILE_WS_REGISTERS"):
        make_vadd().compile(x, x, x, 3, 1.0, True, BLOCK=128)


def test_backend_selection(fake, monkeypatch):
    x = np.zeros(1024, np.float32)
    fake.gpus = 1
    assert tile.default_backend() == "cuda"
    k = make_vadd()
    with pytest.raises(tile.TileLaunchError, match="NumPy array"):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    ck = make_vadd().compile(x, x, x, 3, 1.0, True, BLOCK=128)  # compile needs no device
    assert ck.target == "sm_90"
    fake.capability = (8, 0)
    assert make_vadd().compile(x, x, x, 3, 1.0, True, BLOCK=128).target == "sm_80"
    monkeypatch.setenv("TILE_BACKEND", "cpu")
    assert tile.default_backend() == "cpu"
    make_vadd()[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.compiled[-1].target == "cpu"
    fake.gpus = 0
    monkeypatch.delenv("TILE_BACKEND")
    assert tile.default_backend() == "cpu"
    assert make_vadd(backend="cuda").compile(x, x, x, 3, 1.0, True, BLOCK=128).target == "sm_80"
    monkeypatch.setenv("TILE_BACKEND", "tpu")
    with pytest.raises(tile.TileLaunchError, match="unknown backend"):
        make_vadd()[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)


def test_cpu_array_on_cuda_names_argument_and_line(fake):
    fake.gpus = 1
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    with pytest.raises(tile.TileLaunchError) as e:
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)  # @launch
    msg = str(e.value)
    assert "argument 'x'" in msg and "vadd" in msg and "CUDA" in msg
    assert e.value.filename == __file__
    assert e.value.lineno == line_of(test_cpu_array_on_cuda_names_argument_and_line, "@launch")
    assert "TILE_BACKEND=cpu" in msg


def test_streams(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k[(1,)](x, x, x, 3, 1.0, True, stream=1234, BLOCK=128)
    assert fake.launches[-1][2] == 1234
    k[(1,)](x, x, x, 3, 1.0, True, stream=types.SimpleNamespace(cuda_stream=77), BLOCK=128)
    assert fake.launches[-1][2] == 77


def test_keyword_arguments_and_defaults(fake):
    @tile.kernel
    def k(x, out, n=5, BLOCK: tile.Constant[int] = 64):
        tile.store(out, index=(0,), tile=tile.load(x, index=(0,), shape=(BLOCK,)) + n)

    x = np.zeros(1024, np.float32)
    k[(1,)](x, out=x)
    assert fake.launches[-1][1][-1] == 5
    k[(1,)](x, x, n=9, BLOCK=64)
    assert fake.launches[-1][1][-1] == 9 and len(fake.compiled) == 1
    k[(1,)](out=x, x=x, BLOCK=128)
    assert len(fake.compiled) == 2


def test_missing_tile_module(monkeypatch):
    monkeypatch.setattr(tile_backend, "_module", None)
    monkeypatch.setattr(tile_backend, "_searched", True)
    monkeypatch.setattr(tile_kernel, "_binaries", {})
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    ck = k.compile(x, x, x, 3, 1.0, True, BLOCK=128)  # tracing needs no C++
    assert set(ck.asm) == {"tile"}
    with pytest.raises(tile.TileLaunchError, match="not built"):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)


# -- torch, CUDA array interface, DLPack ---------------------------------------

class FakeTensor:
    """What the launch path reads from a torch.Tensor."""

    def __init__(self, n, dtype="float32", cuda=True, addr=1 << 32):
        self.shape = (n,)
        self._stride = (1,)
        self.dtype = FakeDType(dtype)
        self.is_cuda = cuda
        self.device = "cuda:0" if cuda else "cpu"
        self._ptr = addr

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return int(self.device[5:]) if self.is_cuda else -1

    def stride(self):
        return self._stride


class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, o):
        return isinstance(o, FakeDType) and o.name == self.name


@pytest.fixture
def fake_torch(monkeypatch):
    mod = types.ModuleType("torch")
    mod.Tensor = FakeTensor
    mod._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 4242 + dev,
                                   _cuda_getDevice=lambda: 0)
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


def test_torch_tensors_use_the_current_stream(fake, fake_torch):
    fake.gpus = 1
    k = make_vadd()
    x = FakeTensor(1024)
    k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128)
    grid, args, stream = fake.launches[-1]
    assert stream == 4242 and args[:3] == (1 << 32, 1024, 1)
    k[(2,)](x, x, x, 3, 1.0, True, stream=5, BLOCK=128)
    assert fake.launches[-1][2] == 5
    with pytest.raises(tile.TileLaunchError, match="argument 'y'.*cpu"):
        k[(2,)](x, FakeTensor(1024, cuda=False), x, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="argument 'out'.*complex64"):
        k[(2,)](x, x, FakeTensor(1024, "complex64"), 3, 1.0, True, BLOCK=128)


def test_torch_stream_is_read_on_every_launch(fake, fake_torch):
    """`with torch.cuda.stream(s)` or a device switch between two launches:
    each launch asks torch again (nothing about the stream is cached)."""
    fake.gpus = 2
    state = {"dev": 0, "stream": {0: 0, 1: 0}, "guards": []}
    fake_torch._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda dev: state["stream"][dev],
        _cuda_getDevice=lambda: state["dev"])
    fake_torch.cuda = types.SimpleNamespace(
        device=lambda i: state["guards"].append(i) or contextlib.nullcontext())
    k = make_vadd()
    x = FakeTensor(1024)
    go = k[(2,)]
    for _ in range(2):  # the second call is a dispatch-cache hit
        go(x, x, x, 3, 1.0, True, BLOCK=128)
        assert fake.launches[-1][2] == 0  # the default (legacy) stream
    state["stream"][0] = 0x7777  # a user stream made current
    go(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.launches[-1][2] == 0x7777
    state["dev"], state["stream"][1] = 1, 0x8888  # torch.cuda.set_device(1)
    go(x, x, x, 3, 1.0, True, BLOCK=128)
    # Tensors on cuda:0 launch on device 0 (its current stream, device 0 current).
    assert fake.launches[-1][2] == 0x7777 and state["guards"] == [0]
    x1 = FakeTensor(1024)
    x1.device = "cuda:1"
    go(x1, x1, x1, 3, 1.0, True, BLOCK=128)
    assert fake.launches[-1][2] == 0x8888 and state["guards"] == [0]
    with pytest.raises(tile.TileLaunchError, match="'x' on cuda:1, 'y' on cuda:0"):
        go(x1, x, x, 3, 1.0, True, BLOCK=128)
    state["dev"], state["stream"][0] = 0, 0  # back to the default stream
    go(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.launches[-1][2] == 0
    go(x, x, x, 3, 1.0, True, BLOCK=128, stream=5)  # an explicit stream wins
    assert fake.launches[-1][2] == 5


def test_each_device_compiles_for_its_architecture(fake, fake_torch):
    """Tensors on cuda:N compile for device N's architecture (issue 21): an
    sm_90 and an sm_80 GPU in one program each get their own binary; two
    GPUs of one architecture share it (one compile)."""
    fake.gpus = 3
    fake.capability = {0: (9, 0), 1: (8, 0), 2: (9, 0)}
    fake_torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0,
                                          _cuda_getDevice=lambda: 0)
    fake_torch.cuda = types.SimpleNamespace(device=lambda i: contextlib.nullcontext())
    k = make_vadd()
    on = {}
    for dev in (0, 1, 2):
        on[dev] = FakeTensor(1024)
        on[dev].device = f"cuda:{dev}"
    k[(2,)](on[0], on[0], on[0], 3, 1.0, True, BLOCK=128)
    assert [c.target for c in fake.compiled] == ["sm_90"]
    k[(2,)](on[1], on[1], on[1], 3, 1.0, True, BLOCK=128)
    assert [c.target for c in fake.compiled] == ["sm_90", "sm_80"]
    k[(2,)](on[2], on[2], on[2], 3, 1.0, True, BLOCK=128)
    assert [c.target for c in fake.compiled] == ["sm_90", "sm_80"]  # device 0's binary
    assert fake.compiled[0].launches and fake.compiled[1].launches
    # kernel.compile() keys the tensors' device as a launch does: the same
    # CompiledKernel, compiled for that device.
    assert k.compile(on[1], on[1], on[1], 3, 1.0, True, BLOCK=128).target == "sm_80"
    assert len(fake.compiled) == 2


def test_threads_driving_different_devices(fake, fake_torch):
    """Two threads, each launching one kernel on its own GPU (cuda:0 sm_90,
    cuda:1 sm_80) at once from the first call on: one compile per device,
    every launch on its thread's device and stream with its own tensors."""
    import threading

    fake.gpus = 2
    fake.capability = {0: (9, 0), 1: (8, 0)}
    current = threading.local()
    fake_torch._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda dev: 100 + dev,
        _cuda_getDevice=lambda: getattr(current, "dev", 0))
    fake_torch.cuda = types.SimpleNamespace(device=lambda i: contextlib.nullcontext())
    k = make_vadd()
    start = threading.Barrier(2)
    errors = []

    def drive(dev):
        try:
            current.dev = dev
            x = FakeTensor(1024)
            x.device = f"cuda:{dev}"
            start.wait()
            for _ in range(200):
                k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=drive, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(c.target for c in fake.compiled) == ["sm_80", "sm_90"]
    for c in fake.compiled:
        dev = 0 if c.target == "sm_90" else 1
        assert len(c.launches) == 200
        assert {stream for _, _, stream in c.launches} == {100 + dev}


def test_grids_computed_per_call(fake):
    """kernel[(cdiv(n, BLOCK),)] builds a new tuple per call: equal grids
    launch the same, other values their own grid."""
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    for n in (1024, 1024, 4096, 1024, 2 ** 37):  # 2**30 blocks: within the x limit
        grid = (tile.cdiv(n, 128),)
        k[grid](x, x, x, 3, 1.0, True, BLOCK=128)
        assert fake.launches[-1][0] == (tile.cdiv(n, 128), 1, 1)
    k[(2, 3)](x, x, x, 3, 1.0, True, BLOCK=128)
    k[(2, 4)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.launches[-1][0] == (2, 4, 1)
    k[(2, True)](x, x, x, 3, 1.0, True, BLOCK=128)  # not an exact int
    assert fake.launches[-1][0] == (2, 1, 1)
    assert callable(k.__getitem__((5,)))  # a bound method, as a function's
    if k._dispatcher is not None:  # the C launcher is reused, not rebuilt
        assert k[(int("7"),)] is k[(int("7"),)]


class CudaArray:
    def __init__(self, shape, typestr, strides=None, addr=1 << 33):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (addr, False), "strides": strides,
                                         "version": 3}


def test_cuda_array_interface(fake):
    fake.gpus = 1
    k = make_vadd()
    x = CudaArray((1024,), "<f4")
    s = CudaArray((512,), "<f4", strides=(8,))
    k[(1,)](x, s, x, 3, 1.0, True, BLOCK=128)
    grid, args, stream = fake.launches[-1]
    assert args[:6] == (1 << 33, 1024, 1, 1 << 33, 512, 2) and stream == 0
    assert "%y: !tile.array<?xf32, align = 4, div = 16>" in fake.compiled[-1].asm["fused"]
    fake.gpus = 0
    with pytest.raises(tile.TileLaunchError, match="CPU backend"):
        make_vadd()[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)


class DLPackOnly:
    """Only the DLPack protocol (as JAX arrays offer), backed by NumPy."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack(fake):
    k = make_vadd()
    x = np.arange(2048, dtype=np.float32)[::2]
    k[(1,)](DLPackOnly(x), DLPackOnly(x), DLPackOnly(x), 3, 1.0, True, BLOCK=128)
    grid, args, stream = fake.launches[-1]
    assert args[:3] == (ptr(x), 1024, 2)
    fake.gpus = 1
    with pytest.raises(tile.TileLaunchError, match="DLPack device type 1"):
        make_vadd()[(1,)](DLPackOnly(x), x, x, 3, 1.0, True, BLOCK=128)


def test_repeated_launches_reuse_the_compiled_kernel(fake, fake_torch):
    """Launches after the first go straight to the loaded kernel: no trace, no
    compile, no new native kernel. (Launch speed is measured on the GPU by
    bench/bench.py and bench/launch_profile.py, never by a timed unit test.)"""
    fake.gpus = 1

    @tile.kernel
    def vadd(x, y, out, n, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(BLOCK,)) + n)

    x, y, out = FakeTensor(1 << 20), FakeTensor(1 << 20), FakeTensor(1 << 20)
    grid = (4096,)
    vadd[grid](x, y, out, 3, BLOCK=256)
    native = fake.compiled[-1]
    launches = []
    native.launch = lambda grid, args, stream=0: launches.append(grid)
    vadd.cache.clear()
    vadd[grid](x, y, out, 3, BLOCK=256)
    compiled = len(fake.compiled)
    for _ in range(200):
        vadd[grid](x, y, out, 3, BLOCK=256)
    assert len(fake.compiled) == compiled, "a repeated launch compiled again"
    assert len(launches) == 201 and all(tuple(g) == (4096, 1, 1) or tuple(g) == (4096,)
                                        for g in launches)


# -- the dispatch cache after a first call (the C dispatcher's own cache) -------

def test_changed_dtype_stride_and_alignment_redispatch(fake):
    k = make_vadd()
    base = np.zeros(4096, np.float32)
    run = lambda a: k[(1,)](a, a, a, 3, 1.0, True, BLOCK=16)  # noqa: E731
    run(base[:1024])
    run(base[16:1040])                      # same key: no compile
    assert len(fake.compiled) == 1
    assert fake.last[1][:3] == (ptr(base[16:]), 1024, 1)
    half = np.zeros(1024, np.float16)
    run(half)                               # dtype
    assert len(fake.compiled) == 2 and "f16" in fake.compiled[-1].asm["fused"]
    run(base[::2][:1024])                   # stride: not unit any more
    assert len(fake.compiled) == 3
    assert fake.last[1][:3] == (ptr(base), 1024, 2)
    assert "%x: !tile.array<?xf32, align = 4, div = 16>" in fake.compiled[-1].asm["fused"]
    run(base[1:1025])                       # pointer no longer 16-byte aligned
    assert len(fake.compiled) == 4
    run(base[:1000])                        # extent no longer a multiple of 16
    assert len(fake.compiled) == 5
    two_d = np.zeros((64, 64), np.float32)
    k2 = tile.kernel(_copy2d)
    k2[(1,)](two_d, two_d, BLOCK=16)
    k2[(1,)](two_d.T, two_d, BLOCK=16)      # non-contiguous: the unit stride moved
    assert len(fake.compiled) == 7
    assert fake.last[1][:5] == (ptr(two_d), 64, 64, 1, 64)
    for a in (base[:1024], half, base[::2][:1024], base[1:1025], base[:1000]):
        run(a)                              # all cached now
    assert len(fake.compiled) == 7 and k.compile_count == 5
    rev = base[::-1][:1024]                 # a negative stride
    run(rev)
    run(rev)
    assert fake.last[1][:3] == (ptr(rev), 1024, -1)
    assert k.compile_count == 5              # the key of base[::2]: no unit stride, align 4
    last = fake.compiled[4].launches    # base[:1000]'s kernel
    assert len(last) == 2 and last[-1][1][:3] == (ptr(base), 1000, 1)


def _copy2d(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(0, 0), shape=(BLOCK, BLOCK))
    tile.store(out, index=(0, 0), tile=t)


def test_scalars_and_constants_after_a_cached_call(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    k[(1,)](x, x, x, 5, 2.0, False, BLOCK=128)
    assert len(fake.compiled) == 1 and fake.last[1][9:] == (5, 2.0, 0)
    for n in (1, 32, 1 << 40, (1 << 40) + 1, -3):
        k[(1,)](x, x, x, n, 2.0, False, BLOCK=128)
    assert len(fake.compiled) == 5            # + one, i32d16, i64d16, i64 (-3: i32, cached)
    assert fake.last[1][9:] == (-3, 2.0, 0)
    k[(1,)](x, x, x, 1, 2.0, False, BLOCK=128)
    assert fake.last[1][9:] == (2.0, 0)   # n == 1 is specialized away
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=64)      # another Constant
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)     # back: cached
    assert len(fake.compiled) == 6
    with pytest.raises(tile.TileTypeError, match="argument 'n'.*64 bits"):
        k[(1,)](x, x, x, 1 << 70, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="(?s)Constant parameter 'BLOCK'.*unhashable"):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=[128])
    k[(1,)](x, x, x, np.int64(7), np.float32(0.5), np.bool_(True), BLOCK=np.int64(128))
    assert fake.last[1][9:] == (7, 0.5, 1)
    assert k.compile_count == 7               # (np.int64, 128): another key, the same IR


def test_stream_and_grid_after_a_cached_call(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    go = k[(3,)]
    go(x, x, x, 3, 1.0, True, BLOCK=128)
    go(x, x, x, 3, 1.0, True, BLOCK=128, stream=1234)
    assert fake.last[0] == (3, 1, 1) and fake.last[2] == 1234
    go(x, x, x, 3, 1.0, True, BLOCK=128, stream=types.SimpleNamespace(cuda_stream=77))
    assert fake.last[2] == 77
    go(x, x, x, 3, 1.0, True, BLOCK=128)
    assert fake.last[2] == 0
    with pytest.raises(tile.TileTypeError, match="stream"):
        go(x, x, x, 3, 1.0, True, BLOCK=128, stream="default")
    for g, want in [((2, 3), (2, 3, 1)), ([4], (4, 1, 1)), (7, (7, 1, 1)),
                    (lambda meta: (meta["BLOCK"] // 64,), (2, 1, 1))]:
        k[g](x, x, x, 3, 1.0, True, BLOCK=128)
        assert fake.last[0] == want, g
    n = len(fake.launches)
    k[(0,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.launches) == n
    with pytest.raises(tile.TileLaunchError, match="negative"):
        k[(2, -1)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 1


def test_cache_clear_and_bad_arguments_after_a_cached_call(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    k.cache.clear()
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert k.compile_count == 2
    del k.cache[next(iter(k.cache))]
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert k.compile_count == 3
    with pytest.raises(tile.TileTypeError, match="argument 'y'.*str"):
        k[(1,)](x, "y", x, 3, 1.0, True, BLOCK=128)  # @bad
    with pytest.raises(tile.TileTypeError) as e:
        k[(1,)](x, x, x, 3, 1.0, BLOCK=128)  # @missing
    assert "'flag'" in str(e.value) and e.value.lineno == line_of(
        test_cache_clear_and_bad_arguments_after_a_cached_call, "@missing")
    with pytest.raises(tile.TileTypeError, match="unexpected keyword"):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128, BLOK=3)
    with pytest.raises(tile.TileTypeError, match="takes 7 arguments but 8"):
        k[(1,)](x, x, x, 3, 1.0, True, 128, 9)
    ck = next(iter(k.cache.values()))

    def boom(grid, args, stream):
        raise RuntimeError("CUDA_ERROR_LAUNCH_FAILED")

    ck._launch = boom
    with pytest.raises(tile.TileLaunchError) as e:
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)  # @boom
    assert e.value.kernel == "vadd" and "CUDA_ERROR_LAUNCH_FAILED" in str(e.value)
    assert e.value.filename == __file__ and e.value.lineno == line_of(
        test_cache_clear_and_bad_arguments_after_a_cached_call, "@boom")
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_torch_tensors_after_a_cached_call(fake, fake_torch):
    fake.gpus = 1
    k = make_vadd()
    x = FakeTensor(1024)
    k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128)
    k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 1 and fake.last[2] == 4242
    h = FakeTensor(1024, "float16", addr=(1 << 32) + 64)
    k[(2,)](h, h, h, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 2 and fake.last[1][:3] == ((1 << 32) + 64, 1024, 1)
    s = FakeTensor(512)
    s._stride = (2,)
    k[(2,)](x, s, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 3 and fake.last[1][3:6] == (1 << 32, 512, 2)
    x.shape = (1000,)                        # the same tensor, resized
    k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 4 and fake.last[1][:3] == (1 << 32, 1000, 1)
    k[(2,)](x, x, x, 3, 1.0, True, BLOCK=128, stream=9)
    assert fake.last[2] == 9
    with pytest.raises(tile.TileLaunchError, match="argument 'out'.*cpu"):
        k[(2,)](x, x, FakeTensor(1000, cuda=False), 3, 1.0, True, BLOCK=128)


def test_cuda_array_interface_after_a_cached_call(fake):
    fake.gpus = 1
    k = make_vadd()
    x = CudaArray((1024,), "<f4")
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 1
    h = CudaArray((1024,), "<f2", strides=(4,))
    k[(1,)](x, h, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.compiled) == 2 and fake.last[1][3:6] == (1 << 33, 1024, 2)
    with pytest.raises(tile.TileTypeError, match="argument 'y'.*stride of 3 bytes"):
        k[(1,)](x, CudaArray((16,), "<f4", strides=(3,)), x, 3, 1.0, True, BLOCK=128)
    with pytest.raises(tile.TileTypeError, match="argument 'out'.*complex64"):
        k[(1,)](x, x, CudaArray((16,), "<c8"), 3, 1.0, True, BLOCK=128)


def test_dispatcher_serves_repeated_calls(fake):
    k = make_vadd()
    x = np.zeros(1024, np.float32)
    for _ in range(10):
        k[(1,)](x, x, x, 3, 1.0, True, BLOCK=128)
    assert len(fake.launches) == 10
    d = k._dispatcher
    if d is None:
        assert not hasattr(fake, "Dispatcher")
        return
    stats = d.stats()
    assert stats["hits"] == 9 and stats["misses"] == 1 and stats["entries"] == 1


def test_constants_of_other_types_after_a_cached_call(fake):
    @tile.kernel
    def k(x, out, SCALE: tile.Constant[float], SHAPE: tile.Constant[tuple],
          NAME: tile.Constant[str] = "a"):
        t = tile.load(x, index=(0,), shape=SHAPE)
        tile.store(out, index=(0,), tile=t * SCALE if NAME == "a" else t)

    x = np.zeros(64, np.float32)
    for _ in range(2):
        k[(1,)](x, x, 2.0, (16,))
        k[(1,)](x, x, 2.0, (16,), NAME="b")
        k[(1,)](x, x, 0.5, (16,))
        k[(1,)](x, x, 2.0, (32,))
        k[(1,)](x, x, float("nan"), (16,))
    assert k.compile_count == 5   # float Constants are keyed by their bits: one NaN key
    k[(1,)](x, x, 2, (16,))       # (int, 2) is not (float, 2.0)
    assert k.compile_count == 6
    assert len(fake.log) == 11
