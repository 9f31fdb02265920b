"""Flash attention backward (FlashAttention-2's algorithm): dQ, dK and dV of
O = softmax(Q K^T * scale) V without the L x L matrices, from the forward's
row log-sum-exps.

- `attention_lse`: the forward of flash_attention.py that also stores each
  row's lse = m + log(l), so the backward rebuilds P = exp(S - lse).
- `attention_delta`: delta = rowsum(dO * O) (the softmax's Jacobian term).
- `attention_dkdv`: one program per BN keys of one (batch*head), looping
  over the query blocks that see them: dV += P^T dO, dK += scale dS^T Q
  with dS = P * (dO V^T - delta).
- `attention_dq`: one program per BM queries, looping over their key
  blocks: dQ += scale dS K. Two kernels rather than atomics: every output
  block has one writer.

`TileAttention` wraps them as a torch.autograd.Function where torch is
installed; main() checks the gradients against float64 NumPy (and against
torch's autograd of scaled_dot_product_attention on CUDA)."""

import math
import sys

import numpy as np

from _common import Device, check, tile
from flash_attention import (LOG2E, block_and_head, online_softmax_step, query_block_state,
                             reference)


@tile.kernel
def attention_lse(q, k, v, out, lse, seq, scale, BM: tile.Constant[int],
                  BN: tile.Constant[int], D: tile.Constant[int],
                  CAUSAL: tile.Constant[bool], GROUP: tile.Constant[int] = 1):
    qb, bh = block_and_head(CAUSAL, LONGEST_LAST=True)
    Q, rows, m, l, acc = query_block_state(q, bh, qb, BM, D)
    n_blocks = tile.cdiv(seq, BN)
    if CAUSAL:
        n_blocks = min(n_blocks, tile.cdiv((qb + 1) * BM, BN))
    for j in tile.range(n_blocks):
        m, l, acc = online_softmax_step(Q, k, v, bh // GROUP, j, rows, seq, scale, m, l,
                                        acc, BN, D, MASK=True, CAUSAL=CAUSAL)
    tile.store(out, index=(bh, qb, 0),
               tile=tile.reshape((acc / l[:, None]).astype(out.dtype), (1, BM, D)))
    # m is in log2 units (online_softmax_step); lse in natural ones.
    tile.store(lse, index=(bh, qb), tile=tile.reshape(m / LOG2E + tile.log(l), (1, BM)))


@tile.kernel
def attention_delta(out, dout, delta, BM: tile.Constant[int], D: tile.Constant[int]):
    bh, qb = tile.bid(1), tile.bid(0)
    o = tile.load(out, index=(bh, qb, 0), shape=(1, BM, D)).astype(tile.float32)
    do = tile.load(dout, index=(bh, qb, 0), shape=(1, BM, D)).astype(tile.float32)
    tile.store(delta, index=(bh, qb), tile=tile.sum(o * do, axis=2))


# P = exp(x) = exp2(x * log2(e)) (LOG2E): the scale and log2(e) fold into one
# multiply-add per element, and exp2's flush_to_zero makes it one
# ex2.approx.ftz on CUDA (probabilities below 2^-126 become 0).
def _probabilities(Q, Kt, lse_rows, rows, cols, seq, scale, CAUSAL):
    """P = exp(S - lse) of one (BM queries, BN keys) block (lse_rows in log2
    units, from _query_block), zero where a key or query is past `seq` or
    (causal) a key follows its query."""
    s = tile.mma(Q, Kt, tile.zeros((Q.shape[0], Kt.shape[1]), tile.float32))
    valid = (cols[None, :] < seq) & (rows[:, None] < seq)
    if CAUSAL:
        valid = valid & (cols[None, :] <= rows[:, None])
    return tile.where(valid, tile.exp2(s * (scale * LOG2E) - lse_rows[:, None],
                                       flush_to_zero=True), 0.0)


def _query_block(q, dout, lse, delta, bh, i, BM, D):
    Q = tile.reshape(tile.load(q, index=(bh, i, 0), shape=(1, BM, D)), (BM, D))
    dO = tile.reshape(tile.load(dout, index=(bh, i, 0), shape=(1, BM, D)), (BM, D))
    lse_rows = tile.reshape(tile.load(lse, index=(bh, i), shape=(1, BM)), (BM,)) * LOG2E
    delta_rows = tile.reshape(tile.load(delta, index=(bh, i), shape=(1, BM)), (BM,))
    return Q, dO, lse_rows, delta_rows


