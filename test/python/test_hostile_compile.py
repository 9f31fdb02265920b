"""Issue 13, items 13 and 17: valid kernels the compiler rejected or took
minutes over.

- Column vectors ((n, 1), (1, 1)): both strides are 1, so the array type
  claims strides [1, 1]; a load whose tile is wider than the array (padding
  fills the rest) failed in the CPU lowering ("memref.cast ... are cast
  incompatible"). The kernels here run on the available backend against
  NumPy, outputs poisoned, and are compiled for sm_90 (PTX through ptxas)
  wherever the GPU backend is built.
- A ragged f16 matmul with a huge K tile (the example matmul at BK = 2048 on
  sm_90) took 33 s and 0.8 GB to compile, growing cubically in BK.
"""

import os
import re
import shutil
import subprocess
import time

import numpy as np
import pytest

import tile
from tile import backend
from tilehelp import ROOT, Device, assert_close

TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")
EXAMPLES = os.path.join(ROOT, "examples")

needs_tile = pytest.mark.skipif(backend.find_module_file() is None,
                                reason="_tile module not built")

_gpu_ok = None


def gpu_compiler():
    """Whether this _tile can compile for sm_90 and a ptxas can finish."""
    global _gpu_ok
    if _gpu_ok is None:
        ptxas = [os.environ.get("TILE_PTXAS", ""),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin",
                              "ptxas"),
                 shutil.which("ptxas") or ""]
        try:  # a module without a kernel: only the target check runs
            backend.load().compile("module {}", "sm_90", {})
            _gpu_ok = True
        except Exception as e:  # noqa: BLE001 - the stage says which failure
            _gpu_ok = getattr(e, "stage", "") != "target"
        _gpu_ok = _gpu_ok and any(p and os.access(p, os.X_OK) for p in ptxas)
    return _gpu_ok


needs_gpu_compiler = pytest.mark.skipif("not gpu_compiler()",
                                        reason="no sm_90 compiler (GPU backend, ptxas)")


def run_tilec(args, tmp_path, timeout=300):
    env = dict(os.environ)
    env.pop("TILE_DUMP_DIR", None)
    env["TILE_CACHE_DIR"] = str(tmp_path / "cache")
    start = time.monotonic()
    r = subprocess.run([TILEC, *args], capture_output=True, text=True, env=env,
                       timeout=timeout)
    return r, time.monotonic() - start


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(1317)


def padded(x, shape, pad):
    """x's block at the origin of `shape`, the rest `pad` (float64)."""
    out = np.full(shape, pad, np.float64)
    sl = tuple(slice(0, min(n, m)) for n, m in zip(x.shape, shape))
    out[sl] = x[sl]
    return out


# -- item 17: column vectors ---------------------------------------------------

@tile.kernel
def scale_block(x, y, BM: tile.Constant[int], BN: tile.Constant[int]):
    # The load is read in place (no store in between reads it): its partial
    # block's buffer is cast to the array's view type.
    t = tile.load(x, index=(tile.bid(0), 0), shape=(BM, BN), padding=-1.5)
    tile.store(y, index=(tile.bid(0), 0), tile=t * 2.0)


@tile.kernel
def copy_block(x, y, BM: tile.Constant[int], BN: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0), 0), shape=(BM, BN), padding=7.0)
    tile.store(y, index=(tile.bid(0), 0), tile=t)


@tile.kernel
def row_sums(x, y, BM: tile.Constant[int], BN: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0), 0), shape=(BM, BN), padding=0.5)
    tile.store(y, index=(tile.bid(0),), tile=tile.sum(t, axis=1))


@tile.kernel
def scale_block3(x, y, B: tile.Constant[int]):
    t = tile.load(x, index=(0, 0, 0), shape=(B, B, B), padding=3.0)
    tile.store(y, index=(0, 0, 0), tile=t - 1.0)


