"""The persistent matmul on a warp-specialized TMA ring (issue 17):
tile-warp-specialize splits the warps around the persistent loop (a
`while`, or a `for` over range(first tile, tiles, grid)), so the
producer warpgroup fills the next output tile's slots while the consumers
finish and store this one; the slots count the block's iterations across
tiles. With a 3-slot ring the 128x256 f16 store is staged through shared
memory beside the ring (tile-stage-stores).

Without a GPU: the PTX (ptxas only). With one: the numbers against float64
on ragged shapes, grids with fewer and more programs than tiles, outputs
poisoned, with the producer and without."""

import os
import re

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

import tile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")


def _persistent_ptx(tmp_path, stages, kernel="matmul_persistent", **env):
    sig = "f16[8192,1024], f16[1024,8192], f16[8192,8192]"
    return run_tilec([BENCH + "::" + kernel, "--args", sig, "-D", "BM=128",
                      "-D", "BN=256", "-D", "BK=64", "-D", "GROUP=8", "--num-stages",
                      str(stages), "--target", "sm_90", "--emit", "ptx"],
                     tmp_path, **env).stdout


def _ring_bytes(ptx):
    """The offset of the first mbarrier: the ring's bytes below it."""
    return int(re.search(r"mbarrier.init.shared.b64\s+\[tile_shared\+(\d+)\]", ptx).group(1))


@needs_sm90
@pytest.mark.parametrize("stages,kernel", [(0, "matmul_persistent"), (3, "matmul_persistent"),
                                          (0, "matmul_persistent_range")])
def test_persistent_ring_gets_a_producer(tmp_path, stages, kernel):
    """By default (TILE_WARP_SPECIALIZE unset) the persistent matmul's ring
    gets a producer warpgroup (384 threads, setmaxnreg 40 / 232), its copies
    by TMA, the consumers' results stored by TMA bulk copies from a swizzled
    buffer (with TILE_TMA_STORES=0: in 16-byte runs through a padded one;
    3 slots of 48 KB leave room for the 64 or 66 KB buffer, the automatic
    depth is 3 for that), no spills; the `while` and the `for` form alike."""
    ptx = _persistent_ptx(tmp_path, stages, kernel)
    threads = _persistent_ptx(tmp_path, stages, kernel, TILE_TMA_STORES="0")
    for p in (ptx, threads):
        assert _ring_bytes(p) == 3 * 48 * 1024
        assert re.search(r"setmaxnreg.dec.sync.aligned.u32\s+40;", p)
        assert re.search(r"setmaxnreg.inc.sync.aligned.u32\s+232;", p)
        assert ".maxntid 384, 1, 1" in p
        assert "cp.async.bulk.tensor.2d.shared::cluster.global" in p
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 4
    assert "st.global.v4" not in ptx
    assert threads.count("st.global.v4.b32") == 16
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, "persistent_ws")
    assert NO_SPILLS in _ptxas_info(tmp_path, threads, "persistent_ws_threads")


@needs_sm90
def test_persistent_ring_without_room_to_stage(tmp_path):
    """4 slots (192 KB) leave no room for the staging buffer: the producer
    still runs ahead, the store leaves the fragments as they are."""
    ptx = _persistent_ptx(tmp_path, 4)
    assert re.search(r"setmaxnreg.dec.sync.aligned.u32\s+40;", ptx)
    assert "st.global.v4" not in ptx


@needs_sm90
def test_persistent_ring_specialization_off(tmp_path):
    """TILE_WARP_SPECIALIZE=0: one role, the ring's barriers initialized per
    tile as before (the bench's "before")."""
    ptx = _persistent_ptx(tmp_path, 0, TILE_WARP_SPECIALIZE="0")
    assert "setmaxnreg" not in ptx
    assert ".maxntid 256, 1, 1" in ptx
    assert _ring_bytes(ptx) == 4 * 48 * 1024
    assert "st.global.v4" not in ptx


