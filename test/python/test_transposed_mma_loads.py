"""Transposed loads of mma operands (tile-tiling's TileUnpermuteMmaLoads):
a block loaded with `order` that reads a 2-d transpose, as cuTile's
attention loads K^T, reaches sm_90's warp-specialized wgmma kernel as the
same block written with `.T` does. Before, such a loop ran on mma.sync
(the attention example at 0.14x SDPA on an H100, 2026-12-06).

Without a GPU: the PTX (wgmma, TMA, the producer's setmaxnreg). Numbers
against float64 on whatever backend runs kernels."""

import os
import re

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close, load_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "flash_attention.py")
BENCH = os.path.join(ROOT, "bench", "kernels.py")


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
@pytest.mark.parametrize("causal,d", [(False, 128), (True, 128), (False, 64)])
def test_cutile_sample_form_is_warp_specialized(tmp_path, causal, d):
    """bench's `attention_cutile_form`, the form of cuTile's attention sample
    (4-d arrays, K^T by order=(0, 1, 3, 2) and a reshape, the mask under a
    runtime `if`, occupancy=2), reaches the warp-specialized kernel with the
    consumers' 232 registers and no spills: two blocks of its 128x128 rings
    cannot share an SM, so the occupancy sets no register cap (under it
    the consumers spilled 4 KB). At head dim 64 two blocks' rings fit,
    but their 80 registers a thread would not keep the consumers' 232
    (ptxas could not fit an instruction in them; the H200 ran the form at
    0.24x SDPA, 2026-12-06), so the hint is dropped there too."""
    sig = ", ".join([f"f16[4,32,4096,{d}]"] * 4) + ", f32"
    ptx = _ptx(tmp_path, BENCH, "attention_cutile_form", sig,
               ["H=32", "BM=128", "BN=128", f"D={d}", "GROUP=1", f"CAUSAL={causal}"])
    assert _fa3_shaped(ptx)
    assert ".minnctapersm" not in ptx
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"cutile_form_{causal}_{d}")


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


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
def test_late_ops_first_leaves_ptxas_no_fence_to_insert(tmp_path, causal):
    """The example's loop, cut in two by tile-split-uniform-masks, with
    TILE_LATE_OPS_FIRST=1: O's rescale runs before S_j's wgmmas are issued,
    so ptxas inserts no warpgroup.arrive (C7519) of its own (by default
    LLVM scheduled the rescale between those wgmmas and their commit, and
    ptxas fenced both loops); no spills either."""
    sig = ", ".join(["f16[128,4096,128]"] * 4) + ", i32, f32"
    args = [f"{EXAMPLE}::attention", "--args", sig, "--target", "sm_90", "--emit", "ptx"]
    for c in ["BM=128", "BN=128", "D=128", f"CAUSAL={causal}"]:
        args += ["-D", c]
    ptx = run_tilec(args, tmp_path, TILE_LATE_OPS_FIRST="1").stdout
    assert _fa3_shaped(ptx)
    info = _ptxas_info(tmp_path, ptx, f"late_first_{causal}")
    assert "warpgroup.arrive is injected" not in info
    assert NO_SPILLS in info


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_late_ops_first_example_matches_float64(monkeypatch, causal):
    """The example's kernel compiled with TILE_LATE_OPS_FIRST=1 (a kernel
    object of its own) on a ragged length, against float64."""
    dev = Device()
    if dev.backend != "cuda":
        pytest.skip("tile-overlap-mma-chain runs on sm_90 only")
    monkeypatch.setenv("TILE_LATE_OPS_FIRST", "1")
    fa = load_script("examples", "flash_attention.py")
    kernel = fa["attention"].replace_hints()
    rng = np.random.default_rng(21 + causal)
    heads, seq, d, block = 4, 1000, 128, 128
    q, k, v = (rng.standard_normal((heads, seq, d)).astype(np.float16) for _ in range(3))
    out = dev.poisoned((heads, seq, d), np.float32)
    kernel[(-(-seq // block), heads)](dev.put(q), dev.put(k), dev.put(v), out, seq,
                                      d ** -0.5, BM=block, BN=block, D=d, CAUSAL=causal)
    want = fa["reference"](*(x.astype(np.float64) for x in (q, k, v)), d ** -0.5, causal)
    assert_close(dev.get(out), want, rtol=2e-2, atol=2e-2)
