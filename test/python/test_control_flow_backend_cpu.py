"""Runtime control flow on the CPU backend: hand-written tile IR with scf.if
(with results) and scf.while (before/after regions) carrying tiles and
scalars, nested in each other and in scf.for, compiled by tile._tile and
checked against NumPy float64 on random inputs, outputs poisoned first.

The IR is what the frontend traces for Python `if`/`while` on runtime values
(issue 15); these tests do not need the frontend's control-flow support.
"""

import textwrap

import numpy as np
import pytest

from tile import backend

pytestmark = pytest.mark.numerics

_tile = backend.load()
RNG = np.random.default_rng(15)
F32 = "!tile.array<?xf32, strides = [1]>"
I32 = "!tile.array<?xi32, strides = [1]>"
F32_2D = "!tile.array<?x?xf32, strides = [?, 1]>"

# Combiner regions see the enclosing values, so their names must be fresh.
ADD = """{
  ^bb0(%cp: f32, %cq: f32):
    %cr = arith.addf %cp, %cq : f32
    tile.yield %cr : f32
  }"""
MAX = """{
  ^bb0(%cp: f32, %cq: f32):
    %cr = arith.maximumf %cp, %cq : f32
    tile.yield %cr : f32
  }"""


def compile_cpu(ir, **options):
    opts = {"num_warps": 0, "opt_level": 3, "dump_dir": "", "always_compile": True}
    opts.update(options)
    return _tile.compile(textwrap.dedent(ir), "cpu", opts)


