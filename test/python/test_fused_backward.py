"""The attention backward's five products in one kernel on sm_90 (issue 19),
behind TILE_STAGED_MMA=1 (tile-tiling's staged-operands). Correct on the
H200 since the wgmma descriptors keep their high word apart (2026-12-05),
but slower than the two-kernel backward there (0.54-0.58x SDPA against
0.71-0.73x), so by default the kernel keeps mma.sync.
attention_dkdvdq of examples/flash_attention_backward.py, whose dQ = dS K
of 64 queries tile-tiling computes as dQ^T = K^T dS^T (a warpgroup mma over
the head dimension's 128 rows), with dS^T written into a swizzled shared
buffer every iteration (tilegpu.stage_operand) and K read M-major from the
block TMA copied once. The dQ atomics let Q and dO stream through a TMA
ring: the runtime refuses launches where the atomically updated array
shares memory with one the ring reads.

Without a GPU: the pipelined IR and the PTX (ptxas only). With one: the
gradients against float64 (test_example_kernels' sm90 blocks cover the
numbers too) and the refused overlap."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "flash_attention_backward.py")


@pytest.fixture(scope="module")
def dev():
    return Device()


def _fresh_example(name):
    """A copy of the example of its own, whose kernels compile afresh (the
    TILE_* switches are read when a kernel compiles)."""
    import importlib.util
    sys.path.insert(0, os.path.dirname(EXAMPLE))
    spec = importlib.util.spec_from_file_location(name, EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_backward(torch, fab, d, seq, causal, fused, seed, in_place=None):
    """The backward of module `fab` (a fresh copy of the example) at the
    bench's blocks (sm90_blocks), two heads of `seq` f16 random rows,
    gradients poisoned, against float64 NumPy (`in_place`: backward's
    dkdv_in_place)."""
    rng = np.random.default_rng(seed)
    q, k, v, dout = (rng.standard_normal((2, seq, d)).astype(np.float16) for _ in range(4))
    tdev = fab._TorchDevice()
    qt, kt, vt, dot = (torch.tensor(x, device="cuda") for x in (q, k, v, dout))
    out, lse = fab.forward(tdev, qt, kt, vt, causal, 64, 64)
    kv_blocks, q_blocks = fab.sm90_blocks(d)
    grads = fab.backward(tdev, qt, kt, vt, out, lse, dot, causal, 64, 64,
                         dkdv_blocks=kv_blocks, dq_blocks=q_blocks, fused_dq=fused,
                         dkdv_in_place=in_place)
    wide = [x.astype(np.float64) for x in (q, k, v, dout)]
    for g, want in zip(grads, fab.reference_grads(*wide, d ** -0.5, causal)):
        assert_close(g.double().cpu().numpy(), want, rtol=3e-2, atol=3e-2)


def _sig(d):
    blocks = f"f16[128,4096,{d}]"
    return ", ".join([blocks] * 4 + ["f32[128,4096]"] * 2 + [blocks] * 2 +
                     [f"f32[128,4096,{d}]", "i32", "f32"])


def _fused_stages(tmp_path, d, causal, **env):
    bm = 64 if d == 128 else 128  # sm90_blocks: 64 queries a step at d 128
    env.setdefault("TILE_STAGED_MMA", "1")
    run_tilec([EXAMPLE + "::attention_dkdvdq", "--args", _sig(d), "-D", f"BM={bm}", "-D",
               "BN=128", "-D", f"D={d}", "-D", f"CAUSAL={causal}", "--target", "sm_90",
               "--emit", "all", "-o", str(tmp_path / "out")], tmp_path, **env)
    read = lambda stage: (tmp_path / "out" / f"attention_dkdvdq.{stage}").read_text()  # noqa: E731
    return read("pipelined.mlir"), read("ptx.ptx")


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_fused_backward_products_are_warpgroup_mmas(tmp_path, d, causal):
    """Every product of the fused kernel is a wgmma (before: dQ's product
    kept the whole loop on mma.sync, 255 registers and 2 KB of spills).
    d 128, 64 queries a step: S^T, dP^T (m64n64k16, K = 128) and dQ^T =
    K^T dS^T (m64n64k16, K = 128 keys), dV, dK (m64n128k16, K = 64). d 64,
    128 queries: S^T, dP^T (m64n128k16, K = 64), dV, dK (m64n64k16, K =
    128) and dQ = dS K (m64n64k16, dS^T staged as A^T). Q and dO through a
    TMA ring filled by a producer warpgroup (the lse and delta rows stay
    loads: their bytes go to tile-bulk-reduce's buffer); the kernel records
    that dQ's array and the ring's may not overlap."""
    pipelined, ptx = _fused_stages(tmp_path, d, causal)
    assert "tilegpu.stage_operand" in pipelined
    assert re.search(r"tilegpu.mma .*\{a_transposed", pipelined)
    # dq_acc (argument 8) against Q (0) and dO (3), the ring's arrays.
    assert re.search(r"tile.disjoint_arrays = array<i32: 8, 0, 8, 3>", pipelined)
    assert "tilegpu.warp_specialized" in pipelined
    shapes = re.findall(r"wgmma.mma_async.sync.aligned.(m64n\d+k16)", ptx)
    # tile-split-uniform-masks: the query blocks whose mask is all true run
    # a copy of the loop without it, between the masked diagonal (causal)
    # and the masked blocks past `seq`.
    copies = 3 if causal else 2
    if d == 128:
        assert shapes.count("m64n64k16") == 3 * 8 * copies
        assert shapes.count("m64n128k16") == 2 * 4 * copies
    else:
        assert shapes.count("m64n128k16") == 2 * 4 * copies
        assert shapes.count("m64n64k16") == 3 * 8 * copies
    assert "mma.sync" not in ptx
    assert "fence.proxy.async.shared::cta" in ptx
    assert "cp.async.bulk.tensor" in ptx
    # Each descriptor's high word (stride offset, swizzle) is or-ed onto its
    # low word: ptxas dropped it from a 64-bit add of the warpgroup offset
    # (the M-major A read unswizzled on the H200, 2026-12-05).
    assert not re.search(r"add\.s64\s+%rd\d+, %rd\d+, \d{11,};", ptx)
    assert "or.b64" in ptx
    report = _ptxas_info(tmp_path, ptx, "dkdvdq")
    used = int(re.search(r"Used (\d+) registers", report).group(1))
    assert used <= 168, report


@needs_sm90
@pytest.mark.parametrize("d", [64, 128])
def test_fused_backward_bulk_reduce(tmp_path, d):
    """TILE_BULK_REDUCE=1 (tile-bulk-reduce): dQ is added by TMA bulk
    reductions from a 32 KB buffer beside the others (each warpgroup its
    64 rows as two 128-byte-wide boxes) instead of per-element atomics;
    the kernel still fits in shared memory. Off by default: the atomics."""
    pipelined, ptx = _fused_stages(tmp_path, d, False, TILE_BULK_REDUCE="1")
    assert "tilegpu.bulk_reduce_add" in pipelined and "tilegpu.bulk_wait" in pipelined
    assert re.search(r"tensor_map<1x64x32xf32, swizzle = 128>", pipelined)
    # Two boxes in each of the two copies of the loop (the unmasked one of
    # tile-split-uniform-masks and the masked one past `seq`).
    assert ptx.count("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile") == 2 * 2
    assert not re.search(r"\b(atom|red)\.global", ptx)
    assert int(re.search(r"shared_bytes = (\d+)", pipelined).group(1)) <= 227 * 1024
    report = _ptxas_info(tmp_path, ptx, "dkdvdq_bulk")
    # The staging stores of dS^T and dQ derive their addresses where they
    # run (threadIdXInPlace): hoisted out of the loop they were about 60
    # registers ptxas spilled and reloaded every iteration (512 bytes of
    # spill stores at d 128, 264 at d 64; then 116 and 100). So do the
    # descriptors of dQ's product (its A, K, is invariant): 116 -> 60 at
    # d 128.
    spilled = int(re.search(r"(\d+) bytes spill stores", report).group(1))
    assert spilled <= (64 if d == 128 else 128), report
    _, default_ptx = _fused_stages(tmp_path / "default", d, False)
    assert "cp.reduce.async.bulk" not in default_ptx and "atom.global.add.f32" in default_ptx


@needs_sm90
def test_fused_backward_default_keeps_mma_sync(tmp_path):
    """Without TILE_STAGED_MMA the fused kernel compiles as before this work:
    mma.sync for every product, no staged operand, no ring."""
    pipelined, ptx = _fused_stages(tmp_path, 128, False, TILE_STAGED_MMA="")
    assert "tilegpu.stage_operand" not in pipelined and "disjoint_arrays" not in pipelined
    assert "wgmma.mma_async" not in ptx and "mma.sync" in ptx


FAKE_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    sys.path.insert(0, sys.argv[2])
    import tile
    import flash_attention_backward as fab

    class Dev:
        def __init__(self, ptr, shape, typestr):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                             "typestr": typestr, "strides": None,
                                             "version": 3}

    fake = ctypes.CDLL(sys.argv[1])
    fake.fake_cuda_reset(1)
    bh, seq, d = 2, 256, 128
    at = lambda i: 0x7f0000000000 + i * 0x1000000
    q, k, v, dout = (Dev(at(i), (bh, seq, d), "<f2") for i in range(4))
    lse, delta = (Dev(at(4 + i), (bh, seq), "<f4") for i in range(2))
    dk, dv = (Dev(at(6 + i), (bh, seq, d), "<f2") for i in range(2))
    kernel = fab.attention_dkdvdq[(seq // 128, bh)]
    out = {}
    for name, acc in (("apart", at(8)), ("over_q", at(0) + 4096), ("over_dout", at(3)),
                      ("over_k", at(1))):
        try:
            kernel(q, k, v, dout, lse, delta, dk, dv, Dev(acc, (bh, seq, d), "<f4"),
                   seq, d ** -0.5, BM=64, BN=128, D=d, CAUSAL=False)
            out[name] = None
        except tile.TileLaunchError as e:
            out[name] = str(e)
    out["launches"] = fake.fake_cuda_launches()
    print(json.dumps(out))
""")


