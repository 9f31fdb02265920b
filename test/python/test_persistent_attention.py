"""bench's `attention_persistent` (issue 19): attention with one block per
SM walking the (head, query block) tiles, causal ones in pairs of a head's
longest and shortest query blocks; a user's loop around the K/V loop.

Without a GPU: the sm_90 kernel fits in shared memory with three ring
slots (O leaves by TMA through Q's buffer); a producer warpgroup walks the
tiles beside the consumers (tile-warp-specialize) and fills the ring for
the next tile while they finish this one, also when the tile order is
written with conditional expressions (persistent_ifexp_kernels.py); Q's
barrier waits on the tile's parity; ptxas reports no spills. Numbers
against float64 on whatever backend runs kernels, with fewer blocks than
tiles."""

import math
import os
import re

import numpy as np
import pytest

from test_split_masks import BENCH, _reference
from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

SM90_SHARED_BYTES = 232448  # 227 KB, opted in


@needs_sm90
@pytest.mark.parametrize("d", [64, 128])
def test_persistent_attention_fits_on_sm90(tmp_path, d):
    sig = ", ".join([f"f16[128,4096,{d}]"] * 4) + ", f32"
    args = [BENCH + "::attention_persistent", "--args", sig, "-D", "BM=128", "-D", "BN=128",
            "-D", f"D={d}", "-D", "CAUSAL=True", "--target", "sm_90"]
    gpu = run_tilec(args + ["--emit", "gpu"], tmp_path).stdout
    shared = int(re.search(r"tile\.shared_mem = (\d+)", gpu).group(1))
    assert shared <= SM90_SHARED_BYTES, shared
    pipelined = run_tilec(args + ["--emit", "pipelined"], tmp_path).stdout
    # Three slots of K and V blocks, as the one-tile kernel's ...
    assert f"!tilegpu.shared<128x{d}xf16, slots = 3, swizzle = 128>" in pipelined
    producer, consumer = pipelined.split("} else {", 1)
    # ... so the key loops, nested in the tile loop, are rotated (S_j and
    # P_{j-1} V_{j-1} in flight together).
    assert "in_flight" in consumer
    if d == 128:
        # No room beside the ring for O's staging buffer: O goes by TMA
        # through Q's buffer, dead from the tile's last S to its next copy.
        q_buffer = re.search(r"tilegpu.tma_load %\w+\[[^]]*\] into (%\w+)", consumer)
        q_slot = re.search(re.escape(q_buffer.group(1)) + r" = tilegpu.slot (%\w+)", consumer)
        assert re.search(r"tilegpu.bulk_store %\w+ through " + re.escape(q_slot.group(1)) + " ",
                         consumer)
    # Warp-specialized (the kernel's 24/240 split): its causal and
    # non-causal loops both bind mb and bh, and neither carries them.
    assert "nvvm.setmaxregister  decrease 24" in producer
    assert producer.count("tilegpu.tma_load") == 2  # K and V, for every tile
    # Q: copied by the consumers once a tile, waited on with the tile's parity.
    q_wait = re.search(r"tilegpu.mbarrier_wait (%\d+)\[%\w+\], (%\w+) : "
                       r"!tilegpu.mbarriers<1>", consumer)
    assert q_wait and not q_wait.group(2).startswith("%c")
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx
    assert ".maxntid 384, 1, 1" in ptx
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"attention_persistent_{d}")


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("group", [1, 2])
@pytest.mark.parametrize("gpu_blocks", [(128, 64, 64), (128, 128, 64), (128, 128, 128)])
def test_persistent_attention_matches_float64(causal, group, gpu_blocks):
    """Five blocks walk 6 heads x L/BM query blocks (several tiles each;
    causal: pairs of a head's longest and shortest query blocks left, then
    with an odd L/BM (GQA's case here) each head's middle block); GQA with
    two query heads per K/V head. On the GPU (BM, BN, D) as `gpu_blocks`."""
    dev = Device()
    gpu = dev.backend == "cuda"
    if not gpu and gpu_blocks != (128, 64, 64):
        pytest.skip("the CPU runs one small shape")
    L, (bm, bn, d) = (512 + 128 * (group > 1), gpu_blocks) if gpu else \
        (128 - 32 * (group > 1), (32, 16, 32))
    dtype = np.float16 if gpu else np.float32
    heads = 6
    rng = np.random.default_rng(L + 7 * causal + group)
    q = rng.standard_normal((heads, L, d)).astype(dtype)
    k, v = (rng.standard_normal((heads // group, L, d)).astype(dtype) for _ in range(2))
    out = dev.poisoned((heads, L, d), dtype)
    scale = 1.0 / math.sqrt(d)
    _bench_kernels().attention_persistent[(5,)](dev.put(q), dev.put(k), dev.put(v), out,
                                               scale, BM=bm, BN=bn, D=d, CAUSAL=causal,
                                               GROUP=group)
    got = dev.get(out)
    assert not np.isnan(got).any()
    tol = 2e-2 if gpu else 1e-4
    want = _reference(q, np.repeat(k, group, axis=0), np.repeat(v, group, axis=0), scale,
                      causal)
    assert_close(got, want, rtol=tol, atol=tol)


def _ifexp_kernels():
    import persistent_ifexp_kernels
    return persistent_ifexp_kernels


@needs_sm90
def test_conditional_expressions_in_front_of_the_key_loop_keep_the_producer(tmp_path):
    """The causal order as conditional expressions: scf.if's yielding the
    tile's head and block. The producer computes them itself (it clones
    side-effect-free ops with regions), so the kernel stays
    warp-specialized and its key loop rotated."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "persistent_ifexp_kernels.py")
    sig = ", ".join(["f16[128,4096,128]"] * 4) + ", f32"
    args = [here + "::attention_persistent_ifexp", "--args", sig, "-D", "BM=128", "-D",
            "BN=128", "-D", "D=128", "--target", "sm_90"]
    assert "scf.if" in run_tilec(args + ["--emit", "tile"], tmp_path).stdout
    pipelined = run_tilec(args + ["--emit", "pipelined"], tmp_path).stdout
    # (The producer's own scf.if's have else branches: split at setmaxnreg.)
    roles = pipelined.split("nvvm.setmaxregister  decrease 24", 1)[1]
    producer, consumer = roles.split("nvvm.setmaxregister  increase 240", 1)
    assert producer.count("tilegpu.tma_load") == 2 and "scf.if" in producer
    assert "in_flight" in consumer


@pytest.mark.numerics
def test_conditional_expression_order_matches_float64():
    dev = Device()
    gpu = dev.backend == "cuda"
    L, (bm, bn, d) = (640, (128, 128, 64)) if gpu else (96, (32, 16, 32))
    dtype = np.float16 if gpu else np.float32
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((6, L, d)).astype(dtype) for _ in range(3))
    out = dev.poisoned((6, L, d), dtype)
    scale = 1.0 / math.sqrt(d)
    _ifexp_kernels().attention_persistent_ifexp[(5,)](dev.put(q), dev.put(k), dev.put(v), out,
                                                      scale, BM=bm, BN=bn, D=d)
    tol = 2e-2 if gpu else 1e-4
    assert_close(dev.get(out), _reference(q, k, v, scale, True), rtol=tol, atol=tol)
