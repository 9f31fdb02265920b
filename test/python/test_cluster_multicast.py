"""Thread-block clusters of two (cuTile's `num_ctas` hint, issue 17):
tile-cluster-multicast runs a warp-specialized ring's kernel as clusters of
neighbouring blocks, and a block both CTAs copy (a matmul's B in grouped
order, attention's K and V) is read from L2 once: TMA multicasts it into
both CTAs, each issuing half of its panels, and both CTAs' consumers
release every slot. The runtime launches clusters where grid axis 0 is
even; otherwise the kernel runs alone and shares nothing.

Without a GPU: the PTX (ptxas only), the kernels left alone, and the
launch on the fake libcuda. A persistent kernel pairs the k-th tiles of
its two CTAs where both walk as many tiles. With one: the numbers against float64, with
grids that form clusters and grids that cannot, pairs that share a block
and pairs that do not."""

import os
import re

import numpy as np
import pytest

from test_cuda_launch import _fake_cuda, _have_ptxas, _run_on_fake_driver
from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")

# The bench's kernels asking for clusters of two, for tilec.
PAIRS = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("bench_kernels", {BENCH!r})
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)
matmul = K.matmul.replace_hints(num_ctas=2)
matmul_persistent = K.matmul_persistent.replace_hints(num_ctas=2)
matmul_persistent_range = K.matmul_persistent_range.replace_hints(num_ctas=2)
attention = K.attention.replace_hints(num_ctas=2)
"""

MATMUL_SIG = "f16[1024,1024], f16[1024,1024], f16[1024,1024]"
CLUSTER_PTX = ("mbarrier::complete_tx::bytes.multicast::cluster", "barrier.cluster.arrive", "barrier.cluster.wait",
               "%cluster_nctarank", "mapa.shared::cluster",
               "mbarrier.arrive.shared::cluster.b64")


def _pairs_ptx(tmp_path, kernel, args, consts, emit="ptx"):
    src = tmp_path / "pairs.py"
    src.write_text(PAIRS)
    cmd = [str(src) + "::" + kernel, "--args", args, "--target", "sm_90", "--emit", emit]
    for name, value in consts.items():
        cmd += ["-D", f"{name}={value}"]
    return run_tilec(cmd, tmp_path).stdout


@needs_sm90
@pytest.mark.parametrize("bm,bn,threads", [(64, 128, 256), (128, 256, 384)])
def test_clustered_matmul_ptx(tmp_path, bm, bn, threads):
    """num_ctas=2 gives the block-per-tile matmul a producer warpgroup (by
    default only persistent and attention rings get one) and the cluster's
    pieces: multicast copies, the cluster barriers, the remote release; it
    assembles without spills."""
    ptx = _pairs_ptx(tmp_path, "matmul", MATMUL_SIG, dict(BM=bm, BN=bn, BK=64, GROUP=8))
    for piece in CLUSTER_PTX:
        assert piece in ptx, piece
    assert f".maxntid {threads}, 1, 1" in ptx
    assert re.search(r"setmaxnreg.dec.sync.aligned.u32\s+40;", ptx)
    # The remote release is .release.cta (CUTLASS's): .release.cluster
    # made ptxas fence the whole GPU (MEMBAR.ALL.GPU) before every arrive.
    assert "arrive.release.cluster" not in ptx
    # A copy the pair does not share (A's; B's where the pair's blocks
    # differ) is the plain copy, not a multicast to this CTA alone.
    assert re.search(r"global\.tile\.mbarrier::complete_tx::bytes \[", ptx)
    # The epilogue stores by TMA, through the dead ring's bytes past the
    # cluster's barriers (kept until the CTAs part): no 4-byte stores.
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
    assert "st.global" not in ptx
    # Not a compile-time cluster: launches that cannot form one still run.
    assert ".reqnctapercluster" not in ptx and ".explicitcluster" not in ptx
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"cluster_{bm}x{bn}")


@needs_sm90
def test_matmul_without_the_hint_has_no_cluster(tmp_path):
    ptx = run_tilec([BENCH + "::matmul", "--args", MATMUL_SIG, "-D", "BM=64", "-D", "BN=128",
                     "-D", "BK=64", "-D", "GROUP=8", "--target", "sm_90", "--emit", "ptx"],
                    tmp_path).stdout
    for piece in CLUSTER_PTX:
        assert piece not in ptx, piece
    assert "setmaxnreg" not in ptx


@needs_sm90
@pytest.mark.parametrize("kernel", ["matmul_persistent", "matmul_persistent_range"])
def test_persistent_matmul_pairs_its_tiles(tmp_path, kernel):
    """The persistent walk (a `while` or a `for` from tile.bid 0 by the grid)
    pairs the k-th tiles of the two CTAs: the other CTA's tile is this
    one's plus the difference of the block indices, and the kernel runs
    clustered only where both walk as many tiles (each slot's release
    waits for both)."""
    sig = "f16[4096,1024], f16[1024,4096], f16[4096,4096]"
    src = tmp_path / "pairs.py"
    src.write_text(PAIRS)
    args = [str(src) + "::" + kernel, "--args", sig, "-D", "BM=128", "-D", "BN=256",
            "-D", "BK=64", "-D", "GROUP=8", "--target", "sm_90"]
    ir = run_tilec(args + ["--emit", "pipelined"], tmp_path).stdout
    # Tiles walked from this block and from the other: max(0, ceil((n - b) / step)).
    walks = re.findall(r"arith.ceildivsi %\w+, %\w+ : i32\n\s+%\w+ = arith.maxsi", ir)
    assert len(walks) >= 2, ir[:3000]
    assert re.search(r"tilegpu.tma_load .* multicast %\w+, rank", ir)
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    for piece in CLUSTER_PTX:
        assert piece in ptx, piece
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"cluster_{kernel}")


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
def test_attention_shares_k_and_v_unless_causal(tmp_path, causal):
    """Neighbouring query blocks of one head read the same K and V blocks;
    causal attention's trip count depends on the query block, so its
    kernel is left alone."""
    sig = "f16[8,1024,128], f16[8,1024,128], f16[8,1024,128], f16[8,1024,128], f32"
    ptx = _pairs_ptx(tmp_path, "attention", sig, dict(BM=128, BN=128, D=128, CAUSAL=causal))
    for piece in CLUSTER_PTX:
        assert (piece in ptx) == (not causal), piece


# sm_90's shared memory per block, opted in (227 KB).
SM90_SHARED_BYTES = 232448


@needs_sm90
@pytest.mark.parametrize("d", [64, 128])
def test_clustered_attention_fits_shared_memory(tmp_path, d):
    """The empty barriers outlive a clustered ring (the other CTA may still
    release a slot); they sit below the ring, so the epilogue's scratch
    reuses the dead ring. Past them, attention at D 128 asked for 256 KB
    and its launch failed on the H100."""
    sig = ", ".join([f"f16[8,1024,{d}]"] * 4) + ", f32"
    gpu = _pairs_ptx(tmp_path, "attention", sig, dict(BM=128, BN=128, D=d, CAUSAL=False),
                     emit="gpu")
    shared = int(re.search(r"tile\.shared_mem = (\d+)", gpu).group(1))
    assert shared <= SM90_SHARED_BYTES, shared
    assert "nvvm.cluster.wait" in gpu and "multicast" in gpu  # it is clustered


@needs_sm90
def test_clustered_backward_rings_are_tma_aligned(tmp_path):
    """The dK/dV kernel in clusters streams the query blocks' lse and delta
    rows (dense f32 rings) by TMA beside its barriers; at 16-byte alignment
    the lse ring landed at byte 32, after the barriers, and every launch in
    clusters faulted (misaligned address, H100). Every dense ring now
    starts 128-byte aligned, and the copies are multicast."""
    kernel = "attention_dkdv"
    blocks, rows = "f16[4,1024,128]", "f32[4,1024]"
    sig = ", ".join([blocks] * 4 + [rows] * 2 + [blocks] * 2 + ["i32", "f32"])
    example = os.path.join(ROOT, "examples", "flash_attention_backward.py")
    cmd = [f"{example}::{kernel}", "--args", sig, "--num-ctas", "2", "--target", "sm_90",
           "--emit", "pipelined,ptx", "-o", str(tmp_path / "out")]
    for name, value in dict(BM=64, BN=128, D=128, CAUSAL=False).items():
        cmd += ["-D", f"{name}={value}"]
    run_tilec(cmd, tmp_path)
    ir = (tmp_path / "out" / f"{kernel}.pipelined.mlir").read_text()
    dense = re.findall(r"alloc_shared \{offset = (\d+) : i64\} : "
                       r"!tilegpu\.shared<1x\d+xf32, slots = \d+>", ir)
    assert len(dense) == 2, "the lse and delta rings"
    assert all(int(offset) % 128 == 0 for offset in dense), dense
    assert "multicast::cluster" in (tmp_path / "out" / f"{kernel}.ptx.ptx").read_text()


FAKE_SCRIPT = """
import ctypes, importlib.util, json, sys
from tile import backend
from tile.hints import with_target_hints
from tile.tilec import AbstractArray

