"""tile kernels inside PyTorch programs (tile.torch, docs/torch.md): custom
ops, autograd, torch.compile(fullgraph=True), CUDA graphs, streams and
devices. The CPU tests run CPU tensors on the CPU backend; `gpu` ones need
torch with CUDA. Everything skips without torch."""

import importlib.util
import os
import sys
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
# Compiled graphs of earlier runs (torch's on-disk caches) stay out of these tests.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="tile-torch-"))

import tile  # noqa: E402
import tile.torch  # noqa: E402,F401

from tilehelp import ROOT  # noqa: E402


def _load_example():
    """examples/torch_layernorm_op.py as a module (torch finds custom ops'
    functions by module name)."""
    name = "torch_layernorm_op"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(ROOT, "examples", name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return vars(sys.modules[name])


EX = _load_example()


@tile.kernel
def vadd(x, y, out, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    b = tile.load(y, index=(i,), shape=(BLOCK,))
    tile.store(out, index=(i,), tile=a + b)


@tile.kernel
def scale_inplace(x, s):
    i = tile.bid(0)
    t = tile.load(x, index=(i,), shape=(128,))
    tile.store(x, index=(i,), tile=t * s)


@tile.torch.custom_op("tile_tests::add", mutates_args=())
def add_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    vadd[(tile.cdiv(x.numel(), 128),)](x, y, out, BLOCK=128)
    return out


@tile.torch.custom_op("tile_tests::scale_", mutates_args=("x",))
def scale_op(x: torch.Tensor, s: float) -> None:
    scale_inplace[(tile.cdiv(x.numel(), 128),)](x, s)


def _dev():
    return "cuda" if tile.default_backend() == "cuda" else "cpu"


def _poisoned(*shape, dtype=torch.float32):
    return torch.full(shape, float("nan"), dtype=dtype, device=_dev())


def _rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).to(_dev())


def _ln_reference(x, w, b, eps):
    a = x.double().cpu().numpy()
    mu = a.mean(axis=1, keepdims=True)
    return (a - mu) / np.sqrt(a.var(axis=1, keepdims=True) + eps) * w.double().cpu().numpy() \
        + b.double().cpu().numpy()


pytestmark = pytest.mark.numerics


def test_custom_op_call_and_inplace():
    x, y = _rand(1000), _rand(1000, seed=1)
    got = add_op(x, y)
    np.testing.assert_allclose(got.cpu().numpy(), (x.double() + y.double()).cpu().numpy(),
                               rtol=1e-6, atol=1e-6)
    z = x.clone()
    scale_op(z, 3.0)  # 1000 is no multiple of 128: the ragged end drops out
    np.testing.assert_allclose(z.cpu().numpy(), x.double().cpu().numpy() * 3, rtol=1e-6)


def test_derived_fake_allocates_without_launching():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(300, 7)
        out = add_op(x, x)
    assert out.shape == (300, 7) and out.dtype == torch.float32


def test_opcheck():
    x, y = _rand(512), _rand(512, seed=1)
    torch.library.opcheck(add_op, (x, y))
    torch.library.opcheck(scale_op, (x.clone(), 2.0))
    xs, w, b = _rand(16, 40), _rand(40, seed=1), _rand(40, seed=2)
    torch.library.opcheck(EX["layernorm_fwd"], (xs, w, b, 1e-5))


def test_layernorm_op_forward_matches_float64():
    x, w, b = _rand(33, 100) * 2 + 1, _rand(100, seed=1), _rand(100, seed=2)
    y, mean, rstd = EX["layernorm_fwd"](x, w, b, 1e-5)
    np.testing.assert_allclose(y.cpu().numpy(), _ln_reference(x, w, b, 1e-5),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean.cpu().numpy(), x.double().mean(1).cpu().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_layernorm_autograd_against_torch(dtype):
    x = (_rand(24, 70, dtype=dtype) * 2 + 1).requires_grad_()
    w = _rand(70, dtype=dtype, seed=1).requires_grad_()
    b = _rand(70, dtype=dtype, seed=2).requires_grad_()
    dy = _rand(24, 70, dtype=dtype, seed=3)
    got = torch.autograd.grad(EX["layernorm"](x, w, b), (x, w, b), dy)
    want = torch.autograd.grad(torch.nn.functional.layer_norm(x, (70,), w, b), (x, w, b), dy)
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    for g, r in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), r.cpu().numpy(), rtol=tol, atol=tol)


def test_gradcheck_float64():
    x = (_rand(6, 20, dtype=torch.float64) * 2 + 1).requires_grad_()
    w = _rand(20, dtype=torch.float64, seed=1).requires_grad_()
    b = _rand(20, dtype=torch.float64, seed=2).requires_grad_()
    assert torch.autograd.gradcheck(lambda *a: EX["layernorm"](*a), (x, w, b))


