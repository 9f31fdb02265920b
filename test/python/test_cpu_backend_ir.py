"""Hand-written tile IR compiled by tile._tile for the CPU and checked against
NumPy (float64 references, random inputs, outputs poisoned with NaN first).

These tests exercise the CPU backend without the Python frontend: each op
family of the dialect, partial blocks at array edges, real atomics across
threads, print/assert, and the error paths of compile and launch.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tile import backend

pytestmark = pytest.mark.numerics

_tile = backend.load()
RNG = np.random.default_rng(0)
MLIR_TYPES = {np.float16: "f16", np.float32: "f32", np.float64: "f64",
              np.int8: "i8", np.int32: "i32", np.int64: "i64"}


def array_type(rank, dtype=np.float32, unit_inner=True):
    dims = "x".join(["?"] * rank)
    strides = ", ".join(["?"] * (rank - 1) + ["1" if unit_inner else "?"])
    return f"!tile.array<{dims}x{MLIR_TYPES[dtype]}, strides = [{strides}]>"


def flat(*args):
    """The flat launch arguments: (data_ptr, *shape, *strides) per array."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out += [a.ctypes.data, *a.shape, *[s // a.itemsize for s in a.strides]]
        else:
            out.append(a)
    return tuple(out)


def compile_cpu(ir, **options):
    opts = {"num_warps": 0, "opt_level": 3, "dump_dir": "", "always_compile": False}
    opts.update(options)
    return _tile.compile(textwrap.dedent(ir), "cpu", opts)


def poisoned(shape, dtype=np.float32):
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype)
    return np.full(shape, -12345, dtype)


def cdiv(a, b):
    return (a + b - 1) // b


def assert_close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# Elementwise, loads and stores at the edges
# ---------------------------------------------------------------------------

