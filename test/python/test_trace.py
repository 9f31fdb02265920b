"""Tracing: every spec item emits the ops docs/internals.md prescribes, and
tile-opt accepts the result. These run without _tile."""

import re

import numpy as np
import pytest

import tile
from tilehelp import count, line_of, ops_at, trace

F32 = np.zeros(1024, np.float32)
F16 = np.zeros(1024, np.float16)
I32 = np.zeros(1024, np.int32)
M32 = np.zeros((64, 64), np.float32)
M16 = np.zeros((64, 64), np.float16)


@tile.kernel
def vadd(x, y, out, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))  # @load
    b = tile.load(y, index=(i,), shape=(BLOCK,))
    tile.store(out, index=(i,), tile=a + b)  # @store


def test_vadd_module_shape():
    ir = trace(vadd, F32, F32, F32, BLOCK=128)
    assert ir.startswith("module {")
    assert "func.func @vadd(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>" in ir
    assert "attributes {tile.kernel}" in ir
    assert count(ir, "tile.bid 0") == 1
    assert count(ir, "tile.load") == 2
    assert "-> tensor<128xf32>" in ir
    assert count(ir, "arith.addf") == 1
    assert count(ir, "tile.store") == 1
    assert "BLOCK" not in ir  # Constants are not arguments


def test_every_op_has_the_user_location():
    ir = trace(vadd, F32, F32, F32, BLOCK=128)
    body = [ln.strip() for ln in ir.splitlines()[2:-2]]
    assert all(ln.endswith(")") and "loc(\"" in ln for ln in body if ln != "}"), ir
    assert all(__file__ in ln for ln in body if "loc(" in ln)
    assert ops_at(ir, "tile.load", line_of(vadd, "@load"))
    store = ops_at(ir, "tile.store", line_of(vadd, "@store"))
    assert store and store[0].rstrip().endswith(":5)")  # column of `tile.store`, 1-based


def helper_scale(t, s):
    return t * s  # @helper


