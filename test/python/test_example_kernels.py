"""The rewritten example and benchmark kernels (issue 15) against NumPy
float64, outputs poisoned: causal attention that masks only the diagonal
blocks, and the persistent matmul (a `while` over output tiles in L2-grouped
order). Odd sizes, grids and group sizes reach the edges of both."""

import math
import os
import re
import sys

import numpy as np
import pytest

from tilehelp import Device, assert_close, count, load_script, trace

FA = load_script("examples", "flash_attention.py")
FAB = load_script("examples", "flash_attention_backward.py")
PM = load_script("examples", "persistent_matmul.py")
TP = load_script("examples", "tensor_parallel_mlp.py")
BENCH = load_script("bench", "kernels.py")


def attention_ref(q, k, v, causal):
    # k, v with fewer heads than q: grouped-query (consecutive query heads
    # share one).
    group = q.shape[0] // k.shape[0]
    q, k, v = (x.astype(np.float64) for x in (q, np.repeat(k, group, 0),
                                              np.repeat(v, group, 0)))
    s = np.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v)


def skip_on_reference(request, op="scf.while"):
    if request.config.getoption("--tile-reference"):
        pytest.skip(f"refinterp has no {op}")


def qkv(rng, bh, seq, d, dtype=np.float32):
    return [rng.standard_normal((bh, seq, d)).astype(dtype) for _ in range(3)]


# -- attention: IR shape --------------------------------------------------

def _loops(ir):
    """The text of each top-level scf.for, in order (braces counted)."""
    bodies, cur, depth = [], None, 0
    for line in ir.splitlines():
        if cur is None and "scf.for" in line:
            cur, depth = [], 0
        if cur is not None:
            cur.append(line)
            depth += line.count("{") - line.count("}")
            if depth == 0:
                bodies.append("\n".join(cur))
                cur = None
    return bodies


@pytest.mark.parametrize("causal", [False, True])
def test_example_attention_masks_only_the_last_loop(tmp_path, causal):
    """The example writes one loop over the key blocks, each masked (keys
    past `seq`, and the diagonal when causal); the compiler
    (tile-split-uniform-masks, which the CPU backend's host stage runs
    too) cuts it into a loop without the mask and the masked tail. Two
    hand-written loops kept the kernel off sm_90's warp specialization."""
    from test_split_masks import _loops as value_loops
    from test_tilec import run_tilec

    h = np.zeros((2, 100, 32), np.float32)
    ir = trace(FA["attention"], h, h, h, h, 100, 0.1, BM=32, BN=32, D=32, CAUSAL=causal)
    loop, = _loops(ir)
    # seq bound, and for causal also the diagonal: one or two compares.
    assert count(loop, "arith.cmpi") == (2 if causal else 1)
    # Causal programs stop at their diagonal: the bound is a runtime
    # minimum (and a second: the heads of block_and_head's last section).
    assert count(ir, "arith.minsi") == (2 if causal else 0)
    sig = ", ".join(["f32[2,100,32]"] * 4) + ", i32, f32"
    host = run_tilec([FA["__file__"] + "::attention", "--args", sig, "-D", "BM=32", "-D",
                      "BN=32", "-D", "D=32", "-D", f"CAUSAL={causal}", "--target", "cpu",
                      "--emit", "host"], tmp_path).stdout
    compares = [len(re.findall(r"arith\.cmpi \w+, %\w+, %\w+ : i32", loop))
                for loop in value_loops(host)]
    assert compares == [0, 2 if causal else 1], host


@pytest.mark.parametrize("causal", [False, True])
def test_bench_attention_masks_only_the_diagonal(causal):
    h = np.zeros((2, 128, 32), np.float16)
    ir = trace(BENCH["attention_diag"], h, h, h, h, 0.1, BM=32, BN=32, D=32, CAUSAL=causal)
    loops = _loops(ir)
    assert len(loops) == (2 if causal else 1), ir
    # The mask is the one select on an integer compare; the others are the
    # flushes of exp2(flush_to_zero=True), on float compares.
    assert count(loops[0], "arith.select") == count(loops[0], "arith.cmpf")
    if causal:
        assert count(loops[1], "arith.select") == count(loops[1], "arith.cmpf") + 1
    one = trace(BENCH["attention_diag_if"], h, h, h, h, 0.1, BM=32, BN=32, D=32, CAUSAL=causal)
    assert len(_loops(one)) == 1 and count(one, "scf.if") == (1 if causal else 0)
    old = trace(BENCH["attention"], h, h, h, h, 0.1, BM=32, BN=32, D=32,
                CAUSAL=causal)
    loop, = _loops(old)  # (block_and_head's floor divisions select outside it)
    assert count(loop, "arith.select") == count(loop, "arith.cmpf") + (1 if causal else 0)