def test_axpy_with_tail_and_scalar():
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @axpy(%x: {A}, %y: {A}, %o: {A}, %alpha: f32) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<128xf32>
          %b = tile.load %y[%i] : {A} -> tensor<128xf32>
          %s = tile.splat %alpha : tensor<128xf32>
          %m = arith.mulf %s, %b : tensor<128xf32>
          %c = arith.addf %a, %m : tensor<128xf32>
          tile.store %o[%i], %c : {A}, tensor<128xf32>
          return
        }}""")
    assert k.name == "axpy" and k.target == "cpu"
    assert {"tile", "fused", "host", "bufferized", "llvm"} <= set(k.asm)
    n = 1000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    buf = poisoned(n + 64)
    o = buf[:n]
    k.launch((cdiv(n, 128), 1, 1), flat(x, y, o, 0.5))
    assert_close(o, x.astype(np.float64) + 0.5 * y)
    assert np.isnan(buf[n:]).all(), "stores past the end of the array"


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.float16])
def test_elementwise_dtypes(dtype):
    A = array_type(1, dtype)
    t = MLIR_TYPES[dtype]
    floating = np.issubdtype(dtype, np.floating)
    mul, add = ("arith.mulf", "arith.addf") if floating else ("arith.muli", "arith.subi")
    k = compile_cpu(f"""
        func.func @ew(%x: {A}, %y: {A}, %o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<64x{t}>
          %b = tile.load %y[%i] : {A} -> tensor<64x{t}>
          %c = {mul} %a, %b : tensor<64x{t}>
          %d = {add} %c, %a : tensor<64x{t}>
          tile.store %o[%i], %d : {A}, tensor<64x{t}>
          return
        }}""")
    n = 300
    if floating:
        x = RNG.standard_normal(n).astype(dtype)
        y = RNG.standard_normal(n).astype(dtype)
        want = x.astype(np.float64) * y + x
        tol = 2e-2 if dtype == np.float16 else 1e-12
    else:
        x = RNG.integers(-1000, 1000, n).astype(dtype)
        y = RNG.integers(-1000, 1000, n).astype(dtype)
        want = x.astype(np.int64) * y - x
        tol = 0
    o = poisoned(n, dtype)
    k.launch((cdiv(n, 64), 1, 1), flat(x, y, o))
    np.testing.assert_allclose(o.astype(np.float64), want, rtol=tol, atol=tol)


def test_math_functions():
    A = array_type(1)
    ops = ["math.exp", "math.log", "math.sqrt", "math.tanh", "math.erf", "math.sin"]
    lines, names = [], []
    for j, op in enumerate(ops):
        lines.append(f"%r{j} = {op} %a : tensor<64xf32>")
        names.append(f"%r{j}")
    acc = names[0]
    for j, name in enumerate(names[1:]):
        lines.append(f"%s{j} = arith.addf {acc}, {name} : tensor<64xf32>")
        acc = f"%s{j}"
    body = "\n          ".join(lines)
    k = compile_cpu(f"""
        func.func @math(%x: {A}, %o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] {{padding = 1.0 : f32}} : {A} -> tensor<64xf32>
          {body}
          tile.store %o[%i], {acc} : {A}, tensor<64xf32>
          return
        }}""")
    from math import erf
    n = 200
    x = RNG.uniform(0.1, 3.0, n).astype(np.float32)
    o = poisoned(n)
    k.launch((cdiv(n, 64), 1, 1), flat(x, o))
    xd = x.astype(np.float64)
    want = (np.exp(xd) + np.log(xd) + np.sqrt(xd) + np.tanh(xd)
            + np.vectorize(erf)(xd) + np.sin(xd))
    assert_close(o, want, rtol=1e-5, atol=1e-5)


def test_strided_array_and_2d_grid():
    A = array_type(2, unit_inner=False)
    k = compile_cpu(f"""
        func.func @scale(%x: {A}, %o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %j = tile.bid 1
          %a = tile.load %x[%i, %j] : {A} -> tensor<16x8xf32>
          %two = arith.constant dense<2.0> : tensor<16x8xf32>
          %b = arith.mulf %a, %two : tensor<16x8xf32>
          tile.store %o[%i, %j], %b : {A}, tensor<16x8xf32>
          return
        }}""")
    base = RNG.standard_normal((50, 60)).astype(np.float32)
    x = base[::2, 1::3]                         # (25, 20), strides (120, 3)
    obuf = poisoned((25, 40))
    o = obuf[:, ::2]                            # non-unit inner stride
    k.launch((cdiv(25, 16), cdiv(20, 8), 1), flat(x, o))
    assert_close(o, 2.0 * x.astype(np.float64))
    assert np.isnan(obuf[:, 1::2]).all()


def test_grid_queries_and_array_metadata():
    A = array_type(2, np.int32)
    k = compile_cpu(f"""
        func.func @ids(%o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %j = tile.bid 1
          %n0 = tile.num_blocks 0
          %d1 = tile.dim %o, 1 : {A}
          %s0 = tile.stride %o, 0 : {A}
          %c10 = arith.constant 10 : i32
          %c1000 = arith.constant 1000 : i32
          %t = arith.muli %j, %c10 : i32
          %u = arith.addi %i, %t : i32
          %n = arith.muli %n0, %c1000 : i32
          %v = arith.addi %u, %n : i32
          %w = arith.addi %d1, %s0 : i32
          %vs = tile.splat %v : tensor<1x2xi32>
          %ws = tile.splat %w : tensor<1x2xi32>
          %io = tile.iota : tensor<2xi32>
          %ie = tile.expand_dims %io, 0 : tensor<2xi32> -> tensor<1x2xi32>
          %zero = arith.constant dense<0> : tensor<1x2xi32>
          %isfirst = arith.cmpi eq, %ie, %zero : tensor<1x2xi32>
          %r = arith.select %isfirst, %vs, %ws : tensor<1x2xi1>, tensor<1x2xi32>
          tile.store %o[%j, %i], %r : {A}, tensor<1x2xi32>
          return
        }}""")
    gx, gy = 3, 5
    o = poisoned((gy, 2 * gx + 1), np.int32)
    k.launch((gx, gy, 1), flat(o))
    for j in range(gy):
        for i in range(gx):
            assert o[j, 2 * i] == i + 10 * j + 1000 * gx
            assert o[j, 2 * i + 1] == o.shape[1] + o.shape[1]


# ---------------------------------------------------------------------------
# Reductions, scans, shapes
# ---------------------------------------------------------------------------

# Combiner regions see the enclosing values, so their names must be fresh.
REDUCE_MAX = """{
  ^bb0(%cp: f32, %cq: f32):
    %cr = arith.maximumf %cp, %cq : f32
    tile.yield %cr : f32
  }"""
REDUCE_ADD = """{
  ^bb0(%cp: f32, %cq: f32):
    %cr = arith.addf %cp, %cq : f32
    tile.yield %cr : f32
  }"""


def test_row_softmax():
    A = array_type(2)
    k = compile_cpu(f"""
        func.func @softmax(%x: {A}, %y: {A}) attributes {{tile.kernel}} {{
          %r = tile.bid 0
          %c0 = arith.constant 0 : i32
          %a = tile.load %x[%r, %c0] {{padding = 0xFF800000 : f32}} : {A} -> tensor<1x128xf32>
          %m = tile.reduce(%a) axis = 1 : (tensor<1x128xf32>) -> tensor<1xf32> {REDUCE_MAX}
          %m1 = tile.expand_dims %m, 1 : tensor<1xf32> -> tensor<1x1xf32>
          %mb = tile.broadcast %m1 : tensor<1x1xf32> -> tensor<1x128xf32>
          %d = arith.subf %a, %mb : tensor<1x128xf32>
          %e = math.exp %d : tensor<1x128xf32>
          %s = tile.reduce(%e) axis = 1 : (tensor<1x128xf32>) -> tensor<1xf32> {REDUCE_ADD}
          %s1 = tile.expand_dims %s, 1 : tensor<1xf32> -> tensor<1x1xf32>
          %sb = tile.broadcast %s1 : tensor<1x1xf32> -> tensor<1x128xf32>
          %out = arith.divf %e, %sb : tensor<1x128xf32>
          tile.store %y[%r, %c0], %out : {A}, tensor<1x128xf32>
          return
        }}""")
    M, N = 37, 100
    x = (3 * RNG.standard_normal((M, N))).astype(np.float32)
    y = poisoned((M, N))
    k.launch((M, 1, 1), flat(x, y))
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    assert_close(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_full_reduction_to_scalar_and_argmax():
    A = array_type(1)
    I = array_type(1, np.int32)
    k = compile_cpu(f"""
        func.func @stats(%x: {A}, %sum: {A}, %arg: {I}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] {{padding = 0xFF800000 : f32}} : {A} -> tensor<256xf32>
          %z = tile.load %x[%i] : {A} -> tensor<256xf32>
          %s = tile.reduce(%z) axis = 0 : (tensor<256xf32>) -> tensor<f32> {REDUCE_ADD}
          %s1 = tile.reshape %s : tensor<f32> -> tensor<1xf32>
          tile.store %sum[%i], %s1 : {A}, tensor<1xf32>
          %idx = tile.iota : tensor<256xi32>
          %v:2 = tile.reduce(%a, %idx) axis = 0 : (tensor<256xf32>, tensor<256xi32>) -> (tensor<f32>, tensor<i32>) {{
          ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
            %gt = arith.cmpf ogt, %v1, %v0 : f32
            %eq = arith.cmpf oeq, %v1, %v0 : f32
            %lt = arith.cmpi slt, %i1, %i0 : i32
            %tie = arith.andi %eq, %lt : i1
            %take = arith.ori %gt, %tie : i1
            %v = arith.select %take, %v1, %v0 : f32
            %k = arith.select %take, %i1, %i0 : i32
            tile.yield %v, %k : f32, i32
          }}
          %k1 = tile.reshape %v#1 : tensor<i32> -> tensor<1xi32>
          tile.store %arg[%i], %k1 : {I}, tensor<1xi32>
          return
        }}""")
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    x[700] = x[300] = 9.0                        # ties: the first index wins
    blocks = cdiv(n, 256)
    sums, args = poisoned(blocks), poisoned(blocks, np.int32)
    k.launch((blocks, 1, 1), flat(x, sums, args))
    padded = np.zeros(blocks * 256)
    padded[:n] = x
    assert_close(sums, padded.reshape(blocks, 256).sum(axis=1), rtol=1e-5, atol=1e-4)
    padded[n:] = -np.inf
    assert (args == padded.reshape(blocks, 256).argmax(axis=1)).all()


def test_scans():
    A = array_type(2)
    k = compile_cpu(f"""
        func.func @scans(%x: {A}, %fwd: {A}, %rev: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %c0 = arith.constant 0 : i32
          %a = tile.load %x[%i, %c0] : {A} -> tensor<4x32xf32>
          %f = tile.scan(%a) axis = 1 : (tensor<4x32xf32>) -> tensor<4x32xf32> {REDUCE_ADD}
          tile.store %fwd[%i, %c0], %f : {A}, tensor<4x32xf32>
          %r = tile.scan(%a) axis = 0 attributes {{reverse}} : (tensor<4x32xf32>) -> tensor<4x32xf32> {{
          ^bb0(%p: f32, %q: f32):
            %m = arith.mulf %p, %q : f32
            tile.yield %m : f32
          }}
          tile.store %rev[%i, %c0], %r : {A}, tensor<4x32xf32>
          return
        }}""")
    x = RNG.uniform(0.5, 1.5, (8, 32)).astype(np.float32)
    fwd, rev = poisoned((8, 32)), poisoned((8, 32))
    k.launch((2, 1, 1), flat(x, fwd, rev))
    xd = x.astype(np.float64)
    assert_close(fwd, np.cumsum(xd, axis=1), rtol=1e-5)
    want = np.concatenate([np.cumprod(b[::-1], axis=0)[::-1] for b in np.split(xd, 2)])
    assert_close(rev, want, rtol=1e-5)


def test_shape_ops():
    A = array_type(2)
    A1 = array_type(1)
    k = compile_cpu(f"""
        func.func @shapes(%x: {A}, %t: {A}, %flat: {A1}, %outer: {A}) attributes {{tile.kernel}} {{
          %c0 = arith.constant 0 : i32
          %a = tile.load %x[%c0, %c0] : {A} -> tensor<8x16xf32>
          %p = tile.permute %a, [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
          tile.store %t[%c0, %c0], %p : {A}, tensor<16x8xf32>
          %r = tile.reshape %a : tensor<8x16xf32> -> tensor<2x64xf32>
          %f = tile.reshape %r : tensor<2x64xf32> -> tensor<128xf32>
          tile.store %flat[%c0], %f : {A1}, tensor<128xf32>
          %io = tile.iota : tensor<8xi32>
          %iof = arith.sitofp %io : tensor<8xi32> to tensor<8xf32>
          %col = tile.expand_dims %iof, 1 : tensor<8xf32> -> tensor<8x1xf32>
          %colb = tile.broadcast %col : tensor<8x1xf32> -> tensor<8x16xf32>
          %row = tile.reshape %f : tensor<128xf32> -> tensor<8x16xf32>
          %o = arith.mulf %colb, %row : tensor<8x16xf32>
          tile.store %outer[%c0, %c0], %o : {A}, tensor<8x16xf32>
          return
        }}""")
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    t, fl, outer = poisoned((16, 8)), poisoned(128), poisoned((8, 16))
    k.launch((1, 1, 1), flat(x, t, fl, outer))
    assert_close(t, x.T)
    assert_close(fl, x.reshape(-1))
    assert_close(outer, np.arange(8)[:, None] * x.astype(np.float64))


def test_transposed_load_with_padding():
    A = array_type(2)
    k = compile_cpu(f"""
        func.func @transpose(%x: {A}, %y: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %j = tile.bid 1
          %t = tile.load %x[%i, %j] {{order = array<i64: 1, 0>, padding = 7.0 : f32}} : {A} -> tensor<32x16xf32>
          tile.store %y[%j, %i], %t : {A}, tensor<32x16xf32>
          return
        }}""")
    M, N = 40, 70                                # partial blocks on both axes
    x = RNG.standard_normal((M, N)).astype(np.float32)
    y = poisoned((N, M))
    k.launch((cdiv(M, 16), cdiv(N, 32), 1), flat(x, y))
    assert_close(y, x.T)


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

def matmul_ir(in_t, acc_t, bm=64, bn=64, bk=32):
    Ai = array_type(2, {"f32": np.float32, "f16": np.float16, "f64": np.float64,
                        "i8": np.int8}[in_t])
    Ao = array_type(2, {"f32": np.float32, "i32": np.int32, "f64": np.float64}[acc_t])
    zero = "0" if acc_t.startswith("i") else "0.0"
    return f"""
        func.func @matmul(%a: {Ai}, %b: {Ai}, %c: {Ao}) attributes {{tile.kernel}} {{
          %pm = tile.bid 0
          %pn = tile.bid 1
          %K = tile.dim %a, 1 : {Ai}
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %cbk = arith.constant {bk} : i32
          %nk = arith.ceildivsi %K, %cbk : i32
          %acc0 = arith.constant dense<{zero}> : tensor<{bm}x{bn}x{acc_t}>
          %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %acc0) -> (tensor<{bm}x{bn}x{acc_t}>) : i32 {{
            %ta = tile.load %a[%pm, %k] : {Ai} -> tensor<{bm}x{bk}x{in_t}>
            %tb = tile.load %b[%k, %pn] : {Ai} -> tensor<{bk}x{bn}x{in_t}>
            %n = tile.mma %ta, %tb, %acc : tensor<{bm}x{bk}x{in_t}>, tensor<{bk}x{bn}x{in_t}> -> tensor<{bm}x{bn}x{acc_t}>
            scf.yield %n : tensor<{bm}x{bn}x{acc_t}>
          }}
          tile.store %c[%pm, %pn], %r : {Ao}, tensor<{bm}x{bn}x{acc_t}>
          return
        }}"""


@pytest.mark.parametrize("in_t,acc_t,np_in,np_acc", [
    ("f32", "f32", np.float32, np.float32),
    ("f16", "f32", np.float16, np.float32),
    ("f64", "f64", np.float64, np.float64),
    ("i8", "i32", np.int8, np.int32),
])
@pytest.mark.parametrize("shape", [(128, 128, 64), (100, 70, 45)])
def test_mma(in_t, acc_t, np_in, np_acc, shape):
    M, N, K = shape
    k = compile_cpu(matmul_ir(in_t, acc_t))
    if np.issubdtype(np_in, np.integer):
        a = RNG.integers(-100, 100, (M, K)).astype(np_in)
        b = RNG.integers(-100, 100, (K, N)).astype(np_in)
    else:
        a = RNG.standard_normal((M, K)).astype(np_in)
        b = RNG.standard_normal((K, N)).astype(np_in)
    c = poisoned((M, N), np_acc)
    k.launch((cdiv(M, 64), cdiv(N, 64), 1), flat(a, b, c))
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = {"f32": 1e-4, "f16": 1e-3, "f64": 1e-12, "i8": 0}[in_t]
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=tol, atol=tol * 10)


def test_batched_mma_with_epilogue():
    A = array_type(3)
    k = compile_cpu(f"""
        func.func @bmm(%a: {A}, %b: {A}, %c: {A}) attributes {{tile.kernel}} {{
          %z = tile.bid 0
          %c0 = arith.constant 0 : i32
          %ta = tile.load %a[%z, %c0, %c0] : {A} -> tensor<2x16x8xf32>
          %tb = tile.load %b[%z, %c0, %c0] : {A} -> tensor<2x8x32xf32>
          %zero = arith.constant dense<0.0> : tensor<2x16x32xf32>
          %m = tile.mma %ta, %tb, %zero : tensor<2x16x8xf32>, tensor<2x8x32xf32> -> tensor<2x16x32xf32>
          %one = arith.constant dense<1.0> : tensor<2x16x32xf32>
          %r = arith.addf %m, %one : tensor<2x16x32xf32>
          tile.store %c[%z, %c0, %c0], %r : {A}, tensor<2x16x32xf32>
          return
        }}""")
    a = RNG.standard_normal((6, 16, 8)).astype(np.float32)
    b = RNG.standard_normal((6, 8, 32)).astype(np.float32)
    c = poisoned((6, 16, 32))
    k.launch((3, 1, 1), flat(a, b, c))
    assert_close(c, a.astype(np.float64) @ b + 1.0, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Element-indexed access and atomics
# ---------------------------------------------------------------------------

def test_gather_and_scatter_with_masks():
    A = array_type(1)
    I = array_type(1, np.int32)
    k = compile_cpu(f"""
        func.func @gs(%x: {A}, %idx: {I}, %g: {A}, %s: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %ix = tile.load %idx[%i] {{padding = -1 : i32}} : {I} -> tensor<64xi32>
          %zero = arith.constant dense<0> : tensor<64xi32>
          %m = arith.cmpi sge, %ix, %zero : tensor<64xi32>
          %other = arith.constant dense<-1.0> : tensor<64xf32>
          %v = tile.gather %x[%ix] mask %m other %other : {A}[tensor<64xi32>] -> tensor<64xf32>
          tile.store %g[%i], %v : {A}, tensor<64xf32>
          tile.scatter %s[%ix], %v mask %m : {A}[tensor<64xi32>], tensor<64xf32>
          return
        }}""")
    n = 500
    x = RNG.standard_normal(n).astype(np.float32)
    perm = RNG.permutation(n).astype(np.int32)
    idx = perm.copy()
    idx[::7] = -3                                # masked off: reads `other`
    idx[5::11] = n + 10                          # out of bounds: reads `other` too
    nb = cdiv(n, 64)
    g, s = poisoned(n), poisoned(n)
    k.launch((nb, 1, 1), flat(x, idx, g, s))
    inb = (idx >= 0) & (idx < n)
    want = np.full(n, -1.0)
    want[inb] = x[idx[inb]]
    assert_close(g, want)
    expect_s = np.full(n, np.nan)
    expect_s[idx[inb]] = x[idx[inb]]
    np.testing.assert_array_equal(np.isnan(s), np.isnan(expect_s))
    assert_close(s[~np.isnan(s)], expect_s[~np.isnan(expect_s)])


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_atomic_add_histogram_across_threads(dtype):
    A = array_type(1, dtype)
    I = array_type(1, np.int32)
    t = MLIR_TYPES[dtype]
    one = "1" if dtype == np.int32 else "1.0"
    k = compile_cpu(f"""
        func.func @hist(%bins: {I}, %h: {A}, %old: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %b = tile.load %bins[%i] {{padding = -1 : i32}} : {I} -> tensor<128xi32>
          %ones = arith.constant dense<{one}> : tensor<128x{t}>
          %prev = tile.atomic_rmw add %h[%b], %ones : {A}[tensor<128xi32>], tensor<128x{t}>
          tile.store %old[%i], %prev : {A}, tensor<128x{t}>
          return
        }}""")
    n, nbins = 100_000, 17
    bins = RNG.integers(0, nbins, n).astype(np.int32)
    h = np.zeros(nbins, dtype)
    old = poisoned(n, dtype)
    k.launch((cdiv(n, 128), 1, 1), flat(bins, h, old))
    np.testing.assert_array_equal(h, np.bincount(bins, minlength=nbins).astype(dtype))
    # The old values of each bin's updates are 0, 1, ..., count - 1 in some order.
    for b in range(nbins):
        got = np.sort(old[bins == b].astype(np.int64))
        np.testing.assert_array_equal(got, np.arange(len(got)))


def test_atomic_kinds_and_cas():
    I = array_type(1, np.int32)
    F = array_type(1)
    k = compile_cpu(f"""
        func.func @atomics(%imax: {I}, %imin: {I}, %x: {I}, %fmax: {F}, %cas: {I}, %olds: {I}) attributes {{tile.kernel}} {{
          %c0 = arith.constant 0 : i32
          %idx = tile.iota : tensor<8xi32>
          %vals = arith.constant dense<[5, -3, 7, 0, 9, -8, 2, 4]> : tensor<8xi32>
          %a = tile.atomic_rmw max %imax[%idx], %vals : {I}[tensor<8xi32>], tensor<8xi32>
          %b = tile.atomic_rmw min %imin[%idx], %vals : {I}[tensor<8xi32>], tensor<8xi32>
          %c = tile.atomic_rmw xor %x[%idx], %vals : {I}[tensor<8xi32>], tensor<8xi32>
          %fv = arith.sitofp %vals : tensor<8xi32> to tensor<8xf32>
          %d = tile.atomic_rmw max %fmax[%idx], %fv : {F}[tensor<8xi32>], tensor<8xf32>
          %cmp = arith.constant dense<[1, 1, 1, 1, 0, 0, 0, 0]> : tensor<8xi32>
          %e = tile.atomic_cas %cas[%idx], %cmp, %vals : {I}[tensor<8xi32>], tensor<8xi32>
          tile.store %olds[%c0], %e : {I}, tensor<8xi32>
          return
        }}""")
    vals = np.array([5, -3, 7, 0, 9, -8, 2, 4], np.int32)
    imax = np.zeros(8, np.int32)
    imin = np.zeros(8, np.int32)
    x = np.arange(8, dtype=np.int32)
    fmax = np.full(8, 1.5, np.float32)
    cas = np.array([1, 0, 1, 0, 1, 0, 1, 0], np.int32)
    olds = poisoned(8, np.int32)
    k.launch((1, 1, 1), flat(imax, imin, x, fmax, cas, olds))
    np.testing.assert_array_equal(imax, np.maximum(vals, 0))
    np.testing.assert_array_equal(imin, np.minimum(vals, 0))
    np.testing.assert_array_equal(x, np.arange(8) ^ vals)
    np.testing.assert_array_equal(fmax, np.maximum(vals, 1.5).astype(np.float32))
    np.testing.assert_array_equal(olds, [1, 0, 1, 0, 1, 0, 1, 0])
    cmp = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(cas, np.where(olds == cmp, vals, olds))


# ---------------------------------------------------------------------------
# print, assert, errors
# ---------------------------------------------------------------------------

def test_print_one_line_per_block(capfd):
    k = compile_cpu("""
        func.func @show() attributes {tile.kernel} {
          %i = tile.bid 0
          %t = arith.constant dense<[[1.5, 2.0], [-3.0, 4.25]]> : tensor<2x2xf32>
          tile.print "x =" %t, %i : tensor<2x2xf32>, i32
          return
        }""")
    k.launch((3, 1, 1), ())
    lines = sorted(capfd.readouterr().out.strip().splitlines())
    assert lines == [f"pid ({b}, 0, 0) x = [[1.5, 2], [-3, 4.25]] {b}" for b in range(3)]


def test_assert_aborts_with_message():
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        from tile import backend
        t = backend.load()
        k = t.compile('''
        func.func @check(%%x: i32) attributes {tile.kernel} {
          %%i = tile.bid 0
          %%c = arith.cmpi slt, %%i, %%x : i32
          tile.assert %%c, "block id below x" : i1 loc("k.py":3:4)
          return
        }''', "cpu", {})
        k.launch((4, 1, 1), (10,))
        print("ok", flush=True)
        k.launch((4, 1, 1), (2,))
        print("not reached", flush=True)
    """) % os.path.join(os.path.dirname(backend.__file__), "..")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "TILE_NUM_THREADS": "1"})
    assert r.returncode != 0
    assert r.stdout.strip() == "ok"
    assert "assertion failed in block (2, 0, 0): k.py:3: block id below x" in r.stderr


