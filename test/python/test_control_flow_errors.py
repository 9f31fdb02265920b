"""Issue 15: runtime control flow that cannot compile is a tile.TileTypeError
that names the kernel, points at the user's line and says what to write
instead: a multi-element tile as a condition, a name bound on one path only
and used after, two types on two paths, a Python value that differs between
paths, `try`, `with`, recursion, and a kernel returning a value.
"""

import numpy as np
import pytest

import tile
from tilehelp import line_of

F32 = np.zeros(1024, np.float32)


def trace_error(kernel, *args, **constants):
    with pytest.raises(tile.TileTypeError) as e:
        kernel.trace(*args, **constants)
    return e.value


def assert_at(err, kernel, fn, marker, *words):
    """`err` names `kernel`, points at the `# marker` line of `fn` (this
    file), has a hint, and says each of `words`."""
    line = line_of(fn, marker)
    msg = str(err)
    assert err.kernel == kernel.__name__, msg
    assert (err.filename, err.lineno) == (__file__, line), msg
    assert f"kernel '{kernel.__name__}' at {__file__}:{line}" in msg, msg
    assert "hint:" in msg, msg
    for w in words:
        assert w in msg, msg
    assert "compiler bug" not in msg and "__tile" not in msg, msg


# ---------------------------------------------------------------------------
# a multi-element tile as a condition
# ---------------------------------------------------------------------------

