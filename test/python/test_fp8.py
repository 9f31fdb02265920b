"""fp8 (float8_e4m3fn, float8_e5m2) end to end: casts both ways, loads and
stores, and mma with an f32 accumulator.

The reference is a float64 model of the two formats written here: decoding
is exact; encoding rounds to nearest, ties to even, saturates finite values
past the largest one (and infinities) to +-max finite, as PTX's
cvt.rn.satfinite does, and keeps NaN a NaN. Arrays of fp8 travel as uint8
bytes (NumPy has no fp8 dtype) that kernels bitcast; torch's fp8 tensors are
passed directly where torch is installed. Outputs are poisoned before each
run (twice with different bytes where any byte may be an answer). CPU here;
the GPU suite runs the same tests on CUDA (marker `numerics`). The sm_90
tests compile to PTX and cubin without a GPU."""

import numpy as np
import pytest

import tile as ct
from tilehelp import Device, assert_close, sm90_module

pytestmark = pytest.mark.numerics
C = ct.Constant[int]

# name -> (exponent bits, mantissa bits, bias, largest finite code, has inf)
FORMATS = {"e4m3": (4, 3, 7, 0x7E, False), "e5m2": (5, 2, 15, 0x7B, True)}
FP8 = {"e4m3": 0, "e5m2": 1}


@pytest.fixture(scope="module")
def dev(request):
    if request.config.getoption("--tile-reference"):
        pytest.skip("refinterp has no fp8 casts")
    return Device()


# -- the float64 reference model -------------------------------------------

def decode(codes, fmt):
    """fp8 bytes -> float64 values."""
    e_bits, m_bits, bias, _, has_inf = FORMATS[fmt]
    c = np.asarray(codes, np.int64)
    e, m = (c >> m_bits) & ((1 << e_bits) - 1), c & ((1 << m_bits) - 1)
    v = np.where(e == 0, m * 2.0 ** (1 - bias - m_bits),
                 (1 + m / 2.0 ** m_bits) * 2.0 ** (e - bias))
    if has_inf:
        top = e == (1 << e_bits) - 1
        v = np.where(top & (m == 0), np.inf, np.where(top, np.nan, v))
    else:
        v = np.where((c & 0x7F) == 0x7F, np.nan, v)
    return np.where(c & 0x80, -v, v)


def encode(x, fmt):
    """float64 values -> fp8 bytes (RNE, satfinite, NaN -> 0x7f)."""
    top = FORMATS[fmt][3]
    vals = decode(np.arange(top + 1), fmt)  # the finite magnitudes, ascending
    x = np.asarray(x, np.float64)
    a = np.minimum(np.abs(x), vals[-1])
    hi = np.clip(np.searchsorted(vals, a), 0, top)
    lo = np.maximum(hi - 1, 0)
    mid = (vals[lo] + vals[hi]) / 2  # exact: the values have few bits
    up = (a > mid) | ((a == mid) & (hi % 2 == 0))
    code = np.where(up, hi, lo) | (np.signbit(x).astype(np.int64) << 7)
    return np.where(np.isnan(x), 0x7F, code).astype(np.uint8)


def test_reference_model():
    """The model itself on values checked by hand."""
    assert decode([0x38, 0x7E, 0x01, 0xB8, 0x7F], "e4m3").tolist()[:4] == \
        [1.0, 448.0, 2.0 ** -9, -1.0]
    assert decode([0x3C, 0x7B, 0x7C, 0x01], "e5m2").tolist() == \
        [1.0, 57344.0, np.inf, 2.0 ** -16]
    assert encode([464.0, 1.0625, 1.0625 + 2 ** -40, -np.inf, 2.0 ** -10], "e4m3").tolist() == \
        [0x7E, 0x38, 0x39, 0xFE, 0x00]


def cast_cases(fmt, float_type, rng, size=4096):
    """Every finite fp8 value, every midpoint between neighbours (ties) and
    the float_type values next to it, out-of-range values, infinities, NaN,
    float_type subnormals, random values over the whole range; both signs."""
    vals = decode(np.arange(FORMATS[fmt][3] + 1), fmt)
    mids = ((vals[:-1] + vals[1:]) / 2).astype(float_type)
    big = vals[-1] + (vals[-1] - vals[-2]) / 2  # the first value that would round past max
    tiny = np.finfo(float_type).smallest_subnormal
    with np.errstate(over="ignore"):  # f16: 1e30 and the random tail are inf
        return _cast_cases(vals, mids, big, tiny, float_type, rng, size)


