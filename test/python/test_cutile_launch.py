"""cuTile's launch and kernel names (issue 16) in `import tile as ct` style:
`ct.launch(stream, grid, kernel, args)` beside `ct.launch(kernel, grid, *args)`,
the hints of `@ct.kernel` (num_ctas, occupancy, opt_level, num_worker_warps,
each possibly a `ct.ByTarget`), `replace_hints`, `@ct.function` helpers,
`ct.compiler_timeout`, the grid dependency controls, and the not-yet names of
`ct.tune` / `ct.compilation`.

Kernels run against NumPy float64 with NaN-poisoned outputs (marker
`numerics`: the CPU backend here, the GPU in the GPU suite); the launch path's
choices (options, stream, occupancy attribute) are checked on tilehelp's
FakeTile, and the occupancy's nvvm.minctasm in sm_90 PTX."""

import time

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, assert_close, fake_tile, line_of

C = ct.Constant[int]


@pytest.fixture(scope="module")
def dev():
    return Device()


@ct.function
def scaled_sum(a, b, s):
    if s > 0:  # a runtime if: the helper is rewritten like an undecorated one
        r = a * s + b
    else:
        r = a - b
    return r


@ct.kernel(occupancy=2, opt_level=ct.ByTarget(sm_90=3, cpu=2, default=1))
def axpy(x, y, out, s, B: C):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(B,))
    b = ct.load(y, index=(i,), shape=(B,))
    ct.grid_dependency_control_wait()
    ct.store(out, index=(i,), tile=scaled_sum(a, b, s))
    ct.grid_dependency_control_launch_dependents()


def _want(x, y, s):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return x * s + y if s > 0 else x - y


@pytest.mark.numerics
@pytest.mark.parametrize("form", ["cutile", "tile", "subscript"])
@pytest.mark.parametrize("s", [1.5, -2.0])
def test_launch_forms_agree_with_numpy(dev, form, s):
    n, B = 256, 64
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    xd, yd, out = dev.put(x), dev.put(y), dev.poisoned((n,), np.float32)
    grid = (ct.cdiv(n, B),)
    if form == "cutile":
        ct.launch(None, grid, axpy, (xd, yd, out, s, B))
    elif form == "tile":
        ct.launch(axpy, grid, xd, yd, out, s, B=B)
    else:
        axpy[grid](xd, yd, out, s, B)
    assert_close(dev.get(out), _want(x, y, s))