def _key_block_state(k, v, bh, kb, seq, BM, BN, D, CAUSAL):
    """A dK/dV program's key block: K and V, the key indices, zero dK and dV,
    and its query blocks per head from the first that sees a key."""
    K = tile.reshape(tile.load(k, index=(bh, kb, 0), shape=(1, BN, D)), (BN, D))
    V = tile.reshape(tile.load(v, index=(bh, kb, 0), shape=(1, BN, D)), (BN, D))
    keys = kb * BN + tile.arange(BN)
    dK = tile.zeros((BN, D), tile.float32)
    dV = tile.zeros((BN, D), tile.float32)
    first = 0
    if CAUSAL:  # query blocks that end before this block's first key see none of it
        first = kb * BN // BM
    return K, V, keys, dK, dV, first, tile.cdiv(seq, BM) - first


def _head_and_block(bh, t, first, per_head, GROUP):
    """Step t of a dK/dV loop over its K/V head's GROUP query heads: the
    query head and query block."""
    if GROUP == 1:  # a Constant: one head, no division
        return bh, first + t
    return bh * GROUP + t // per_head, first + t % per_head


def _key_block_products(K, V, Q, dO, lse_rows, delta_rows, keys, queries, seq, scale, dV,
                        CAUSAL, ROUND_P=False):
    """One (key block, query block) pair of a dK/dV program, keys along the
    rows: P^T (the transpose of _probabilities' P), dV += P^T dO, and
    dS^T = P^T (dP^T - delta) without the scale. Returns dS^T and dV.
    ROUND_P: dS^T from P^T as rounded for dV's product (dO's type), so
    that the f32 P^T is dead before dP^T's product: 32 fewer registers
    live a thread at head dim 128."""
    BN, BM = K.shape[0], Q.shape[0]
    st = tile.mma(K, tile.transpose(Q), tile.zeros((BN, BM), tile.float32))
    valid = (keys[:, None] < seq) & (queries[None, :] < seq)
    if CAUSAL:
        valid = valid & (keys[:, None] <= queries[None, :])
    pt = tile.where(valid, tile.exp2(st * (scale * LOG2E) - lse_rows[None, :],
                                     flush_to_zero=True), 0.0)
    rounded = pt.astype(dO.dtype)
    if ROUND_P:
        pt = rounded.astype(tile.float32)
    dV = tile.mma(rounded, dO, dV)
    dpt = tile.mma(V, tile.transpose(dO), tile.zeros((BN, BM), tile.float32))
    return pt * (dpt - delta_rows[None, :]), dV


# Eight warps: two warpgroups. Every product of attention_dkdv has the BN
# keys as its rows (S^T = K Q^T, dP^T = V dO^T, dV += P^T dO, dK += dS^T Q)
# and every product of attention_dq the BM queries (S = Q K^T, dP = dO V^T,
# dQ += dS K), so with 128 of them each is a warpgroup mma (wgmma) on sm_90:
# the block loaded before the loop (K and V, or Q and dO) is its A, copied
# once into shared memory, and the block the loop loads is its B, streamed
# through a TMA ring that both of the mmas reading it share.
#
# Grouped-query attention (GROUP query heads per K/V head): a dK/dV program
# sums over its K/V head's GROUP query heads, in one loop over (head, query
# block) pairs, so that the ring streams across heads.
#
# tied_wgmma_fence=False: the fence in front of dV's and dK's register-A
# wgmmas as NVVM's plain one (ptxas fences P^T's and dS^T's fragments
# itself). Tied (every fragment computed before the fence, the compiler's
# default, which the forward gains by) the backward ran up to 14% slower
# on an H100 (2026-12-07, same process: B4 H32 L4096 D128 0.87x against
# 0.94x SDPA, causal 0.89x / 0.96x; L16384 0.86x / 0.98x, causal 0.85x /
# 0.93x; D64 0.87x / 0.91x, causal 0.96x / 0.97x). The same for
# attention_dq and attention_dkdvdq.
BACKWARD_FENCE = dict(tied_wgmma_fence=False)


