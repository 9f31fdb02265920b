"""A kernel reads its module's globals while tracing (a number, a helper
function); a binary cached for a specialization key was launched after one
of them had been rebound, so `SCALE = 3.0` between two launches still
multiplied by 2.0 (a silent wrong answer; Triton raises on it). A launch
now traces again when a global its trace read (or a closure variable)
holds another value, through the C dispatcher and the Python launcher, and
only then."""

import types

import numpy as np
import pytest

import tile
from tile import global_watch
from tilehelp import Device

SCALE = 2.0


def helper(t):
    return t * SCALE


def make_scaled():  # a kernel per test: its first launch picks the launcher
    @tile.kernel
    def scaled(x, out, B: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=helper(tile.load(x, index=(i,), shape=(B,))))
    return scaled


def make_shifted():
    @tile.kernel
    def shifted(x, out, B: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)) + OFFSET)
    return shifted


OFFSET = 1
LARGEST = True
# A module of the user's (config.SCALE): its attributes are watched too.
config = types.ModuleType("global_watch_config")
config.__file__ = __file__
config.BIAS = 0.5


def extreme(a, b):  # a combiner: tile.reduce calls it, not the kernel's code
    return tile.maximum(a, b) if LARGEST else tile.minimum(a, b)


def make_reduced():
    @tile.kernel
    def reduced(x, out, B: tile.Constant[int]):
        t = tile.load(x, index=(0,), shape=(B,))
        tile.store(out, index=(0,), tile=tile.full(
            (B,), tile.reduce(t, 0, extreme, identity=0.0), tile.float32))
    return reduced


@tile.kernel
def add_offset(x, out, B: tile.Constant[int]):  # inlined by make_inlining's kernel
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)) + OFFSET)


def make_inlining():
    @tile.kernel
    def inlining(x, out, B: tile.Constant[int]):
        add_offset(x, out, B)
    return inlining


def make_biased():
    @tile.kernel
    def biased(x, out, B: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)) + config.BIAS)
    return biased


def _run(dev, kern, x):
    out = dev.poisoned(x.shape, np.float32)
    kern[(x.shape[0] // 16,)](dev.put(x), out, B=16)
    return dev.get(out).astype(np.float64)


@pytest.fixture
def restore_globals():
    saved = dict(SCALE=SCALE, OFFSET=OFFSET, LARGEST=LARGEST, helper=helper)
    bias = config.BIAS
    yield
    globals().update(saved)
    config.BIAS = bias


@pytest.mark.numerics
def test_a_rebound_global_is_traced_again(launcher, restore_globals):
    global SCALE, OFFSET, LARGEST
    dev, x = Device(), np.random.default_rng(1).standard_normal(64).astype(np.float32)
    kern = make_scaled()
    np.testing.assert_allclose(_run(dev, kern, x), x * 2.0, rtol=1e-6)
    SCALE = 3.0  # read by the helper, in this module's globals
    np.testing.assert_allclose(_run(dev, kern, x), x * 3.0, rtol=1e-6)
    shifted = make_shifted()
    OFFSET = 5  # read by the kernel itself
    np.testing.assert_allclose(_run(dev, shifted, x), x + 5, rtol=1e-6)
    OFFSET = -2
    np.testing.assert_allclose(_run(dev, shifted, x), x - 2, rtol=1e-6)
    inlining = make_inlining()  # OFFSET read by a kernel it calls (inlined)
    np.testing.assert_allclose(_run(dev, inlining, x), x - 2, rtol=1e-6)
    OFFSET = 7
    np.testing.assert_allclose(_run(dev, inlining, x), x + 7, rtol=1e-6)
    reduced = make_reduced()  # LARGEST read by a reduce's combiner (tile calls it)
    assert _run(dev, reduced, x)[0] == max(x[:16].max(), 0.0)
    LARGEST = False
    assert _run(dev, reduced, x)[0] == min(x[:16].min(), 0.0)
    biased = make_biased()
    np.testing.assert_allclose(_run(dev, biased, x), x + 0.5, rtol=1e-6)
    config.BIAS = -4.0  # an attribute of the user's module
    np.testing.assert_allclose(_run(dev, biased, x), x - 4.0, rtol=1e-6)


@pytest.mark.numerics
def test_a_redefined_helper_is_traced_again(launcher, restore_globals):
    global helper
    dev, x = Device(), np.random.default_rng(2).standard_normal(64).astype(np.float32)
    kern = make_scaled()
    np.testing.assert_allclose(_run(dev, kern, x), x * 2.0, rtol=1e-6)

    def helper(t):  # noqa: F811 - the point of the test
        return t + 100.0
    np.testing.assert_allclose(_run(dev, kern, x), x + 100.0, rtol=1e-6)


@pytest.mark.numerics
def test_a_rebound_closure_variable_is_traced_again(launcher):
    dev, x = Device(), np.random.default_rng(3).standard_normal(64).astype(np.float32)
    scale = None

    def twice(t):  # a helper of the enclosing function, with a closure of its own
        return t * scale * 2

    @tile.kernel
    def closure_scaled(x, out, B: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=twice(tile.load(x, index=(i,), shape=(B,))) + shift)
    shift = 0.0
    for scale in (1.0, -3.0, 0.25):  # the kernel's cells and the helper's
        np.testing.assert_allclose(_run(dev, closure_scaled, x), x * scale * 2, rtol=1e-6)
    shift = 10.0
    np.testing.assert_allclose(_run(dev, closure_scaled, x), x * 0.5 + 10, rtol=1e-6)


def test_only_a_different_value_traces_again(launcher, restore_globals):
    global SCALE
    dev, x = Device(), np.ones(32, np.float32)
    kern = make_scaled()
    _run(dev, kern, x)
    count = kern.compile_count
    SCALE = float("2.0")  # another object, the same value
    globals()["unrelated_global"] = 1  # a write to the module's globals
    for _ in range(3):
        _run(dev, kern, x)
    assert kern.compile_count == count
    SCALE = -0.0
    assert np.signbit(_run(dev, kern, x)).all()
    SCALE = 0.0  # == -0.0, but another kernel
    assert not np.signbit(_run(dev, kern, x)).any()
    assert kern.compile_count == count + 2


TRACES = 0


def test_a_global_the_kernel_assigns_is_not_watched(launcher, restore_globals):
    """`global TRACES; TRACES += 1` counts traces; watched, it would make
    every launch trace again."""
    @tile.kernel
    def counted(x, out, B: tile.Constant[int]):
        global TRACES
        TRACES += 1
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)) * SCALE)
    dev, x = Device(), np.ones(32, np.float32)
    before = TRACES
    for _ in range(3):
        _run(dev, counted, x)
    assert TRACES == before + 1 and counted.compile_count == 1