def test_plain_launch_inside_compile_fullgraph():
    def f(x, y):
        out = torch.empty_like(x)
        vadd[(tile.cdiv(x.numel(), 128),)](x, y, out, BLOCK=128)
        return out * 2

    cf = torch.compile(f, fullgraph=True)
    for n in (1000, 4096, 3000):  # a recompile with dynamic shapes too
        x, y = _rand(n), _rand(n, seed=1)
        np.testing.assert_allclose(cf(x, y).cpu().numpy(),
                                   2 * (x.double() + y.double()).cpu().numpy(), rtol=1e-6)
    # After compiling, eager launches take the C subscript again.
    kmod = sys.modules["tile.kernel"]
    assert kmod.subscript_override is None


def test_compile_records_one_opaque_op_with_the_written_tensor():
    from torch._dynamo.testing import AotEagerAndRecordGraphs
    backend = AotEagerAndRecordGraphs()

    def f(x, y):
        out = torch.empty_like(x)
        vadd[(4,)](x, y, out, BLOCK=128)
        return out

    x, y = _rand(512), _rand(512, seed=1)
    torch.compile(f, fullgraph=True, backend=backend)(x, y)
    code = backend.fw_graphs[0].code
    assert code.count("torch.ops.tile.launch.default") == 1
    # Functionalized: only the written output is the op's mutated input.
    assert "_written_0_base_index = 0, _all_bases = [empty_like]" in code, code
    assert "read = [arg0_1, arg1_1]" in code, code


def test_inplace_launch_inside_compile_orders_with_torch_ops():
    def f(x):
        y = x + 1
        scale_inplace[(tile.cdiv(y.numel(), 128),)](y, 2.0)
        return y - 1

    x = _rand(1024)
    got = torch.compile(f, fullgraph=True)(x)
    np.testing.assert_allclose(got.cpu().numpy(), ((x.double() + 1) * 2 - 1).cpu().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_compile_forward_and_backward_of_the_layernorm_op():
    x = (_rand(32, 64) * 2 + 1).requires_grad_()
    w = _rand(64, seed=1).requires_grad_()
    b = _rand(64, seed=2).requires_grad_()

    def loss(x, w, b):
        return (EX["layernorm"](x, w, b) ** 2).sum()

    got = torch.autograd.grad(torch.compile(loss, fullgraph=True)(x, w, b), (x, w, b))
    want = torch.autograd.grad(
        (torch.nn.functional.layer_norm(x, (64,), w, b) ** 2).sum(), (x, w, b))
    for g, r in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), r.cpu().numpy(), rtol=1e-4, atol=1e-4)


