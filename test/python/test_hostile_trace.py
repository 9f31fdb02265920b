"""Issue 13, tracing side: kernels that a careless or hostile user writes.

- the same kernel text in two modules runs with each module's own globals;
- cold first calls from several threads trace and compile once;
- what cannot be traced is a TileTypeError naming the kernel, the user's
  file:line and what to write instead (never a bare TypeError, a
  RecursionError, the `def` line, or IR the compiler cannot parse).
"""

import importlib.util
import itertools
import os
import sys
import textwrap
import threading

import numpy as np
import pytest

import tile
from tilehelp import Device, assert_close, line_of

F32 = np.zeros(1024, np.float32)
_fresh = itertools.count()


def import_file(path):
    """Imports `path` as a module of its own (a fresh name each time)."""
    name = f"hostile_mod_{next(_fresh)}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def write_module(directory, name, text):
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path


def marker_line(path, marker):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if f"# {marker}" in line:
                return i
    raise AssertionError(marker)


def assert_at(err, kernel, filename, line, *words):
    """`err` names `kernel`, points at filename:line, and has a hint."""
    msg = str(err)
    assert err.kernel == kernel, msg
    assert (err.filename, err.lineno) == (filename, line), msg
    assert f"kernel '{kernel}' at {filename}:{line}" in msg, msg
    assert "hint:" in msg, msg
    for w in words:
        assert w in msg, msg


# ---------------------------------------------------------------------------
# Item 1: one rewritten function per module, not per code-object value
# ---------------------------------------------------------------------------

# Identical lines in both modules (the code objects compare equal); only the
# module-level constant and the helper, defined elsewhere, differ.
_KERNEL_MODULE = """\
import tile
from {helper_module} import helper
SCALE = {scale}


@tile.kernel
def scaled(x, out, n):
    acc = tile.zeros((16,), tile.float32)
    for i in tile.range(n):
        acc = acc + tile.load(x, index=(i,), shape=(16,))
    tile.store(out, index=(0,), tile=helper(acc) * SCALE)


@tile.kernel
def bad(x, out, n):
    t = tile.load(x, index=(0,), shape=(16,))
    if t > 3.0:  # @if
        t = t + 1.0
    tile.store(out, index=(0,), tile=t)
"""


def _two_modules(tmp_path):
    mods = []
    for tag, scale, factor in (("a", 2.0, 10.0), ("b", 3.0, 100.0)):
        d = tmp_path / tag
        d.mkdir()
        helper = write_module(str(d), f"helper_{tag}_{next(_fresh)}",
                              f"def helper(t):\n    return t + {factor}\n")
        text = _KERNEL_MODULE.format(helper_module=os.path.basename(helper)[:-3],
                                     scale=scale)
        # Same file name in different directories: only the path differs.
        path = write_module(str(d), "kern", text)
        sys.path.insert(0, str(d))
        try:
            mods.append((import_file(path), path, scale, factor))
        finally:
            sys.path.remove(str(d))
    a, b = mods[0][0], mods[1][0]
    assert a.scaled.fn.__code__ == b.scaled.fn.__code__  # the premise of the bug
    return mods


@pytest.mark.numerics
def test_same_kernel_text_in_two_modules_uses_each_modules_globals(tmp_path):
    dev = Device()
    rng = np.random.default_rng(1)
    x = rng.standard_normal(64).astype(np.float32)
    for mod, _, scale, factor in _two_modules(tmp_path):
        out = dev.poisoned(16, np.float32)
        mod.scaled[(1,)](dev.put(x), out, 4)
        want = (x.astype(np.float64).reshape(4, 16).sum(0) + factor) * scale
        assert_close(dev.get(out), want, rtol=1e-5, atol=1e-4)


def test_an_error_in_the_second_module_names_the_second_file(tmp_path):
    for mod, path, _, _ in _two_modules(tmp_path):
        with pytest.raises(tile.TileTypeError) as e:
            mod.bad.trace(F32, F32, 5)
        assert_at(e.value, "bad", path, marker_line(path, "@if"), "tile.where")
        ir = mod.scaled.trace(F32, F32, 4)
        assert f'loc("{path}"' in ir
        other = [m for m in ("a", "b") if os.sep + m + os.sep not in path]
        assert os.sep + other[0] + os.sep + "kern.py" not in ir


# ---------------------------------------------------------------------------
# Item 16: cold first calls from several threads
# ---------------------------------------------------------------------------