@tile.kernel
def transpose_block(x, y, BM: tile.Constant[int], BN: tile.Constant[int]):
    t = tile.load(x, index=(0, 0), shape=(BM, BN), order=(1, 0), padding=-2.0)
    tile.store(y, index=(0, 0), tile=t + 1.0)


# (array shape, tile shape): column vectors, (1, 1), row vectors, and a
# column vector taller than one tile (several blocks, the last partial).
COLUMN_CASES = [((5, 1), (16, 4)), ((1, 1), (16, 4)), ((1, 1), (1, 16)),
                ((40, 1), (16, 8)), ((16, 1), (16, 4)), ((1, 5), (4, 8)),
                ((1, 1), (1, 1))]


def _ids(cases):
    return ["x".join(map(str, a)) + "-" + "x".join(map(str, t)) for a, t in cases]


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("kernel,pad,fn", [(scale_block, -1.5, lambda v: v * 2.0),
                                           (copy_block, 7.0, lambda v: v)],
                         ids=["scale", "copy"])
@pytest.mark.parametrize("array_shape,tile_shape", COLUMN_CASES, ids=_ids(COLUMN_CASES))
def test_column_vector_block(dev, rng, kernel, pad, fn, array_shape, tile_shape):
    x = rng.standard_normal(array_shape).astype(np.float32)
    blocks = -(-array_shape[0] // tile_shape[0])
    out_shape = (blocks * tile_shape[0], tile_shape[1])
    y = dev.poisoned(out_shape, np.float32)
    kernel[(blocks,)](dev.put(x), y, BM=tile_shape[0], BN=tile_shape[1])
    want = fn(padded(x.astype(np.float64), out_shape, pad))
    assert_close(dev.get(y), want)


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("out_shape", [(5, 1), (1, 1), (40, 1)])
def test_store_into_column_vector(dev, rng, out_shape):
    # The tile is wider than the output: only its first column lands.
    x = rng.standard_normal((48, 8)).astype(np.float32)
    y = dev.poisoned(out_shape, np.float32)
    blocks = -(-out_shape[0] // 16)
    scale_block[(blocks,)](dev.put(x), y, BM=16, BN=8)
    assert_close(dev.get(y), 2.0 * x[:out_shape[0], :1].astype(np.float64))


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("array_shape", [(5, 1), (1, 1), (33, 1)])
def test_column_vector_reduction(dev, rng, array_shape):
    x = rng.standard_normal(array_shape).astype(np.float32)
    blocks = -(-array_shape[0] // 16)
    y = dev.poisoned((blocks * 16,), np.float32)
    row_sums[(blocks,)](dev.put(x), y, BM=16, BN=4)
    want = padded(x.astype(np.float64), (blocks * 16, 4), 0.5).sum(axis=1)
    assert_close(dev.get(y), want)


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("array_shape", [(3, 1, 1), (1, 1, 1), (1, 1, 3), (2, 1, 4)])
def test_size_one_dims_rank3(dev, rng, array_shape):
    x = rng.standard_normal(array_shape).astype(np.float32)
    y = dev.poisoned((4, 4, 4), np.float32)
    scale_block3[(1,)](dev.put(x), y, B=4)
    assert_close(dev.get(y), padded(x.astype(np.float64), (4, 4, 4), 3.0) - 1.0)


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("array_shape", [(5, 1), (1, 1), (1, 5)])
def test_column_vector_transposed_load(dev, rng, array_shape):
    x = rng.standard_normal(array_shape).astype(np.float32)
    y = dev.poisoned((16, 4), np.float32)
    transpose_block[(1,)](dev.put(x), y, BM=16, BN=4)
    want = padded(x.astype(np.float64), (4, 16), -2.0).T + 1.0
    assert_close(dev.get(y), want)


@needs_tile
@needs_gpu_compiler
@pytest.mark.parametrize("kernel,args", [
    ("scale_block", "f32[5,1], f32[16,4]"),
    ("scale_block", "f32[1,1], f32[16,4]"),
    ("copy_block", "f16[40,1], f16[48,8]"),
    ("row_sums", "f32[5,1], f32[16]"),
    ("transpose_block", "f32[5,1], f32[16,4]"),
])
def test_column_vector_compiles_for_sm90(tmp_path, kernel, args):
    consts = ["-D", "BM=16", "-D", "BN=8" if "48,8" in args else "BN=4"]
    r, _ = run_tilec([f"{__file__}::{kernel}", "--args", args, *consts,
                      "--target", "sm_90", "--emit", "cubin", "-o", str(tmp_path)],
                     tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / f"{kernel}.cubin.cubin") > 0


# -- item 13: mmas with a huge K tile --------------------------------------------

MATMUL = os.path.join(EXAMPLES, "matmul.py") + "::matmul"
# The example's ragged sizes: f16 extents that are not multiples of 16.
RAGGED = "f16[192,200], f16[200,160], f32[192,160], i32"


def matmul_ptx(tmp_path, bk, args=RAGGED):
    out = tmp_path / f"bk{bk}"
    r, seconds = run_tilec([MATMUL, "--args", args, "-D", "BM=64", "-D", "BN=64",
                            "-D", f"BK={bk}", "--target", "sm_90", "--emit", "ptx,cubin",
                            "-o", str(out)], tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(out / "matmul.cubin.cubin") > 0
    return (out / "matmul.ptx.ptx").read_text(), seconds


@needs_tile
@needs_gpu_compiler
def test_long_k_matmul_compiles_in_seconds(tmp_path):
    # Was 33 s and 0.8 GB (ptxas on 2048 unrolled mma.sync per thread);
    # a loop over K chunks compiles in about a second.
    ptx, seconds = matmul_ptx(tmp_path, 2048)
    assert seconds < 20, f"BK=2048 took {seconds:.1f} s to compile for sm_90"
    assert ptx.count("mma.sync.aligned") <= 64, "the K tile was unrolled"


@needs_tile
@needs_gpu_compiler
def test_long_k_matmul_code_does_not_grow_with_k(tmp_path):
    # K = 512 and K = 4096 give the same loop over K = 64 chunks: the code
    # (and so ptxas's time) no longer grows with the tile's K.
    small, _ = matmul_ptx(tmp_path, 512)
    large, _ = matmul_ptx(tmp_path, 4096)
    assert large.count("mma.sync") == small.count("mma.sync")
    assert len(large.splitlines()) < 1.2 * len(small.splitlines())
    # Aligned arrays keep the wgmma cp.async ring at every K.
    aligned = "f16[1024,8192], f16[8192,1024], f32[1024,1024], i32"
    wg, _ = matmul_ptx(tmp_path, 4096, aligned)
    assert "wgmma.mma_async" in wg and "cp.async" in wg


@tile.kernel
def long_k_matmul(a, b, c, K, BM: tile.Constant[int], BN: tile.Constant[int],
                  BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(pm, pn), tile=acc)


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("K,BK", [(200, 1024), (1500, 512), (2048, 1024)])
def test_long_k_matmul_numerics(dev, rng, K, BK):
    # The chunked loop reads the same blocks (padding included) in K order.
    M, N = 80, 72
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = dev.poisoned((M, N), np.float32)
    long_k_matmul[(-(-M // 64), -(-N // 64))](dev.put(a), dev.put(b), c, K,
                                               BM=64, BN=64, BK=BK)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-2 if dtype == np.float16 else 1e-4
    assert_close(dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K))


@tile.kernel
def long_k_cast_matmul(a, b, c, K, BM: tile.Constant[int], BN: tile.Constant[int],
                       BK: tile.Constant[int]):
    # f32 arrays cast to f16 for the tensor cores, one operand scaled: the
    # chain is recomputed on each K chunk (the 0.5 splat hoisted out of
    # the loop by the canonicalizer).
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK)).astype(tile.float16)
        y = tile.load(b, index=(k, pn), shape=(BK, BN)).astype(tile.float16)
        acc = tile.mma(x * 0.5, y, acc)
    tile.store(c, index=(pm, pn), tile=acc)


@needs_tile
@needs_gpu_compiler
def test_long_k_cast_matmul_compiles_in_seconds(tmp_path):
    # Was over 10 minutes at BK=4096 (never finished), 12 s at BK=512.
    r, seconds = run_tilec([f"{__file__}::long_k_cast_matmul", "--args",
                            "f32[192,200], f32[200,160], f32[192,160], i32",
                            "-D", "BM=64", "-D", "BN=64", "-D", "BK=4096",
                            "--target", "sm_90", "--emit", "ptx,cubin",
                            "-o", str(tmp_path)], tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert seconds < 20, f"BK=4096 took {seconds:.1f} s to compile for sm_90"
    ptx = (tmp_path / "long_k_cast_matmul.ptx.ptx").read_text()
    assert ptx.count("mma.sync.aligned") <= 64, "the K tile was unrolled"


@needs_tile
@pytest.mark.numerics
@pytest.mark.parametrize("K,BK", [(200, 1024), (1100, 512)])
def test_long_k_cast_matmul_numerics(dev, rng, K, BK):
    M, N = 70, 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = dev.poisoned((M, N), np.float32)
    long_k_cast_matmul[(-(-M // 64), -(-N // 64))](dev.put(a), dev.put(b), c, K,
                                                    BM=64, BN=64, BK=BK)
    a16 = a.astype(np.float16).astype(np.float64) * 0.5
    want = a16 @ b.astype(np.float16).astype(np.float64)
    assert_close(dev.get(c), want, rtol=1e-3, atol=1e-3 * np.sqrt(K))


# -- abs of signed integer tiles on the GPU ---------------------------------------
# math.absi reached the GPU's LLVM translation unconverted for i8/i16/i64 tiles
# (only i32 had a libdevice lowering): the H200 run of the differential fuzzer
# found it ("missing LLVMTranslationDialectInterface ... math.absi").

@tile.kernel
def abs_block(x, out, B: tile.Constant[int]):
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.abs(tile.load(x, index=(i,), shape=(B,))))


@needs_gpu_compiler
@pytest.mark.parametrize("dtype", ["i8", "i16", "i32", "i64"])
def test_integer_abs_compiles_for_sm90(tmp_path, dtype):
    r, _ = run_tilec([f"{__file__}::abs_block", "--args", f"{dtype}[1000], {dtype}[1000]",
                      "-D", "B=256", "--target", "sm_90", "--emit", "cubin", "-o",
                      str(tmp_path)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "abs_block.cubin.cubin") > 0


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_abs_wraps_as_numpy(dev, dtype):
    info = np.iinfo(dtype)
    x = np.random.default_rng(3).integers(info.min, info.max, 1000, dtype=dtype,
                                          endpoint=True)
    x[:3] = [info.min, -1, 0]
    out = dev.poisoned((1000,), dtype)
    abs_block[(4,)](dev.put(x), out, B=256)
    np.testing.assert_array_equal(dev.get(out), np.abs(x))


# -- padding of 64-bit elements on the GPU ------------------------------------------
# A padded i64/f64 load filled both 32-bit words of an out-of-bounds element with
# the low word of the padding: i64 padding 1 read 2**32 + 1, f64 padding 1.0 read
# 0.0 (the H200 run of the differential fuzzer found it through min and prod).

@tile.kernel
def pad64_block(x, out, B: tile.Constant[int], PAD: tile.Constant[float]):
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,), padding=PAD))


@needs_gpu_compiler
@pytest.mark.parametrize("dtype, pad, words", [
    ("f64", "1.0", ["0x0", "0x3ff00000"]), ("i64", "1", ["0x1", "0x0"]),
    ("f64", "-2.5", ["0x0", "0xc0040000"])])
def test_64bit_padding_words_in_ptx(tmp_path, dtype, pad, words):
    r, _ = run_tilec([f"{__file__}::pad64_block", "--args", f"{dtype}[1000], {dtype}[1000]",
                      "-D", "B=256", "-D", f"PAD={pad}", "--target", "sm_90", "--emit", "ptx",
                      "-o", str(tmp_path)], tmp_path)
    assert r.returncode == 0, r.stderr
    ptx = next(tmp_path.glob("pad64_block*.ptx")).read_text()
    fills = re.findall(r"mov\.b32 %r\d+, (0x[0-9a-f]+);", ptx)
    assert fills[:2] == words, fills[:4]


@pytest.mark.parametrize("dtype, pad", [(np.int64, 1), (np.int64, -7), (np.float64, 1.0),
                                        (np.float64, -np.inf)])
def test_64bit_padding_reads_the_padding(dev, dtype, pad):
    x = np.arange(1, 101).astype(dtype)
    out = dev.poisoned((512,), dtype)
    pad64_block[(2,)](dev.put(x), out, B=256, PAD=float(pad) if dtype == np.float64 else pad)
    got = dev.get(out)
    np.testing.assert_array_equal(got[:100], x)
    np.testing.assert_array_equal(got[100:], np.full(412, pad, dtype))


# -- integer ** with a tile or runtime exponent ---------------------------------------
# math.ipowi has no GPU lowering: `x ** y` on integer tiles failed to compile for
# sm_90 (the H200 run of the differential fuzzer). It is now squaring over the
# exponent's bits on both backends.

@tile.kernel
def power_block(x, y, out, B: tile.Constant[int]):
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,))
               ** tile.load(y, index=(i,), shape=(B,)))