@tile.kernel
def uses_helper(x, out, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(out, index=(0,), tile=helper_scale(t, 3.0))


def test_helpers_are_inlined_with_their_own_lines():
    ir = trace(uses_helper, F32, F32, B=64)
    assert "func.call" not in ir and count(ir, "func.func") == 1
    assert ops_at(ir, "arith.mulf", line_of(helper_scale, "@helper"))


# -- arrays, blocks, creation ------------------------------------------------

@tile.kernel
def array_meta(A, out):
    n = A.shape[0] + A.shape[1] + A.strides[0] + A.strides[1]
    assert A.ndim == 2 and A.dtype is tile.float32
    nb = tile.num_blocks(1)
    tile.store(out, index=(0,), tile=tile.full((16,), n * nb, tile.int32))


def test_array_metadata():
    ir = trace(array_meta, M32, I32)
    assert count(ir, "tile.dim") == 2
    assert count(ir, "tile.stride") == 1  # the unit stride is the constant 1
    assert "tile.num_blocks 1" in ir
    assert "tile.splat" in ir
    strided = np.zeros((64, 128), np.float32)[:, ::2]
    ir2 = trace(array_meta, strided, I32)
    assert count(ir2, "tile.stride") == 2
    assert "strides = [" not in ir2.split("\n")[1].split(",")[0]


@tile.kernel
def creation(out, v, B: tile.Constant[int]):
    z = tile.zeros((B, B), tile.float32)
    f = tile.full((B, B), 2.5, tile.float32)
    r = tile.full((B, B), v, tile.float32)
    a = tile.arange(B)
    af = tile.arange(B, dtype=tile.float32)
    t = z + f + r + a[:, None] + af[None, :]
    tile.store(out, index=(0, 0), tile=t)


def test_creation_ops():
    ir = trace(creation, M32, 2.0, B=16)
    assert "arith.constant dense<0.0> : tensor<16x16xf32>" in ir
    assert "arith.constant dense<2.5> : tensor<16x16xf32>" in ir
    assert "tile.splat %v : tensor<16x16xf32>" in ir
    assert count(ir, "tile.iota : tensor<16xi32>") == 2
    assert "arith.sitofp" in ir


# -- load / store --------------------------------------------------------------

@tile.kernel
def padded(x, out, PAD: tile.Constant[float]):
    t = tile.load(x, index=(0, 0), shape=(16, 32), padding=PAD)
    tile.store(out, index=(0, 0), tile=t)


@pytest.mark.parametrize("pad,attr", [
    (-tile.inf, "padding = 0xFF800000 : f32"),
    (tile.inf, "padding = 0x7F800000 : f32"),
    (tile.nan, "padding = 0x7FC00000 : f32"),
    (1.5, "padding = 1.5 : f32"),
    (0.0, None),
])
def test_load_padding(pad, attr):
    ir = trace(padded, M32, M32, PAD=pad)
    if attr:
        assert attr in ir
    else:
        assert "padding" not in ir


def test_load_padding_f16_and_int():
    ir = trace(padded, M16, M16, PAD=-tile.inf)
    assert "padding = 0xFC00 : f16" in ir
    ir = trace(padded, np.zeros((64, 64), np.int32), np.zeros((64, 64), np.int32), PAD=-1.0)
    assert "padding = -1 : i32" in ir
    with pytest.raises(tile.TileTypeError, match="cannot be represented"):
        tile.kernel(padded.fn).compile(np.zeros((64, 64), np.int32),
                                       np.zeros((64, 64), np.int32), PAD=tile.nan)


@tile.kernel
def transposed(x, out):
    t = tile.load(x, index=(1, 0), shape=(32, 16), order=(1, 0))
    assert t.shape == (32, 16)
    tile.store(out, index=(1, 0), tile=t)


def test_load_order():
    ir = trace(transposed, M32, M32)
    assert "{order = array<i64: 1, 0>}" in ir
    assert "-> tensor<32x16xf32>" in ir


@tile.kernel
def store_casts(out16, outi, outb, x):
    t = tile.load(x, index=(0,), shape=(64,))
    tile.store(out16, index=(0,), tile=t)       # f32 -> f16
    tile.store(outi, index=(1,), tile=t)        # f32 -> i32
    tile.store(out16, index=(5,), tile=0.5)     # scalar broadcast
    tile.store(outi, index=(3,), tile=7, shape=(16,))
    tile.store(outb, index=(0,), tile=t > 0)    # bool array holds bytes


def test_store_casts_and_scalar_broadcast():
    ir = trace(store_casts, F16, I32, np.zeros(64, np.bool_), F32)
    assert "arith.truncf" in ir and "arith.fptosi" in ir
    assert "arith.constant dense<5.000000e-01> : tensor<1xf16>" in ir or \
        "arith.constant dense<0.5> : tensor<1xf16>" in ir
    assert "arith.constant dense<7> : tensor<16xi32>" in ir
    assert "!tile.array<?xi8" in ir and "arith.extui" in ir


# -- element-indexed and atomics -------------------------------------------

@tile.kernel
def gather_scatter(A, out, B: tile.Constant[int]):
    r = tile.arange(B)
    c = tile.arange(B)
    g = tile.gather(A, (r[:, None], c[None, :]), mask=r[:, None] < 5, other=-1.0)
    tile.scatter(out, (r[:, None], c[None, :]), g, mask=c[None, :] > 2)
    one = tile.gather(A, (3, c))
    tile.scatter(out, (r, 0), one)


def test_gather_scatter_broadcast():
    ir = trace(gather_scatter, M32, M32, B=16)
    g = [ln for ln in ir.splitlines() if "tile.gather" in ln]
    assert "mask" in g[0] and "other" in g[0]
    assert "[tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xf32>" in g[0]
    assert count(ir, "tile.broadcast") >= 2
    assert count(ir, "tile.scatter") == 2
    assert "[tensor<16xi32>, tensor<16xi32>] -> tensor<16xf32>" in g[1]


@tile.kernel
def atomics(A, I, B: tile.Constant[int]):
    idx = tile.arange(B)
    v = tile.full((B,), 1.0, tile.float32)
    old = tile.atomic_add(A, (idx,), v, mask=idx < 3)
    tile.atomic_max(A, (idx,), old)
    tile.atomic_min(A, (idx,), old)
    tile.atomic_xchg(A, (idx,), 2.0)
    tile.atomic_cas(I, (idx,), 0, 1)
    tile.atomic_and(I, (idx,), 6)


def test_atomics():
    ir = trace(atomics, F32, I32, B=32)
    for kind in ("add", "max", "min", "xchg", "and"):
        assert f"tile.atomic_rmw {kind} " in ir
    assert "mask" in [ln for ln in ir.splitlines() if "atomic_rmw add" in ln][0]
    assert "tile.atomic_cas" in ir


# -- elementwise -----------------------------------------------------------

@tile.kernel
def float_ops(x, out, B: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(B,))
    b = tile.load(x, index=(1,), shape=(B,))
    r = (a + b) - (a * b) / b + a // b + a % b + a ** 2 + a ** 0.5 + b ** a
    r = r + (-a) + tile.exp(a) + tile.exp2(a) + tile.log(a) + tile.log2(a)
    r = r + tile.sqrt(a) + tile.rsqrt(a) + tile.sin(a) + tile.cos(a) + tile.tanh(a)
    r = r + tile.erf(a) + tile.sigmoid(a) + tile.abs(a) + tile.floor(a) + tile.ceil(a)
    r = r + tile.maximum(a, b) + tile.minimum(a, 0.0) + tile.fma(a, b, r)
    r = tile.where(a < b, r, b) + tile.where(a >= 1.0, 1.0, 0.0)
    m = (a <= b) | (a > b) & (a == b) ^ (a != b)
    tile.store(out, index=(0,), tile=tile.where(~m, r, abs(r)))


def test_float_operators_and_functions():
    ir = trace(float_ops, F32, F32, B=64)
    for op in ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "math.floor",
               "arith.remf", "math.powf", "arith.negf", "math.exp", "math.exp2", "math.log",
               "math.log2", "math.sqrt", "math.rsqrt", "math.sin", "math.cos", "math.tanh",
               "math.erf", "math.absf", "math.ceil", "arith.maxnumf", "arith.minnumf",
               "math.fma", "arith.select", "arith.cmpf olt", "arith.cmpf oge",
               "arith.cmpf ole", "arith.cmpf ogt", "arith.cmpf oeq", "arith.cmpf une",
               "arith.ori", "arith.andi", "arith.xori"):
        assert op in ir, op


