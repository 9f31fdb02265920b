"""Every error names the kernel, the user's file:line, and what to do."""

import importlib

import numpy as np
import pytest

import tile
from tilehelp import LAUNCHERS, fake_tile, line_of

tile_backend = importlib.import_module("tile.backend")
tile_kernel = importlib.import_module("tile.kernel")

F32 = np.zeros(1024, np.float32)


def compile_error(error, kernel, *args):
    """The `error` that compiling `kernel` for `args` raises (most tests here
    compile a bad kernel and then inspect the error)."""
    with pytest.raises(error) as e:
        kernel.compile(*args)
    return e.value


def check(err, kernel, fn, marker):
    """`err` names `kernel` and points at the `# marker` line of `fn`."""
    line = line_of(fn, marker)
    msg = str(err)
    assert f"kernel '{kernel}'" in msg, msg
    assert f"{__file__}:{line}" in msg, msg
    assert err.filename == __file__ and err.lineno == line
    assert err.kernel == kernel
    assert "hint:" in msg or "\n" in msg or len(msg) > 60


def test_calling_without_a_grid_is_a_type_error_with_a_hint():
    @tile.kernel
    def k(x):
        pass

    with pytest.raises(TypeError, match=r"k\[grid\]\(\*args\)"):
        k(F32)