@pytest.mark.numerics
def test_replace_hints_is_a_new_kernel_with_its_own_cache(dev):
    k2 = axpy.replace_hints(occupancy=4, num_ctas=2)
    assert isinstance(k2, ct.Kernel) and k2 is not axpy
    assert k2.hints["occupancy"] == 4 and k2.hints["num_ctas"] == 2
    assert axpy.hints["occupancy"] == 2 and axpy.hints["num_ctas"] is None
    assert k2.hints["opt_level"] == axpy.hints["opt_level"]  # the others are kept
    assert k2.cache is not axpy.cache
    n, B = 128, 32
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = dev.poisoned((n,), np.float32)
    ct.launch(0, (n // B,), k2, (dev.put(x), dev.put(y), out, 0.5, B))
    assert_close(dev.get(out), _want(x, y, 0.5))
    assert k2.compile_count == 1


# -- the two launch forms: told apart by the first argument ---------------------

def test_launch_cutile_form_errors():
    x = np.zeros(64, np.float32)
    with pytest.raises(ct.TileTypeError, match="args must be a tuple"):
        ct.launch(None, (1,), axpy, [x, x, x, 1.0, 64])
    with pytest.raises(ct.TileTypeError, match="must be a @tile.kernel"):
        ct.launch(None, (1,), lambda: None, ())
    with pytest.raises(ct.TileTypeError, match="cuTile's"):
        ct.launch(None, (1,), axpy)  # neither form
    with pytest.raises(ct.TileTypeError, match="programmatic_dependent_launch"):
        ct.launch(None, (1,), axpy, (), programmatic_dependent_launch=1)
    with pytest.raises(ct.TileTypeError, match="missing the grid"):
        ct.launch(axpy)


@pytest.mark.parametrize("launcher", ["python", "c"])
def test_launch_forms_pass_stream_and_arguments(monkeypatch, launcher):
    ft = fake_tile(monkeypatch, launcher)

    @ct.kernel
    def k(x, n, B: C):
        ct.store(x, index=(ct.bid(0),), tile=ct.full((B,), n, dtype=ct.float32))

    x = np.zeros(64, np.float32)
    ct.launch(11, (2,), k, (x, 3, 32), programmatic_dependent_launch=True)
    grid, args, stream = ft.last
    assert grid == (2, 1, 1) and stream == 11 and 3 in args
    ct.launch(k, (4,), x, 5, B=16, stream=12)
    grid, args, stream = ft.last
    assert grid == (4, 1, 1) and stream == 12 and 5 in args
    assert len(ft.compiled) == 2  # B=32 and B=16


# -- hints: validated; opt_level and occupancy act per target -------------------

@pytest.mark.parametrize("hint,bad", [
    ("num_ctas", 3), ("num_ctas", 32), ("num_ctas", 0), ("occupancy", 0),
    ("occupancy", 33), ("opt_level", 4), ("opt_level", -1), ("opt_level", None),
    ("num_worker_warps", 6), ("occupancy", 2.0), ("num_ctas", True),
])
def test_bad_hint_values_raise_value_error(hint, bad):
    with pytest.raises(ct.TileValueError, match=hint):
        ct.kernel(**{hint: bad})
    with pytest.raises(ct.TileValueError, match=hint):
        ct.kernel(**{hint: ct.ByTarget(sm_90=bad)})
    with pytest.raises(ct.TileValueError, match=hint):
        axpy.replace_hints(**{hint: bad})


def test_good_hints_accepted_and_unknown_refused():
    for hints in [dict(num_ctas=16, occupancy=32, opt_level=0, num_worker_warps=8),
                  dict(num_ctas=ct.ByTarget(sm_100=8, default=2), occupancy=1)]:
        @ct.kernel(**hints)
        def k(x):
            pass
        assert all(k.hints[h] == v for h, v in hints.items())
    with pytest.raises(ct.TileTypeError, match="unknown kernel hint 'max_registers'"):
        axpy.replace_hints(max_registers=3)
    assert axpy.replace_hints(num_warps=8).num_warps == 8
    assert axpy.replace_hints(num_stages=3).num_stages == 3  # tile's (issue 18)


def test_by_target():
    b = ct.ByTarget(sm_90=8, sm_80=4, cpu=1, default=2)
    assert [b.resolve(t, 0) for t in ("sm_90", "sm_90a", "sm_80", "cpu", "sm_100")] == \
        [8, 8, 4, 1, 2]
    assert ct.ByTarget(sm_90=8).resolve("sm_80", 3) == 3  # no default: the hint's
    assert b == ct.ByTarget(cpu=1, sm_80=4, sm_90=8, default=2) != ct.ByTarget(sm_90=8)
    assert "sm_90=8" in repr(b) and "default=2" in repr(b)
    with pytest.raises(ct.TileValueError, match="hopper"):
        ct.ByTarget(hopper=1)


@pytest.mark.parametrize("launcher", ["python", "c"])
def test_opt_level_and_occupancy_reach_the_compiler(monkeypatch, launcher):
    ft = fake_tile(monkeypatch, launcher)
    x, y, out = (np.zeros(64, np.float32) for _ in range(3))
    axpy.replace_hints()[(1,)](x, y, out, 1.0, 64)
    k = ft.compiled[-1]
    assert k.target == "cpu" and k.options["opt_level"] == 2  # ByTarget's cpu value
    assert "tile.occupancy" not in k.asm["fused"]  # no occupancy on the CPU
    # a CUDA target: sm_90's opt_level, and the occupancy on the kernel function
    monkeypatch.setattr(ft, "gpus", 1)
    cuda = axpy.replace_hints(backend="cuda")
    cuda.compile(x, y, out, 1.0, B=64)  # (NumPy arrays do not launch on CUDA)
    k = ft.compiled[-1]
    assert k.target.startswith("sm_90") and k.options["opt_level"] == 3
    assert "attributes {tile.kernel, tile.occupancy = 2 : i32}" in k.asm["fused"]
    cuda.replace_hints(opt_level=ct.ByTarget(sm_80=0)).compile(x, y, out, 1.0, B=64)
    assert ft.compiled[-1].options["opt_level"] == 3  # no sm_90 entry: the default


def _sm90_ptx(kernel, *args, **consts):
    from tile import backend
    from tile.hints import with_occupancy
    mod = backend.load()
    if mod is None:
        pytest.skip("_tile not built")
    text = with_occupancy(kernel.trace(*args, **consts), kernel.hints["occupancy"])
    try:
        return mod.compile(text, "sm_90", {}).asm["ptx"]
    except Exception as e:  # noqa: BLE001
        if getattr(e, "stage", "") == "target":
            pytest.skip("_tile has no GPU backend")
        raise


def test_occupancy_is_minctasm_in_ptx():
    x = np.zeros(256, np.float32)
    for occ in (3, 5):
        ptx = _sm90_ptx(axpy.replace_hints(occupancy=occ), x, x, x, 1.0, B=64)
        assert f".minnctapersm {occ}" in ptx
    ptx = _sm90_ptx(axpy.replace_hints(occupancy=None), x, x, x, 1.0, B=64)
    assert ".minnctapersm" not in ptx


# -- compiler_timeout ---------------------------------------------------------------

def test_compiler_timeout(monkeypatch):
    ft = fake_tile(monkeypatch, "python")
    slow = ft.compile

    def compile_slowly(ir, target, options):
        time.sleep(0.5)
        return slow(ir, target, options)
    monkeypatch.setattr(ft, "compile", compile_slowly)

    @ct.kernel
    def k(x):
        ct.store(x, index=(0,), tile=ct.zeros((16,), dtype=ct.float32))

    x = np.zeros(16, np.float32)
    with ct.compiler_timeout(0.05):
        with pytest.raises(ct.TileCompilerTimeoutError, match="longer than 0.05 s") as e:
            k[(1,)](x)
    assert e.value.kernel == "k"
    with ct.compiler_timeout(30):
        k[(1,)](x)  # finishes in time
    for bad in (0, -1, "10", True):
        with pytest.raises(ct.TileValueError, match="compiler_timeout"):
            with ct.compiler_timeout(bad):
                pass


# -- @ct.function, grid dependency control, not-yet names ----------------------------

def test_function_decorator():
    def plain(a):
        return a
    assert ct.function(plain) is plain and ct.function()(plain) is plain
    assert ct.function(host=True)(plain) is plain
    with pytest.raises(ct.TileValueError, match="tile=False"):
        ct.function(tile=False)
    with pytest.raises(ct.TileValueError, match="host"):
        ct.function(host=1)


def test_grid_dependency_control_is_a_noop_in_the_ir():
    x = np.zeros(64, np.float32)
    text = axpy.trace(x, x, x, 1.0, B=64)
    assert "griddep" not in text and "tile.store" in text
    with pytest.raises(ct.TileTypeError, match="inside a kernel"):
        ct.grid_dependency_control_wait()


def test_compilation_says_not_yet():
    # tune.exhaustive_search exists since issue 18 (test_autotune.py)
    with pytest.raises(ValueError, match="search space is empty"):
        ct.tune.exhaustive_search([], None, (1,), axpy, lambda c: ())
    with pytest.raises(ct.TileUnsupportedFeatureError, match="not implemented yet"):
        ct.compilation.export_kernel(axpy, [], "out.cubin", output_format="cubin")


def test_helper_error_names_kernel_and_line():
    @ct.function
    def bad(a):
        return ct.reshape(a, (3,))  # here

    @ct.kernel
    def k(x):
        ct.store(x, index=(0,), tile=bad(ct.load(x, index=(0,), shape=(16,))))

    with pytest.raises(ct.TileError) as e:
        k.trace(np.zeros(16, np.float32))
    assert e.value.kernel == "k" and e.value.lineno == line_of(bad, "here")