@tile.kernel
def int_ops(x, u, out, B: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(B,))
    b = tile.load(x, index=(1,), shape=(B,))
    c = tile.load(u, index=(0,), shape=(B,))
    r = a // b + a % b + (a << 2) + (a >> 1) + (a & b) + (a | b) + (a ^ b) + ~a + -a
    r = r + a ** 3 + tile.abs(a) + tile.maximum(a, b) + tile.minimum(a, 1)
    q = (c >> 1) + c // c + c % c + tile.maximum(c, c)
    f = a / b
    tile.store(out, index=(0,), tile=r + q + f)


def test_int_operators_use_python_semantics():
    ir = trace(int_ops, I32, np.zeros(1024, np.uint32), F32, B=64)
    for op in ("arith.floordivsi", "arith.remsi", "arith.select", "arith.shli",
               "arith.shrsi", "arith.andi", "arith.ori", "arith.xori", "arith.subi",
               "arith.muli", "arith.maxsi", "arith.minsi", "arith.shrui",
               "arith.divui", "arith.remui", "arith.maxui", "arith.sitofp", "arith.divf",
               "arith.extui", "arith.extsi"):
        assert op in ir, op
    assert "math.ipowi" not in ir  # small constant exponents multiply


# -- promotion -----------------------------------------------------------------