@tile.kernel
def if_on_runtime(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if t > 3.0:  # @if (a tile of 16 elements has no one truth value)
        t = t + 1.0
    tile.store(out, index=(0,), tile=t)


def test_if_on_a_runtime_value():
    err = compile_error(tile.TileTypeError, if_on_runtime, F32, F32, 5)
    check(err, "if_on_runtime", if_on_runtime, "@if")
    assert "tile.where" in str(err)


@tile.kernel
def not_pow2(x, out):
    t = tile.load(x, index=(0,), shape=(100,))  # @load
    tile.store(out, index=(0,), tile=t)


def test_non_power_of_two_tile():
    err = compile_error(tile.TileShapeError, not_pow2, F32, F32)
    check(err, "not_pow2", not_pow2, "@load")
    assert "power of two" in str(err)


@tile.kernel
def too_big(out):
    t = tile.zeros((2048, 1024), tile.float32)  # @zeros
    tile.store(out, index=(0, 0), tile=t)


def test_tile_too_large():
    err = compile_error(tile.TileShapeError, too_big, np.zeros((4, 4), np.float32))
    check(err, "too_big", too_big, "@zeros")
    assert "2^20" in str(err)


@tile.kernel
def bad_broadcast(x, out):
    a = tile.load(x, index=(0,), shape=(16,))
    b = tile.load(x, index=(0,), shape=(32,))
    tile.store(out, index=(0,), tile=a + b)  # @add


def test_broadcast_mismatch():
    err = compile_error(tile.TileShapeError, bad_broadcast, F32, F32)
    check(err, "bad_broadcast", bad_broadcast, "@add")
    assert "(16,)" in str(err) and "(32,)" in str(err)


@tile.kernel
def bad_mma(x, out):
    a = tile.load(x, index=(0, 0), shape=(16, 32))
    b = tile.load(x, index=(0, 0), shape=(16, 32))
    tile.store(out, index=(0, 0), tile=tile.mma(a, b, tile.zeros((16, 32))))  # @mma


def test_mma_shape_mismatch():
    m = np.zeros((64, 64), np.float32)
    err = compile_error(tile.TileShapeError, bad_mma, m, m)
    check(err, "bad_mma", bad_mma, "@mma")
    assert "contraction" in str(err)


@tile.kernel
def bad_mma_dtype(x, out):
    a = tile.load(x, index=(0, 0), shape=(16, 16))
    c = tile.zeros((16, 16), tile.float16)
    tile.store(out, index=(0, 0), tile=tile.mma(a, a, c))  # @mma


def test_mma_dtype():
    m = np.zeros((64, 64), np.float32)
    err = compile_error(tile.TileTypeError, bad_mma_dtype, m, m)
    check(err, "bad_mma_dtype", bad_mma_dtype, "@mma")
    assert "float32 inputs with a float16 accumulator" in str(err)


@tile.kernel
def runtime_shape(x, out, n):
    t = tile.zeros((n,), tile.float32)  # @shape
    tile.store(out, index=(0,), tile=t)


def test_runtime_value_as_a_shape():
    err = compile_error(tile.TileTypeError, runtime_shape, F32, F32, 16)
    check(err, "runtime_shape", runtime_shape, "@shape")
    assert "tile.Constant" in str(err)


@tile.kernel
def python_range_over_runtime(x, out, n):
    for i in range(n, 0.5):  # @range
        pass


def test_python_range_over_a_runtime_value():
    # (a runtime bound is a device loop since spec v2; a float bound is not)
    err = compile_error(tile.TileTypeError, python_range_over_runtime, F32, F32, 16)
    check(err, "python_range_over_runtime", python_range_over_runtime, "@range")
    assert "integer" in str(err)


@tile.kernel
def returns_value(x):
    return tile.load(x, index=(0,), shape=(16,))


def test_kernel_returning_a_value():
    with pytest.raises(tile.TileTypeError, match="cannot return a value"):
        returns_value.compile(F32)


@tile.kernel
def load_from_tile(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    u = tile.load(t, index=(0,), shape=(16,))  # @load
    tile.store(out, index=(0,), tile=u)


def test_load_from_a_tile():
    err = compile_error(tile.TileTypeError, load_from_tile, F32, F32)
    check(err, "load_from_tile", load_from_tile, "@load")


@tile.kernel
def wrong_rank_index(x, out):
    t = tile.load(x, index=(0, 0), shape=(16,))  # @load
    tile.store(out, index=(0,), tile=t)


def test_wrong_number_of_block_indices():
    err = compile_error(tile.TileShapeError, wrong_rank_index, F32, F32)
    check(err, "wrong_rank_index", wrong_rank_index, "@load")


def test_helper_errors_point_at_the_helper_line():
    def helper(t):
        return t + tile.zeros((8,), tile.float32)  # @helper

    @tile.kernel
    def k(x, out):
        tile.store(out, index=(0,), tile=helper(tile.load(x, index=(0,), shape=(16,))))

    err = compile_error(tile.TileShapeError, k, F32, F32)
    check(err, "k", helper, "@helper")


def test_tile_functions_outside_kernels():
    with pytest.raises(tile.TileTypeError, match="inside a @tile.kernel"):
        tile.zeros((16,), tile.float32)
    with pytest.raises(tile.TileTypeError, match="inside a @tile.kernel"):
        tile.bid(0)


def test_unsupported_dtype_names_the_argument():
    @tile.kernel
    def k(x, out):
        pass

    err = compile_error(tile.TileTypeError, k, np.zeros(16, np.complex64), F32)
    assert "argument 'x'" in str(err) and "complex64" in str(err)
    with pytest.raises(tile.TileTypeError, match="argument 'out'.*str"):
        k.compile(F32, "hello")
    with pytest.raises(tile.TileTypeError, match="unsupported dtype"):
        @tile.kernel
        def bad(out):
            tile.store(out, index=(0,), tile=tile.zeros((16,), "complex"))
        bad.compile(F32)


@pytest.fixture(params=LAUNCHERS)
def fake(request, monkeypatch):
    return fake_tile(monkeypatch, request.param)


@tile.kernel
def two_args(x, out, BLOCK: tile.Constant[int]):
    tile.store(out, index=(0,), tile=tile.load(x, index=(0,), shape=(BLOCK,)))


def test_wrong_number_of_arguments(fake):
    with pytest.raises(tile.TileTypeError) as e:
        two_args[(1,)](F32, BLOCK=16)  # @call
    check(e.value, "two_args", test_wrong_number_of_arguments, "@call")
    assert "'out'" in str(e.value) and "missing" in str(e.value)
    with pytest.raises(tile.TileTypeError, match="takes 3 arguments but 4"):
        two_args[(1,)](F32, F32, 16, 5)
    with pytest.raises(tile.TileTypeError, match="unexpected keyword.*'BLOK'"):
        two_args[(1,)](F32, F32, BLOK=16)
    with pytest.raises(tile.TileTypeError, match="missing"):
        two_args.compile(F32)


def test_unhashable_constant(fake):
    @tile.kernel
    def k(x, SHAPE: tile.Constant[tuple]):
        pass

    with pytest.raises(tile.TileTypeError, match="(?s)Constant parameter 'SHAPE'.*tuple"):
        k[(1,)](F32, SHAPE=[16, 16])


def test_compile_error_points_at_the_user_line(fake):
    line = 7  # any line of this file: the diagnostic's location is reported
    fake.fail = (f"{__file__}:{line}:5: error: 'tile.load' op boom\nnote: more", "mapped",
                 "/tmp/repro.mlir")
    with pytest.raises(tile.TileCompileError) as e:
        two_args[(1,)](F32, F32, BLOCK=16)
    err = e.value
    assert err.stage == "mapped" and err.reproducer == "/tmp/repro.mlir"
    assert err.filename == __file__ and err.lineno == line
    assert "two_args" in str(err) and "boom" in str(err) and "/tmp/repro.mlir" in str(err)


def test_compile_error_without_a_python_location(fake):
    fake.fail = ("LLVM ERROR: out of registers", "ptx", "")
    with pytest.raises(tile.TileCompileError) as e:
        two_args.compile(F32, F32, BLOCK=32)
    assert e.value.stage == "ptx" and "out of registers" in str(e.value)
    assert e.value.lineno == tile_kernel.def_line(two_args.fn)
    assert "TILE_DUMP_DIR" in str(e.value)


def test_cpu_array_on_cuda_kernel(fake):
    fake.gpus = 1
    k = tile.kernel(two_args.fn)  # a fresh kernel picks the CUDA backend
    with pytest.raises(tile.TileLaunchError) as e:
        k[(1,)](F32, F32, BLOCK=16)  # @call
    check(e.value, "two_args", test_cpu_array_on_cuda_kernel, "@call")


def test_error_classes():
    assert issubclass(tile.TileTypeError, TypeError)
    assert issubclass(tile.TileShapeError, ValueError)
    for cls in (tile.TileTypeError, tile.TileShapeError, tile.TileCompileError,
                tile.TileLaunchError):
        assert issubclass(cls, tile.TileError)


def test_reserved_parameter_name():
    with pytest.raises(tile.TileTypeError, match="reserved"):
        @tile.kernel
        def k(x, stream):
            pass


def test_driver_errors_become_launch_errors(fake):
    k = tile.kernel(two_args.fn)
    k.compile(F32, F32, BLOCK=16)

    def boom(grid, args, stream=0):
        raise RuntimeError("CUDA_ERROR_INVALID_VALUE")

    fake.compiled[-1].launch = boom
    ck = next(iter(k.cache.values()))
    ck._launch = boom
    with pytest.raises(tile.TileLaunchError) as e:
        k[(1,)](F32, F32, BLOCK=16)  # @call
    check(e.value, "two_args", test_driver_errors_become_launch_errors, "@call")
    assert "CUDA_ERROR_INVALID_VALUE" in str(e.value)



def test_location_when_tile_is_imported_through_an_unnormalized_path():
    # A sys.path entry like "bench/../python-frontend" leaves ".." in the
    # package's code paths; such frames must still count as tile's own, so
    # that errors raised in them point at the caller's line (a launch error
    # once pointed at tile/kernel.py this way).
    import os
    errors = importlib.import_module("tile.errors")
    pkg = os.path.dirname(os.path.abspath(errors.__file__))
    parent = os.path.dirname(pkg)
    detour = os.path.join(parent, "..", os.path.basename(parent),
                          os.path.basename(pkg), "kernel.py")
    scope = {"user_location": errors.user_location}
    exec(compile("def where():\n    return user_location()\n", detour, "exec"), scope)
    filename, line, _ = scope["where"]()  # the caller
    assert (filename, line) == (__file__, line_of(
        test_location_when_tile_is_imported_through_an_unnormalized_path, "the caller"))


@pytest.mark.parametrize("warps", [3, 12, 64, -4, 4.0, True])
def test_num_warps_is_a_power_of_two_up_to_32_checked_where_given(warps):
    """num_warps=3 (or 64, ...) reached the compiler, which failed as if on
    a compiler bug; now refused at the decorator, replace_hints and
    tile.Config, naming the value."""
    def body(x, y):
        tile.store(y, index=(0,), tile=tile.load(x, index=(0,), shape=(16,)))

    with pytest.raises(tile.TileValueError, match=r"num_warps must be None, 0 \(the compiler "
                       rf"chooses\) or a power of two from 1 to 32, got {warps!r}"):
        tile.kernel(num_warps=warps)(body)
    with pytest.raises(tile.TileValueError, match="num_warps must be"):
        tile.kernel(body).replace_hints(num_warps=warps)
    with pytest.raises(tile.TileValueError, match="num_warps must be"):
        tile.Config({}, num_warps=warps)
    for ok in (None, 0, 1, 4, 32):
        tile.kernel(num_warps=ok)(body).replace_hints(num_warps=ok)
        tile.Config({}, num_warps=ok)


def test_kernel_decorates_python_functions_only():
    """A Kernel decorated again, or a builtin, failed with an AttributeError
    on __code__; now a TileTypeError at the decoration."""
    @tile.kernel
    def once(x):
        pass

    with pytest.raises(tile.TileTypeError, match="'once' is already a @tile.kernel"):
        tile.kernel(once)
    with pytest.raises(tile.TileTypeError, match="decorates a Python function"):
        tile.kernel(print)