@tile.kernel
def power_scalar(x, e, out, B: tile.Constant[int]):
    i = tile.bid(0)
    tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(B,)) ** e)


@needs_gpu_compiler
@pytest.mark.parametrize("dtype", ["i8", "i32", "i64", "u32"])
def test_integer_power_compiles_for_sm90(tmp_path, dtype):
    r, _ = run_tilec([f"{__file__}::power_block", "--args",
                      f"{dtype}[1000], {dtype}[1000], {dtype}[1000]", "-D", "B=256",
                      "--target", "sm_90", "--emit", "cubin", "-o", str(tmp_path)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "power_block.cubin.cubin") > 0


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint64])
def test_integer_power_wraps_as_numpy(dev, dtype):
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -40), min(info.max, 40), 256).astype(dtype)
    y = rng.integers(0, min(info.max, 130), 256).astype(dtype)
    x[:4] = [0, 1, info.max, info.min]
    with np.errstate(all="ignore"):
        want, want_scalar = np.power(x, y), np.power(x, dtype(77))
    out = dev.poisoned((256,), dtype)
    power_block[(1,)](dev.put(x), dev.put(y), out, B=256)
    np.testing.assert_array_equal(dev.get(out), want)
    out = dev.poisoned((256,), dtype)
    power_scalar[(1,)](dev.put(x), 77, out, B=256)
    np.testing.assert_array_equal(dev.get(out), want_scalar)


def test_negative_integer_exponents(dev):
    """1 / x**-e in integers, with 1 // 0 = 0 (NumPy refuses them)."""
    x = np.array([0, 2, -1, 1, 3, -2, -1, 5], np.int32)
    y = np.array([-1, -1, -3, -5, -2, -3, -4, -2], np.int32)
    out = dev.poisoned((8,), np.int32)
    power_block[(1,)](dev.put(x), dev.put(y), out, B=8)
    np.testing.assert_array_equal(dev.get(out), [0, 0, -1, 1, 0, 0, 1, 0])