@tile.kernel
def promo(x16, xb, x32, xi8, xi, out, s, B: tile.Constant[int]):
    h = tile.load(x16, index=(0,), shape=(B,))
    bf = tile.load(xb, index=(0,), shape=(B,))
    f = tile.load(x32, index=(0,), shape=(B,))
    i8 = tile.load(xi8, index=(0,), shape=(B,))
    i = tile.load(xi, index=(0,), shape=(B,))
    assert (h + 1.0).dtype is tile.float16          # scalar takes the tile's dtype
    assert (h * x16.shape[0]).dtype is tile.float16  # runtime int scalar too
    assert (h + s).dtype is tile.float16            # float argument
    assert (i8 + 1).dtype is tile.int8
    assert (i8 + s).dtype is tile.float32          # higher kind: default float32
    assert (i + 1.5).dtype is tile.float32
    assert (h + f).dtype is tile.float32            # as in PyTorch
    assert (h + bf).dtype is tile.float32
    assert (i8 + i).dtype is tile.int32
    assert (i + h).dtype is tile.float16
    assert (i / i).dtype is tile.float32
    assert ((i > 0) + 1).dtype is tile.int32
    assert (i8 + tile.bid(0)).dtype is tile.int8
    tile.store(out, index=(0,), tile=h + bf + f + i8 + i)


def test_promotion_rules():
    ir = trace(promo, F16, np.zeros(1024, "float32"), F32, np.zeros(1024, np.int8), I32,
               F32, 0.5, B=64)
    assert "arith.extf" in ir and "arith.sitofp" in ir


def test_bfloat16_arrays():
    @tile.kernel
    def k(x, out):
        t = tile.load(x, index=(0,), shape=(16,))
        assert t.dtype is tile.bfloat16
        tile.store(out, index=(0,), tile=t.astype(tile.float32))

    ir = k.trace(_FakeArray("bfloat16", (64,)), F32)
    assert "!tile.array<?xbf16" in ir and "arith.extf" in ir
    from tilehelp import verify
    verify(ir)


class _FakeArray:
    """A CUDA-array-interface object of any dtype name (for tracing only)."""

    def __init__(self, dtype, shape, strides=None, ptr=1 << 20):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "typestr": dtype, "strides": strides, "version": 3}


