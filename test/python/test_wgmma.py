"""Matmul loops in the shapes that take sm_90's warpgroup mma (wgmma) path:
128-row tiles on 8 warps, 64-row tiles on 4, N of 64 to 256, K steps of 64
(128-byte swizzled panels) or 32 (64-byte),
f16 and bf16 into f32, with ragged edges in M, N and K (zero-filled copies
into the swizzled ring). On other backends the same kernels run their own
way. Checked against NumPy in float64 with the output poisoned first."""

import os
import subprocess
import tempfile

import numpy as np
import pytest

import tile
from tilehelp import Device, assert_close

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def dev():
    return Device()


@tile.kernel
def matmul(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(a.shape[1], BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(pm, pn), tile=acc)


CASES = [  # M, N, K, BM, BN, BK
    (256, 256, 256, 128, 256, 64),
    (200, 328, 136, 128, 256, 64),   # ragged everywhere
    (128, 192, 64, 128, 64, 64),
    (130, 100, 520, 64, 128, 64),    # one warpgroup, many K steps
    (64, 256, 8, 64, 256, 64),       # K shorter than one step
    (200, 264, 520, 128, 256, 32),   # 64-byte swizzled A, an 8-slot ring
]


@pytest.mark.parametrize("M,N,K,BM,BN,BK", CASES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_wgmma_shaped_matmul(dev, M, N, K, BM, BN, BK, dtype):
    if dtype == "bfloat16" and dev.backend != "cuda":
        pytest.skip("NumPy has no bfloat16")
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    ad, bd = dev.put(a), dev.put(b)
    if dtype == "bfloat16":
        ad, bd = ad.to(dev.torch.bfloat16), bd.to(dev.torch.bfloat16)
        a = ad.float().cpu().numpy()
        b = bd.float().cpu().numpy()
    c = dev.poisoned((M, N), np.float32)
    matmul[(tile.cdiv(M, BM), tile.cdiv(N, BN))](ad, bd, c, BM=BM, BN=BN, BK=BK)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # f32 accumulation of exact f16/bf16 products: a few ulps of f32 per term.
    assert_close(dev.get(c), want, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.gpu
def test_wgmma_in_the_binary_on_hopper(dev):
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("wgmma is sm_90 only")
    a = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda")
    k = matmul.compile(a, b, c, BM=128, BN=256, BK=64)
    assert "wgmma.mma_async.sync.aligned.m64n256k16" in k.asm["ptx"]
    assert k.num_warps == 8
    # The SASS has the warpgroup tensor-core instruction (HGMMA), when a
    # disassembler is around (Triton ships cuobjdump).
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump to read the SASS with")
    sass = _sass(tool, k.asm["cubin"])
    assert "HGMMA" in sass, sass[:2000]
    # TMA is the default for 16-byte rows: the operands arrive by UTMALDG
    # (a cp.async ring would show LDGSTS instead).
    assert "UTMALDG" in sass and "LDGSTS" not in sass, sass[:2000]


def _cuobjdump():
    import shutil
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        import triton
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia",
                        "bin", "cuobjdump")
    return path if os.path.exists(path) else None


def _sass(tool, cubin):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, "-sass", f.name], capture_output=True,
                              text=True, timeout=120).stdout