def _fake_cuda():
    import glob
    found = glob.glob(os.path.join(ROOT, "build*", "test", "unittests", "runtime",
                                   "libtile_fake_cuda.so"))
    return max(found, key=os.path.getmtime) if found else None


@pytest.mark.skipif(_fake_cuda() is None, reason="fake libcuda not built")
def test_fused_backward_overlap_refused_on_the_fake_driver(tmp_path):
    """On the fake sm_90 driver: dQ's f32 array over Q's or dO's memory
    (the TMA ring reads them ahead of the atomic updates) is refused,
    naming the kernel and both parameters; over K (copied once, before the
    loop) or apart, the kernel launches."""
    env = dict(os.environ, TILE_LIBCUDA=_fake_cuda(), TILE_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.join(ROOT, "python-frontend"), TILE_STAGED_MMA="1")
    env.pop("TILE_BACKEND", None)
    # The second process loads the kernel from the disk cache: the pairs
    # come back with it.
    for run in range(2):
        proc = subprocess.run([sys.executable, "-c", FAKE_SCRIPT, _fake_cuda(),
                               os.path.dirname(EXAMPLE)],
                              capture_output=True, text=True, timeout=600, env=env)
        if "built without the GPU backend" in proc.stderr:
            pytest.skip("this _tile has no GPU backend")
        assert proc.returncode == 0, proc.stderr
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        assert r["apart"] is None and r["over_k"] is None
        for name, read in (("over_q", 0), ("over_dout", 3)):
            assert "attention_dkdvdq" in r[name], r[name]
            assert "array parameter 8, which it updates atomically" in r[name], r[name]
            assert f"shares memory with array parameter {read}" in r[name], r[name]
        assert r["launches"] == 2