_THREADED_MODULE = """\
import tile


def add_row(acc, x, i):
    return acc + tile.load(x, index=(i,), shape=(16,))


@tile.kernel
def summed(x, out, n):
    acc = tile.zeros((16,), tile.float32)
    for i in tile.range(n):
        acc = add_row(acc, x, i)
    tile.store(out, index=(0,), tile=acc)
"""


@pytest.mark.numerics
@pytest.mark.parametrize("round_", range(3))
def test_cold_first_calls_from_threads_trace_and_compile_once(tmp_path, monkeypatch,
                                                              round_):
    monkeypatch.delenv("TILE_ALWAYS_COMPILE", raising=False)
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    # A module never imported before: nothing of it is rewritten or compiled.
    mod = import_file(write_module(str(tmp_path), f"threaded_{round_}", _THREADED_MODULE))
    dev = Device()
    threads = 8
    rng = np.random.default_rng(round_)
    xs = [rng.standard_normal(64).astype(np.float32) for _ in range(threads)]
    outs = [dev.poisoned(16, np.float32) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    errors = []

    def first_call(j):
        x = dev.put(xs[j])
        barrier.wait()
        try:
            mod.summed[(1,)](x, outs[j], 4)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=first_call, args=(j,)) for j in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[0]
    for x, out in zip(xs, outs):
        assert_close(dev.get(out), x.astype(np.float64).reshape(4, 16).sum(0),
                     rtol=1e-5, atol=1e-5)
    assert mod.summed.compile_count == 1
    assert len(mod.summed.cache) == 1


def _kernels_sharing_a_loop_helper(count):
    text = textwrap.dedent("""\
        import tile


        def accumulate(x, n, scale):
            acc = tile.zeros((16,), tile.float32)
            for i in tile.range(n):
                acc = acc + tile.load(x, index=(i,), shape=(16,)) * scale
            return acc
        """)
    for j in range(count):
        text += textwrap.dedent(f"""

            @tile.kernel
            def k{j}(x, out, n):
                tile.store(out, index=(0,), tile=accumulate(x, n, {j + 1}.0))
            """)
    return text


@pytest.mark.numerics
def test_cold_threads_on_different_kernels_share_one_rewritten_helper(tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    # Switch threads often, so that they meet inside the first rewrite.
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        _run_cold_threads_on_different_kernels(tmp_path)
    finally:
        sys.setswitchinterval(old_interval)


def _run_cold_threads_on_different_kernels(tmp_path):
    threads = 8
    mod = import_file(write_module(str(tmp_path), "shared_helper",
                                   _kernels_sharing_a_loop_helper(threads)))
    dev = Device()
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32)
    outs = [dev.poisoned(16, np.float32) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    errors = []

    def first_call(j):
        xd = dev.put(x)
        barrier.wait()
        try:
            getattr(mod, f"k{j}")[(1,)](xd, outs[j], 4)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=first_call, args=(j,)) for j in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[0]
    for j, out in enumerate(outs):
        assert_close(dev.get(out), x.astype(np.float64).reshape(4, 16).sum(0) * (j + 1),
                     rtol=1e-5, atol=1e-5)


_COLD_PROCESS = """\
import sys, threading
import numpy as np
sys.path.insert(0, {moddir!r})
import shared_helper as mod
threads = 8
kernel_of = (lambda j: 0) if sys.argv[1] == "same" else (lambda j: j)
x = np.arange(64, dtype=np.float32)
outs = [np.full(16, np.nan, np.float32) for _ in range(threads)]
barrier = threading.Barrier(threads)
errors = []
def first_call(j):
    barrier.wait()
    try:
        getattr(mod, "k%d" % kernel_of(j))[(1,)](x, outs[j], 4)
    except Exception as e:
        errors.append(repr(e))
workers = [threading.Thread(target=first_call, args=(j,)) for j in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
want = x.astype(np.float64).reshape(4, 16).sum(0)
wrong = [j for j, o in enumerate(outs) if not np.allclose(o, want * (kernel_of(j) + 1))]
print("errors", errors[:1], "wrong", wrong, "compiles",
      sum(getattr(mod, "k%d" % j).compile_count for j in range(threads)))
"""


