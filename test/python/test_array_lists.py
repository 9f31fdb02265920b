"""Lists of arrays as kernel arguments (issue 16, cuTile's grouped GEMM), as
`import tile as ct` kernels: a parameter given a list (or tuple) of arrays of one
dtype and rank is specialized on the list's length and one array type; the kernel
reads `len()`, indexes it with a Python int, a runtime loop index, `ct.bid` or a
0-d tile, and passes the element to load/store/num_tiles/atomics like any array.

Numerics (marker `numerics`) run on the available backend against NumPy float64
with poisoned outputs; the sm_90 test compiles the grouped GEMM to PTX/cubin
(no GPU needed, only the GPU backend and ptxas)."""

import os
import runpy
import sys
import typing

import numpy as np
import pytest

import tile as ct
from tilehelp import ROOT, Device, assert_close, line_of, trace

numerics = pytest.mark.numerics
ConstInt = ct.Constant[int]


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(1616)


def _randn(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# -- summing a list: the four ways to index it -------------------------------------

@ct.kernel
def sum_const_index(arrays, out, T: ConstInt):
    acc = ct.zeros((T,), dtype=ct.float32)
    for i in range(len(arrays)):  # a Python loop: arrays[i] is element i itself
        acc += ct.load(arrays[i], (ct.bid(0),), (T,))
    ct.store(out, (ct.bid(0),), acc)


@ct.kernel
def sum_loop_index(arrays, out, T: ConstInt):
    acc = ct.zeros((T,), dtype=ct.float32)
    for i in ct.range(len(arrays)):  # a device loop: arrays[i] is selected at run time
        acc += ct.load(arrays[i], (ct.bid(0),), (T,))
    ct.store(out, (ct.bid(0),), acc)


@ct.kernel
def copy_bid_index(arrays, out, T: ConstInt):
    g = ct.bid(1)  # block (i, g) copies block i of array g into row g of out
    t = ct.load(arrays[g], (ct.bid(0),), (T,))
    ct.store(out, (g, ct.bid(0)), t.reshape((1, T)))


@ct.kernel
def sum_0d_tile_index(arrays, out, T: ConstInt):
    first = ct.full((), 0, dtype=ct.int32)
    acc = ct.load(arrays[first], (ct.bid(0),), (T,))
    acc += ct.load(arrays[first + 1], (ct.bid(0),), (T,))
    acc += ct.load(arrays[first + 2], (ct.bid(0),), (T,))
    ct.store(out, (ct.bid(0),), acc)


@numerics
@pytest.mark.parametrize("kern", [sum_const_index, sum_loop_index, sum_0d_tile_index])
def test_sum_of_list(dev, rng, kern):
    xs = [_randn(rng, 100) for _ in range(3)]
    out = dev.poisoned(100, np.float32)
    kern[(ct.cdiv(100, 32),)]([dev.put(x) for x in xs], out, T=32)
    assert_close(dev.get(out), sum(x.astype(np.float64) for x in xs))


@numerics
def test_bid_index_selects_each_array(dev, rng):
    xs = [_randn(rng, 64) for _ in range(4)]
    out = dev.poisoned((4, 64), np.float32)
    copy_bid_index[(4, 4)](tuple(dev.put(x) for x in xs), out, T=16)  # a tuple works too
    assert_close(dev.get(out), np.stack(xs))


@numerics
def test_cutile_launch_form(dev, rng):
    xs = [_randn(rng, 64) for _ in range(2)]
    out = dev.poisoned(64, np.float32)
    ct.launch(None, (2,), sum_loop_index, ([dev.put(x) for x in xs], out, 32))
    assert_close(dev.get(out), xs[0].astype(np.float64) + xs[1])


def test_ir_is_one_argument_per_array_and_a_select_per_runtime_index():
    xs = [np.zeros(64, np.float32) for _ in range(3)]
    ir = trace(sum_loop_index, xs, np.zeros(64, np.float32), T=32)
    head = next(ln for ln in ir.splitlines() if "func.func" in ln)
    assert head.count(": !tile.array<?xf32, strides = [1], align = 16, div = 16>") == 4
    assert "%arrays.0: " in ir and "%arrays.2: " in ir
    assert "tile.array_select %" in ir and ", %arrays.0, %arrays.1, %arrays.2 : i32," in ir
    const = trace(sum_const_index, xs, np.zeros(64, np.float32), T=32)
    assert "tile.array_select" not in const and "tile.load %arrays.2[" in const


def test_list_type_is_what_every_element_has():
    base = np.zeros((64, 64), np.float32)
    aligned = [base[:32], base[32:]]  # 16-byte aligned, unit inner stride
    ir = trace(sum_rows, aligned, np.zeros(64, np.float32), T=16)
    assert "%As.1: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>" in ir
    # one element not 16-byte aligned, one with a non-unit inner stride, extents not % 16
    ragged = [base[:32], base[1:33, 1:], base[:, ::2]]
    ir = trace(sum_rows, ragged, np.zeros(64, np.float32), T=16)
    assert "%As.2: !tile.array<?x?xf32, align = 4>" in ir


@ct.kernel
def sum_rows(As, out, T: ConstInt):
    acc = ct.zeros((1, T), dtype=ct.float32)
    for A in As:  # iterating a list in Python
        acc += ct.load(A, (0, 0), (1, T))
    ct.store(out, (0,), acc.reshape((T,)))


# -- grouped GEMM: a persistent kernel over ragged problems -----------------------

# The example's kernel (examples/grouped_matmul.py), tested here on ragged groups.
EXAMPLE = os.path.join(ROOT, "examples", "grouped_matmul.py")
sys.path.insert(0, os.path.dirname(EXAMPLE))  # it imports examples/_common
try:
    grouped_matmul = runpy.run_path(EXAMPLE, run_name="example")["grouped_matmul"]
finally:
    sys.path.pop(0)


# (m, k, n) per group: ragged, none a multiple of the tiles
GROUPS = [(70, 40, 50), (33, 100, 17), (128, 64, 96), (5, 7, 130)]


def _grouped_inputs(dev, rng, groups, dtype):
    As = [_randn(rng, m, k).astype(dtype) for m, k, _ in groups]
    Bs = [_randn(rng, k, n).astype(dtype) for _, k, n in groups]
    Cs = [dev.poisoned((m, n), np.float32) for m, _, n in groups]
    return As, Bs, Cs


@numerics
@pytest.mark.parametrize("num_programs", [3, 64])
def test_grouped_matmul(dev, rng, num_programs):
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    As, Bs, Cs = _grouped_inputs(dev, rng, GROUPS, dtype)
    grouped_matmul[(num_programs,)]([dev.put(a) for a in As], [dev.put(b) for b in Bs], Cs,
                                    num_programs, 32, 32, 32)
    for a, b, c in zip(As, Bs, Cs):
        want = a.astype(np.float64) @ b.astype(np.float64)
        assert_close(dev.get(c), want, rtol=2e-3, atol=2e-3 * np.sqrt(a.shape[1]))


@numerics
def test_grouped_matmul_reuses_a_length_and_recompiles_for_another(dev, rng):
    k = ct.kernel(grouped_matmul.fn)
    # the same length in another order (one key: shapes are runtime values), then three
    for groups in (GROUPS[:2], GROUPS[1::-1], GROUPS[:3]):
        As, Bs, Cs = _grouped_inputs(dev, rng, groups, np.float32)
        k[(8,)]([dev.put(a) for a in As], [dev.put(b) for b in Bs], Cs, 8, 32, 32, 32)
        for a, b, c in zip(As, Bs, Cs):
            assert_close(dev.get(c), a.astype(np.float64) @ b.astype(np.float64),
                         rtol=1e-4, atol=1e-4 * np.sqrt(a.shape[1]))
    assert k.compile_count == 2


def _ptx(kernel, *args):
    from tile import backend
    mod = backend.load()
    if mod is None:
        pytest.skip("needs _tile")
    ir = trace(kernel, *args)
    try:
        k = mod.compile(ir, "sm_90", {"num_warps": 4, "opt_level": 3, "dump_dir": "",
                                      "always_compile": True})
    except Exception as e:  # no GPU backend or ptxas here
        if "sm_90" in str(e) or "ptxas" in str(e) or "not built" in str(e):
            pytest.skip(f"no sm_90 compile here: {e}")
        raise
    return k.asm


def test_grouped_matmul_compiles_for_sm90():
    groups = [(64, 64, 64)] * 3
    As = [np.zeros((m, k), np.float16) for m, k, _ in groups]
    Bs = [np.zeros((k, n), np.float16) for _, k, n in groups]
    Cs = [np.zeros((m, n), np.float32) for m, _, n in groups]
    asm = _ptx(grouped_matmul, As, Bs, Cs, 132, 64, 64, 64)
    ptx = asm["ptx"]
    assert "selp.b64" in ptx  # the selected arrays' parts
    assert "mma" in ptx  # tensor cores for the f16 groups (wgmma or mma.sync)
    assert len(asm["cubin"]) > 0


# -- writes through a list element: stores and atomics ---------------------------

@ct.kernel
def scatter_counts(keys, counts, T: ConstInt):
    g = ct.bid(1)
    k = ct.load(keys, (ct.bid(0),), (T,))
    ct.atomic_add(counts[g], k, 1)  # histogram of keys, one per group
    ct.store(counts[len(counts) - 1], (0,), ct.full((1,), 7, dtype=ct.int32))


@numerics
def test_atomics_and_stores_through_a_list(dev, rng):
    keys = rng.integers(0, 16, 256).astype(np.int32)
    counts = [dev.put(np.zeros(16, np.int32)) for _ in range(3)]
    scatter_counts[(256 // 64, 2)](dev.put(keys), counts, T=64)
    hist = np.bincount(keys, minlength=16)
    got = [dev.get(c) for c in counts]
    np.testing.assert_array_equal(got[0], hist)
    np.testing.assert_array_equal(got[1], hist)
    want_last = np.zeros(16, np.int64)
    want_last[0] = 7
    np.testing.assert_array_equal(got[2], want_last)  # no block has bid(1) == 2


@ct.kernel
def copy_first(src, dsts):
    ct.store(dsts[0], (0,), ct.load(src[0], (0,), (16,)))


def test_read_only_elements_only_refused_where_written():
    ro = np.arange(16, dtype=np.float32)
    ro.flags.writeable = False
    out = [np.zeros(16, np.float32)]
    k = ct.kernel(copy_first.fn)
    k.compile([ro], out)  # read through a list: fine (traces without _tile)
    text = k.trace([ro], out)
    assert "tile.store %dsts.0[" in text


@numerics
def test_read_only_list_that_is_written_is_refused(dev):
    if dev.backend != "cpu":
        pytest.skip("NumPy's read-only flag (host arrays)")
    ro = np.zeros(16, np.float32)
    ro.flags.writeable = False
    src = np.arange(16, dtype=np.float32)
    with pytest.raises(ct.TileTypeError, match="argument 'dsts': a read-only array"):
        copy_first[(1,)]([src], [ro])
    out = np.full(16, np.nan, np.float32)
    copy_first[(1,)]([ro], [out])  # a read-only list that is only read
    np.testing.assert_array_equal(out, np.arange(16) * 0)


# -- cuTile's ListAnnotation -------------------------------------------------------

ListOfArrays = typing.Annotated[list, ct.ListAnnotation(element=ct.IndexedWithInt64)]


@ct.kernel
def annotated_sum(arrays: ListOfArrays, out: ct.IndexedWithInt64, T: ConstInt):
    acc = ct.zeros((T,), dtype=ct.float32)
    for i in ct.range(len(arrays)):
        acc += ct.load(arrays[i], (ct.bid(0),), (T,))
    ct.store(out, (ct.bid(0),), acc)


@numerics
def test_list_annotation(dev, rng):
    xs = [_randn(rng, 48) for _ in range(2)]
    out = dev.poisoned(48, np.float32)
    annotated_sum[(3,)]([dev.put(x) for x in xs], out, T=16)
    assert_close(dev.get(out), xs[0].astype(np.float64) + xs[1])


# -- errors: the parameter, the element, the kernel and the line ----------------

@ct.kernel
def load_first(arrays, out):
    ct.store(out, (0,), ct.load(arrays[0], (0,), (16,)))


@pytest.mark.parametrize("arrays,match", [
    ([np.zeros(16, np.float32), np.zeros(16, np.float16)],
     r"argument 'arrays': element 1 of the list is a rank-1 float16 array but element 0 "
     r"is a rank-1 float32 array"),
    ([np.zeros(16, np.float32), np.zeros((4, 4), np.float32)],
     r"argument 'arrays': element 1 of the list is a rank-2 float32 array but element 0 "
     r"is a rank-1"),
    ([np.zeros(16, np.float32), 3], r"element 1 of the list is an int; a list argument "
                                    r"holds arrays only"),
    ([np.zeros(16, np.float32), [np.zeros(16, np.float32)]],
     r"element 1 of the list is a list; .*no nesting"),
    ([], r"argument 'arrays': an empty list was passed"),
])
def test_bad_lists(arrays, match):
    k = ct.kernel(load_first.fn)
    with pytest.raises(ct.TileTypeError, match=match) as e:
        k.compile(arrays, np.zeros(16, np.float32))
    assert e.value.kernel == "load_first"


@ct.kernel
def index_past_the_end(arrays, out):
    ct.store(out, (0,), ct.load(arrays[3], (0,), (16,)))  # past-the-end


@ct.kernel
def index_with_a_float(arrays, out):
    ct.store(out, (0,), ct.load(arrays[1.0], (0,), (16,)))  # float-index


@ct.kernel
def index_with_a_tile(arrays, out):
    ct.store(out, (0,), ct.load(arrays[ct.arange(4, dtype=ct.int32)], (0,), (16,)))  # tile


@ct.kernel
def index_with_a_float_scalar(arrays, out):
    ct.store(out, (0,), ct.load(arrays[ct.bid(0) * 0.5], (0,), (16,)))  # float-scalar


@pytest.mark.parametrize("kern,marker,match", [
    (index_past_the_end, "past-the-end",
     r"index 3 is out of range for list argument 'arrays' of 3 arrays"),
    (index_with_a_float, "float-index", r"list argument 'arrays' is indexed with float"),
    (index_with_a_tile, "tile", r"indexed with a tile of shape \(4,\)"),
    (index_with_a_float_scalar, "float-scalar", r"must be an integer, got a float32"),
])
def test_bad_indices_name_the_line(kern, marker, match):
    xs = [np.zeros(16, np.float32) for _ in range(3)]
    with pytest.raises(ct.TileTypeError, match=match) as e:
        kern.compile(xs, np.zeros(16, np.float32))
    assert e.value.kernel == kern.__name__
    assert (e.value.filename, e.value.lineno) == (__file__, line_of(kern, marker))


@ct.kernel
def clamped_select(arrays, out, T: ConstInt):
    g = ct.bid(0) - 1  # block 0 asks for arrays[-1], block 3 for arrays[2] of 2
    ct.store(out, (ct.bid(0),), ct.load(arrays[g], (0,), (T,)))


@numerics
def test_runtime_index_out_of_range_is_clamped(dev, rng):
    xs = [_randn(rng, 16) for _ in range(2)]
    out = dev.poisoned(64, np.float32)
    clamped_select[(4,)]([dev.put(x) for x in xs], out, T=16)
    assert_close(dev.get(out), np.concatenate([xs[0], xs[0], xs[1], xs[1]]))


def test_negative_constant_index_is_python_s():
    xs = [np.zeros(16, np.float32) for _ in range(3)]

    @ct.kernel
    def last(arrays, out):
        ct.store(out, (0,), ct.load(arrays[-1], (0,), (16,)))
    assert "tile.load %arrays.2[" in trace(last, xs, np.zeros(16, np.float32))


@pytest.mark.parametrize("launcher", ["python"])
def test_lists_too_long_for_cuda_parameters(monkeypatch, launcher):
    from tilehelp import fake_tile
    ft = fake_tile(monkeypatch, launcher)
    ft.gpus = 1  # a CUDA backend: a kernel's parameters take at most 4352 bytes
    k = ct.kernel(grouped_matmul.fn)
    mats = lambda n: [np.zeros((64, 64), np.float32)] * n  # noqa: E731
    k.compile(mats(36), mats(36), mats(36), 132, 64, 64, 64)  # 108 arrays: 4320 bytes
    assert len(ft.compiled) == 1 and ft.compiled[0].target.startswith("sm_")
    with pytest.raises(ct.TileTypeError, match=r"arguments take 4400 bytes, more than the "
                       r"4352 bytes.*'As' \(37 arrays, 1480 bytes\)") as e:
        k.compile(mats(37), mats(37), mats(36), 132, 64, 64, 64)
    assert e.value.kernel == "grouped_matmul" and e.value.filename == __file__