# -- attention: numerics ----------------------------------------------------

@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq,bm,bn", [
    (1, 16, 16), (37, 16, 16), (64, 32, 32), (100, 32, 16), (100, 16, 32), (130, 64, 32),
    (96, 32, 32), (200, 128, 64)])
@pytest.mark.parametrize("d", [32, 64])  # D=64: 128-byte rows, the TMA ring on sm_90
def test_example_attention(seq, bm, bn, causal, d):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    q, k, v = qkv(np.random.default_rng(seq * 7 + bm + bn), 3, seq, d, dtype)
    got = FA["run"](FA["Device"](), q, k, v, causal, bm, bn)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(got, attention_ref(q, k, v, causal), rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads,kv_heads,seq,d,bm,bn", [
    (8, 2, 77, 32, 32, 16),  # grouped-query, ragged
    (4, 1, 100, 64, 64, 64),  # multi-query
])
def test_example_attention_grouped_query(heads, kv_heads, seq, d, bm, bn, causal):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(heads * 100 + kv_heads + seq)
    q = rng.standard_normal((heads, seq, d)).astype(dtype)
    k, v = (rng.standard_normal((kv_heads, seq, d)).astype(dtype) for _ in range(2))
    got = FA["run"](FA["Device"](), q, k, v, causal, bm, bn)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(got, attention_ref(q, k, v, causal), rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [128, 256])