@tile.kernel(num_warps=8, **BACKWARD_FENCE)
def attention_dkdv(q, k, v, dout, lse, delta, dk, dv, seq, scale,
                   BM: tile.Constant[int], BN: tile.Constant[int], D: tile.Constant[int],
                   CAUSAL: tile.Constant[bool], GROUP: tile.Constant[int] = 1,
                   ROUND_P: tile.Constant[bool] = False):
    kb, bh = block_and_head(CAUSAL, LONGEST_LAST=False)  # bh: a K/V head
    K, V, keys, dK, dV, first, per_head = _key_block_state(k, v, bh, kb, seq, BM, BN, D,
                                                           CAUSAL)
    for t in tile.range(GROUP * per_head):
        h, i = _head_and_block(bh, t, first, per_head, GROUP)
        Q, dO, lse_rows, delta_rows = _query_block(q, dout, lse, delta, h, i, BM, D)
        queries = i * BM + tile.arange(BM)
        dst, dV = _key_block_products(K, V, Q, dO, lse_rows, delta_rows, keys, queries,
                                      seq, scale, dV, CAUSAL, ROUND_P)
        dK = tile.mma(dst.astype(Q.dtype), Q, dK)
    tile.store(dk, index=(bh, kb, 0), tile=tile.reshape((dK * scale).astype(dk.dtype), (1, BN, D)))
    tile.store(dv, index=(bh, kb, 0), tile=tile.reshape(dV.astype(dv.dtype), (1, BN, D)))


# FlashAttention-2's five products in one kernel: attention_dkdv's four and
# dQ += dS K from the same dS of each (query block, key block) pair, added
# into an f32 dQ with relaxed atomics (no value is read back, and no
# ordering is needed until the kernel ends). The separate attention_dq
# recomputes S and dP (two more products) to give each dQ block one writer.
# On sm_90 it runs on mma.sync. With TILE_STAGED_MMA=1 every product is a
# wgmma: with 64 queries a step (d 128) the compiler computes dQ^T = K^T
# dS^T (128 rows of the head dimension), dS^T written into shared memory
# each iteration, K read transposed from its one copy; with 128 (d 64)
# dQ = dS K as written, dS^T in shared memory as A's M-major form; Q and dO
# stream through a TMA ring that reads ahead of the atomics (launches with
# dq_acc overlapping Q or dO are refused). On an H100 (2026-12-06) that
# path is right but slower than the two kernels (0.75-0.92x SDPA with
# TILE_BULK_REDUCE=1, 0.79-0.93x with TILE_DELAY_STAGED_MMA=1 too, against
# 0.87-0.99x), so it stays off; the bench times this kernel beside the two
# (bench.py `attention-bwd`, rows tile-fused-dq*), and TileAttention keeps
# attention_dq.
@tile.kernel(num_warps=8, **BACKWARD_FENCE)
def attention_dkdvdq(q, k, v, dout, lse, delta, dk, dv, dq_acc, seq, scale,
                     BM: tile.Constant[int], BN: tile.Constant[int], D: tile.Constant[int],
                     CAUSAL: tile.Constant[bool], GROUP: tile.Constant[int] = 1):
    kb, bh = block_and_head(CAUSAL, LONGEST_LAST=False)  # bh: a K/V head
    K, V, keys, dK, dV, first, per_head = _key_block_state(k, v, bh, kb, seq, BM, BN, D,
                                                           CAUSAL)
    dims = tile.arange(D)
    for t in tile.range(GROUP * per_head):
        h, i = _head_and_block(bh, t, first, per_head, GROUP)
        Q, dO, lse_rows, delta_rows = _query_block(q, dout, lse, delta, h, i, BM, D)
        queries = i * BM + tile.arange(BM)
        dst, dV = _key_block_products(K, V, Q, dO, lse_rows, delta_rows, keys, queries,
                                      seq, scale, dV, CAUSAL)
        dst = (dst * scale).astype(Q.dtype)
        dK = tile.mma(dst, Q, dK)
        dq_part = tile.mma(tile.transpose(dst), K, tile.zeros((BM, D), tile.float32))
        # Lanes past `seq` are out of bounds: atomic_add skips them.
        tile.atomic_add(dq_acc, (h, queries[:, None], dims[None, :]), dq_part,
                        memory_order=tile.MemoryOrder.RELAXED)
    tile.store(dk, index=(bh, kb, 0), tile=tile.reshape(dK.astype(dk.dtype), (1, BN, D)))
    tile.store(dv, index=(bh, kb, 0), tile=tile.reshape(dV.astype(dv.dtype), (1, BN, D)))