def _cast_cases(vals, mids, big, tiny, float_type, rng, size):
    x = np.concatenate([
        vals.astype(float_type), mids, np.nextafter(mids, float_type(np.inf)),
        np.nextafter(mids, float_type(0)),
        np.array([big, np.nextafter(float_type(big), float_type(0)), 2 * vals[-1], 1e4,
                  6e4, 7e4, 1e30,
                  np.finfo(float_type).max, np.inf, np.nan, tiny, 3 * tiny,
                  np.finfo(float_type).tiny], float_type)])
    x = np.concatenate([x, -x])
    rest = size - len(x)
    assert rest > 0
    lo, hi = np.log2(vals[1]) - 2, np.log2(vals[-1]) + 1
    rnd = 2.0 ** rng.uniform(lo, hi, rest) * rng.choice([-1.0, 1.0], rest)
    return np.concatenate([x, rnd.astype(float_type)])


# -- kernels ----------------------------------------------------------------

def fp8_type(f):
    return ct.float8_e5m2 if f else ct.float8_e4m3fn


@ct.kernel
def decode_kernel(x, y, N: C, F: C):
    t = ct.bitcast(ct.load(x, (0,), shape=(N,)), fp8_type(F))
    ct.store(y, (0,), t.astype(y.dtype))


@ct.kernel
def encode_kernel(x, y, N: C, F: C):
    t = ct.load(x, (0,), shape=(N,)).astype(fp8_type(F))
    ct.store(y, (0,), ct.bitcast(t, ct.uint8))


@ct.kernel
def transpose_kernel(x, y, M: C, N: C, F: C):
    """An fp8 tile loaded, transposed (a layout change: through shared memory
    on the GPU) and stored."""
    t = ct.bitcast(ct.load(x, (0, 0), shape=(M, N)), fp8_type(F))
    ct.store(y, (0, 0), ct.bitcast(ct.transpose(t), ct.uint8))


@ct.kernel
def mma_kernel(a, b, c, BM: C, BN: C, BK: C, F: C, BT: C, FAST: C):
    """c = a @ b (BT: b holds B^T, N x K) with fp8 operands, f32 accumulator;
    FAST: use_fast_acc (sm_90's fp8 tensor cores where the layout allows)."""
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.zeros((BM, BN), ct.float32)
    for k in range(a.shape[1] // BK):
        ta = ct.bitcast(ct.load(a, (i, k), shape=(BM, BK)), fp8_type(F))
        if BT:
            tb = ct.transpose(ct.bitcast(ct.load(b, (j, k), shape=(BN, BK)), fp8_type(F)))
        else:
            tb = ct.bitcast(ct.load(b, (k, j), shape=(BK, BN)), fp8_type(F))
        acc = ct.mma(ta, tb, acc, use_fast_acc=FAST)
    ct.store(c, (i, j), acc)


@ct.kernel
def fp8_array_kernel(x, y, z, N: C):
    """fp8 arrays as kernel arguments: a copy and a widening (x may be
    shorter than N: a padded load, one byte at a time on the GPU)."""
    t = ct.load(x, (0,), shape=(N,), padding=0)
    ct.store(y, (0,), t)
    ct.store(z, (0,), t.astype(ct.float32))


# -- casts ------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("out", [np.float32, np.float16, np.float64])
def test_decode_every_byte(dev, fmt, out):
    """All 256 fp8 bytes widen exactly (signed zeros, subnormals, inf, NaN)."""
    codes = np.arange(256, dtype=np.uint8)
    y = dev.poisoned(256, out)
    ct.launch(decode_kernel, (1,), dev.put(codes), y, 256, FP8[fmt])
    got, want = dev.get(y).astype(np.float64), decode(codes, fmt)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok])
    assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("src", [np.float32, np.float64, np.float16])