spec = importlib.util.spec_from_file_location("k", BENCH)
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)
M, N, Kd = 512, 512, 128
f16 = lambda *shape: AbstractArray("float16", shape)
ir = K.matmul.trace(f16(M, Kd), f16(Kd, N), f16(M, N), BM=64, BN=128, BK=64, GROUP=8)
_tile = backend.load()
fake = ctypes.CDLL(sys.argv[1])
fake.fake_cuda_reset(0)
out = {}
for ctas in (1, 2):
    text = with_target_hints(ir, {"occupancy": None, "num_ctas": ctas}, "sm_90")
    k = _tile.compile(text, "sm_90", backend.compile_options(0, 3))
    A, B, C = 0x7f00_0001_0000, 0x7f00_0002_0000, 0x7f00_0003_0000
    args = (A, M, Kd, Kd, 1, B, Kd, N, N, 1, C, M, N, N, 1)
    for grid in (32, 31):
        k.launch((grid, 1, 1), args, 0)
        out[f"{ctas}/{grid}"] = [fake.fake_cuda_grid(0), fake.fake_cuda_cluster_dim()]
    out[f"size{ctas}"] = k.cluster_size
print(json.dumps(out))
"""


@pytest.mark.skipif(_fake_cuda() is None, reason="fake libcuda not built")
@pytest.mark.skipif(not _have_ptxas(), reason="needs ptxas")
@pytest.mark.parametrize("run", ["compiled", "cached"])
def test_launch_forms_clusters_where_the_grid_divides(tmp_path, run):
    """The binary says it runs in pairs (also when it comes from the disk
    cache); a launch of 32 blocks asks the driver for clusters of two
    (cuLaunchKernelEx), one of 31 launches plain blocks."""
    script = FAKE_SCRIPT.replace("BENCH", repr(BENCH))
    r = _run_on_fake_driver(script, tmp_path)
    if run == "cached":
        r = _run_on_fake_driver(script, tmp_path)
    assert r["size1"] == 1 and r["size2"] == 2
    assert r["1/32"] == [32, 1] and r["1/31"] == [31, 1]
    assert r["2/32"] == [32, 2] and r["2/31"] == [31, 1]


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,tiles", [
    (1024, 1024, 1024, "64x128"),   # 128 blocks: every pair shares B
    (192, 384, 136, "64x128"),      # 9 blocks: no clusters; ragged K
    (1000, 1112, 520, "128x256"),   # 40 blocks; ragged M, N, K
    (640, 1024, 64, "64x128"),      # groups of 8 then 2 rows: pairs in both
    (448, 512, 200, "64x128"),      # a last group of 7 rows: a pair across groups
])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_clustered_matmul_matches_float64(dev, M, N, K, tiles, dtype):
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("clusters and TMA multicast are sm_90 here")
    kern = _bench_kernels().matmul.replace_hints(num_ctas=2)
    tdt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(M + N + K)
    a = torch.randn(M, K, generator=gen).to(tdt).cuda()
    b = torch.randn(K, N, generator=gen).to(tdt).cuda()
    c = torch.full((M, N), float("nan"), dtype=tdt, device="cuda")
    bm, bn = (int(x) for x in tiles.split("x"))
    cfg = dict(BM=bm, BN=bn, BK=64, GROUP=8)
    grid = (-(-M // bm) * -(-N // bn),)
    kern[grid](a, b, c, **cfg)
    compiled = kern.compile(a, b, c, **cfg)
    assert "multicast::cluster" in compiled.asm["ptx"]
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    tol = 2e-3 if dtype == "float16" else 1e-2
    assert_close(got, want, rtol=tol, atol=tol * np.sqrt(K) + tol)


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,programs", [
    (1024, 2048, 1024, 8),   # 64 tiles over 8 programs: pairs walk alike
    (1000, 1112, 520, 8),    # 40 tiles; ragged
    (640, 768, 200, 4),      # 15 tiles: one pair walks 4 and 3, unclustered
    (256, 512, 64, 16),      # more programs than tiles
    (384, 512, 136, 7),      # an odd grid: no clusters at all
])
@pytest.mark.parametrize("kernel", ["matmul_persistent", "matmul_persistent_range"])
def test_clustered_persistent_matmul_matches_float64(dev, M, N, K, programs, kernel):
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("clusters and TMA multicast are sm_90 here")
    kern = getattr(_bench_kernels(), kernel).replace_hints(num_ctas=2)
    gen = torch.Generator().manual_seed(M + N + K + programs)
    a = torch.randn(M, K, generator=gen).half().cuda()
    b = torch.randn(K, N, generator=gen).half().cuda()
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    cfg = dict(BM=128, BN=256, BK=64, GROUP=8)
    kern[(programs,)](a, b, c, **cfg)
    assert "multicast::cluster" in kern.compile(a, b, c, **cfg).asm["ptx"]
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    assert_close(got, want, rtol=2e-3, atol=2e-3 * np.sqrt(K) + 2e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("L,heads", [(1024, 4), (520, 3)])
def test_clustered_attention_matches_float64(dev, L, heads):
    """Non-causal attention in pairs of query blocks (K and V shared); L
    520 gives 5 query blocks per head, so grid axis 0 is odd: no clusters."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("clusters and TMA multicast are sm_90 here")
    kern = _bench_kernels().attention.replace_hints(num_ctas=2)
    gen = torch.Generator().manual_seed(L + heads)
    q, k, v = (torch.randn(heads, L, 128, generator=gen).half().cuda() for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 128 ** -0.5
    kern[(-(-L // 128), heads)](q, k, v, o, scale, BM=128, BN=128, D=128, CAUSAL=False)
    qd, kd, vd = (t.double().cpu() for t in (q, k, v))
    n_kv = L // 128 * 128  # the kernel reads whole key blocks (as the bench)
    s = qd @ kd[:, :n_kv].transpose(1, 2) * scale
    want = torch.softmax(s, dim=-1) @ vd[:, :n_kv]
    got = o.double().cpu()
    assert not torch.isnan(got).any()
    assert_close(got.numpy(), want.numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("seq", [1024, 333])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_clustered_backward_matches_float64(dev, d, causal, seq):
    """The attention backward's dK/dV and dQ kernels in clusters of two
    (non-causal pairs share each streamed query or key block; causal ones
    run alone; 333 rows give 3 blocks a head: odd grids, no clusters) against float64 NumPy,
    gradients poisoned. These launches faulted before dense rings were
    128-byte aligned."""
    from test_fused_backward import _fresh_example, check_backward
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("clusters and TMA multicast are sm_90 here")
    fab = _fresh_example(f"fab_pairs{d}{causal}{seq}")
    fab.attention_dkdv = fab.attention_dkdv.replace_hints(num_ctas=2)
    fab.attention_dq = fab.attention_dq.replace_hints(num_ctas=2)
    check_backward(torch, fab, d, seq, causal, fused=False, seed=d + seq + causal)

def test_hints_join_the_kernel_attributes():
    """occupancy and num_ctas both reach the kernel's attributes on CUDA
    targets; a cluster of one, or the CPU, adds nothing."""
    from tile.hints import with_target_hints
    text = "func.func @k() attributes {tile.kernel} {"
    both = with_target_hints(text, {"occupancy": 2, "num_ctas": 2}, "sm_90")
    assert "attributes {tile.kernel, tile.num_ctas = 2 : i32, tile.occupancy = 2 : i32}" in both
    assert with_target_hints(text, {"occupancy": None, "num_ctas": 2}, "cpu") == text
    assert with_target_hints(text, {"occupancy": None, "num_ctas": 1}, "sm_90") == text