@tile.kernel
def attention_cast(src, dst, BM: tile.Constant[int], D: tile.Constant[int]):
    bh, qb = tile.bid(1), tile.bid(0)
    x = tile.load(src, index=(bh, qb, 0), shape=(1, BM, D))
    tile.store(dst, index=(bh, qb, 0), tile=x.astype(dst.dtype))


@tile.kernel(num_warps=8, **BACKWARD_FENCE)
def attention_dq(q, k, v, dout, lse, delta, dq, seq, scale,
                 BM: tile.Constant[int], BN: tile.Constant[int], D: tile.Constant[int],
                 CAUSAL: tile.Constant[bool], GROUP: tile.Constant[int] = 1):
    qb, bh = block_and_head(CAUSAL, LONGEST_LAST=True)  # causal: longest first
    kvh = bh // GROUP
    Q, dO, lse_rows, delta_rows = _query_block(q, dout, lse, delta, bh, qb, BM, D)
    rows = qb * BM + tile.arange(BM)
    dQ = tile.zeros((BM, D), tile.float32)
    n_blocks = tile.cdiv(seq, BN)
    if CAUSAL:
        n_blocks = min(n_blocks, tile.cdiv((qb + 1) * BM, BN))
    for j in tile.range(n_blocks):
        K = tile.reshape(tile.load(k, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D))
        V = tile.reshape(tile.load(v, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D))
        cols = j * BN + tile.arange(BN)
        p = _probabilities(Q, tile.transpose(K), lse_rows, rows, cols, seq, scale, CAUSAL)
        dp = tile.mma(dO, tile.transpose(V), tile.zeros((BM, BN), tile.float32))
        ds = p * (dp - delta_rows[:, None])
        dQ = tile.mma(ds.astype(K.dtype), K, dQ)
    tile.store(dq, index=(bh, qb, 0), tile=tile.reshape((dQ * scale).astype(dq.dtype), (1, BM, D)))


