"""Transposed loads of mma operands (tile-tiling's TileUnpermuteMmaLoads):
a block loaded with `order` that reads a 2-d transpose, as cuTile's
attention loads K^T, reaches sm_90's warp-specialized wgmma kernel as the
same block written with `.T` does. Before, such a loop ran on mma.sync
(the attention example at 0.14x SDPA on an H100, 2026-12-06).

Without a GPU: the PTX (wgmma, TMA, the producer's setmaxnreg). Numbers
against float64 on whatever backend runs kernels."""

import math
import os
import re
import runpy

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close, load_script


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "flash_attention.py")

# cuTile's attention sample's form: 4-d (batch, head, L, D) arrays, K^T by
# order=(0, 1, 3, 2), then a reshape to the 2-d block; occupancy=2, which
# two blocks of its 128x128 rings cannot meet (convert-tile-to-gpu then
# sets no register cap: under it the consumers spilled 4 KB).
FMHA = '''
import math

import tile


@tile.kernel(occupancy=2)
def fmha(Q, K, V, Out, qk_scale, BM: tile.Constant[int], BN: tile.Constant[int],
         D: tile.Constant[int]):
    b, h = tile.bid(1) // Q.shape[1], tile.bid(1) % Q.shape[1]
    m_i = tile.full((BM, 1), -math.inf, tile.float32)
    l_i = tile.zeros((BM, 1), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    q = tile.load(Q, index=(b, h, tile.bid(0), 0), shape=(1, 1, BM, D)).reshape((BM, D))
    for j in tile.range(K.shape[2] // BN):
        k = tile.load(K, index=(b, h, 0, j), shape=(1, 1, D, BN),
                      order=(0, 1, 3, 2)).reshape((D, BN))
        qk = tile.mma(q, k, tile.zeros((BM, BN), tile.float32))
        m_ij = tile.maximum(m_i, tile.max(qk, axis=-1, keepdims=True) * qk_scale)
        p = tile.exp2(qk * qk_scale - m_ij, flush_to_zero=True)
        alpha = tile.exp2(m_i - m_ij, flush_to_zero=True)
        l_i = l_i * alpha + tile.sum(p, axis=-1, keepdims=True)
        v = tile.load(V, index=(b, h, j, 0), shape=(1, 1, BN, D)).reshape((BN, D))
        acc = tile.mma(p.astype(Q.dtype), v, acc * alpha)
        m_i = m_ij
    tile.store(Out, index=(b, h, tile.bid(0), 0),
               tile=(acc / l_i).reshape((1, 1, BM, D)).astype(Out.dtype))
'''


def _ptx(tmp_path, path, kernel, sig, consts):
    args = [f"{path}::{kernel}", "--args", sig, "--target", "sm_90", "--emit", "ptx"]
    for c in consts:
        args += ["-D", c]
    return run_tilec(args, tmp_path).stdout


def _fa3_shaped(ptx):
    """wgmma, TMA copies and the producer/consumer register split."""
    return ("wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx and
            "setmaxnreg.dec" in ptx and "mma.sync" not in ptx)


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
def test_example_is_the_dot_t_kernel(tmp_path, causal):
    """The attention example (K^T by `order`) compiles to the PTX of the
    same kernel with K^T written `.T`, byte for byte."""
    src = open(EXAMPLE).read()
    old = ("tile.reshape(tile.load(k, index=(kvh, 0, j), shape=(1, D, BN), order=(0, 2, 1)),\n"
           "                      (D, BN))")
    assert old in src
    dot_t = tmp_path / "flash_attention_dot_t.py"
    dot_t.write_text(src.replace(
        old, "tile.reshape(tile.load(k, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D)).T"))
    (tmp_path / "_common.py").write_text(open(os.path.join(ROOT, "examples", "_common.py")).read())
    sig = ", ".join(["f16[128,4096,128]"] * 4) + ", i32, f32"
    consts = ["BM=128", "BN=128", "D=128", f"CAUSAL={causal}"]
    mine = _ptx(tmp_path, EXAMPLE, "attention", sig, consts)
    assert _fa3_shaped(mine)
    assert mine == _ptx(tmp_path, dot_t, "attention", sig, consts)


@needs_sm90
def test_cutile_sample_form_is_warp_specialized(tmp_path):
    """The sample's form reaches the warp-specialized kernel, with the
    consumers' 232 registers and no spills despite its occupancy=2."""
    src = tmp_path / "fmha.py"
    src.write_text(FMHA)
    sig = ", ".join(["f16[4,32,4096,128]"] * 4) + ", f32"
    ptx = _ptx(tmp_path, src, "fmha", sig, ["BM=128", "BN=128", "D=128"])
    assert _fa3_shaped(ptx)
    assert ".minnctapersm" not in ptx
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, "fmha")


@pytest.mark.numerics
def test_cutile_sample_form_matches_float64(tmp_path):
    src = tmp_path / "fmha_sample.py"  # tile.range loops need their source
    src.write_text(FMHA)
    namespace = runpy.run_path(str(src))
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(3)
    B, H, L, D, BM, BN = 2, 3, 256, 64, 64, 64
    q, k, v = (rng.standard_normal((B, H, L, D)).astype(dtype) for _ in range(3))
    out = dev.poisoned((B, H, L, D), np.float32)
    scale = 1 / math.sqrt(D)
    namespace["fmha"][(L // BM, B * H)](dev.put(q), dev.put(k), dev.put(v), out,
                                        scale * math.log2(math.e), BM=BM, BN=BN, D=D)
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q64, k64) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v64)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(dev.get(out), want, rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
def test_bench_cutile_form_matches_float64(causal):
    """bench's `attention_cutile_form` (the sample's form with its runtime
    `if` mask, grouped-query heads), poisoned output, against float64."""
    kernels = load_script("bench", "kernels.py")
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(11 + causal)
    B, H, Hkv, L, D, BM, BN = 1, 4, 2, 256, 64, 64, 32
    q = rng.standard_normal((B, H, L, D)).astype(dtype)
    k, v = (rng.standard_normal((B, Hkv, L, D)).astype(dtype) for _ in range(2))
    out = dev.poisoned((B, H, L, D), np.float32)
    kernels["attention_cutile_form"][(L // BM, B * H)](
        dev.put(q), dev.put(k), dev.put(v), out, D ** -0.5, H=H, BM=BM, BN=BN, D=D,
        GROUP=H // Hkv, CAUSAL=causal)
    k64, v64 = (np.repeat(x, H // Hkv, 1).astype(np.float64) for x in (k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k64) * D ** -0.5
    if causal:
        s = np.where(np.tril(np.ones((L, L), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v64)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(dev.get(out), want, rtol=tol, atol=tol)