def flat(*args):
    """The flat launch arguments: (data_ptr, *shape, *strides) per array."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out += [a.ctypes.data, *a.shape, *[s // a.itemsize for s in a.strides]]
        else:
            out.append(a)
    return tuple(out)


def poisoned(shape, dtype=np.float32):
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype)
    return np.full(shape, -12345, dtype)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def assert_close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# scf.if: results, side effects only on the taken path
# ---------------------------------------------------------------------------

def test_if_stores_atomics_reduce_scan_on_taken_path():
    """Per block: if sum(x) > thr, store 2x to `hi` and count the block
    (atomic); else store the prefix sum to `lo`. The if's result (2x or the
    running max of the prefix) is stored to `out` either way."""
    k = compile_cpu(f"""
        func.func @branchy(%x: {F32}, %hi: {F32}, %lo: {F32}, %out: {F32}, %cnt: {I32}, %thr: f32) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {F32} -> tensor<128xf32>
          %s = tile.reduce(%a) axis = 0 : (tensor<128xf32>) -> tensor<f32> {ADD}
          %sv = tensor.extract %s[] : tensor<f32>
          %c = arith.cmpf ogt, %sv, %thr : f32
          %r = scf.if %c -> (tensor<128xf32>) {{
            %d = arith.addf %a, %a : tensor<128xf32>
            tile.store %hi[%i], %d : {F32}, tensor<128xf32>
            %z = arith.constant dense<0> : tensor<i32>
            %one = arith.constant dense<1> : tensor<i32>
            %old = tile.atomic_rmw add %cnt[%z], %one : {I32}[tensor<i32>], tensor<i32>
            scf.yield %d : tensor<128xf32>
          }} else {{
            %p = tile.scan(%a) axis = 0 : (tensor<128xf32>) -> tensor<128xf32> {ADD}
            tile.store %lo[%i], %p : {F32}, tensor<128xf32>
            %m = tile.scan(%p) axis = 0 : (tensor<128xf32>) -> tensor<128xf32> {MAX}
            scf.yield %m : tensor<128xf32>
          }}
          tile.store %out[%i], %r : {F32}, tensor<128xf32>
          return
        }}""")
    nb, n = 37, 37 * 128 - 50  # a partial last block
    x = randn(n) + 0.05
    hi, lo, out = poisoned(n), poisoned(n), poisoned(n)
    cnt = np.zeros(1, np.int32)
    k.launch((nb, 1, 1), flat(x, hi, lo, out, cnt, 1.0))
    xp = np.zeros(nb * 128)
    xp[:n] = x
    taken = 0
    for b in range(nb):
        blk = slice(b * 128, min((b + 1) * 128, n))
        rows = xp[b * 128:(b + 1) * 128]
        m = blk.stop - blk.start
        if rows.sum() > 1.0:
            taken += 1
            assert_close(hi[blk], 2 * rows[:m])
            assert np.isnan(lo[blk]).all(), f"block {b}: else branch stored"
            assert_close(out[blk], 2 * rows[:m])
        else:
            p = np.cumsum(rows)
            assert np.isnan(hi[blk]).all(), f"block {b}: then branch stored"
            assert_close(lo[blk], p[:m], rtol=1e-4, atol=1e-4)
            assert_close(out[blk], np.maximum.accumulate(p)[:m], rtol=1e-4, atol=1e-4)
    assert 0 < taken < nb
    assert cnt[0] == taken


def test_elementwise_chain_across_if():
    """t = a * b before the if, t + c / t - c in the branches, then * 2: the
    fused code must compute each path's value (fma in one branch only)."""
    k = compile_cpu(f"""
        func.func @chain(%x: {F32}, %y: {F32}, %z: {F32}, %o: {F32}, %flag: i32) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %a = tile.load %x[%i] : {F32} -> tensor<64xf32>
          %b = tile.load %y[%i] : {F32} -> tensor<64xf32>
          %c = tile.load %z[%i] : {F32} -> tensor<64xf32>
          %t = arith.mulf %a, %b : tensor<64xf32>
          %c0 = arith.constant 0 : i32
          %odd = arith.andi %i, %flag : i32
          %cond = arith.cmpi ne, %odd, %c0 : i32
          %u = scf.if %cond -> (tensor<64xf32>) {{
            %p = arith.addf %t, %c : tensor<64xf32>
            scf.yield %p : tensor<64xf32>
          }} else {{
            %q = arith.subf %t, %c : tensor<64xf32>
            scf.yield %q : tensor<64xf32>
          }}
          %two = arith.constant dense<2.0> : tensor<64xf32>
          %v = arith.mulf %u, %two : tensor<64xf32>
          tile.store %o[%i], %v : {F32}, tensor<64xf32>
          return
        }}""")
    n = 640
    x, y, z = randn(n), randn(n), randn(n)
    o = poisoned(n)
    k.launch((n // 64, 1, 1), flat(x, y, z, o, 1))
    t = x.astype(np.float64) * y
    odd = (np.arange(n) // 64) % 2 == 1
    assert_close(o, 2 * np.where(odd, t + z, t - z))


# ---------------------------------------------------------------------------
# tile.mma in scf.while bodies and scf.if branches
# ---------------------------------------------------------------------------

def matmul_ir(loop):
    """C[pm, pn] = sum over K blocks of A[pm, k] @ B[k, pn], with `loop` the
    K loop: a while, or a for whose body accumulates only below `kstop`."""
    A = F32_2D
    mma = f"""
            %ta = tile.load %a[%pm, %k2] : {A} -> tensor<32x16xf32>
            %tb = tile.load %b[%k2, %pn] : {A} -> tensor<16x32xf32>
            %n = tile.mma %ta, %tb, %acc2 : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>"""
    if loop == "while":
        body = f"""
          %r:2 = scf.while (%k = %c0, %acc = %acc0) : (i32, tensor<32x32xf32>) -> (i32, tensor<32x32xf32>) {{
            %lt = arith.cmpi slt, %k, %nk : i32
            scf.condition(%lt) %k, %acc : i32, tensor<32x32xf32>
          }} do {{
          ^bb0(%k2: i32, %acc2: tensor<32x32xf32>):{mma}
            %k3 = arith.addi %k2, %c1 : i32
            scf.yield %k3, %n : i32, tensor<32x32xf32>
          }}
          %res = arith.addf %r#1, %r#1 : tensor<32x32xf32>"""
    else:
        body = f"""
          %r = scf.for %k2 = %c0 to %nk step %c1 iter_args(%acc2 = %acc0) -> (tensor<32x32xf32>) : i32 {{
            %use = arith.cmpi slt, %k2, %kstop : i32
            %next = scf.if %use -> (tensor<32x32xf32>) {{{mma}
              scf.yield %n : tensor<32x32xf32>
            }} else {{
              scf.yield %acc2 : tensor<32x32xf32>
            }}
            scf.yield %next : tensor<32x32xf32>
          }}
          %res = arith.addf %r, %r : tensor<32x32xf32>"""
    return f"""
        func.func @matmul(%a: {A}, %b: {A}, %c: {A}, %kstop: i32) attributes {{tile.kernel}} {{
          %pm = tile.bid 0
          %pn = tile.bid 1
          %K = tile.dim %a, 1 : {A}
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %c16 = arith.constant 16 : i32
          %nk = arith.ceildivsi %K, %c16 : i32
          %acc0 = arith.constant dense<0.0> : tensor<32x32xf32>{body}
          tile.store %c[%pm, %pn], %res : {A}, tensor<32x32xf32>
          return
        }}"""


@pytest.mark.parametrize("loop,kstop", [("while", 0), ("for_if", 2), ("for_if", 0)])
def test_mma_in_while_and_if(loop, kstop):
    k = compile_cpu(matmul_ir(loop))
    M, N, K = 70, 90, 72  # partial blocks on every side, 5 K blocks
    a, b = randn(M, K), randn(K, N)
    c = poisoned((M, N))
    k.launch((3, 3, 1), flat(a, b, c, kstop))
    kk = K if loop == "while" else min(16 * kstop, K)
    want = 2 * (a[:, :kk].astype(np.float64) @ b[:kk])
    assert_close(c, want, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# scf.while: loads in the body, i1 and tiles carried, nesting
# ---------------------------------------------------------------------------

def test_while_search_carries_i1_and_tile():
    """Per row: the first 64-block whose max exceeds thr (found flag, its
    index and its values carried through the while); a row without one
    keeps zeros."""
    k = compile_cpu(f"""
        func.func @search(%x: {F32_2D}, %o: {F32_2D}, %where: {I32}, %thr: f32) attributes {{tile.kernel}} {{
          %row = tile.bid 0
          %W = tile.dim %x, 1 : {F32_2D}
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %c64 = arith.constant 64 : i32
          %nb = arith.ceildivsi %W, %c64 : i32
          %false = arith.constant false
          %true = arith.constant true
          %zero = arith.constant dense<0.0> : tensor<1x64xf32>
          %w:3 = scf.while (%j = %c0, %found = %false, %best = %zero) : (i32, i1, tensor<1x64xf32>) -> (i32, i1, tensor<1x64xf32>) {{
            %more = arith.cmpi slt, %j, %nb : i32
            %nf = arith.xori %found, %true : i1
            %go = arith.andi %more, %nf : i1
            scf.condition(%go) %j, %found, %best : i32, i1, tensor<1x64xf32>
          }} do {{
          ^bb0(%j2: i32, %f2: i1, %b2: tensor<1x64xf32>):
            %t = tile.load %x[%row, %j2] {{padding = -1.0e30 : f32}} : {F32_2D} -> tensor<1x64xf32>
            %m = tile.reduce(%t) axis = 1 : (tensor<1x64xf32>) -> tensor<1xf32> {MAX}
            %m0 = tile.reshape %m : tensor<1xf32> -> tensor<f32>
            %mv = tensor.extract %m0[] : tensor<f32>
            %hit = arith.cmpf ogt, %mv, %thr : f32
            %nbest = scf.if %hit -> (tensor<1x64xf32>) {{
              scf.yield %t : tensor<1x64xf32>
            }} else {{
              scf.yield %b2 : tensor<1x64xf32>
            }}
            %j3 = arith.addi %j2, %c1 : i32
            scf.yield %j3, %hit, %nbest : i32, i1, tensor<1x64xf32>
          }}
          tile.store %o[%row, %c0], %w#2 : {F32_2D}, tensor<1x64xf32>
          %fi = arith.extui %w#1 : i1 to i32
          %last = arith.subi %w#0, %c1 : i32
          %neg = arith.constant -1 : i32
          %pos = arith.select %w#1, %last, %neg : i32
          %ps = tile.splat %pos : tensor<1xi32>
          tile.store %where[%row], %ps : {I32}, tensor<1xi32>
          return
        }}""")
    R, W, thr = 24, 300, 2.6
    x = randn(R, W)
    o, where = poisoned((R, 64)), poisoned(R, np.int32)
    k.launch((R, 1, 1), flat(x, o, where, thr))
    for r in range(R):
        blocks = [x[r, j:j + 64] for j in range(0, W, 64)]
        hits = [j for j, blk in enumerate(blocks) if blk.max() > thr]
        if hits:
            assert where[r] == hits[0]
            want = np.full(64, -1.0e30)
            want[:len(blocks[hits[0]])] = blocks[hits[0]]
            assert_close(o[r], want)
        else:
            assert where[r] == -1
            assert_close(o[r], np.zeros(64))
    assert (where >= 0).any() and (where < 0).any()


def test_early_exit_rows_if_in_while_in_for():
    """For each of the block's two rows (scf.for): add 64-chunks while the
    running sum is at most thr (scf.while), stopping through an scf.if that
    also halves the tile; the chunk count is stored too."""
    k = compile_cpu(f"""
        func.func @early(%x: {F32_2D}, %o: {F32_2D}, %cnt: {I32}, %thr: f32) attributes {{tile.kernel}} {{
          %bid = tile.bid 0
          %W = tile.dim %x, 1 : {F32_2D}
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %c2 = arith.constant 2 : i32
          %c64 = arith.constant 64 : i32
          %nb = arith.ceildivsi %W, %c64 : i32
          %false = arith.constant false
          %true = arith.constant true
          %zero = arith.constant dense<0.0> : tensor<1x64xf32>
          %half = arith.constant dense<0.5> : tensor<1x64xf32>
          scf.for %r = %c0 to %c2 step %c1 : i32 {{
            %b2 = arith.muli %bid, %c2 : i32
            %row = arith.addi %b2, %r : i32
            %w:2 = scf.while (%j = %c0, %stop = %false, %acc = %zero) : (i32, i1, tensor<1x64xf32>) -> (i32, tensor<1x64xf32>) {{
              %more = arith.cmpi slt, %j, %nb : i32
              %ns = arith.xori %stop, %true : i1
              %go = arith.andi %more, %ns : i1
              scf.condition(%go) %j, %acc : i32, tensor<1x64xf32>
            }} do {{
            ^bb0(%j2: i32, %acc2: tensor<1x64xf32>):
              %t = tile.load %x[%row, %j2] : {F32_2D} -> tensor<1x64xf32>
              %sum = arith.addf %acc2, %t : tensor<1x64xf32>
              %s = tile.reduce(%sum) axis = 1 : (tensor<1x64xf32>) -> tensor<1xf32> {ADD}
              %s0 = tile.reshape %s : tensor<1xf32> -> tensor<f32>
              %sv = tensor.extract %s0[] : tensor<f32>
              %over = arith.cmpf ogt, %sv, %thr : f32
              %res:2 = scf.if %over -> (i1, tensor<1x64xf32>) {{
                %h = arith.mulf %sum, %half : tensor<1x64xf32>
                scf.yield %true, %h : i1, tensor<1x64xf32>
              }} else {{
                scf.yield %false, %sum : i1, tensor<1x64xf32>
              }}
              %j3 = arith.addi %j2, %c1 : i32
              scf.yield %j3, %res#0, %res#1 : i32, i1, tensor<1x64xf32>
            }}
            tile.store %o[%row, %c0], %w#1 : {F32_2D}, tensor<1x64xf32>
            %js = tile.splat %w#0 : tensor<1xi32>
            tile.store %cnt[%row], %js : {I32}, tensor<1xi32>
          }}
          return
        }}""")
    R, W, thr = 30, 64 * 7, 8.0
    # Rows of growing magnitude stop after fewer chunks; the first never does.
    x = (np.abs(randn(R, W)) * (0.02 + 0.01 * np.arange(R))[:, None]).astype(np.float32)
    o, cnt = poisoned((R, 64)), poisoned(R, np.int32)
    k.launch((R // 2, 1, 1), flat(x, o, cnt, thr))
    for r in range(R):
        acc, j = np.zeros(64), 0
        while j < W // 64:
            acc = acc + x[r, 64 * j:64 * (j + 1)]
            j += 1
            if acc.sum() > thr:
                acc = acc * 0.5
                break
        assert cnt[r] == j, f"row {r}"
        assert_close(o[r], acc)
    assert (cnt < W // 64).any() and (cnt == W // 64).any()


def test_spin_lock_while_on_atomic_cas():
    """while atomic_cas(lock, 0, 1) != 0 {}; a plain read-modify-write of a
    counter; atomic_xchg(lock, 0): every block's add must survive (blocks
    run concurrently on the thread pool)."""
    k = compile_cpu(f"""
        func.func @locked(%lock: {I32}, %total: {I32}) attributes {{tile.kernel}} {{
          %bid = tile.bid 0
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %z = arith.constant dense<0> : tensor<i32>
          %one = arith.constant dense<1> : tensor<i32>
          scf.while : () -> () {{
            %old = tile.atomic_cas %lock[%z], %z, %one : {I32}[tensor<i32>], tensor<i32>
            %ov = tensor.extract %old[] : tensor<i32>
            %busy = arith.cmpi ne, %ov, %c0 : i32
            scf.condition(%busy)
          }} do {{
            scf.yield
          }}
          %t = tile.load %total[%c0] : {I32} -> tensor<1xi32>
          %b1 = arith.addi %bid, %c1 : i32
          %bs = tile.splat %b1 : tensor<1xi32>
          %n = arith.addi %t, %bs : tensor<1xi32>
          tile.store %total[%c0], %n : {I32}, tensor<1xi32>
          %prev = tile.atomic_rmw xchg %lock[%z], %z : {I32}[tensor<i32>], tensor<i32>
          return
        }}""")
    blocks = 20000
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    k.launch((blocks, 1, 1), flat(lock, total))
    assert lock[0] == 0
    assert total[0] == blocks * (blocks + 1) // 2


def test_long_reduction_in_branch_and_while():
    """A 32768-element row sum (chunked by tile-chunk-loops) in an scf.if branch,
    and one in a while body whose trip count is runtime."""
    k = compile_cpu(f"""
        func.func @long(%x: {F32_2D}, %o: {F32}, %reps: i32) attributes {{tile.kernel}} {{
          %row = tile.bid 0
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %c2 = arith.constant 2 : i32
          %par = arith.remsi %row, %c2 : i32
          %even = arith.cmpi eq, %par, %c0 : i32
          %zero = arith.constant dense<0.0> : tensor<1xf32>
          %s = scf.if %even -> (tensor<1xf32>) {{
            %t = tile.load %x[%row, %c0] : {F32_2D} -> tensor<1x32768xf32>
            %r = tile.reduce(%t) axis = 1 : (tensor<1x32768xf32>) -> tensor<1xf32> {ADD}
            scf.yield %r : tensor<1xf32>
          }} else {{
            %w:2 = scf.while (%i = %c0, %acc = %zero) : (i32, tensor<1xf32>) -> (i32, tensor<1xf32>) {{
              %lt = arith.cmpi slt, %i, %reps : i32
              scf.condition(%lt) %i, %acc : i32, tensor<1xf32>
            }} do {{
            ^bb0(%i2: i32, %acc2: tensor<1xf32>):
              %t = tile.load %x[%row, %c0] : {F32_2D} -> tensor<1x32768xf32>
              %m = tile.reduce(%t) axis = 1 : (tensor<1x32768xf32>) -> tensor<1xf32> {MAX}
              %n = arith.addf %acc2, %m : tensor<1xf32>
              %i3 = arith.addi %i2, %c1 : i32
              scf.yield %i3, %n : i32, tensor<1xf32>
            }}
            scf.yield %w#1 : tensor<1xf32>
          }}
          tile.store %o[%row], %s : {F32}, tensor<1xf32>
          return
        }}""")
    assert k.asm["host"].count("scf.for") >= 2, "the long reductions were not chunked"
    R, W = 6, 30000
    x = randn(R, W)
    o = poisoned(R)
    k.launch((R, 1, 1), flat(x, o, 3))
    want = np.where(np.arange(R) % 2 == 0, x.astype(np.float64).sum(1),
                    3 * np.maximum(x.max(1), 0.0))
    assert_close(o, want, rtol=1e-4, atol=1e-3)


def loop_text(ir, op):
    """The text of the first `op` (e.g. "scf.while") in `ir`, regions included."""
    start = ir.index(op)
    depth, i = 0, ir.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(ir[i], 0)
        if depth == 0 and ir[i] == "}" and not ir.startswith("} do {", i):
            return ir[start:i + 1]
        i += 1


@pytest.mark.parametrize("loop", ["while", "for"])
def test_carried_tile_updated_in_place(loop):
    """acc = acc * s + x over a runtime trip count: the carried tile is one
    buffer updated in place, not a fresh allocation (scf.for) or a copy in
    the condition region (scf.while) per iteration."""
    if loop == "while":
        body = f"""
          %w:2 = scf.while (%a = %zero, %j = %c0) : (tensor<256xf32>, i32) -> (tensor<256xf32>, i32) {{
            %lt = arith.cmpi slt, %j, %n : i32
            scf.condition(%lt) %a, %j : tensor<256xf32>, i32
          }} do {{
          ^bb0(%a2: tensor<256xf32>, %j2: i32):
            %m = arith.mulf %a2, %s : tensor<256xf32>
            %p = arith.addf %m, %x : tensor<256xf32>
            %j3 = arith.addi %j2, %c1 : i32
            scf.yield %p, %j3 : tensor<256xf32>, i32
          }}
          %r = arith.addf %w#0, %x : tensor<256xf32>"""
    else:
        body = """
          %w = scf.for %j = %c0 to %n step %c1 iter_args(%a2 = %zero) -> (tensor<256xf32>) : i32 {
            %m = arith.mulf %a2, %s : tensor<256xf32>
            %p = arith.addf %m, %x : tensor<256xf32>
            scf.yield %p : tensor<256xf32>
          }
          %r = arith.addf %w, %x : tensor<256xf32>"""
    k = compile_cpu(f"""
        func.func @carried(%in: {F32}, %o: {F32}, %n: i32, %scale: f32) attributes {{tile.kernel}} {{
          %i = tile.bid 0
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %x = tile.load %in[%i] : {F32} -> tensor<256xf32>
          %s = tile.splat %scale : tensor<256xf32>
          %zero = arith.constant dense<0.0> : tensor<256xf32>{body}
          tile.store %o[%i], %r : {F32}, tensor<256xf32>
          return
        }}""")
    text = loop_text(k.asm["bufferized"], "scf.while" if loop == "while" else "scf.for")
    assert "memref.alloc" not in text and "memref.copy" not in text, text
    x = randn(1024)
    for n in [0, 1, 5]:
        o = poisoned(1024)
        k.launch((4, 1, 1), flat(x, o, n, 0.5))
        acc = np.zeros(1024)
        for _ in range(n):
            acc = acc * 0.5 + x
        assert_close(o, acc + x)
