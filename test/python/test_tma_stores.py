"""Mma results stored by TMA bulk copies (TILE_TMA_STORES=1, tile-stage-stores'
tma-stores; issue 17's epilogue): each warpgroup writes its 64 rows into a
swizzled shared buffer and one of its threads copies the boxes out with
cp.async.bulk.tensor, the threads not waiting for the copy (the next store,
or the kernel's end, does). Off by default until measured on the GPU.

Without a GPU: the PTX (ptxas only), and the arrays left to the 16-byte
stores. With one: the numbers against float64 on ragged shapes, block per
tile and persistent, f16/bf16/f32 results and a fused epilogue."""

import os

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")
BULK_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"


def _ptx(tmp_path, kernel, sig, tma_stores, bm=128, bn=256):
    return run_tilec([BENCH + "::" + kernel, "--args", sig, "-D", f"BM={bm}", "-D", f"BN={bn}",
                      "-D", "BK=64", "-D", "GROUP=8", "--target", "sm_90", "--emit", "ptx"],
                     tmp_path, TILE_TMA_STORES=tma_stores).stdout


@needs_sm90
@pytest.mark.parametrize("kernel,c_type,boxes", [
    ("matmul", "f16", 4), ("matmul", "f32", 8), ("matmul_persistent", "f16", 4)])
def test_tma_stores_ptx(tmp_path, kernel, c_type, boxes):
    """Each warpgroup issues one bulk copy per 128-byte column panel of its
    rows (256 f16 columns: 4; f32: 8) and commits them; no 16-byte
    st.global is left; it assembles without spills. That is the default;
    TILE_TMA_STORES=0 gives the 16-byte stores. (A persistent f32 result
    has no room beside the ring for either buffer.)"""
    sig = f"f16[4096,1024], f16[1024,4096], {c_type}[4096,4096]"
    ptx = _ptx(tmp_path, kernel, sig, "1")
    assert ptx.count(BULK_STORE) == boxes
    assert "cp.async.bulk.commit_group" in ptx
    assert "st.global.v4" not in ptx
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"tma_store_{kernel}_{c_type}")
    assert _ptx(tmp_path, kernel, sig, "") == ptx  # the default
    off = _ptx(tmp_path, kernel, sig, "0")
    assert BULK_STORE not in off and "st.global.v4" in off


@needs_sm90
def test_array_tma_cannot_describe_keeps_16_byte_stores(tmp_path):
    """A leading stride of 1001 elements (2002 bytes, not a multiple of 16):
    no tensor map for C, so its store stays the threads' own."""
    sig = "f16[4096,1024], f16[1024,4096], f16[1000,1000] strides=[1001,1]"
    ptx = _ptx(tmp_path, "matmul", sig, "1")
    assert BULK_STORE not in ptx
    assert "st.global" in ptx


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,programs", [
    (1000, 1112, 520, None),   # ragged M, N, K, a block per tile
    (300, 264, 40, None),      # K shorter than one tile
    (1000, 1112, 520, 8),      # persistent, 5 tiles per program
    (256, 512, 200, 16),       # persistent, more programs than tiles
])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_tma_stores_match_float64(dev, monkeypatch, M, N, K, programs, dtype):
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("TMA stores are sm_90 only here")
    monkeypatch.setenv("TILE_TMA_STORES", "1")
    K_ = _bench_kernels()
    kern = K_.matmul if programs is None else K_.matmul_persistent
    gen = torch.Generator().manual_seed(M + N + K)
    a = torch.randn(M, K, generator=gen).half().cuda()
    b = torch.randn(K, N, generator=gen).half().cuda()
    c = torch.full((M, N), float("nan"), dtype=getattr(torch, dtype), device="cuda")
    cfg = dict(BM=128, BN=256, BK=64, GROUP=8)
    grid = (programs,) if programs else (-(-M // 128) * -(-N // 256),)
    kern[grid](a, b, c, **cfg)
    # A persistent f32 result has no room for the buffer beside the ring.
    roomy = not (programs and dtype == "float32")
    assert (BULK_STORE in kern.compile(a, b, c, **cfg).asm["ptx"]) == roomy
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    tol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-4}[dtype]
    assert_close(got, want, rtol=tol, atol=tol * np.sqrt(K) + tol)