def test_compile_errors_carry_stage_and_location():
    with pytest.raises(_tile.CompileError) as e:
        _tile.compile('func.func @k() attributes {tile.kernel} {\n  %x = tile.bid 7 loc("k.py":12:4)\n  return\n}',
                      "cpu", {})
    assert e.value.stage == "parse"
    assert "k.py:12:4: error:" in str(e.value)
    assert e.value.reproducer and os.path.exists(e.value.reproducer)
    with pytest.raises(_tile.CompileError) as e:
        _tile.compile("module {}", "cpu", {})
    assert "no tile.kernel" in str(e.value)
    with pytest.raises(_tile.CompileError) as e:
        _tile.compile('func.func @k(%h: i16) attributes {tile.kernel} {\n  return\n}'
                      ' loc("k.py":3:1)', "cpu", {})
    assert e.value.stage == "tile"
    assert "k.py:3:1: error: argument 0 has type 'i16'" in str(e.value)
    assert open(e.value.reproducer).read().count("func.func @k") == 1
    with pytest.raises(_tile.CompileError, match="unknown target"):
        _tile.compile("module {}", "tpu", {})


def test_launch_errors():
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @copy(%x: {A}, %o: {A}, %n: i32) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<16xf32>
          tile.store %o[%i], %a : {A}, tensor<16xf32>
          return
        }}""")
    x, o = np.ones(16, np.float32), np.zeros(16, np.float32)
    with pytest.raises(_tile.LaunchError, match="takes 7 flat arguments"):
        k.launch((1, 1, 1), flat(x, o))
    with pytest.raises(_tile.LaunchError, match="must be an int"):
        k.launch((1, 1, 1), flat(x, o, 1.5))
    with pytest.raises(_tile.LaunchError, match="does not fit"):
        k.launch((1, 1, 1), flat(x, o, 2**40))
    # A unit stride the kernel was specialized for.
    with pytest.raises(_tile.LaunchError, match="stride 0"):
        k.launch((1, 1, 1), flat(np.ones(32, np.float32)[::2], o, 1))
    k.launch((1, 1, 1), flat(x, o, 1))
    assert (o == 1).all()


def test_dump_dir(tmp_path):
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @dumped(%x: {A}) attributes {{tile.kernel}} {{
          return
        }}""", dump_dir=str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    for stage in ("tile", "fused", "host", "bufferized", "llvm"):
        assert f"dumped.{stage}.mlir" in names
    assert "dumped.llvm-ir.ll" in names and "llvm-ir" in k.asm


