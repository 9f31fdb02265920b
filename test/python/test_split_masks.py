"""tile-split-uniform-masks (issue 19): a loop whose mask is all true on an
interval of its iterations is cut there, and that part runs without the
mask. Causal attention written as one loop (bench/kernels.py's
`attention`, masking every key block) then masks only its diagonal blocks,
as FlashAttention does; the backward's loops lose their masks below the
diagonal and before `seq`.

Without a GPU: the host stage's loops (the CPU backend runs the pass too),
the sm_90 consumer loop, and the numbers against float64 on whatever
backend runs kernels, with the pass and without it (TILE_SPLIT_MASKS=0)."""

import math
import os
import re

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")


def _loops(ir):
    """The texts of the loops of `ir` that carry values (the online
    softmax's m, l and acc), each from its `scf.for` to the next such loop
    or the end of the function: the cut's loops follow one another."""
    starts = [m.start() for m in re.finditer(r"%\w+:\d+ = scf\.for ", ir)]
    end = ir.find("return", starts[-1]) if starts else 0
    return [ir[a:b] for a, b in zip(starts, starts[1:] + [end])]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("split", ["1", "0"])
def test_host_stage_cuts_the_causal_loop(tmp_path, causal, split):
    """The CPU backend's host stage: causal attention's loop becomes two,
    the first (key blocks wholly below the diagonal) with no compare and
    no select; TILE_SPLIT_MASKS=0 keeps one masked loop; non-causal
    attention has no mask to cut."""
    sig = ", ".join(["f32[2,128,32]"] * 4) + ", f32"
    ir = run_tilec([BENCH + "::attention", "--args", sig, "-D", "BM=32", "-D", "BN=16",
                    "-D", "D=32", "-D", f"CAUSAL={causal}", "--target", "cpu",
                    "--emit", "host"], tmp_path, TILE_SPLIT_MASKS=split).stdout
    loops = _loops(ir)
    # The mask compares the rows' and columns' i32 indices (the selects of
    # exp2's flush_to_zero compare floats).
    masked = [bool(re.search(r"arith\.cmpi \w+, %\w+, %\w+ : i32", loop)) for loop in loops]
    if not causal:
        assert masked == [False]
    elif split == "0":
        assert masked == [True]
    else:
        assert masked == [False, True], ir
        assert "arith.floordivsi" in ir  # the cut: floor((mb*BM - BN + 1) / BN) + 1


@needs_sm90
@pytest.mark.parametrize("d", [64, 128])
def test_consumer_loop_is_cut_on_sm90(tmp_path, d):
    """bench's attention at 128x128 blocks: the warp-specialized consumer's
    rotated loop is cut (the producer's loop stays whole and fills the ring
    for both parts); the first part has no mask. ptxas: no spills."""
    sig = ", ".join([f"f16[128,4096,{d}]"] * 4) + ", f32"
    args = [BENCH + "::attention", "--args", sig, "-D", "BM=128", "-D", "BN=128",
            "-D", f"D={d}", "-D", "CAUSAL=True", "--target", "sm_90"]
    pipelined = run_tilec(args + ["--emit", "pipelined"], tmp_path).stdout
    producer, consumer = pipelined.split("} else {", 1)
    assert producer.count("scf.for") == 1  # streams K and V for both parts
    loops = _loops(consumer)
    assert len(loops) == 2, consumer
    # The mask: a compare of 128x128 i32 indices (exp2's flush_to_zero
    # compares floats).
    mask = r"arith\.cmpi \w+, %\w+, %\w+ : tensor<128x128xi32"
    assert re.search(mask, loops[1])
    assert not re.search(mask, loops[0])
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, "attention")


def _reference(q, k, v, scale, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bqd,bkd->bqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v)


@pytest.mark.numerics
@pytest.mark.parametrize("split", ["1", "0"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("cpu_shape,gpu_shape", [
    # (L, BM, BN): blocks of equal size; more queries than keys a block (a
    # block's first key blocks are whole, the rest cross the diagonal); fewer.
    ((96, 32, 32), (384, 128, 128)),
    ((128, 32, 16), (512, 128, 64)),
    ((128, 16, 32), (512, 64, 128)),
])
def test_one_loop_attention_matches_float64(monkeypatch, cpu_shape, gpu_shape, causal, split):
    monkeypatch.setenv("TILE_SPLIT_MASKS", split)
    dev = Device()
    gpu = dev.backend == "cuda"
    L, bm, bn = gpu_shape if gpu else cpu_shape
    d = 64 if gpu else 32
    dtype = np.float16 if gpu else np.float32
    rng = np.random.default_rng(L + bm + 3 * bn + causal)
    q, k, v = (rng.standard_normal((3, L, d)).astype(dtype) for _ in range(3))
    out = dev.poisoned((3, L, d), dtype)
    scale = 1.0 / math.sqrt(d)
    kernels = _bench_kernels()  # a fresh kernel: the switch is read when it compiles
    kernels.attention[(L // bm, 3)](dev.put(q), dev.put(k), dev.put(v), out, scale,
                                    BM=bm, BN=bn, D=d, CAUSAL=causal)
    got = dev.get(out)
    assert not np.isnan(got).any()
    tol = 2e-2 if gpu else 1e-4
    assert_close(got, _reference(q, k, v, scale, causal), rtol=tol, atol=tol)