OCCUPANCY_2 = """
import tile

@tile.kernel(occupancy=2)
def persistent(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
               BK: tile.Constant[int]):
    num_n = tile.cdiv(b.shape[1], BN)
    for t in range(tile.bid(0), tile.cdiv(a.shape[0], BM) * num_n, tile.num_blocks(0)):
        acc = tile.zeros((BM, BN), tile.float32)
        for k in tile.range(tile.cdiv(a.shape[1], BK)):
            acc = tile.mma(tile.load(a, index=(t // num_n, k), shape=(BM, BK)),
                           tile.load(b, index=(k, t % num_n), shape=(BK, BN)), acc)
        tile.store(c, index=(t // num_n, t % num_n), tile=acc.astype(c.dtype))
"""


@needs_sm90
@pytest.mark.parametrize("bm,bn,threads,regs,consumer", [
    (64, 64, 256, 136, 232),     # a producer and one consumer warpgroup
    (128, 256, 384, 168, 232),   # a producer and two
    ("occupancy", 64, 256, 128, 216),  # two blocks per SM cap the registers
])
def test_warp_specialized_registers_cover_the_plan(tmp_path, bm, bn, threads, regs,
                                                   consumer):
    """Every warp launches with the registers the setmaxnreg plan hands out
    ((40 P + 232 C) / (P + C), `.maxnreg`), and no automatic two-blocks-per-SM
    cap: ptxas gave the 64x64 persistent matmul 128 registers (64 without
    the cap), its consumers' setmaxnreg.inc 232 waited for registers nobody
    could free, and the autotuner hung on the H200 (2026-12-05). Under an
    occupancy hint the consumers ask for what the cap leaves."""
    sig = "f16[8192,1024], f16[1024,8192], f16[8192,8192]"
    if bm == "occupancy":
        src = tmp_path / "occ.py"
        src.write_text(OCCUPANCY_2)
        args = [str(src) + "::persistent", "-D", "BM=64"]
    else:
        args = [BENCH + "::matmul_persistent", "-D", f"BM={bm}", "-D", "GROUP=8"]
    ptx = run_tilec(args + ["--args", sig, "-D", f"BN={bn}", "-D", "BK=64",
                            "--target", "sm_90", "--emit", "ptx"], tmp_path).stdout
    assert f".maxntid {threads}, 1, 1" in ptx
    assert re.search(rf"\.maxnreg {regs}\b", ptx), ptx[:2000]
    assert re.search(rf"setmaxnreg.inc.sync.aligned.u32\s+{consumer};", ptx)
    assert (".minnctapersm 2" in ptx) == (bm == "occupancy")
    report = _ptxas_info(tmp_path, ptx, f"ws_regs_{bm}")
    assert f"Used {regs} registers" in report, report


@needs_sm90
def test_warp_specialized_kernel_needing_more_than_the_plan(tmp_path):
    """64x256 tiles with one consumer warpgroup need about 154 registers,
    more than the plan's 136: ptxas cannot fit them under `.maxnreg 136`
    (C7602), so the cubin is assembled without the cap and ptxas takes what
    the code needs (more than the plan, so setmaxnreg.inc still gets its
    registers). Before, the compile failed."""
    sig = "f16[8192,1024], f16[1024,8192], f16[8192,8192]"
    args = [BENCH + "::matmul_persistent", "--args", sig, "-D", "BM=64", "-D", "BN=256",
            "-D", "BK=64", "-D", "GROUP=8", "--target", "sm_90"]
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    assert re.search(r"\.maxnreg 136\b", ptx)
    out = tmp_path / "cubin"
    run_tilec(args + ["--emit", "cubin", "-o", str(out)], tmp_path)
    assert (out / "matmul_persistent.cubin.cubin").stat().st_size > 0


@pytest.fixture(scope="module")
def dev():
    return Device()