def test_low_precision_mma_in_kernel():
    """bf16 inputs (made in the kernel: NumPy has no bfloat16) with an f32
    accumulator, and f16 inputs with an f16 accumulator."""
    A = array_type(2)
    H = array_type(2, np.float16)
    k = compile_cpu(f"""
        func.func @lowp(%a: {A}, %b: {A}, %c: {A}, %ha: {H}, %hb: {H}, %hc: {H}) attributes {{tile.kernel}} {{
          %c0 = arith.constant 0 : i32
          %x = tile.load %a[%c0, %c0] : {A} -> tensor<32x16xf32>
          %y = tile.load %b[%c0, %c0] : {A} -> tensor<16x64xf32>
          %xb = arith.truncf %x : tensor<32x16xf32> to tensor<32x16xbf16>
          %yb = arith.truncf %y : tensor<16x64xf32> to tensor<16x64xbf16>
          %z = arith.constant dense<0.0> : tensor<32x64xf32>
          %m = tile.mma %xb, %yb, %z : tensor<32x16xbf16>, tensor<16x64xbf16> -> tensor<32x64xf32>
          tile.store %c[%c0, %c0], %m : {A}, tensor<32x64xf32>
          %hx = tile.load %ha[%c0, %c0] : {H} -> tensor<32x16xf16>
          %hy = tile.load %hb[%c0, %c0] : {H} -> tensor<16x64xf16>
          %hz = arith.constant dense<0.0> : tensor<32x64xf16>
          %hm = tile.mma %hx, %hy, %hz : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf16>
          tile.store %hc[%c0, %c0], %hm : {H}, tensor<32x64xf16>
          return
        }}""")
    a = RNG.standard_normal((32, 16)).astype(np.float32)
    b = RNG.standard_normal((16, 64)).astype(np.float32)
    c = poisoned((32, 64))
    ha, hb = a.astype(np.float16), b.astype(np.float16)
    hc = poisoned((32, 64), np.float16)
    k.launch((1, 1, 1), flat(a, b, c, ha, hb, hc))

    def bf16(x):  # round to nearest even, as the kernel's truncf
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        return u.astype(np.uint32).view(np.float32).astype(np.float64)

    assert_close(c, bf16(a) @ bf16(b), rtol=1e-5, atol=1e-5)
    want = ha.astype(np.float64) @ hb.astype(np.float64)
    np.testing.assert_allclose(hc.astype(np.float64), want, rtol=1e-2, atol=5e-2)