@tile.kernel
def tile_if(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    if t > 0.0:  # @cond
        t = t * 2.0
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def tile_elif(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:
        t = t + 1.0
    elif t < 1.0:  # @cond
        t = t * 2.0
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def tile_while(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    while t < 10.0:  # @cond
        t = t * 2.0
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def tile_ifexp(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    u = t * 2.0 if t > 0.0 else t  # @cond
    tile.store(out, index=(0,), tile=u)


@tile.kernel
def tile_and(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0 and t > 0.0:  # @cond
        t = t + 1.0
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def tile_break(x, out, n):
    acc = tile.zeros((16,), tile.float32)
    for i in tile.range(n):
        t = tile.load(x, index=(i,), shape=(16,))
        if t > 5.0:  # @cond
            break
        acc = acc + t
    tile.store(out, index=(0,), tile=acc)


@pytest.mark.parametrize("kernel, args, what", [
    (tile_if, (F32, F32), "an if condition"),
    (tile_elif, (F32, F32, 1), "an if condition"),
    (tile_while, (F32, F32), "a while condition"),
    (tile_ifexp, (F32, F32), "an if condition"),
    (tile_and, (F32, F32, 1), "`and`"),
    (tile_break, (F32, F32, 4), "an if condition"),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_a_multi_element_tile_as_a_condition(kernel, args, what):
    err = trace_error(kernel, *args)
    assert_at(err, kernel, kernel, "@cond", "(16,)", what, "tile.where", "tile.max")


# ---------------------------------------------------------------------------
# a name bound on one path only, and used after
# ---------------------------------------------------------------------------

@tile.kernel
def then_only(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        u = t * 2.0  # @bind
    tile.store(out, index=(0,), tile=u)


@tile.kernel
def else_only(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        t = t + 1.0
    else:
        s = n * 2  # @bind
    tile.store(out, index=(0,), tile=t + s)


@tile.kernel
def elif_missing(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 2:
        s = 1.0
    elif n > 0:  # @if
        s = 2.0  # @bind
    tile.store(out, index=(0,), tile=t + s)


@pytest.mark.parametrize("kernel, name, missing", [
    (then_only, "'u'", "else"), (else_only, "'s'", "if"), (elif_missing, "'s'", "else"),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_a_name_bound_on_one_path_and_used_after(kernel, name, missing):
    err = trace_error(kernel, F32, F32, 3)
    bind, at_if = line_of(kernel, "@bind"), line_of(kernel, "@if")
    assert_at(err, kernel, kernel, "@if", name, "only one path", f"not on the {missing} path",
              f"line {bind}", f"line {at_if}", "assign it before the if")


# ---------------------------------------------------------------------------
# two types on two paths; Python values that differ between paths
# ---------------------------------------------------------------------------

@tile.kernel
def two_dtypes(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        t = t.astype(tile.float16)
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def two_shapes(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        t = tile.load(x, index=(0,), shape=(32,))
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def tile_or_scalar(x, out, n, f):
    t = tile.load(x, index=(0,), shape=(16,))
    v = t * 2.0 if n > 0 else f  # @if (a 0-d tile beside a scalar would be fine)
    tile.store(out, index=(0,), tile=t + v)


@tile.kernel
def int_or_float_scalar(x, out, n, f):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        s = n
    else:
        s = f
    tile.store(out, index=(0,), tile=t + s)


SCALAR_F = (tile_or_scalar, int_or_float_scalar)


@pytest.mark.parametrize("kernel, words", [
    (two_dtypes, ("'t'", "float16", "float32", ".astype")),
    (two_shapes, ("'t'", "(32,)", "(16,)", "tile.broadcast_to")),
    (tile_or_scalar, ("tile of shape (16,)", "float32 scalar")),
    (int_or_float_scalar, ("'s'", "int32 scalar", "float32 scalar", ".astype")),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_two_types_on_two_paths(kernel, words):
    err = trace_error(kernel, F32, F32, 1, *((0.5,) if kernel in SCALAR_F else ()))
    assert_at(err, kernel, kernel, "@if", "one path", *words)


@tile.kernel
def two_functions(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:  # @if
        f = tile.exp
    else:
        f = tile.log
    tile.store(out, index=(0,), tile=f(t))


@tile.kernel
def two_strings(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    mode = "twice"
    if n > 0:  # @if
        mode = "once"
    tile.store(out, index=(0,), tile=t * 2.0 if mode == "twice" else t)


@pytest.mark.parametrize("kernel, words", [
    (two_functions, ("'f'", "different Python values")),
    (two_strings, ("'mode'", "'once'", "'twice'")),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_a_python_value_that_differs_between_paths(kernel, words):
    err = trace_error(kernel, F32, F32, 1)
    assert_at(err, kernel, kernel, "@if", *words, "tile.Constant")


def test_a_python_value_equal_on_both_paths_is_fine():
    @tile.kernel
    def k(x, out, n):
        t = tile.load(x, index=(0,), shape=(16,))
        f = tile.exp
        if n > 0:
            f = tile.exp
            t = t + 1.0
        tile.store(out, index=(0,), tile=f(t))

    assert "scf.if" in k.trace(F32, F32, 2)


# ---------------------------------------------------------------------------
# try, with, recursion, returning a value from a kernel
# ---------------------------------------------------------------------------

@tile.kernel
def uses_try(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    try:  # @stmt
        t = t + 1.0
    except ValueError:
        pass
    tile.store(out, index=(0,), tile=t)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@tile.kernel
def uses_with(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    with _Nothing():  # @stmt
        t = t + 1.0
    tile.store(out, index=(0,), tile=t)


@pytest.mark.parametrize("kernel, what", [(uses_try, "`try`"), (uses_with, "`with`")],
                         ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_try_and_with_are_errors_at_their_line(kernel, what):
    err = trace_error(kernel, F32, F32, 1)
    assert_at(err, kernel, kernel, "@stmt", what)


@tile.kernel
def raises_when_n_is_large(x, out, n, LIMIT: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(16,))
    if LIMIT > 1000:  # decided while tracing: the user's own error
        raise ValueError("LIMIT above 1000")
    if n > LIMIT:
        raise ValueError("n above LIMIT")  # @raise
    tile.store(out, index=(0,), tile=t)


def test_a_raise_under_a_runtime_condition_is_an_error_at_its_line():
    """Tracing goes down both paths of `if n > LIMIT`: the raise would stop
    every launch, n small or not (it did, with the user's ValueError)."""
    err = trace_error(raises_when_n_is_large, F32, F32, 3, LIMIT=8)
    assert_at(err, raises_when_n_is_large, raises_when_n_is_large, "@raise",
              "`raise ValueError('n above LIMIT')`", "runtime condition", "tile.assert_")
    with pytest.raises(ValueError, match="LIMIT above 1000"):
        raises_when_n_is_large.trace(F32, F32, 3, LIMIT=2000)


@tile.kernel
def deletes_in_an_if(x, out, n, STATIC: tile.Constant[bool]):
    t = tile.load(x, index=(0,), shape=(16,))
    u = t * 2.0
    if (n > 0) if not STATIC else STATIC:  # @if
        del u
    tile.store(out, index=(0,), tile=u)


@tile.kernel
def deletes_in_an_if_after_its_last_use(x, out, n, STATIC: tile.Constant[bool]):
    t = tile.load(x, index=(0,), shape=(16,))
    u = t * 2.0
    if (n > 0) if not STATIC else STATIC:
        t = u * 0.5
        del u
    tile.store(out, index=(0,), tile=t)


@pytest.mark.parametrize("static", [False, True], ids=["runtime-if", "constant-if"])
def test_a_name_deleted_in_an_if_and_used_after_is_an_error_at_the_if(static):
    """`del u` in an if: our generated branch function raised Python's
    UnboundLocalError, naming no kernel line."""
    err = trace_error(deletes_in_an_if, F32, F32, 3, STATIC=static)
    assert_at(err, deletes_in_an_if, deletes_in_an_if, "@if", "'u'")


@pytest.mark.numerics
@pytest.mark.parametrize("static", [False, True], ids=["runtime-if", "constant-if"])
def test_a_name_deleted_in_an_if_after_its_last_use_is_fine(static):
    from tilehelp import Device
    dev = Device()
    x = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    out = dev.poisoned((16,), np.float32)
    deletes_in_an_if_after_its_last_use[(1,)](dev.put(x), out, 3, STATIC=static)
    np.testing.assert_array_equal(dev.get(out), x)


def doubled(t, n):
    return t if n <= 0 else doubled(t * 2.0, n - 1)  # @recurse


@tile.kernel
def recursive_on_runtime(x, out, n):
    tile.store(out, index=(0,), tile=doubled(tile.load(x, index=(0,), shape=(16,)), n))


def test_recursion_under_a_runtime_condition_is_an_error():
    err = trace_error(recursive_on_runtime, F32, F32, 3)
    assert not isinstance(err, RecursionError)
    assert_at(err, recursive_on_runtime, doubled, "@recurse", "recursion", "'doubled'",
              "tile.range")


@tile.kernel
def returns_a_tile(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    tile.store(out, index=(0,), tile=t)
    return t  # @return


@tile.kernel
def returns_under_a_runtime_if(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if n > 0:
        return t * 2.0  # @return
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def returns_in_a_loop(x, out, n):
    for i in tile.range(n):
        t = tile.load(x, index=(i,), shape=(16,))
        if tile.max(t) > 1.0:
            return tile.max(t)  # @return
    tile.store(out, index=(0,), tile=tile.zeros((16,), tile.float32))


@pytest.mark.parametrize("kernel, args", [
    (returns_a_tile, (F32, F32)),
    (returns_under_a_runtime_if, (F32, F32, 1)),
    (returns_in_a_loop, (F32, F32, 4)),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_returning_a_value_from_a_kernel(kernel, args):
    err = trace_error(kernel, *args)
    assert_at(err, kernel, kernel, "@return", "cannot return a value", "tile.store")


def test_a_bare_return_under_a_runtime_if_is_fine():
    @tile.kernel
    def k(x, out, n):
        if n > 0:
            return
        tile.store(out, index=(0,), tile=tile.load(x, index=(0,), shape=(16,)))

    assert "scf.if" in k.trace(F32, F32, 1)


# ---------------------------------------------------------------------------
# errors after an early exit still point at their own line
# ---------------------------------------------------------------------------

@tile.kernel
def error_after_return(x, out, n):
    if n < 0:
        return
    t = tile.load(x, index=(0,), shape=(16,))
    u = t + 1.0
    if u > 0.0:  # @cond
        u = u * 2.0
    tile.store(out, index=(0,), tile=u)


@tile.kernel
def error_after_break(x, out, n):
    acc = tile.zeros((16,), tile.float32)
    for i in tile.range(n):
        if i > 3:
            break
        t = tile.load(x, index=(i,), shape=(16,))
        acc = acc + tile.reshape(t, (4, 4))  # @shape
    tile.store(out, index=(0,), tile=acc)


def test_errors_after_an_early_exit_point_at_their_own_line():
    err = trace_error(error_after_return, F32, F32, 2)
    assert_at(err, error_after_return, error_after_return, "@cond", "tile.where")
    with pytest.raises(tile.TileError) as e:
        error_after_break.trace(F32, F32, 8)
    line = line_of(error_after_break, "@shape")
    assert (e.value.filename, e.value.lineno) == (__file__, line), str(e.value)