def test_example_attention_head_dims(d, causal):
    # The head dims besides test_example_attention's, on ragged lengths.
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    q, k, v = qkv(np.random.default_rng(d), 2, 150, d, dtype)
    got = FA["run"](FA["Device"](), q, k, v, causal, 64, 64)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    assert_close(got, attention_ref(q, k, v, causal), rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("fused_dq", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads,kv_heads,seq,d,bm,bn", [
    (4, 2, 77, 32, 32, 16),  # grouped-query, ragged: dK, dV sum over 2 heads
    (3, 1, 64, 16, 16, 32),  # multi-query
])
def test_attention_backward_grouped_query(heads, kv_heads, seq, d, bm, bn, causal,
                                          fused_dq):
    dev = FAB["Device"]()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(heads * 10 + kv_heads + seq)
    q, dout = (rng.standard_normal((heads, seq, d)).astype(dtype) for _ in range(2))
    k, v = (rng.standard_normal((kv_heads, seq, d)).astype(dtype) for _ in range(2))
    dq_, dk_, dv_ = (dev.put(x) for x in (q, k, v))
    out, lse = FAB["forward"](dev, dq_, dk_, dv_, causal, bm, bn)
    grads = FAB["backward"](dev, dq_, dk_, dv_, out, lse, dev.put(dout), causal, bm, bn,
                            fused_dq=fused_dq)
    tol = 3e-2 if dtype == np.float16 else 1e-4
    assert_close(dev.get(out), attention_ref(q, k, v, causal), rtol=tol, atol=tol)
    wide = [x.astype(np.float64) for x in (q, k, v, dout)]
    want = FAB["reference_grads"](*wide, 1 / math.sqrt(d), causal)
    for g, w, shape in zip(grads, want, (q.shape, k.shape, v.shape)):
        assert dev.get(g).shape == shape
        assert_close(dev.get(g), w, rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("fused_dq", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bh,seq,d,bm,bn", [
    (2, 77, 32, 32, 16),   # ragged, more key blocks than query blocks
    (1, 130, 16, 16, 64),  # ragged, a key block wider than a query block
    (3, 64, 32, 32, 32),   # whole blocks
    (1, 5, 16, 16, 16),    # one partial block
    (1, 77, 256, 64, 64),  # head dim 256, ragged (TileAttention's blocks there)
])
def test_attention_backward_matches_float64(bh, seq, d, bm, bn, causal, fused_dq):
    """examples/flash_attention_backward.py: O and the row lse, then dQ, dK
    and dV from the FlashAttention-2 backward kernels, against float64
    NumPy gradients of softmax(Q K^T / sqrt(d)) V; outputs poisoned.
    fused_dq: dQ added by relaxed atomics from the dK/dV kernel."""
    dev = FAB["Device"]()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(bh * 1000 + seq + d + bm * 3 + bn)
    q, k, v, dout = (rng.standard_normal((bh, seq, d)).astype(dtype) for _ in range(4))
    dq_, dk_, dv_ = (dev.put(x) for x in (q, k, v))
    out, lse = FAB["forward"](dev, dq_, dk_, dv_, causal, bm, bn)
    grads = FAB["backward"](dev, dq_, dk_, dv_, out, lse, dev.put(dout), causal, bm, bn,
                            fused_dq=fused_dq)
    wide = [x.astype(np.float64) for x in (q, k, v, dout)]
    tol = 3e-2 if dtype == np.float16 else 1e-4
    assert_close(dev.get(out), attention_ref(q, k, v, causal), rtol=tol, atol=tol)
    # The log-sum-exp of each row's scaled scores.
    s = np.einsum("bqd,bkd->bqk", wide[0], wide[1]) / math.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    top = s.max(-1)
    assert_close(dev.get(lse), top + np.log(np.exp(s - top[..., None]).sum(-1)),
                 rtol=tol, atol=tol)
    for g, want in zip(grads, FAB["reference_grads"](*wide, 1 / math.sqrt(d), causal)):
        assert_close(dev.get(g), want, rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("fused_dq", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_attention_backward_sm90_blocks(d, causal, fused_dq):
    """The blocks the bench and TileAttention take on sm_90 (sm90_blocks:
    128 queries a step in dK/dV at d 64; the forward's and attention_delta's
    forward_blocks: 128 x 128), with O in the inputs' dtype as TileAttention
    keeps it, on a ragged length, against float64; outputs poisoned.
    fused_dq: attention_dkdvdq, whose dQ product is dQ^T = K^T dS^T on
    sm_90 at d 128 (test_fused_backward)."""
    dev = FAB["Device"]()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(d + causal)
    bh, seq = 2, 333
    q, k, v, dout = (rng.standard_normal((bh, seq, d)).astype(dtype) for _ in range(4))
    dq_, dk_, dv_ = (dev.put(x) for x in (q, k, v))
    bm, bn = FAB["forward_blocks"](d)
    assert (bm, bn) == (128, 128)
    out, lse = FAB["forward"](dev, dq_, dk_, dv_, causal, bm, bn, out_dtype=dtype)
    kv_blocks, q_blocks = FAB["sm90_blocks"](d)
    grads = FAB["backward"](dev, dq_, dk_, dv_, out, lse, dev.put(dout), causal, bm, bn,
                            dkdv_blocks=kv_blocks, dq_blocks=q_blocks, fused_dq=fused_dq)
    wide = [x.astype(np.float64) for x in (q, k, v, dout)]
    tol = 3e-2 if dtype == np.float16 else 1e-4
    assert dev.get(out).dtype == dtype
    assert_close(dev.get(out), attention_ref(q, k, v, causal), rtol=tol, atol=tol)
    for g, want in zip(grads, FAB["reference_grads"](*wide, 1 / math.sqrt(d), causal)):
        assert_close(dev.get(g), want, rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("name", ["attention", "attention_diag", "attention_diag_if"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bh,seq,bm,bn,d", [
    (2, 128, 32, 32, 32), (2, 128, 64, 32, 32), (2, 128, 32, 64, 32), (2, 64, 64, 64, 32),
    (16, 256, 128, 128, 128)])  # every extent a multiple of 16, as the bench's
def test_bench_attention(name, bh, seq, bm, bn, d, causal, request):
    if name == "attention_diag_if" and causal:
        skip_on_reference(request, "scf.if")
    dev = Device()
    rng = np.random.default_rng(seq + bm * 3 + bn)
    q, k, v = qkv(rng, bh, seq, d, np.float16)
    o = dev.poisoned((bh, seq, d), np.float32)
    BENCH[name][(seq // bm, bh)](dev.put(q), dev.put(k), dev.put(v), o, d ** -0.5,
                                 BM=bm, BN=bn, D=d, CAUSAL=causal)
    tol = 2e-2 if dev.backend == "cuda" else 1e-3
    assert_close(dev.get(o), attention_ref(q, k, v, causal), rtol=tol, atol=tol)


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
def test_bench_attention_grouped_query(causal):
    # bench's GQA rows: 8 query heads on 2 K/V heads.
    dev = Device()
    rng = np.random.default_rng(8)
    q = rng.standard_normal((8, 128, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 128, 64)).astype(np.float16) for _ in range(2))
    o = dev.poisoned((8, 128, 64), np.float32)
    BENCH["attention"][(128 // 64, 8)](dev.put(q), dev.put(k), dev.put(v), o, 64 ** -0.5,
                                       BM=64, BN=64, D=64, CAUSAL=causal, GROUP=4)
    tol = 2e-2 if dev.backend == "cuda" else 1e-3
    assert_close(dev.get(o), attention_ref(q, k, v, causal), rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_bench_attention_bfloat16(causal):
    # bench's bf16 rows, through torch (NumPy has no bfloat16).
    torch = pytest.importorskip("torch")
    gen = torch.Generator(device="cuda").manual_seed(16)
    q, k, v = (torch.randn(4, 256, 128, device="cuda", generator=gen).to(torch.bfloat16)
               for _ in range(3))
    o = torch.full((4, 256, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    BENCH["attention"][(2, 4)](q, k, v, o, 128 ** -0.5, BM=128, BN=128, D=128,
                               CAUSAL=causal)
    torch.cuda.synchronize()
    want = attention_ref(*(t.double().cpu().numpy() for t in (q, k, v)), causal)
    assert_close(o.double().cpu().numpy(), want, rtol=3e-2, atol=3e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("env", [{"TILE_WARP_SPECIALIZE": "0"}, {"TILE_PING_PONG": "1"},
                                 {"TILE_TMA": "0"}])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bh,seq,bm,bn,d", [
    (3, 384, 128, 128, 128), (2, 256, 128, 64, 64), (2, 128, 64, 64, 64)])
def test_bench_attention_schedules(monkeypatch, env, bh, seq, bm, bn, d, causal):
    """The attention schedules besides the default one (a producer
    warpgroup feeding TMA rings, which test_bench_attention runs): no
    producer, consumers taking turns at their wgmmas, the cp.async ring;
    fresh kernels, since the options are read at compile time."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    kernels = load_script("bench", "kernels.py")
    dev = Device()
    rng = np.random.default_rng(seq + bm * 3 + bn + d)
    q, k, v = qkv(rng, bh, seq, d, np.float16)
    o = dev.poisoned((bh, seq, d), np.float32)
    kernels["attention"][(seq // bm, bh)](dev.put(q), dev.put(k), dev.put(v), o, d ** -0.5,
                                          BM=bm, BN=bn, D=d, CAUSAL=causal)
    assert_close(dev.get(o), attention_ref(q, k, v, causal), rtol=2e-2, atol=2e-2)


# -- grouped order and the persistent matmul ---------------------------------

@pytest.mark.parametrize("helper", [PM["grouped_tile"], BENCH["grouped_tile"]])
@pytest.mark.parametrize("m,n,group", [(6, 5, 4), (1, 7, 8), (9, 1, 2), (8, 3, 8), (5, 5, 1)])
def test_grouped_order_is_a_permutation(helper, m, n, group):
    """On Python ints the helper runs as plain Python: every tile once, and
    inside a full group the row-block changes fastest."""
    seen = [helper(t, m, n, group) for t in range(m * n)]
    assert sorted(seen) == [(i, j) for i in range(m) for j in range(n)]
    if m >= group > 1:
        assert seen[:group] == [(i, 0) for i in range(group)]


@pytest.mark.numerics
@pytest.mark.parametrize("M,N,K,bm,bn,bk,group,programs", [
    (330, 200, 200, 64, 64, 32, 4, 3),    # short last group
    (64, 64, 32, 32, 32, 32, 8, 1),       # one program walks every tile
    (100, 70, 45, 32, 32, 16, 2, 5),      # ragged M, N and K
    (32, 96, 64, 32, 32, 32, 1, 7),       # more programs than tiles: some do nothing
    (128, 128, 64, 32, 64, 32, 3, 16),    # exactly one tile per program
])
def test_persistent_matmul(M, N, K, bm, bn, bk, group, programs, request):
    skip_on_reference(request)
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    got = PM["run"](PM["Device"](), a, b, bm, bn, bk, group, programs)
    tol = 1e-2 if dtype == np.float16 else 1e-4
    assert_close(got, a.astype(np.float64) @ b.astype(np.float64), rtol=tol,
                 atol=tol * np.sqrt(K))


@pytest.mark.numerics
@pytest.mark.parametrize("name,programs", [("matmul", None), ("matmul_persistent", 5),
                                           ("matmul_persistent", 1),
                                           ("matmul_persistent_range", 5),
                                           ("matmul_persistent_range", 40)])
@pytest.mark.parametrize("M,N,K", [(192, 160, 96), (100, 130, 70)])
def test_bench_matmul(name, programs, M, N, K, request):
    if programs:
        skip_on_reference(request)
    dev = Device()
    rng = np.random.default_rng(M * N)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = dev.poisoned((M, N), np.float32)
    cfg = dict(BM=32, BN=64, BK=32, GROUP=2)
    tiles = -(-M // 32) * -(-N // 64)
    BENCH[name][(programs or tiles,)](dev.put(a), dev.put(b), c, **cfg)
    assert_close(dev.get(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2,
                 atol=1e-2 * np.sqrt(K))


def test_persistent_matmul_is_a_while_loop():
    f = np.zeros((64, 64), np.float32)
    ir = trace(PM["persistent_matmul"], f, f, f, BM=32, BN=32, BK=16, GROUP_SIZE_M=2)
    assert count(ir, "scf.while") == 1 and count(ir, "scf.for") == 1
    assert count(ir, "tile.num_blocks") == 1 and count(ir, "arith.minsi") == 1


@pytest.mark.numerics
@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_tensor_parallel_mlp(ranks, request):
    """The example's shards run one after the other (issue 21; the NCCL run
    needs two GPUs): the summed partials equal the unsharded block and
    float64."""
    skip_on_reference(request)
    assert TP["main"](M=70, D=48, F=64, ranks=ranks) == 0


@pytest.mark.numerics
def test_tensor_parallel_mlp_catches_a_wrong_shard(request, monkeypatch):
    """The example's check fails when a rank multiplies the wrong rows of
    W2 with its hidden slice."""
    skip_on_reference(request)
    shard = TP["shard"]

    def wrong(w1, b1, w2, rank, ranks):
        a, b, _ = shard(w1, b1, w2, rank, ranks)
        return a, b, shard(w1, b1, w2, (rank + 1) % ranks, ranks)[2]

    main = TP["main"]
    monkeypatch.setitem(main.__globals__, "shard", wrong)
    assert main(M=70, D=48, F=64, ranks=2) == 1


def test_tensor_parallel_ranks_start_with_nvlink_multicast_off(monkeypatch):
    """Each torchrun rank joins NCCL with multicast off in NCCL, PyTorch and
    NVSHMEM, whatever the environment said (multicast can take a shared
    host's GPUs out of service), on the GPU its LOCAL_RANK names."""
    import types

    seen = {}
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(set_device=lambda d: seen.setdefault("device", d))
    dist = types.ModuleType("torch.distributed")
    dist.init_process_group = lambda backend: seen.update(
        backend=backend, env={k: os.environ.get(k) for k in TP["NO_MULTICAST"]})
    dist.get_rank, dist.get_world_size = (lambda: 3), (lambda: 4)
    torch.distributed = dist
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.distributed", dist)
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    for name in TP["NO_MULTICAST"]:  # restored after the test
        monkeypatch.setenv(name, os.environ.get(name, "unset"))
    assert TP["start_nccl"]() == (1, 3, 4)
    assert seen == {"device": 1, "backend": "nccl", "env": {
        "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1"}}