@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_fused_backward_refuses_overlapping_arrays(dev, monkeypatch, causal):
    """dQ's f32 array laid over Q's memory: the ring would read Q ahead of
    the atomic updates, so the launch is refused with both parameters
    named; the same arrays apart launch."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the TMA ring of the fused backward is sm_90 only")
    monkeypatch.setenv("TILE_STAGED_MMA", "1")
    fab = _fresh_example("fab_overlap")
    bh, seq, d = 2, 256, 128
    gen = torch.Generator().manual_seed(7)
    storage = torch.zeros(bh * seq * d * 4, dtype=torch.uint8, device="cuda")
    q = storage[: bh * seq * d * 2].view(torch.float16).view(bh, seq, d)
    q.copy_(torch.randn(bh, seq, d, generator=gen).half())
    k, v, dout = (torch.randn(bh, seq, d, generator=gen).half().cuda() for _ in range(3))
    lse, delta = (torch.zeros(bh, seq, device="cuda") for _ in range(2))
    dk, dv = (torch.empty(bh, seq, d, dtype=torch.float16, device="cuda") for _ in range(2))
    overlapping = storage.view(torch.float32).view(bh, seq, d)
    apart = torch.zeros(bh, seq, d, device="cuda")
    kernel = fab.attention_dkdvdq[(seq // 128, bh)]
    args = dict(BM=64, BN=128, D=d, CAUSAL=causal)
    with pytest.raises(Exception, match="shares memory with array parameter 0"):
        kernel(q, k, v, dout, lse, delta, dk, dv, overlapping, seq, d ** -0.5, **args)
    kernel(q, k, v, dout, lse, delta, dk, dv, apart, seq, d ** -0.5, **args)
    torch.cuda.synchronize()
    assert torch.isfinite(apart).all()


@pytest.mark.gpu
@pytest.mark.parametrize("bulk", ["", "1"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq", [256, 333])
@pytest.mark.parametrize("d", [64, 128])
def test_fused_backward_matches_float64(dev, monkeypatch, d, seq, causal, bulk):
    """The fused backward at the bench's blocks (sm90_blocks: 64 or 128
    queries a step, 128 keys a program), ragged lengths included,
    gradients poisoned, against float64 NumPy; dQ by atomics and by bulk
    reductions (TILE_BULK_REDUCE=1, fresh kernels: the option is read at
    compile time)."""
    torch = dev.torch
    monkeypatch.setenv("TILE_BULK_REDUCE", bulk)
    monkeypatch.setenv("TILE_STAGED_MMA", "1")
    check_backward(torch, _fresh_example(f"fab_bulk{bulk}"), d, seq, causal, fused=True,
                   seed=seq + causal)