def test_encode_rounds_to_nearest_even_and_saturates(dev, fmt, src):
    """float -> fp8 against the model: ties, their neighbours, out of range,
    inf, NaN, subnormals (f64 rounds once, from its own bits)."""
    x = cast_cases(fmt, src, np.random.default_rng(7 + FP8[fmt]))
    want = encode(x.astype(np.float64), fmt)
    nan = np.isnan(x)
    for poison in (0x7F, 0x00):  # any one byte may be a right answer
        y = dev.put(np.full(len(x), poison, np.uint8))
        ct.launch(encode_kernel, (1,), dev.put(x), y, len(x), FP8[fmt])
        got = dev.get(y)
        assert np.isnan(decode(got[nan], fmt)).all(), "NaN must stay NaN"
        bad = np.flatnonzero(got[~nan] != want[~nan])
        assert bad.size == 0, [(float(x[~nan][i]), hex(got[~nan][i]), hex(want[~nan][i]))
                               for i in bad[:8]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(dev, fmt):
    """fp8 -> f32 -> fp8 gives every finite byte back (inf saturates)."""
    codes = np.array([c for c in range(256) if np.isfinite(decode(c, fmt))], np.uint8)
    n = 256
    codes = np.resize(codes, n)
    f = dev.poisoned(n, np.float32)
    ct.launch(decode_kernel, (1,), dev.put(codes), f, n, FP8[fmt])
    back = dev.put(np.full(n, 0x7F, np.uint8))
    ct.launch(encode_kernel, (1,), f, back, n, FP8[fmt])
    assert np.array_equal(dev.get(back), codes)


# -- loads and stores -------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(16, 64), (64, 32)])
def test_load_transpose_store(dev, fmt, shape):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    for poison in (0x7F, 0x00):
        y = dev.put(np.full(shape[::-1], poison, np.uint8))
        ct.launch(transpose_kernel, (1,), dev.put(x), y, *shape, FP8[fmt])
        assert np.array_equal(dev.get(y), x.T)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("n", [512, 500])
def test_torch_fp8_arrays(dev, name, n):
    """torch fp8 tensors are fp8 arrays (on the CPU backend too)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    fmt = "e4m3" if "e4m3" in name else "e5m2"
    codes = rng.integers(0, 256, 512, dtype=np.uint8)
    where = "cuda" if dev.backend == "cuda" else "cpu"
    dt = getattr(torch, name)
    x = torch.from_numpy(codes[:n].copy()).to(where).view(dt)
    codes[n:] = 0  # the padding
    y = torch.full((512,), 0x7F, dtype=torch.uint8, device=where).view(dt)
    z = torch.full((512,), float("nan"), dtype=torch.float32, device=where)
    ct.launch(fp8_array_kernel, (1,), x, y, z, 512)
    if where == "cuda":
        torch.cuda.synchronize()
    assert np.array_equal(y.view(torch.uint8).cpu().numpy(), codes)
    got, want = z.cpu().numpy().astype(np.float64), decode(codes, fmt)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


# -- mma --------------------------------------------------------------------

def fp8_matrix(rng, shape, fmt, scale):
    """Random fp8-representable values (bytes and their float64 values)."""
    codes = encode(rng.standard_normal(shape) * scale, fmt)
    return codes, decode(codes, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("M,N,K,BM,BN,BK,BT", [
    (64, 64, 128, 64, 64, 32, 0),
    (128, 128, 256, 64, 128, 64, 0),
    (128, 128, 256, 128, 128, 64, 1),
    (32, 64, 64, 16, 32, 32, 1),
])
def test_mma_fp8(dev, fmt, M, N, K, BM, BN, BK, BT):
    """fp8 x fp8 -> f32 against float64 products of the fp8 values."""
    rng = np.random.default_rng(M + N + K + BT)
    a8, a = fp8_matrix(rng, (M, K), fmt, 2.0)
    b8, b = fp8_matrix(rng, (K, N), fmt, 2.0)
    c = dev.poisoned((M, N), np.float32)
    bt = np.ascontiguousarray(b8.T) if BT else b8
    ct.launch(mma_kernel, (M // BM, N // BN), dev.put(a8), dev.put(bt), c,
              BM, BN, BK, FP8[fmt], BT, False)
    want = a @ b
    scale = (np.abs(a) @ np.abs(b)).max()
    assert_close(dev.get(c), want, rtol=1e-5, atol=1e-6 * scale)


# -- sm_90 code (compiled here, no GPU needed) -----------------------------

def _gpu_module(request):
    return sm90_module(request)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sm90_casts_and_mma(request, fmt):
    """Casts are PTX cvt on register pairs (f64 -> fp8 is integer code: one
    rounding); mma runs the f16 tensor-core path on the widened operands.
    compile() runs ptxas, so each kernel also assembles for sm_90."""
    mod = _gpu_module(request)
    u8, f, kind = np.uint8, FP8[fmt], fmt + "x2"

    def ptx(kernel, *args, **constants):
        return mod.compile(kernel.trace(*args, **constants), "sm_90", {}).asm["ptx"]

    assert f"cvt.rn.f16x2.{kind}" in ptx(decode_kernel, np.zeros(256, u8),
                                         np.zeros(256, np.float32), N=256, F=f)
    assert f"cvt.rn.satfinite.{kind}.f32" in ptx(encode_kernel, np.zeros(256, np.float32),
                                                 np.zeros(256, u8), N=256, F=f)
    assert "cvt.rn.satfinite" not in ptx(encode_kernel, np.zeros(256, np.float64),
                                         np.zeros(256, u8), N=256, F=f)
    code = ptx(mma_kernel, np.zeros((64, 64), u8), np.zeros((64, 64), u8),
               np.zeros((64, 64), np.float32), BM=64, BN=64, BK=32, F=f, BT=0,
               FAST=False)
    assert f"cvt.rn.f16x2.{kind}" in code and "mma.sync.aligned.m16n8k16" in code


# -- native fp8 wgmma on sm_90 (B given transposed, N x K: "TN") -------------

# What fast accumulation may lose, relative to the sum of |products| (the
# H200 measured up to 1.6e-4 over K = 256; exact paths hold 1e-6).
FAST_ACC_TOLERANCE = 1e-3

# M, N, K, BM, BN, BK: 8 warps (two warpgroups) with 128-byte panels; ragged
# M and N (zero-filled copies; sizes multiples of 16, as 16-byte copies of
# one-byte elements need); 64-byte panels (BK = 64); one warpgroup
# with two panels per row (BK = 256).
TN_CASES = [
    (256, 512, 512, 128, 256, 128),
    (208, 272, 384, 128, 256, 128),
    (128, 256, 256, 128, 256, 64),
    (128, 128, 512, 64, 128, 256),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("M,N,K,BM,BN,BK", TN_CASES)
def test_sm90_fp8_wgmma_tn(request, fmt, M, N, K, BM, BN, BK):
    """A [M][K] and B^T [N][K] both K-major: on sm_90 the mma is
    wgmma.m64nNk32 on the fp8 bytes in the cp.async ring (no widening);
    B given [K][N] (N-major, which 8-bit wgmma cannot read) stays widened."""
    mod = _gpu_module(request)
    u8, kind = np.uint8, fmt

    def ptx(bt, bk, fast=True, **opts):
        b = np.zeros((N, K) if bt else (K, N), u8)
        return mod.compile(mma_kernel.trace(np.zeros((M, K), u8), b,
                                            np.zeros((M, N), np.float32), BM=BM,
                                            BN=BN, BK=bk, F=FP8[fmt], BT=bt, FAST=fast),
                           "sm_90", opts).asm["ptx"]

    # Without use_fast_acc the exact widened form stays (the fp8 tensor
    # cores accumulate with fewer bits than f32).
    assert f"cvt.rn.f16x2.{kind}x2" in ptx(1, BK, fast=False)
    code = ptx(1, BK)
    assert f"wgmma.mma_async.sync.aligned.m64n{BN}k32.f32.{kind}.{kind}" in code
    assert "cvt.rn.f16x2" not in code and "mma.sync" not in code
    # K = 32 bytes per step is less than a swizzle panel: widened.
    assert f"cvt.rn.f16x2.{kind}x2" in ptx(1, 32)
    assert f"cvt.rn.f16x2.{kind}x2" in ptx(0, BK)
    # No cp.async ring (pipelining by registers or off): widened after all.
    for pipeline in ("regs", "off"):
        code = ptx(1, BK, mma_pipeline=pipeline)
        assert f"cvt.rn.f16x2.{kind}x2" in code and "mma.sync.aligned.m16n8k16" in code


@pytest.mark.parametrize("pipeline", ["async", "regs"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("M,N,K,BM,BN,BK", TN_CASES)
def test_mma_fp8_tn(dev, monkeypatch, fmt, M, N, K, BM, BN, BK, pipeline):
    """The TN fp8 matmul (torch._scaled_mm's layout) against float64 products
    of the fp8 values: on the H200 the native wgmma path of the test above
    (async), and its widened fallback without the ring (regs)."""
    monkeypatch.setenv("TILE_GPU_PIPELINE", pipeline)
    kernel = mma_kernel.replace_hints()  # its own specializations: compiled here
    rng = np.random.default_rng(M * N + K + BK)
    a8, a = fp8_matrix(rng, (M, K), fmt, 2.0)
    bt8, bt = fp8_matrix(rng, (N, K), fmt, 2.0)
    c = dev.poisoned((M, N), np.float32)
    ct.launch(kernel, ((M + BM - 1) // BM, (N + BN - 1) // BN), dev.put(a8),
              dev.put(bt8), c, BM, BN, BK, FP8[fmt], 1, True)
    assert kernel.compile_count == 1
    want = a @ bt.T
    scale = (np.abs(a) @ np.abs(bt.T)).max()
    # Fast accumulation: the H200's fp8 wgmma keeps about 13-14 bits of the
    # running sum (errors up to 1.6e-4 of sum |products| measured at K=256).
    assert_close(dev.get(c), want, rtol=1e-5, atol=FAST_ACC_TOLERANCE * scale)


@ct.kernel
def mma_fp8_arrays_kernel(a, bt, c, BM: C, BN: C, BK: C):
    """c = a @ bt^T on fp8 arrays (torch fp8 tensors), f32 accumulator, fast
    accumulation allowed."""
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.zeros((BM, BN), ct.float32)
    for k in range(a.shape[1] // BK):
        tb = ct.transpose(ct.load(bt, (j, k), shape=(BN, BK)))
        acc = ct.mma(ct.load(a, (i, k), shape=(BM, BK)), tb, acc, use_fast_acc=True)
    ct.store(c, (i, j), acc)


@pytest.mark.parametrize("fmt,name", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")])
def test_torch_fp8_tn_matmul(request, dev, fmt, name):
    """torch fp8 tensors straight into the TN mma (no bitcast): sm_90 code
    is the native wgmma (the compiler crashed on fp8-typed arrays before),
    and the product matches float64 on the backend in use."""
    torch = pytest.importorskip("torch")
    M, N, K, BM, BN, BK = 256, 256, 256, 128, 256, 128
    rng = np.random.default_rng(7)
    a8, a = fp8_matrix(rng, (M, K), fmt, 2.0)
    bt8, bt = fp8_matrix(rng, (N, K), fmt, 2.0)
    dt = getattr(torch, name)
    where = "cuda" if dev.backend == "cuda" else "cpu"
    ta = torch.from_numpy(a8).to(where).view(dt)
    tbt = torch.from_numpy(bt8).to(where).view(dt)
    mod = _gpu_module(request)
    code = mod.compile(mma_fp8_arrays_kernel.trace(ta, tbt, torch.zeros((M, N)), BM=BM,
                                                   BN=BN, BK=BK), "sm_90", {}).asm["ptx"]
    assert f"wgmma.mma_async.sync.aligned.m64n{BN}k32.f32.{fmt}.{fmt}" in code
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device=where)
    ct.launch(mma_fp8_arrays_kernel, (M // BM, N // BN), ta, tbt, c, BM, BN, BK)
    if where == "cuda":
        torch.cuda.synchronize()
    want = a @ bt.T
    assert_close(c.cpu().numpy(), want, rtol=1e-5,
                 atol=FAST_ACC_TOLERANCE * (np.abs(a) @ np.abs(bt.T)).max())