def test_backward_launching_kernels_directly_compiles():
    """A register_autograd backward that launches a tile kernel itself (no
    custom op of its own) is traced into the backward graph."""
    @tile.torch.custom_op("tile_tests::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        vadd[(tile.cdiv(x.numel(), 128),)](x, x, out, BLOCK=128)
        return out

    def backward(ctx, g):
        out = torch.empty_like(g)
        vadd[(tile.cdiv(g.numel(), 128),)](g, g, out, BLOCK=128)
        return out

    double.register_autograd(backward)
    x = _rand(700).requires_grad_()
    y = torch.compile(lambda t: double(t).sum(), fullgraph=True)(x)
    (gx,) = torch.autograd.grad(y, x)
    np.testing.assert_allclose(gx.cpu().numpy(), np.full(700, 2.0), rtol=0)


def test_example_trains_under_compile():
    assert EX["main"](steps=3) == 0


# -- errors ------------------------------------------------------------------------

def test_stream_argument_inside_compile_is_refused():
    def f(x, y):
        out = torch.empty_like(x)
        vadd[(4,)](x, y, out, BLOCK=128, stream=0)
        return out

    x = _rand(512)
    with pytest.raises(Exception, match="stream= cannot be traced by torch.compile"):
        torch.compile(f, fullgraph=True)(x, x)


def test_unknown_traced_launch_is_a_clear_error():
    with pytest.raises(tile.TileLaunchError, match="unknown launch 'nope'"):
        torch.ops.tile.launch("nope", [1], [], [], [], [])


def test_portable_launch_names_resolve_in_a_fresh_table():
    """A graph cached on disk by another process names module-level kernels
    by module, name and argument layout, which resolve again."""
    ttorch = sys.modules["tile.torch"]
    layout = (("r", 0), ("r", 1), ("w", 0), ("c", 128), ("c", 0.1), ("c", float("nan")))
    name = ttorch._portable_name(vadd, layout)
    assert name.startswith(f"{__name__}:vadd|")
    kern, back = ttorch._resolve(name)
    assert kern is vadd and back[:5] == layout[:5] and back[5][1] != back[5][1]
    local = tile.kernel(vadd.fn)  # not reachable by name: per-process only
    assert ttorch._portable_name(local, layout) is None


def test_mixed_devices_are_refused(monkeypatch):
    """Several GPUs (mocked): tensors on cuda:0 and cuda:1 in one launch."""
    interop = sys.modules["tile.interop"]

    class OnDevice(torch.Tensor):
        pass

    a, b = torch.zeros(256).as_subclass(OnDevice), torch.zeros(256).as_subclass(OnDevice)
    a.dev, b.dev = 0, 1
    monkeypatch.setattr(OnDevice, "is_cuda", property(lambda s: True), raising=False)
    monkeypatch.setattr(OnDevice, "get_device", lambda s: s.dev, raising=False)
    monkeypatch.setattr(interop, "_several_gpus", lambda: True)
    k = tile.kernel(vadd.fn, backend="cuda")
    with pytest.raises(tile.TileLaunchError, match="'x' on cuda:0, 'y' on cuda:1"):
        k[(2,)](a, b, a, BLOCK=128)


def test_stream_of_another_device_is_refused():
    devices = sys.modules["tile.devices"]
    ck = type("CK", (), {})()
    ck.device, ck.name = 1, "vadd"

    class Stream:
        device = torch.device("cuda", 0)
        cuda_stream = 77

    with pytest.raises(tile.TileLaunchError, match="on cuda:1 but the stream is on cuda:0"):
        devices.run_on_device(ck, (1, 1, 1), [], Stream())


def test_first_launch_inside_capture_is_refused(monkeypatch):
    interop = sys.modules["tile.interop"]
    monkeypatch.setattr(interop, "stream_capturing", lambda s: True)

    class OnGpu(torch.Tensor):
        pass

    monkeypatch.setattr(OnGpu, "is_cuda", property(lambda s: True), raising=False)
    k = tile.kernel(vadd.fn, backend="cuda")
    x = torch.zeros(256).as_subclass(OnGpu)
    with pytest.raises(tile.TileLaunchError, match="(?s)inside a CUDA graph capture.*warm up"):
        k[(2,)](x, x, x, BLOCK=128)
    assert k.compile_count == 0


# -- GPU -----------------------------------------------------------------------------

gpu = pytest.mark.gpu


@gpu
def test_gpu_fullgraph_forward_and_backward():
    test_compile_forward_and_backward_of_the_layernorm_op()
    test_plain_launch_inside_compile_fullgraph()


@gpu
def test_gpu_reduce_overhead():
    def f(x, y):
        out = torch.empty_like(x)
        vadd[(tile.cdiv(x.numel(), 128),)](x, y, out, BLOCK=128)
        return out + 1

    cf = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    for seed in range(4):  # warm-up runs, then CUDA graph replays
        x, y = _rand(4096, seed=seed), _rand(4096, seed=seed + 10)
        got = cf(x, y).clone()
        np.testing.assert_allclose(got.cpu().numpy(), (x + y + 1).cpu().numpy(), rtol=1e-6)


@gpu
def test_gpu_graph_capture_and_replay_with_new_data():
    x, y, out = _rand(4096), _rand(4096, seed=1), _poisoned(4096)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up: compiles and loads the kernel
        vadd[(32,)](x, y, out, BLOCK=128)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vadd[(32,)](x, y, out, BLOCK=128)
    for seed in (5, 6):
        x.copy_(_rand(4096, seed=seed))
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        np.testing.assert_allclose(out.cpu().numpy(), (x + y).cpu().numpy(), rtol=1e-6)


@gpu
def test_gpu_capture_before_warmup_is_refused():
    k = tile.kernel(vadd.fn)
    x = _rand(4096)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(tile.TileLaunchError, match="inside a CUDA graph capture"):
        with torch.cuda.graph(g):
            k[(32,)](x, x, x, BLOCK=128)
    assert k.compile_count == 0


@gpu
def test_gpu_side_stream_ordering():
    n = 1 << 22
    x, y = _rand(n), _rand(n, seed=1)
    mid, out = _poisoned(n), _poisoned(n)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        vadd[(n // 128,)](x, y, mid, BLOCK=128)
    vadd[(n // 128,)](mid, y, out, BLOCK=128, stream=side)  # explicit torch stream
    torch.cuda.current_stream().wait_stream(side)
    got = out * 1  # on the current stream, after the wait
    np.testing.assert_allclose(got.cpu().numpy(), (x + 2 * y).cpu().numpy(), rtol=1e-5,
                               atol=1e-5)


@gpu
def test_gpu_mismatched_devices():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs (the mocked test covers the check)")
    a, b = _rand(256).to("cuda:0"), _rand(256).to("cuda:1")
    with pytest.raises(tile.TileLaunchError, match="'x' on cuda:0, 'y' on cuda:1"):
        vadd[(2,)](a, b, a, BLOCK=128)
    out = _poisoned(256).to("cuda:1")
    vadd[(2,)](b, b, out, BLOCK=128)  # tensors on cuda:1 launch there
    torch.cuda.synchronize(1)
    np.testing.assert_allclose(out.cpu().numpy(), (2 * b).cpu().numpy(), rtol=1e-6)