def _watch_of(names):
    g = dict(names)
    reads = {id(g): (g, set(names) | {"absent_name"})}
    return g, global_watch.snapshot(reads)


@pytest.mark.parametrize("check", ["python", "c"])
def test_the_two_checks_agree(check):
    """_tile.globals_changed and its Python reference, case by case."""
    if check == "c":
        from tile import backend
        mod = backend.load()
        if mod is None or not hasattr(mod, "globals_changed"):
            pytest.skip("needs _tile")
        changed = mod.globals_changed
    else:
        changed = global_watch.changed_in_python
    cases = [  # (rebinding, changed?)
        ({}, False), ({"f": 2.5}, False), ({"i": 10 ** 30}, False), ({"s": "ab"}, False),
        ({"f": 2.25}, True), ({"f": 2}, True), ({"i": 7}, True), ({"b": False}, True),
        ({"i": True}, True), ({"s": "abc"}, True), ({"o": object()}, True),
        ({"n": float("nan")}, False), ({"z": 0.0}, True), ({"absent_name": 1}, True),
    ]
    for rebinding, expected in cases:
        g, watch = _watch_of({"f": 2.5, "i": 10 ** 30, "s": "ab", "b": True,
                              "o": object(), "n": float("nan"), "z": -0.0})
        assert changed(watch) is False  # the first check reads the version
        g.update({k: (v if not isinstance(v, str) else "".join(v)) for k, v in
                  rebinding.items()})
        assert changed(watch) is expected, rebinding
    g, watch = _watch_of({"f": 1.0})
    del g["f"]
    assert changed(watch) is True

    def cells_of(a, b):
        return (lambda: (a, b)).__closure__
    cells = cells_of(1.5, "x")
    watch = ([None, 0, cells, [1.5, "x"], ()],)
    assert changed(watch) is False
    cells[0].cell_contents = float("1.5")  # equal: no change
    assert changed(watch) is False
    cells[1].cell_contents = "y"
    assert changed(watch) is True
    del cells[1].cell_contents  # an empty cell
    assert changed(watch) is True