@pytest.mark.numerics
@pytest.mark.parametrize("kernels, compiles", [("same", 1), ("different", 8)])
def test_first_calls_from_threads_in_a_cold_process(tmp_path, kernels, compiles):
    """Nothing loaded yet: the threads also meet in loading `_tile`."""
    import subprocess
    if Device().backend != "cpu":
        pytest.skip("the script runs NumPy arrays (the CPU backend)")
    write_module(str(tmp_path), "shared_helper", _kernels_sharing_a_loop_helper(8))
    script = tmp_path / "cold.py"
    script.write_text(_COLD_PROCESS.format(moddir=str(tmp_path)))
    env = dict(os.environ, TILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(tile.__file__))]
                                          + sys.path))
    env.pop("TILE_ALWAYS_COMPILE", None)
    for _ in range(3):
        r = subprocess.run([sys.executable, str(script), kernels], capture_output=True,
                           text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["errors", "[]", "wrong", "[]", "compiles",
                                    str(compiles)], r.stdout


# ---------------------------------------------------------------------------
# Item 18 (kernel bodies): clear errors at the user's line
# ---------------------------------------------------------------------------

def trace_error(kernel, *args):
    with pytest.raises(tile.TileTypeError) as e:
        kernel.trace(*args)
    return e.value


@tile.kernel
def yields_a_tile(x):
    t = tile.load(x, index=(0,), shape=(16,))
    yield t  # @yield


@tile.kernel
def returns_a_tile(x, n: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(16,))
    if n == 1:
        return None
    return t * 2.0  # @return


@tile.kernel
def assigns_into_a_tile(x, out):
    t = tile.load(x, index=(0,), shape=(16,))
    t[0] = 1.0  # @setitem
    tile.store(out, index=(0,), tile=t)


@tile.kernel
def indexes_an_array(x, out):
    v = x[3]  # @getitem
    tile.store(out, index=(0,), tile=tile.full((16,), v, tile.float32))


@tile.kernel
def assigns_into_an_array(x, out):
    out[0] = 1.0  # @array-setitem


@tile.kernel
def assigns_a_shape(x, out):
    x.shape[0] = 5  # @shape


def _descend(t, depth):
    return _descend(t + 1.0, depth + 1)  # @recurse


def _ping(t):
    return _pong(t * 2.0)  # @ping


def _pong(t):
    return _ping(t)


@tile.kernel
def recurses(x, out):
    tile.store(out, index=(0,), tile=_descend(tile.load(x, index=(0,), shape=(16,)), 0))


@tile.kernel
def recurses_mutually(x, out):
    tile.store(out, index=(0,), tile=_ping(tile.load(x, index=(0,), shape=(16,))))


@pytest.mark.parametrize("kernel, marker, args, words", [
    (yields_a_tile, "@yield", (F32,), ("cannot yield", "tile.store")),
    (assigns_into_a_tile, "@setitem", (F32, F32), ("immutable", "tile.where")),
    (indexes_an_array, "@getitem", (F32, F32), ("'x'", "tile.load", "tile.gather")),
    (assigns_into_an_array, "@array-setitem", (F32, F32),
     ("'out'", "tile.store", "tile.scatter")),
    (assigns_a_shape, "@shape", (F32, F32), ("read-only", "tile.Constant")),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_untraceable_body_is_a_type_error_at_the_users_line(kernel, marker, args, words):
    err = trace_error(kernel, *args)
    assert_at(err, kernel.__name__, __file__, line_of(kernel, marker), *words)


def test_returning_a_value_is_reported_at_the_return():
    err = trace_error(returns_a_tile, F32, 2)
    assert_at(err, "returns_a_tile", __file__, line_of(returns_a_tile, "@return"),
              "cannot return a value", "tile.store")
    returns_a_tile.trace(F32, 1)  # `return None` is no value


def test_an_inlined_kernel_still_returns_its_value():
    @tile.kernel
    def inner(t):
        return t * 4.0

    @tile.kernel
    def outer(x, out):
        tile.store(out, index=(0,), tile=inner(tile.load(x, index=(0,), shape=(16,))))

    assert "arith.mulf" in outer.trace(F32, F32)


@pytest.mark.parametrize("kernel, helper, marker", [
    (recurses, _descend, "@recurse"), (recurses_mutually, _ping, "@ping")])
def test_recursion_is_a_type_error_at_the_recursive_call(kernel, helper, marker):
    err = trace_error(kernel, F32, F32)
    assert not isinstance(err, RecursionError)
    assert_at(err, kernel.__name__, __file__, line_of(helper, marker), "recursion",
              f"'{helper.__name__}'", "tile.range")


@tile.kernel
def dict_in_loop(x, out, n):
    d = {"acc": tile.zeros((16,), tile.float32)}
    for i in tile.range(n):  # @dict-loop
        d["acc"] = d["acc"] + tile.load(x, index=(i,), shape=(16,))
    tile.store(out, index=(0,), tile=d["acc"])


@tile.kernel
def list_in_loop(x, out, n):
    parts = [tile.zeros((16,), tile.float32)]
    for i in tile.range(n):  # @list-loop
        parts[0] = parts[0] + tile.load(x, index=(i,), shape=(16,))
    tile.store(out, index=(0,), tile=parts[0])


@tile.kernel
def append_in_loop(x, out, n):
    rows = []
    for i in tile.range(n):  # @append-loop
        rows.append(tile.load(x, index=(i,), shape=(16,)))
    tile.store(out, index=(0,), tile=rows[0])


_NESTED = {"acc": [None]}


@tile.kernel
def nested_global_in_loop(x, out, n):
    for i in tile.range(n):  # @nested-loop
        _NESTED["acc"][0] = tile.load(x, index=(i,), shape=(16,))
    tile.store(out, index=(0,), tile=_NESTED["acc"][0])


@pytest.mark.parametrize("kernel, marker, what", [
    (dict_in_loop, "@dict-loop", "dict 'd'"),
    (list_in_loop, "@list-loop", "list 'parts'"),
    (append_in_loop, "@append-loop", "list 'rows'"),
    (nested_global_in_loop, "@nested-loop", "list '_NESTED['acc']'"),
], ids=lambda v: v.__name__ if isinstance(v, tile.Kernel) else None)
def test_a_container_changed_in_a_device_loop_is_a_type_error(kernel, marker, what):
    err = trace_error(kernel, F32, F32, 4)
    assert_at(err, kernel.__name__, __file__, line_of(kernel, marker), what,
              "tile.range", "rebind")
    assert "compiler bug" not in str(err)


@pytest.mark.numerics
def test_containers_of_outside_values_and_trace_time_values_still_work():
    log = []

    @tile.kernel
    def k(x, out, n):
        outside = tile.load(x, index=(0,), shape=(16,))
        keep = {"first": None}
        acc = tile.zeros((16,), tile.float32)
        for i in tile.range(n):
            keep["first"] = outside  # defined before the loop: fine
            log.append("traced")     # a trace-time effect: once, not once per probe
            acc = acc + tile.load(x, index=(i,), shape=(16,))
        tile.store(out, index=(0,), tile=acc + keep["first"])

    dev = Device()
    x = np.random.default_rng(7).standard_normal(64).astype(np.float32)
    out = dev.poisoned(16, np.float32)
    k[(1,)](dev.put(x), out, 4)
    x64 = x.astype(np.float64)
    assert_close(dev.get(out), x64.reshape(4, 16).sum(0) + x64[:16], rtol=1e-5, atol=1e-5)
    assert log == ["traced"]


def test_control_characters_in_texts_reach_the_ir_escaped(capfd):
    """A newline, tab, NUL or escape in a print text, an assert message or
    the kernel's name went into the IR raw or half-escaped, and MLIR's parser
    failed on it ("expected '\"' in string literal"): a compiler error for
    a valid kernel. Each is now an \\XX escape. (A renamed function was
    also looked up by its new name in its source, so `print` was Python's.)"""
    def body(x, B: tile.Constant[int]):
        t = tile.load(x, index=(0,), shape=(B,))
        tile.assert_(tile.sum(t) < 100, "sum\x00 \t\x7f too\n big \\ \" \x1b[0m é")
        print("first\nsecond\t", t)
        tile.store(x, index=(0,), tile=t + 1)
    body.__name__ = body.__qualname__ = 'odd"name\\with\nnewline'
    kern = tile.kernel(body)
    dev = Device()
    x = dev.put(np.arange(4, dtype=np.int32))
    kern[(1,)](x, B=4)
    np.testing.assert_array_equal(dev.get(x), np.arange(4) + 1)
    if dev.backend == "cpu":
        # (print's text loses its trailing blanks: "text v1 v2")
        assert capfd.readouterr().out == "pid (0, 0, 0) first\nsecond [0, 1, 2, 3]\n"
