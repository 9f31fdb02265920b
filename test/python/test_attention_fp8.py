"""fp8 (e4m3) attention forward, examples/flash_attention_fp8.py: both mmas
as fp8 wgmmas on sm_90 (Q K^T from shared memory, P V with P from
registers, V given transposed), warp-specialized with TMA rings.

Without a GPU: the PTX (m64nNk32 e4m3 wgmmas, TMA, the producer's
setmaxnreg, no mma.sync, no spills). Numbers against float64 of the e4m3
inputs on whatever backend runs kernels (the CPU backend runs the same
kernel widened to f16; the GPU suite runs the wgmma path at head dim 128)."""

import math
import os
import re

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _ptxas_info, needs_sm90
from tilehelp import load_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "flash_attention_fp8.py")


def _ptx(tmp_path, causal, d=128, **env):
    sig = (f"float8_e4m3fn[32,4096,{d}], float8_e4m3fn[32,4096,{d}], "
           f"float8_e4m3fn[32,{d},4096], f16[32,4096,{d}], i32, f32")
    args = [f"{EXAMPLE}::attention_fp8", "--args", sig, "--target", "sm_90", "--emit", "ptx",
            "-D", "BM=128", "-D", "BN=128", "-D", f"D={d}", "-D", f"CAUSAL={causal}"]
    return run_tilec(args, tmp_path, **env).stdout


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
def test_fp8_attention_is_fp8_wgmma(tmp_path, causal):
    """Both mmas of every loop (the unmasked one and the masked ones
    tile-split-uniform-masks leaves) are e4m3 wgmmas, P's from registers,
    in the warp-specialized kernel; nothing runs on mma.sync."""
    ptx = _ptx(tmp_path, causal)
    assert "mma.sync" not in ptx
    assert "cp.async.bulk.tensor" in ptx and "setmaxnreg.dec" in ptx
    wgmmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert wgmmas and all("m64n128k32.f32.e4m3.e4m3" in w for w in wgmmas)
    # P V with A in registers: the asm statement's A is four 32-bit
    # registers in braces ({%r..}), Q K^T's A a descriptor (%rd..).
    reg_a = [w for w in wgmmas if "}, {%r" in w]
    assert reg_a and len(reg_a) < len(wgmmas)
    # The fragments of P are exchanged within each quad of lanes: two
    # shuffles a fragment register, whose halves one prmt selects (by a
    # selector in a register: the thread's quad position).
    shuffles = ptx.count("shfl.sync.idx.b32")
    selects = len(re.findall(r"prmt\.b32\s+%r\d+, %r\d+, %r\d+, %r\d+;", ptx))
    assert shuffles and selects == shuffles // 2
    # P's e4m3 pairs stay packed from their conversion to the shuffles
    # (each was unpacked into bytes and packed again: 174 cvt.u32.u16 at
    # head dim 128, 2026-12-07).
    assert "cvt.u32.u16" not in ptx
    info = _ptxas_info(tmp_path, ptx, f"fp8_attention_{causal}")
    assert NO_SPILLS in info
    # Every fragment is computed before the fence in front of its wgmmas
    # (tile.ptx.wgmma_fence): ptxas fences nothing on its own (it did
    # between every P V wgmma while the fragments' arithmetic sank there).
    assert "warpgroup.arrive is injected" not in info


@needs_sm90
def test_fp8_attention_on_the_cp_async_rings(tmp_path):
    """TILE_GPU_PIPELINE=async (no TMA): Q is staged and read into k32 A
    fragments by ldmatrix on its bytes, both mmas take A from registers.
    Its fp8 staging once stored an fp8 vector LLVM cannot translate, and
    with no NVVM fence left the module was built for sm_90 (not sm_90a),
    where LLVM aborted on the wgmma commit."""
    ptx = _ptx(tmp_path, False, TILE_GPU_PIPELINE="async")
    assert ".target sm_90a" in ptx and "mma.sync" not in ptx and "ldmatrix" in ptx
    wgmmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert wgmmas and all("}, {%r" in w and "k32.f32.e4m3.e4m3" in w for w in wgmmas)
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, "fp8_attention_async")


def _e4m3_grid():
    """Every finite e4m3 value, by code."""
    fa8 = load_script("examples", "flash_attention_fp8.py")
    return fa8, fa8["e4m3_values"](np.arange(256))


def test_e4m3_decoder_matches_the_format():
    """The example's float64 decoder: the known codes of e4m3fn."""
    _, v = _e4m3_grid()
    assert v[0x00] == 0 and v[0x01] == 2.0 ** -9 and v[0x08] == 2.0 ** -6
    assert v[0x38] == 1.0 and v[0x7E] == 448.0 and v[0xB8] == -1.0
    assert v[0x3C] == 1.5


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq,d,heads,kv_heads,block",
                         [(200, 64, 4, 2, 64), (300, 128, 2, 2, 128)])
def test_fp8_attention_matches_float64(causal, seq, d, heads, kv_heads, block):
    """O of e4m3 Q, K, V against float64 attention of the same values:
    ragged lengths (keys past `seq` masked), grouped-query heads, causal
    or not, output poisoned. P rounded to e4m3 for P V bounds the error
    (3 bits of mantissa: about 1.5% of max |O| here, 1.2% normwise)."""
    fa8 = load_script("examples", "flash_attention_fp8.py")
    ref = load_script("examples", "flash_attention.py")["reference"]
    dev = fa8["Device"]()  # the examples' arrays (NumPy on the CPU, torch on CUDA)
    rng = np.random.default_rng(seq + d + causal)
    length = -(-seq // 16) * 16
    q = fa8["random_e4m3"](rng, (heads, length, d))
    k, v = (fa8["random_e4m3"](rng, (kv_heads, length, d)) for _ in range(2))
    got = fa8["run"](dev, q, k, v, seq, causal, block, block)[:, :seq]
    want = ref(*(fa8["e4m3_values"](x[:, :seq]) for x in (q, k, v)), 1 / math.sqrt(d), causal)
    assert not np.isnan(got).any()
    assert np.abs(got - want).max() <= 0.03 * np.abs(want).max()
    assert np.linalg.norm(got - want) <= 0.025 * np.linalg.norm(want)