@pytest.mark.parametrize("name,mlir", [
    ("bool", "i8"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"), ("int64", "i64"),
    ("uint8", "i8"), ("uint16", "i16"), ("uint32", "i32"), ("uint64", "i64"),
    ("float16", "f16"), ("float32", "f32"), ("float64", "f64"),
])
def test_every_dtype_loads_and_computes(name, mlir):
    @tile.kernel
    def k(x, out):
        t = tile.load(x, index=(0,), shape=(16,))
        tile.store(out, index=(0,), tile=tile.where(t == t, t, t) + 1)

    a = np.zeros(64, name)
    ir = trace(k, a, np.zeros(64, np.float64))
    assert f"!tile.array<?x{mlir}" in ir


def test_float8_dtypes():
    @tile.kernel
    def k(x, out):
        t = tile.load(x, index=(0,), shape=(16,))
        tile.store(out, index=(0,), tile=t.astype(tile.float32) * 2)

    for name, mlir in (("float8_e4m3fn", "f8E4M3FN"), ("float8_e5m2", "f8E5M2")):
        ir = k.trace(_FakeArray(name, (64,)), F32)
        from tilehelp import verify
        verify(ir)
        assert f"!tile.array<?x{mlir}" in ir and "arith.extf" in ir


# -- broadcasting and shapes ---------------------------------------------------

@tile.kernel
def shapes(x, out, B: tile.Constant[int]):
    v = tile.load(x, index=(0,), shape=(B,))
    m = v[:, None] + v[None, :]                  # (B,1) + (1,B)
    assert m.shape == (B, B) and m.dtype is tile.float32
    m = m + v                                    # rank broadcast
    e = tile.expand_dims(v, 0)
    bt = tile.broadcast_to(e, (B, B))
    r = tile.reshape(m, (B * B,))
    r2 = tile.reshape(r, (B, -1))
    p = tile.permute(tile.reshape(m, (2, B // 2, B)), (2, 0, 1))
    t = tile.transpose(m) + m.T + bt + r2 + v[..., None]
    assert p.shape == (B, 2, B // 2)
    tile.store(out, index=(0, 0), tile=t)


def test_shape_ops():
    ir = trace(shapes, F32, M32, B=16)
    assert "tile.expand_dims" in ir and ", 1 : tensor<16xf32> -> tensor<16x1xf32>" in ir
    assert "tile.broadcast" in ir
    assert "tile.reshape" in ir and "-> tensor<256xf32>" in ir
    assert "tile.permute" in ir and "[2, 0, 1]" in ir and "[1, 0]" in ir


# -- reductions, scans, mma ------------------------------------------------------

@tile.kernel
def reductions(x, out, outi, B: tile.Constant[int]):
    t = tile.load(x, index=(0, 0), shape=(B, B))
    s0 = tile.sum(t, axis=0)
    s1 = tile.sum(t, 1, keepdims=True)
    assert s0.shape == (B,) and s1.shape == (B, 1)
    total = tile.sum(t)
    assert total.shape == ()
    mx = tile.max(t, axis=1) + tile.min(t, axis=1) + tile.prod(t, axis=1)
    am = tile.argmax(t, axis=1) + tile.argmin(t, axis=0)
    assert am.dtype is tile.int32
    c = tile.cumsum(t, axis=1) + tile.cumprod(t, axis=0)
    tile.store(out, index=(0, 0), tile=c + s1 + total + mx[:, None])
    tile.store(outi, index=(0,), tile=am + tile.argmax(t))


def test_reductions_and_scans():
    ir = trace(reductions, M32, M32, I32, B=16)
    assert count(ir, "tile.reduce") >= 7
    assert "(tensor<16x16xf32>) -> tensor<16xf32>" in ir
    assert "(tensor<256xf32>) -> tensor<f32>" in ir  # axis=None: rank 0
    assert "(tensor<16x16xf32>, tensor<16x16xi32>) -> (tensor<16xf32>, tensor<16xi32>)" in ir
    # max/min ignore NaN by default (cuTile's propagate_nan=False)
    assert "tile.yield" in ir and "arith.maxnumf" in ir and "arith.minnumf" in ir
    assert "arith.maximumf" not in ir and "arith.mulf" in ir
    assert count(ir, "tile.scan") == 2


def test_half_sums_accumulate_in_f32():
    ir = trace(reductions, M16, M16, I32, B=16)
    assert "(tensor<16x16xf32>) -> tensor<16xf32>" in ir  # the sum runs in f32
    assert "arith.truncf" in ir


@tile.kernel
def matmuls(a, b, c, out, out16, TF32: tile.Constant[bool]):
    x = tile.load(a, index=(0, 0), shape=(32, 16))
    y = tile.load(b, index=(0, 0), shape=(16, 64))
    acc = tile.load(c, index=(0, 0), shape=(32, 64))
    r = tile.mma(x, y, acc, allow_tf32=TF32)
    x16 = x.astype(tile.float16)
    y16 = y.astype(tile.float16)
    r = r + tile.mma(x16, y16, tile.zeros((32, 64), tile.float32))
    h = x16 @ y16
    assert h.dtype is tile.float16
    bx = tile.reshape(x, (2, 16, 16))
    by = tile.reshape(y, (2, 8, 64))
    z = tile.mma(bx, tile.reshape(by, (2, 16, 32)), tile.zeros((2, 16, 32), tile.float32))
    z2 = bx @ tile.reshape(by, (2, 16, 32))
    tile.store(out, index=(0, 0), tile=r)
    tile.store(out, index=(1, 1), tile=tile.reshape(z + z2, (32, 32)))
    tile.store(out16, index=(0, 0), tile=h)


def test_mma_and_matmul():
    ir = trace(matmuls, M32, M32, M32, M32, M16, TF32=True)
    assert "{allow_tf32} : tensor<32x16xf32>, tensor<16x64xf32> -> tensor<32x64xf32>" in ir
    assert "tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>" in ir
    assert "tensor<2x16x16xf32>, tensor<2x16x32xf32> -> tensor<2x16x32xf32>" in ir
    assert count(ir, "tile.mma") == 5
    ir2 = trace(matmuls, M32, M32, M32, M32, M16, TF32=False)
    assert "allow_tf32" not in ir2


# -- scalars, arguments ------------------------------------------------------------

@tile.kernel
def scalar_args(x, out, n, f, flag):
    i = tile.bid(0)
    t = tile.load(x, index=(i,), shape=(16,))
    t = tile.where(flag, t * f, t + n)
    tile.store(out, index=(i,), tile=t + tile.cdiv(n, 16))


def test_scalar_argument_specialization():
    ir = trace(scalar_args, F32, F32, 32, 0.5, True)
    assert "%n: i32 {tile.divisibility = 16 : i32}" in ir
    assert "%f: f32" in ir
    assert "%flag_i32: i32" in ir and "arith.cmpi ne, %flag_i32" in ir
    assert "arith.ceildivsi" in ir
    ir = trace(scalar_args, F32, F32, 1, 0.5, False)
    assert "%n = arith.constant 1 : i32" in ir and "%n:" not in ir
    ir = trace(scalar_args, F32, F32, 7, 0.5, False)
    assert "%n: i32," in ir
    ir = trace(scalar_args, F32, F32, 1 << 40, 0.5, False)
    assert "%n: i64 {tile.divisibility = 16 : i32}" in ir


def test_cdiv_on_the_host():
    assert tile.cdiv(10, 4) == 3 and tile.cdiv(8, 4) == 2 and tile.cdiv(0, 4) == 0


def test_trace_time_python_control_flow():
    @tile.kernel
    def k(x, out, N: tile.Constant[int], DOUBLE: tile.Constant[bool]):
        t = tile.load(x, index=(0,), shape=(16,))
        for _ in range(N):      # unrolled at trace time
            t = t + 1.0
        if DOUBLE:              # decided at trace time
            t = t * 2.0
        tile.store(out, index=(0,), tile=t)

    ir = trace(k, F32, F32, N=3, DOUBLE=True)
    assert count(ir, "arith.addf") == 3 and count(ir, "arith.mulf") == 1
    assert "scf.for" not in ir
    ir = trace(k, F32, F32, N=0, DOUBLE=False)
    assert count(ir, "arith.addf") == 0 and count(ir, "arith.mulf") == 0


def test_kernel_called_from_kernel_is_inlined():
    @tile.kernel
    def inner(t):
        return t * 4.0

    @tile.kernel
    def outer(x, out):
        tile.store(out, index=(0,), tile=inner(tile.load(x, index=(0,), shape=(16,))))

    ir = trace(outer, F32, F32)
    assert count(ir, "func.func") == 1 and "arith.mulf" in ir


def test_constexpr_alias_and_defaults():
    @tile.kernel
    def k(x, out, B: tile.constexpr = 32, C: tile.constexpr[int] = 2):
        tile.store(out, index=(0,), tile=tile.load(x, index=(0,), shape=(B,)) * C)

    ir = trace(k, F32, F32)
    assert "tensor<32xf32>" in ir and "dense<2.0>" in ir
    ir = trace(k, F32, F32, B=64)
    assert "tensor<64xf32>" in ir


def test_compile_returns_asm_with_tile_stage():
    ck = vadd.compile(F32, F32, F32, BLOCK=64)
    assert "tile" in ck.asm and ck.asm["tile"] == ck.ir
    assert ck.name == "vadd"
    assert re.search(r"tensor<64xf32>", ck.asm["tile"])


def test_combiners_are_self_contained():
    """Constants a combiner needs are defined inside it, not taken from the
    function body (backends clone combiners as scalar code)."""
    @tile.kernel
    def k(x, out):
        t = tile.load(x, index=(0,), shape=(16,))
        m = ~(t > 0)                      # an outer `arith.constant true`
        tile.store(out, index=(0,), tile=tile.where(m, t, 0.0) + tile.argmax(t))

    ir = trace(k, F32, F32)
    body = ir[ir.index("tile.reduce"):]
    body = body[:body.index("tile.yield")]
    defined = set(re.findall(r"(%\d+) = ", body)) | set(re.findall(r"(%\d+): ", body))
    used = set(re.findall(r"(%\d+)(?![\d:])", body.split("{", 1)[1]))
    assert used <= defined, used - defined
