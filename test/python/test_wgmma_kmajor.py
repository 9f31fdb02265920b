"""tf32 and int8 matmuls on sm_90's wgmma (issue 17). wgmma reads tf32 and
int8 operands only K-major, as it does fp8: bench's `matmul_tn` (B given
transposed, N x K) streams both blocks through the cp.async ring into
m64nNk8 tf32 / m64nNk32 s8 wgmmas. Where a block cannot stream (K not in
whole 16-element rows, pipelining off) the same mma runs on mma.sync.

Without a GPU: the PTX (ptxas only). With one (and on the CPU backend): the
numbers against float64, on ragged shapes, outputs poisoned."""

import importlib.util
import os
import re

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec
from test_tma import _ptxas_info
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")
needs_sm90 = pytest.mark.skipif("not gpu_backend()", reason="no GPU backend or ptxas")

# (input dtype, accumulator dtype, BK: 128 bytes of K per row, wgmma's K step)
KINDS = {"tf32": ("f32", "f32", 32, "m64n256k8.f32.tf32.tf32", "m16n8k8"),
         "int8": ("i8", "i32", 128, "m64n256k32.s32.s8.s8", "m16n8k32")}


def _bench_kernels():
    spec = importlib.util.spec_from_file_location("bench_kernels_kmajor", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tn_ptx(tmp_path, kind, k=4096, **env):
    src, acc, bk, _, _ = KINDS[kind]
    sig = f"{src}[4096,{k}], {src}[4096,{k}], {acc}[4096,4096]"
    return run_tilec([BENCH + "::matmul_tn", "--args", sig, "-D", "BM=128", "-D", "BN=256",
                      "-D", f"BK={bk}", "--target", "sm_90", "--emit", "ptx"],
                     tmp_path, **env).stdout


@needs_sm90
@pytest.mark.parametrize("kind", ["tf32", "int8"])
@pytest.mark.parametrize("tma", ["1", "0"])
def test_tn_matmul_streams_into_wgmma(tmp_path, kind, tma):
    """Both blocks through the TMA ring (A and B^T boxes alike: K-major
    128-byte panels), or with TILE_TMA=0 the cp.async ring, into wgmmas of
    the kind's own instruction (4 per 128 bytes of K), the in-flight wgmma
    waited for after the loop (through the accumulators: int8's are s32),
    no mma.sync, no spills."""
    ptx = _tn_ptx(tmp_path, kind, TILE_TMA=tma)
    instr = KINDS[kind][3]
    assert ptx.count(f"wgmma.mma_async.sync.aligned.{instr}") == 4
    assert "mma.sync" not in ptx
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global" in ptx) == (tma == "1")
    assert ("cp.async.cg.shared.global" in ptx) == (tma == "0")
    assert re.search(r"wgmma.wait_group.sync.aligned\s+0;", ptx)
    report = _ptxas_info(tmp_path, ptx, "matmul_tn")
    assert "0 bytes spill stores, 0 bytes spill loads" in report, report
    # A read of an accumulator before its wgmma is waited for makes ptxas
    # serialize the wgmmas (and says so).
    assert "warpgroup.wait is injected" not in report, report


@needs_sm90
@pytest.mark.parametrize("tma", ["1", "0"])
def test_fp8_tn_matmul_streams_through_tma(tmp_path, tma):
    """bench's fp8 matmul on float8 arrays (no bitcast after the load): its
    A and B^T blocks come through the TMA ring too (TILE_TMA=0: cp.async)."""
    ptx = run_tilec([BENCH + "::matmul_tn", "--args",
                     "float8_e4m3fn[4096,4096], float8_e4m3fn[4096,4096], f32[4096,4096]",
                     "-D", "BM=128", "-D", "BN=256", "-D", "BK=128", "-D", "FAST=True",
                     "--target", "sm_90",
                     "--emit", "ptx"], tmp_path, TILE_TMA=tma).stdout
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3") == 4
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global" in ptx) == (tma == "1")
    assert ("cp.async.cg.shared.global" in ptx) == (tma == "0")
    report = _ptxas_info(tmp_path, ptx, "matmul_tn")
    assert "0 bytes spill stores, 0 bytes spill loads" in report, report


@needs_sm90
@pytest.mark.parametrize("kind", ["tf32", "int8"])
@pytest.mark.parametrize("k,env", [(100, {}), (4096, {"TILE_GPU_PIPELINE": "off"})])
def test_tn_matmul_without_a_ring_runs_on_mma_sync(tmp_path, kind, k, env):
    """K in rows the ring cannot copy (100 elements), or no pipelining: the
    warpgroup tiling becomes mma.sync's over the same warps."""
    ptx = _tn_ptx(tmp_path, kind, k=k, **env)
    assert "wgmma.mma_async" not in ptx
    assert f"mma.sync.aligned.{KINDS[kind][4]}" in ptx
    _ptxas_info(tmp_path, ptx, "matmul_tn")


@pytest.mark.numerics
@pytest.mark.parametrize("kind", ["tf32", "int8"])
@pytest.mark.parametrize("M,N,K", [
    (256, 512, 256),   # whole tiles
    (200, 300, 160),   # ragged M and N, K whole 16-element rows: the ring, zero-filled
    (130, 260, 100),   # ragged K: mma.sync
    (128, 256, 16),    # K shorter than one block
])
def test_tn_matmul_matches_float64(kind, M, N, K):
    dev = Device()
    K_ = _bench_kernels()
    src, _, bk, _, _ = KINDS[kind]
    rng = np.random.default_rng(M + N + K + len(kind))
    if kind == "tf32":
        a = rng.standard_normal((M, K)).astype(np.float32)
        bt = rng.standard_normal((N, K)).astype(np.float32)
        out = dev.poisoned((M, N), np.float32)
    else:
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        bt = rng.integers(-128, 128, (N, K)).astype(np.int8)
        out = dev.put(np.full((M, N), -12345, np.int32))
    grid = (-(-M // 128), -(-N // 256))
    K_.matmul_tn[grid](dev.put(a), dev.put(bt), out, BM=128, BN=256, BK=bk)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    got = dev.get(out)
    if kind == "int8":  # exact: |sum| < 2^31
        np.testing.assert_array_equal(got, want.astype(np.int64))
        return
    # tf32 keeps 10 mantissa bits of each input (truncated from shared
    # memory by wgmma, rounded by mma.sync): a relative error of about 1e-3
    # per product, far below what an indexing error would give.
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 4e-3, err
    assert_close(got, want, rtol=5e-2, atol=5e-2 * np.sqrt(K))


@needs_sm90
@pytest.mark.parametrize("kernel,sig,consts", [
    # 96 KB per ring slot: three (a wgmma in flight) did not fit, and the
    # kernel asked for 288 KB and failed to launch; now two slots whose
    # wgmmas each wait.
    ("matmul_tn", "f32[4096,4096], f32[4096,4096], f32[4096,4096]", (128, 256, 64)),
    ("matmul", "f16[4096,4096], f16[4096,4096], f16[4096,4096]", (128, 256, 128)),
])
def test_ring_fits_in_shared_memory(tmp_path, kernel, sig, consts):
    bm, bn, bk = consts
    extra = ["-D", "GROUP=8"] if kernel == "matmul" else []
    gpu = run_tilec([BENCH + "::" + kernel, "--args", sig, "-D", f"BM={bm}", "-D", f"BN={bn}",
                     "-D", f"BK={bk}", *extra, "--target", "sm_90", "--emit", "gpu"],
                    tmp_path).stdout
    shared = int(re.search(r"shared_bytes = (\d+)", gpu).group(1))
    assert 0 < shared <= 227 * 1024, shared
    assert "wgmma" in run_tilec([BENCH + "::" + kernel, "--args", sig, "-D", f"BM={bm}",
                                 "-D", f"BN={bn}", "-D", f"BK={bk}", *extra,
                                 "--target", "sm_90", "--emit", "ptx"], tmp_path).stdout


@pytest.mark.numerics
def test_tf32_two_slot_ring_matches_float64():
    """128x256x64 tf32 blocks (two ring slots, each wgmma waited for)."""
    dev = Device()
    K_ = _bench_kernels()
    rng = np.random.default_rng(7)
    M, N, K = 256, 512, 320
    a = rng.standard_normal((M, K)).astype(np.float32)
    bt = rng.standard_normal((N, K)).astype(np.float32)
    out = dev.poisoned((M, N), np.float32)
    K_.matmul_tn[(M // 128, N // 256)](dev.put(a), dev.put(bt), out, BM=128, BN=256, BK=64)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    err = np.linalg.norm(dev.get(out) - want) / np.linalg.norm(want)
    assert err < 4e-3, err