def forward(dev, q, k, v, causal, bm, bn, out_dtype=np.float32):
    """O (of `out_dtype`) and the row lse of attention(q, k, v) (device
    arrays in, out); q is (batch*heads, L, D), k and v (batch*kv_heads, L,
    D)."""
    batch_heads, seq, d = q.shape
    out = dev.empty((batch_heads, seq, d), out_dtype)
    lse = dev.empty((batch_heads, seq), np.float32)
    attention_lse[(tile.cdiv(seq, bm), batch_heads)](
        q, k, v, out, lse, seq, 1.0 / math.sqrt(d), BM=bm, BN=bn, D=d, CAUSAL=causal,
        GROUP=batch_heads // k.shape[0])
    return out, lse


# attention_dkdv as backward() runs it at head dim 128: ROUND_P, its waits
# in place (dV += P^T dO and dP^T = V dO^T issued back to back, one wait for
# both: tile-defer-mma-waits with move-mmas=false) and 24/240 registers.
# Against the previous default (no ROUND_P, one wait per product, 40/232),
# same process, H100, 2026-12-06 (docs/performance.md): B4 H32 L4096 +2.0%
# (causal +3.0%); B1 H32 L16384 causal -1.7%, +3.6%, +3.7%, +3.2% in four
# runs, non-causal -5.5%, +1.7%, 0.0%, -0.3% (that row moved 2% between two
# copies of the same kernels). At d 64 too since the plain wgmma fence
# (BACKWARD_FENCE): same process, H100, 2026-12-07, B4 H32 L4096 D64 +5.0%
# and +4.8% in two runs (0.91x -> 0.96x SDPA), causal -0.4%, +0.3% (its
# loop spills 12 bytes, causal 76 and takes more registers than the plan).
# In bfloat16 (76-140 bytes) ptxas spills that loop, and it measured 5-6%
# slower (H100, 2026-12-07): bf16 keeps attention_dkdv. So does grouped-query
# attention: same process, H100, 2026-12-06, B4 H32 Hkv 8 L4096 it lost 1.3%
# (causal 3.7%, where its loop spills 20 bytes) against attention_dkdv.
attention_dkdv_waits_in_place = attention_dkdv.replace_hints(ws_registers=(24, 240),
                                                             defer_mma_waits="in-place")


def dkdv_waits_in_place(d, dtype, group=1):
    """Whether backward() runs attention_dkdv_waits_in_place (with
    ROUND_P) for head dim `d`, inputs of `dtype` (NumPy's or torch's) and
    `group` query heads to a K/V head."""
    return d in (64, 128) and group == 1 and str(dtype) in ("float16", "torch.float16")


def forward_blocks(d):
    """(BM, BN) of TileAttention's forward at head dim `d`: 128 x 128 up to
    d 128, as bench's attention rows take on sm_90 (one consumer warpgroup
    per 64 rows, no spills); 64 x 64 above. With 64 x 64 blocks at d 128
    the forward ran at 0.68x SDPA on an H100 (2026-12-06, B4 H32 L4096)."""
    return (128, 128) if d <= 128 else (64, 64)


def sm90_blocks(d):
    """(dkdv_blocks, dq_blocks) for head dim `d` on sm_90, as measured on
    the H200 (2026-12-04, B4 H32 L4096, f16): 128 query rows per dQ
    program and 128 keys per dK/dV program; the dK/dV loop takes 128 queries
    a step at d 64 (0.54x -> 0.68x SDPA) but 64 at d 128, where 128 spills.
    At d 128 the dQ loop takes 64 keys a step: 2-4% faster than 128 on an
    H100 (2026-12-06, L4096 and L16384, causal and not); at d 64, 14% slower."""
    return ((128, 128) if d <= 64 else (64, 128)), ((128, 128) if d <= 64 else (128, 64))


def backward(dev, q, k, v, out, lse, dout, causal, bm, bn, dkdv_blocks=None,
             dq_blocks=None, grad_dtype=np.float32, fused_dq=False, dkdv_in_place=None):
    """dQ, dK, dV (device arrays of `grad_dtype`, shaped as q, k, v) from
    the forward's O and lse. Each gradient kernel takes (BM, BN) = (bm, bn)
    unless given its own (`dkdv_blocks`, `dq_blocks`): 128 rows of its
    products are one mma per warpgroup, (64, 128) and (128, 64) on sm_90.
    `fused_dq`: attention_dkdvdq's five products with dQ added atomically
    (in f32, then cast to `grad_dtype`) instead of attention_dq's three.
    `dkdv_in_place`: attention_dkdv_waits_in_place with ROUND_P instead of
    attention_dkdv (None: where dkdv_waits_in_place says)."""
    batch_heads, seq, d = q.shape
    kv_heads = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    delta = dev.empty((batch_heads, seq), np.float32)
    attention_delta[(tile.cdiv(seq, bm), batch_heads)](out, dout, delta, BM=bm, D=d)
    dq = dev.empty((batch_heads, seq, d), grad_dtype)
    dk, dv = (dev.empty((kv_heads, seq, d), grad_dtype) for _ in range(2))
    kv_bm, kv_bn = dkdv_blocks or (bm, bn)
    q_bm, q_bn = dq_blocks or (bm, bn)
    group = batch_heads // kv_heads
    if dkdv_in_place is None:
        dkdv_in_place = dkdv_waits_in_place(d, q.dtype, group)
    dkdv = attention_dkdv_waits_in_place if dkdv_in_place else attention_dkdv
    if fused_dq:
        wide = grad_dtype is np.float32 or str(grad_dtype) == "torch.float32"
        dq_acc = dq if wide else dev.empty((batch_heads, seq, d), np.float32)
        dev.fill_zero(dq_acc)
        attention_dkdvdq[(tile.cdiv(seq, kv_bn), kv_heads)](
            q, k, v, dout, lse, delta, dk, dv, dq_acc, seq, scale, BM=kv_bm, BN=kv_bn,
            D=d, CAUSAL=causal, GROUP=group)
        if not wide:
            attention_cast[(tile.cdiv(seq, bm), batch_heads)](dq_acc, dq, BM=bm, D=d)
        return dq, dk, dv
    # Neither kernel reads the other's results: on torch they run on two
    # streams, so that one's last, partly empty wave overlaps the other.
    dev.concurrently(
        lambda: dkdv[(tile.cdiv(seq, kv_bn), kv_heads)](
            q, k, v, dout, lse, delta, dk, dv, seq, scale, BM=kv_bm, BN=kv_bn, D=d,
            CAUSAL=causal, GROUP=group, ROUND_P=dkdv_in_place),
        lambda: attention_dq[(tile.cdiv(seq, q_bm), batch_heads)](
            q, k, v, dout, lse, delta, dq, seq, scale, BM=q_bm, BN=q_bn, D=d,
            CAUSAL=causal, GROUP=group))
    return dq, dk, dv


def reference_grads(q, k, v, dout, scale, causal):
    """dQ, dK, dV of reference(q, k, v) against dout (float64 NumPy); k and
    v may have fewer heads (grouped-query), each shared by consecutive
    query heads, and their gradients sum over those."""
    group = q.shape[0] // k.shape[0]
    if group > 1:
        dq, dk, dv = reference_grads(q, np.repeat(k, group, 0), np.repeat(v, group, 0),
                                     dout, scale, causal)
        fold = lambda g: g.reshape(k.shape[0], group, *g.shape[1:]).sum(1)  # noqa: E731
        return dq, fold(dk), fold(dv)
    s = np.einsum("bqd,bkd->bqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dv = np.einsum("bqk,bqd->bkd", p, dout)
    dp = np.einsum("bqd,bkd->bqk", dout, v)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return (np.einsum("bqk,bkd->bqd", ds, k) * scale,
            np.einsum("bqk,bqd->bkd", ds, q) * scale, dv)


try:
    import torch

    class TileAttention(torch.autograd.Function):
        """softmax(Q K^T / sqrt(D)) V over (batch*heads, L, D) CUDA tensors,
        forward and backward in tile kernels."""

        @staticmethod
        def forward(ctx, q, k, v, causal=False, bm=None, bn=None, fused_dq=False):
            """`bm`, `bn`: the forward's blocks (None: forward_blocks).
            `fused_dq`: the backward's dQ from attention_dkdvdq (five
            products in one kernel, dQ added atomically) instead of
            attention_dq."""
            default_bm, default_bn = forward_blocks(q.shape[-1])
            bm, bn = bm or default_bm, bn or default_bn
            dev = _TorchDevice()
            # O is written in q's dtype (as FlashAttention keeps it): the
            # backward's delta = rowsum(O * dO) reads half the bytes.
            out, lse = forward(dev, q, k, v, causal, bm, bn, out_dtype=q.dtype)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.config = (causal, bm, bn, fused_dq)
            return out

        @staticmethod
        def backward(ctx, dout):
            q, k, v, out, lse = ctx.saved_tensors
            causal, bm, bn, fused_dq = ctx.config
            d = q.shape[-1]
            kv_blocks, q_blocks = sm90_blocks(d) if d in (64, 128) else (None, None)
            dq, dk, dv = backward(_TorchDevice(), q, k, v, out, lse, dout.contiguous(),
                                  causal, bm, bn, dkdv_blocks=kv_blocks, dq_blocks=q_blocks,
                                  fused_dq=fused_dq)
            return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), None, None, None, None

    _side_streams = {}  # device -> the side stream of _TorchDevice.concurrently

    class _TorchDevice:
        """What forward/backward allocate with, as torch CUDA tensors: NumPy
        or torch dtypes, poisoned with NaN (unless `poison` is off, as a
        benchmark allocates); `overlap`: independent kernels on two
        streams (concurrently)."""

        def __init__(self, poison=True, overlap=True):
            self.poison, self.overlap = poison, overlap

        def empty(self, shape, dtype):
            if not isinstance(dtype, torch.dtype):
                dtype = {np.float32: torch.float32, np.float16: torch.float16}[dtype]
            if not self.poison:
                return torch.empty(shape, dtype=dtype, device="cuda")
            return torch.full(shape, float("nan"), dtype=dtype, device="cuda")

        def fill_zero(self, x):
            x.zero_()

        def concurrently(self, *launches):
            """The first launch on the current stream, the others on a
            side stream that starts after the work queued so far; the
            current stream then waits for them. With 4096 blocks of one
            size on 132 SMs, each kernel's last wave holds 4 blocks: the
            other kernel's blocks fill the idle SMs."""
            # Traced by torch.compile: one stream (the graph orders launches).
            if not self.overlap or torch.compiler.is_compiling():
                for launch in launches:
                    launch()
                return
            main = torch.cuda.current_stream()
            side = _side_streams.get(main.device)
            if side is None:
                side = _side_streams[main.device] = torch.cuda.Stream(main.device)
            side.wait_stream(main)
            launches[0]()
            with torch.cuda.stream(side):
                for launch in launches[1:]:
                    launch()
            main.wait_stream(side)
except ImportError:  # the CPU backend's machines need no torch
    torch = None


def main(batch_heads=2, seq=200, d=64, bm=64, bn=64):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    q, k, v, dout = (rng.standard_normal((batch_heads, seq, d)).astype(dtype)
                     for _ in range(4))
    scale = 1.0 / math.sqrt(d)
    tol = 3e-2 if dtype == np.float16 else 1e-4
    status = 0
    for causal in (False, True):
        dq_, dk_, dv_ = (dev.put(x) for x in (q, k, v))
        out, lse = forward(dev, dq_, dk_, dv_, causal, bm, bn)
        got = backward(dev, dq_, dk_, dv_, out, lse, dev.put(dout), causal, bm, bn)
        wide = [x.astype(np.float64) for x in (q, k, v, dout)]
        status |= check(f"attention forward (causal={causal})", dev.get(out),
                        reference(*wide[:3], scale, causal), rtol=tol, atol=tol)
        for name, g, want in zip(("dq", "dk", "dv"), got,
                                 reference_grads(*wide, scale, causal)):
            status |= check(f"attention {name} (causal={causal})", dev.get(g), want,
                            rtol=tol, atol=tol)
    if torch is not None and dev.backend == "cuda":
        # Against torch's autograd of SDPA, with either dQ kernel.
        qt, kt, vt = (torch.tensor(x, device="cuda", requires_grad=True) for x in (q, k, v))
        # Blocks None: TileAttention's own (forward_blocks).
        for causal, fused, blocks in ((False, False, (bm, bn)), (True, False, (bm, bn)),
                                      (False, True, (bm, bn)), (True, True, (bm, bn)),
                                      (False, False, (None, None)),
                                      (True, False, (None, None))):
            for t in (qt, kt, vt):
                t.grad = None
            out = TileAttention.apply(qt, kt, vt, causal, *blocks, fused)
            out.backward(torch.tensor(dout, device="cuda"))
            mine = [t.grad.float().cpu().numpy() for t in (qt, kt, vt)]
            q2, k2, v2 = (t.detach().clone().requires_grad_(True) for t in (qt, kt, vt))
            torch.nn.functional.scaled_dot_product_attention(
                q2, k2, v2, is_causal=causal).backward(torch.tensor(dout, device="cuda"))
            for name, g, t in zip(("dq", "dk", "dv"), mine, (q2, k2, v2)):
                status |= check(f"TileAttention {name} vs SDPA (causal={causal}, "
                                f"fused_dq={fused}, blocks {blocks})", g,
                                t.grad.float().cpu().numpy(), rtol=tol, atol=tol)
            status |= check(f"TileAttention O vs SDPA (causal={causal}, blocks {blocks})",
                            out.detach().float().cpu().numpy(),
                            torch.nn.functional.scaled_dot_product_attention(
                                qt, kt, vt, is_causal=causal).detach().float().cpu().numpy(),
                            rtol=tol, atol=tol)
    return status


if __name__ == "__main__":
    sys.exit(main())