def test_wide_scalar_arguments():
    A = array_type(1, np.float64)
    I = array_type(1, np.int64)
    k = compile_cpu(f"""
        func.func @scalars(%o: {A}, %p: {I}, %s: f64, %t: i64) attributes {{tile.kernel}} {{
          %c0 = arith.constant 0 : i32
          %sv = tile.splat %s : tensor<4xf64>
          tile.store %o[%c0], %sv : {A}, tensor<4xf64>
          %tv = tile.splat %t : tensor<4xi64>
          tile.store %p[%c0], %tv : {I}, tensor<4xi64>
          return
        }}""")
    o, p = poisoned(4, np.float64), poisoned(4, np.int64)
    k.launch((1, 1, 1), flat(o, p, 0.1, 2**40 + 3))
    assert (o == 0.1).all() and (p == 2**40 + 3).all()


def test_concurrent_launches_from_threads():
    """Launches release the GIL; several Python threads share the pool."""
    import threading
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @twice(%x: {A}, %o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<256xf32>
          %b = arith.addf %a, %a : tensor<256xf32>
          tile.store %o[%i], %b : {A}, tensor<256xf32>
          return
        }}""")
    n = 1 << 16
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            x = rng.standard_normal(n).astype(np.float32)
            o = poisoned(n)
            k.launch((n // 256, 1, 1), flat(x, o))
            if not np.array_equal(o, 2 * x):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_loads_are_not_changed_by_later_stores():
    """A tile loaded before a store to the same memory keeps its values; an
    in-place update (output = input) reads before it writes."""
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @swap(%x: {A}, %y: {A}, %old: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<64xf32>
          %b = tile.load %y[%i] : {A} -> tensor<64xf32>
          %one = arith.constant dense<1.0> : tensor<64xf32>
          %a1 = arith.addf %a, %one : tensor<64xf32>
          tile.store %x[%i], %a1 : {A}, tensor<64xf32>
          tile.store %y[%i], %a : {A}, tensor<64xf32>
          %d = arith.subf %a, %b : tensor<64xf32>
          tile.store %old[%i], %d : {A}, tensor<64xf32>
          return
        }}""")
    n = 200
    x0 = RNG.standard_normal(n).astype(np.float32)
    y0 = RNG.standard_normal(n).astype(np.float32)
    x, y, old = x0.copy(), y0.copy(), poisoned(n)
    k.launch((cdiv(n, 64), 1, 1), flat(x, y, old))
    assert_close(x, x0 + 1.0)
    assert_close(y, x0)
    assert_close(old, x0.astype(np.float64) - y0)
    # The same array as both x and y: the stores must not change what was
    # loaded (old = x0 - x0 = 0), and the last store wins.
    x = x0.copy()
    old = poisoned(n)
    k.launch((cdiv(n, 64), 1, 1), flat(x, x, old))
    assert_close(old, np.zeros(n))
    assert_close(x, x0)


def test_in_place_update_through_aliased_arguments():
    A = array_type(1)
    k = compile_cpu(f"""
        func.func @axpy(%x: {A}, %y: {A}, %o: {A}) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {A} -> tensor<128xf32>
          %b = tile.load %y[%i] : {A} -> tensor<128xf32>
          %c = arith.addf %a, %b : tensor<128xf32>
          tile.store %o[%i], %c : {A}, tensor<128xf32>
          return
        }}""")
    n = 1000
    x0 = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    x = x0.copy()
    k.launch((cdiv(n, 128), 1, 1), flat(x, y, x))
    assert_close(x, x0.astype(np.float64) + y)