CASES = [  # M, N, K, programs
    (1000, 1112, 520, 8),    # ragged; 9 K steps, not a multiple of the slots
    (300, 264, 40, 3),       # K shorter than one tile
    (1024, 2048, 1024, 7),   # uneven tiles per program
    (256, 512, 200, 16),     # more programs than tiles: some walk none
    (2048, 2048, 64, 132),   # one K step per tile
]


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,programs", CASES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("stages", [None, 4])
@pytest.mark.parametrize("specialize", ["", "0"])
@pytest.mark.parametrize("kernel", ["matmul_persistent", "matmul_persistent_range"])
@pytest.mark.parametrize("tiles", ["128x256", "64x64", "64x256"])
def test_persistent_matmul_matches_float64(dev, monkeypatch, M, N, K, programs, dtype,
                                           stages, specialize, kernel, tiles):
    """64x64 and 64x256 tiles: one consumer warpgroup beside the producer
    (64x64 hung before the registers followed the setmaxnreg plan; 64x256
    needs more than the plan)."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("TMA wgmma rings are sm_90 only")
    monkeypatch.setenv("TILE_WARP_SPECIALIZE", specialize)
    K_ = _bench_kernels()
    kern = getattr(K_, kernel)
    kern = kern.replace_hints(num_stages=stages) if stages else kern
    tdt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(M * N + K + programs)
    a = torch.randn(M, K, generator=gen).to(tdt).cuda()
    b = torch.randn(K, N, generator=gen).to(tdt).cuda()
    c = torch.full((M, N), float("nan"), dtype=tdt, device="cuda")
    bm, bn = (int(x) for x in tiles.split("x"))
    cfg = dict(BM=bm, BN=bn, BK=64, GROUP=8)
    kern[(programs,)](a, b, c, **cfg)
    ptx = kern.compile(a, b, c, **cfg).asm["ptx"]
    assert ("setmaxnreg" in ptx) == (specialize == "")
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    tol = 2e-3 if dtype == "float16" else 1e-2
    assert_close(got, want, rtol=tol, atol=tol * np.sqrt(K) + tol)


@tile.kernel
def persistent_bias_relu(a, b, bias, c, BM: tile.Constant[int], BN: tile.Constant[int],
                         BK: tile.Constant[int]):
    """A persistent matmul with a fused epilogue (bias, ReLU, cast), written
    as a `for` over the block's tiles."""
    num_n = tile.cdiv(b.shape[1], BN)
    for t in range(tile.bid(0), tile.cdiv(a.shape[0], BM) * num_n, tile.num_blocks(0)):
        pm, pn = t // num_n, t % num_n
        acc = tile.zeros((BM, BN), tile.float32)
        for k in tile.range(tile.cdiv(a.shape[1], BK)):
            acc = tile.mma(tile.load(a, index=(pm, k), shape=(BM, BK)),
                           tile.load(b, index=(k, pn), shape=(BK, BN)), acc)
        y = acc + tile.load(bias, index=(pn,), shape=(BN,)).astype(tile.float32)[None, :]
        tile.store(c, index=(pm, pn), tile=tile.maximum(y, 0.0).astype(c.dtype))


@pytest.mark.numerics
@pytest.mark.parametrize("M,N,K,programs", [(1000, 1112, 520, 8), (300, 512, 40, 3)])
def test_persistent_fused_epilogue(M, N, K, programs):
    """The epilogue's bias, ReLU and cast stay fused; on sm_90 the ring gets
    the producer and the fused result leaves by TMA bulk copies, four
    128-byte panels of 256 columns (with TILE_TMA_STORES=0: staged, in
    16-byte stores where N is a multiple of 16 elements)."""
    dev = Device()
    on_gpu = dev.backend == "cuda"
    dtype = np.float16 if on_gpu else np.float32
    rng = np.random.default_rng(M + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    bias = rng.standard_normal(N).astype(np.float32)
    c = dev.poisoned((M, N), dtype)
    cfg = dict(BM=128, BN=256, BK=64) if on_gpu else dict(BM=32, BN=64, BK=16)
    args = (dev.put(a), dev.put(b), dev.put(bias), c)
    persistent_bias_relu[(programs,)](*args, **cfg)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    tol = 2e-3 if on_gpu else 1e-5
    assert_close(dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K) + tol)
    if on_gpu and dev.torch.cuda.get_device_capability()[0] == 9:
        ptx = persistent_bias_relu.compile(*args, **cfg).asm["ptx"]
        assert "setmaxnreg" in ptx
        if os.environ.get("TILE_TMA_STORES", "1").strip() != "0":
            assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 4
            assert "st.global.v4" not in ptx
        else:
            assert ptx.count("st.global.v4.b32") == (16 if N % 16 == 0 else 0)
