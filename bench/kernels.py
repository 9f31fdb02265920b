"""The kernels the benchmark measures, written against the language spec.

Each is the tuned version of an example: tile shapes chosen for the H200,
one kernel per problem; bench.py's "tile" rows of matmul and attention go
through tile.autotune (matmul_tuned, attention_tuned below)."""
import os
import sys

import tile

# The causal block order of examples/flash_attention.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from flash_attention import block_and_head  # noqa: E402

# Block sizes the benchmark (and bench/check_gpu_mma.py) launch with. On sm_90
# these run as wgmma (8 warps for 128-row tiles, chosen by the compiler).
# Before wgmma (mma.sync, 2026-11-29 sweep, 4096^3 f16): 128x128x32 on 4 warps
# 333 TFLOP/s, 128x256x64 on 8 warps 331.
MATMUL_CONFIG = dict(BM=128, BN=256, BK=64, GROUP=8)
# Small problems need more blocks than 128x256 tiles give (1024^3: 32 blocks
# for 132 SMs): 64x128x64 (one warpgroup, 128 blocks).
SMALL_MATMUL_CONFIG = dict(BM=64, BN=128, BK=64, GROUP=8)


def matmul_config(m, n):
    """The block sizes for an m x n output (as Triton's autotuner would
    pick per shape, chosen once from bench/sweep_mma.py)."""
    # Two waves of 128x256 blocks on the H200's 132 SMs (4096^2: 512 blocks,
    # 500 TFLOP/s against 372 for 64x128 on 2026-11-29); fewer starve SMs.
    blocks = -(-m // MATMUL_CONFIG["BM"]) * -(-n // MATMUL_CONFIG["BN"])
    return MATMUL_CONFIG if blocks >= 2 * 132 else SMALL_MATMUL_CONFIG
ATTENTION_CONFIG = dict(BM=128, BN=128)


@tile.kernel
def vadd(x, y, out, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    b = tile.load(y, index=(i,), shape=(BLOCK,))
    tile.store(out, index=(i,), tile=a + b)


@tile.kernel
def softmax(x, y, ROWS: tile.Constant[int], BLOCK: tile.Constant[int]):
    r = tile.bid(0)
    t = tile.load(x, index=(r, 0), shape=(ROWS, BLOCK), padding=-tile.inf)
    t = t.astype(tile.float32)
    e = tile.exp(t - tile.max(t, axis=1, keepdims=True))
    s = tile.sum(e, axis=1, keepdims=True)
    tile.store(y, index=(r, 0), tile=(e / s).astype(y.dtype))


@tile.kernel
def layernorm(x, w, b, y, eps, ROWS: tile.Constant[int], BLOCK: tile.Constant[int]):
    r = tile.bid(0)
    n = x.shape[1]
    t = tile.load(x, index=(r, 0), shape=(ROWS, BLOCK)).astype(tile.float32)
    mean = tile.sum(t, axis=1, keepdims=True) / n
    cols = tile.arange(BLOCK)[None, :]
    d = tile.where(cols < n, t - mean, 0.0)
    var = tile.sum(d * d, axis=1, keepdims=True) / n
    wt = tile.load(w, index=(0,), shape=(BLOCK,)).astype(tile.float32)[None, :]
    bt = tile.load(b, index=(0,), shape=(BLOCK,)).astype(tile.float32)[None, :]
    out = d * tile.rsqrt(var + eps) * wt + bt
    tile.store(y, index=(r, 0), tile=out.astype(y.dtype))


def grouped_tile(tile_id, num_bid_m, num_bid_n, GROUP_SIZE_M):
    """Grouped block order: GROUP_SIZE_M row-blocks go through their column
    blocks together, so they share their B columns in L2. Returns the
    (row-block, column-block) of output tile tile_id; the last group is short
    when num_bid_m is not a multiple of GROUP_SIZE_M."""
    tiles_per_group = GROUP_SIZE_M * num_bid_n
    first_bid_m = (tile_id // tiles_per_group) * GROUP_SIZE_M
    group_size_m = min(num_bid_m - first_bid_m, GROUP_SIZE_M)
    in_group = tile_id % tiles_per_group
    return first_bid_m + in_group % group_size_m, in_group // group_size_m


def _matmul_tile(a, b, c, pm, pn, BM, BN, BK):
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(a.shape[1], BK)):
        at = tile.load(a, index=(pm, k), shape=(BM, BK))
        bt = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(at, bt, acc)
    tile.store(c, index=(pm, pn), tile=acc.astype(c.dtype))


def _persistent_tiles(a, b, c, BM, BN, BK, GROUP):
    # Launched with fewer blocks than tiles (one per SM): each block walks the
    # output tiles tile_id, tile_id + grid, ... in grouped order.
    num_bid_m = tile.cdiv(a.shape[0], BM)
    num_bid_n = tile.cdiv(b.shape[1], BN)
    num_tiles = num_bid_m * num_bid_n
    tile_id = tile.bid(0)
    while tile_id < num_tiles:
        pm, pn = grouped_tile(tile_id, num_bid_m, num_bid_n, GROUP)
        _matmul_tile(a, b, c, pm, pn, BM, BN, BK)
        tile_id += tile.num_blocks(0)


@tile.kernel
def matmul(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int], GROUP: tile.Constant[int],
           PERSISTENT: tile.Constant[bool] = False):
    # One output tile per block, blocks in grouped order; PERSISTENT (a
    # schedule the autotuner may choose, grid from matmul_grid): one block
    # per SM looping over the tiles.
    if PERSISTENT:
        _persistent_tiles(a, b, c, BM, BN, BK, GROUP)
    else:
        pm, pn = grouped_tile(tile.bid(0), tile.cdiv(a.shape[0], BM),
                              tile.cdiv(b.shape[1], BN), GROUP)
        _matmul_tile(a, b, c, pm, pn, BM, BN, BK)


def matmul_grid(m, n, sms):
    """The grid of `matmul` for an m x n output, as a function of a config's
    constants: a block per tile, or at most one per SM when PERSISTENT."""
    def grid(meta):
        tiles = -(-m // meta["BM"]) * -(-n // meta["BN"])
        return (min(sms, tiles) if meta.get("PERSISTENT") else tiles,)
    return grid


@tile.kernel
def matmul_persistent(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
                      BK: tile.Constant[int], GROUP: tile.Constant[int]):
    _persistent_tiles(a, b, c, BM, BN, BK, GROUP)


# Clusters of two (cuTile's num_ctas): neighbouring blocks, and a
# persistent kernel's k-th tiles, share B by TMA multicast
# (tile-cluster-multicast); bench.py --only matmul-cluster.
matmul_cluster = matmul.replace_hints(num_ctas=2)
matmul_persistent_cluster = matmul_persistent.replace_hints(num_ctas=2)


@tile.kernel
def matmul_persistent_range(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
                            BK: tile.Constant[int], GROUP: tile.Constant[int]):
    # The persistent schedule as cuTile users write it: a `for` over
    # range(first tile, tiles, grid) (an scf.for, where matmul_persistent's
    # `while` is an scf.while); the compiler treats both alike.
    num_bid_m = tile.cdiv(a.shape[0], BM)
    num_bid_n = tile.cdiv(b.shape[1], BN)
    for tile_id in range(tile.bid(0), num_bid_m * num_bid_n, tile.num_blocks(0)):
        pm, pn = grouped_tile(tile_id, num_bid_m, num_bid_n, GROUP)
        _matmul_tile(a, b, c, pm, pn, BM, BN, BK)


def _attention_step(qt, k, v, bh, j, rows, qk_scale, m_i, l_i, acc, BN, D, MASK):
    """One key block of the online softmax. MASK False (a Python bool): no
    mask code at all; True: the causal mask; a runtime bool: the mask under
    an `if`."""
    kt = tile.reshape(tile.load(k, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
    vt = tile.reshape(tile.load(v, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
    s = tile.mma(qt, kt.T, tile.zeros((qt.shape[0], BN), tile.float32))
    if MASK:
        cols = j * BN + tile.arange(BN)
        s = tile.where(rows[:, None] >= cols[None, :], s, -tile.inf)
    m_new = tile.maximum(m_i, tile.max(s, axis=1) * qk_scale)
    p = tile.exp2(s * qk_scale - m_new[:, None], flush_to_zero=True)
    alpha = tile.exp2(m_i - m_new, flush_to_zero=True)
    l_i = l_i * alpha + tile.sum(p, axis=1)
    acc = tile.mma(p.astype(qt.dtype), vt, acc * alpha[:, None])
    return m_new, l_i, acc


@tile.kernel
def attention_diag(q, k, v, o, scale, BM: tile.Constant[int], BN: tile.Constant[int],
                   D: tile.Constant[int], CAUSAL: tile.Constant[bool]):
    # q, k, v, o: (batch * heads, L, D), L a multiple of BM and BN. One block:
    # BM query rows of one head. Causal: the key blocks wholly below the
    # diagonal run unmasked; only the diagonal block(s) build the mask (as
    # FlashAttention-2 and Triton's tutorial split their stages).
    mb = tile.bid(0)
    bh = tile.bid(1)
    qt = tile.reshape(tile.load(q, index=(bh, mb, 0), shape=(1, BM, D)), (BM, D))
    # Softmax in base 2 with the scale folded in (as FlashAttention and
    # Triton's tutorial do): exp(x * scale) = exp2(x * scale * log2(e)), so
    # each score costs one fma and one ex2.
    qk_scale = scale * 1.4426950408889634
    m_i = tile.full((BM,), -tile.inf, tile.float32)
    l_i = tile.zeros((BM,), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    rows = mb * BM + tile.arange(BM)
    n_full = k.shape[1] // BN
    if CAUSAL:
        n_full = (mb * BM) // BN  # last key (j+1)*BN - 1 < first row mb*BM
    for j in tile.range(n_full):
        m_i, l_i, acc = _attention_step(qt, k, v, bh, j, rows, qk_scale, m_i, l_i, acc,
                                        BN, D, MASK=False)
    if CAUSAL:
        for j in tile.range(n_full, tile.cdiv((mb + 1) * BM, BN)):
            m_i, l_i, acc = _attention_step(qt, k, v, bh, j, rows, qk_scale, m_i, l_i,
                                            acc, BN, D, MASK=True)
    out = acc / l_i[:, None]
    tile.store(o, index=(bh, mb, 0), tile=tile.reshape(out, (1, BM, D)).astype(o.dtype))


@tile.kernel
def attention_diag_if(q, k, v, o, scale, BM: tile.Constant[int], BN: tile.Constant[int],
                      D: tile.Constant[int], CAUSAL: tile.Constant[bool]):
    # attention_diag in one loop: the mask is built under a runtime
    # `if j >= n_full` (an scf.if), so the loads stay one pipeline across the
    # diagonal; a bench row beside the two-loop form.
    mb = tile.bid(0)
    bh = tile.bid(1)
    qt = tile.reshape(tile.load(q, index=(bh, mb, 0), shape=(1, BM, D)), (BM, D))
    qk_scale = scale * 1.4426950408889634
    m_i = tile.full((BM,), -tile.inf, tile.float32)
    l_i = tile.zeros((BM,), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    rows = mb * BM + tile.arange(BM)
    n_kv = k.shape[1] // BN
    n_full = n_kv
    if CAUSAL:
        n_kv = tile.cdiv((mb + 1) * BM, BN)
        n_full = (mb * BM) // BN
    for j in tile.range(n_kv):
        mask = False
        if CAUSAL:
            mask = j >= n_full  # a runtime bool: _attention_step's `if` is an scf.if
        m_i, l_i, acc = _attention_step(qt, k, v, bh, j, rows, qk_scale, m_i, l_i, acc,
                                        BN, D, MASK=mask)
    out = acc / l_i[:, None]
    tile.store(o, index=(bh, mb, 0), tile=tile.reshape(out, (1, BM, D)).astype(o.dtype))


def _attention_tile(q, k, v, o, bh, mb, kvh, qk_scale, BM, BN, D, CAUSAL):
    """Query block mb of head bh against K/V head kvh: the online softmax
    over the key blocks (causal: up to the diagonal, every block masked;
    tile-split-uniform-masks leaves the mask on the diagonal only)."""
    qt = tile.reshape(tile.load(q, index=(bh, mb, 0), shape=(1, BM, D)), (BM, D))
    m_i = tile.full((BM,), -tile.inf, tile.float32)
    l_i = tile.zeros((BM,), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    n_kv = k.shape[1] // BN
    if CAUSAL:
        n_kv = tile.cdiv((mb + 1) * BM, BN)  # (mb+1)*BM // BN lost the diagonal if BM < BN
    rows = mb * BM + tile.arange(BM)
    for j in tile.range(n_kv):
        kt = tile.reshape(tile.load(k, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D))
        vt = tile.reshape(tile.load(v, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D))
        s = tile.mma(qt, kt.T, tile.zeros((BM, BN), tile.float32))
        if CAUSAL:
            cols = j * BN + tile.arange(BN)
            s = tile.where(rows[:, None] >= cols[None, :], s, -tile.inf)
        m_new = tile.maximum(m_i, tile.max(s, axis=1) * qk_scale)
        p = tile.exp2(s * qk_scale - m_new[:, None], flush_to_zero=True)
        alpha = tile.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + tile.sum(p, axis=1)
        acc = tile.mma(p.astype(qt.dtype), vt, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tile.store(o, index=(bh, mb, 0), tile=tile.reshape(out, (1, BM, D)).astype(o.dtype))


# FlashAttention-3's register split: the producer warpgroup keeps 24
# registers a thread, the two consumer warpgroups get 240 (an H100,
# 2026-12-06, against the default 40/232: causal D128 0.963x -> 0.981x
# SDPA, non-causal and D64 +0.1-0.4%).
@tile.kernel(ws_registers=(24, 240))
def attention(q, k, v, o, scale, BM: tile.Constant[int], BN: tile.Constant[int],
              D: tile.Constant[int], CAUSAL: tile.Constant[bool],
              GROUP: tile.Constant[int] = 1):
    # q, o: (batch * heads, L, D); k, v: (batch * kv_heads, L, D), GROUP =
    # heads / kv_heads query heads sharing one K/V head (grouped-query
    # attention; 1: multi-head). One block: BM query rows of one head.
    # Causal: every key block up to the diagonal builds the mask. On the H200
    # (2026-12-01, B4 H32 L4096 D128) this ran 1.42 ms against 1.64 for
    # attention_diag (two loops: the second loop's ring starts cold) and 1.29
    # for attention_diag_if, which was wrong then (ptxas lost Q's registers
    # after the mask's branch; the mask is a select now: TileRegisterAWgmma).
    # Causal: longest first in sections of 4 heads (block_and_head), so the
    # short blocks fill the grid's tail (an H100, 2026-12-06, head by head
    # against in order: B4 H32 L4096 D128 0.960x -> 0.968x SDPA; an H200,
    # sections of 4 against head by head: 0.988x -> 1.007x, bf16 0.987x ->
    # 1.008x, L16384 1.083x -> 1.091x, D64 0.997x -> 1.004x).
    mb, bh = block_and_head(CAUSAL, LONGEST_LAST=True)
    # Softmax in base 2 with the scale folded in (as FlashAttention and
    # Triton's tutorial do): exp(x * scale) = exp2(x * scale * log2(e)), so
    # each score costs one fma and one ex2.
    qk_scale = scale * 1.4426950408889634
    # Head b*H + h reads K/V head b*H_kv + h // GROUP.
    _attention_tile(q, k, v, o, bh, mb, bh // GROUP, qk_scale, BM, BN, D, CAUSAL)


@tile.kernel(ws_registers=(24, 240))  # attention's split
def attention_persistent(q, k, v, o, scale, BM: tile.Constant[int], BN: tile.Constant[int],
                         D: tile.Constant[int], CAUSAL: tile.Constant[bool],
                         GROUP: tile.Constant[int] = 1):
    # `attention` with one block per SM walking the (head, query block)
    # tiles. Grid: (number of SMs,). Non-causal: tile t is query block t % n
    # of head t // n, so the blocks at work share a few heads' K and V in L2.
    # Causal: the tiles' lengths differ, and a block cannot wait for the
    # hardware to hand it the next one as the one-tile kernel's CTAs do, so
    # each block takes pairs of one head's query blocks, the longest and
    # the shortest left (n-1-a and a: n+1 key blocks per pair, the same for
    # every pair), longest first; an odd n's middle blocks come last, one a
    # tile. The blocks thus keep in step, and the pairs at work at once
    # cover about two blocks per SM / (n / 2) heads, whose K and V stay in
    # L2. (Longest first across all heads read every K/V block from memory:
    # 0.75x SDPA on an H100, 2026-12-07; in sections of 4 heads, whose short
    # tiles let some blocks run sections ahead of others: 0.86x, L2 hit rate
    # 31% against the one-tile kernel's 85%.)
    n_mb = q.shape[1] // BM
    heads = q.shape[0]
    qk_scale = scale * 1.4426950408889634
    if CAUSAL:
        block, blocks = tile.bid(0), tile.num_blocks(0)
        half = n_mb // 2
        per_head = max(half, 1)  # (no pairs when n_mb is 1)
        pairs = max(tile.cdiv(half * heads - block, blocks), 0)
        singles = max(tile.cdiv((n_mb % 2) * heads - block, blocks), 0)
        for i in range(2 * pairs + singles):
            # (As arithmetic; conditional expressions compile to the same
            # schedule: test/python/persistent_ifexp_kernels.py.)
            pair = (i // 2) * blocks + block
            a = pair % per_head
            first = 1 - i % 2  # the pair's long tile
            in_pair = min(max(2 * pairs - i, 0), 1)
            mb = in_pair * (a + first * (n_mb - 1 - 2 * a)) + (1 - in_pair) * half
            bh = (in_pair * (pair // per_head)
                  + (1 - in_pair) * ((i - 2 * pairs) * blocks + block))
            _attention_tile(q, k, v, o, bh, mb, bh // GROUP, qk_scale, BM, BN, D, CAUSAL)
    else:
        for t in range(tile.bid(0), n_mb * heads, tile.num_blocks(0)):
            mb, bh = t % n_mb, t // n_mb
            _attention_tile(q, k, v, o, bh, mb, bh // GROUP, qk_scale, BM, BN, D, CAUSAL)


# The form of cuTile's attention sample (samples/AttentionFMHA.py), as a
# cuTile user brings it: 4-d (batch, head, L, D) arrays, K^T by an `order`
# load, the mask added under a runtime `if` from the first block that needs
# it, occupancy=2 (which its rings cannot meet at 128x128 blocks).
@tile.kernel(occupancy=2)
def attention_cutile_form(Q, K, V, Out, qk_scale, H: tile.Constant[int],
                          BM: tile.Constant[int], BN: tile.Constant[int],
                          D: tile.Constant[int], GROUP: tile.Constant[int],
                          CAUSAL: tile.Constant[bool]):
    b, h = tile.bid(1) // H, tile.bid(1) % H
    kvh = h // GROUP
    qk_scale = qk_scale * 1.4426950408889634
    rows = (tile.bid(0) * BM + tile.arange(BM))[:, None]
    m_i = tile.full((BM, 1), -tile.inf, tile.float32)
    l_i = tile.zeros((BM, 1), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    q = tile.load(Q, index=(b, h, tile.bid(0), 0), shape=(1, 1, BM, D)).reshape((BM, D))
    n = K.shape[2]
    first_masked = min(tile.bid(0) * BM // BN, n // BN) if CAUSAL else n // BN
    blocks = tile.cdiv(min((tile.bid(0) + 1) * BM, n) if CAUSAL else n, BN)
    for j in range(0, blocks):
        kt = tile.load(K, index=(b, kvh, 0, j), shape=(1, 1, D, BN),
                       order=(0, 1, 3, 2)).reshape((D, BN))
        s = tile.mma(q, kt, tile.zeros((BM, BN), tile.float32))
        if CAUSAL and j >= first_masked:
            cols = j * BN + tile.arange(BN)[None, :]
            s += tile.where(rows >= cols, 0.0, -tile.inf)
        m_new = max(m_i, tile.max(s, axis=-1, keepdims=True) * qk_scale)
        p = tile.exp2(s * qk_scale - m_new, flush_to_zero=True)
        alpha = tile.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + tile.sum(p, axis=-1, keepdims=True)
        v = tile.load(V, index=(b, kvh, j, 0), shape=(1, 1, BN, D)).reshape((BN, D))
        acc = tile.mma(p.astype(Q.dtype), v, acc * alpha)
        m_i = m_new
    tile.store(Out, index=(b, h, tile.bid(0), 0),
               tile=(acc / l_i).reshape((1, 1, BM, D)).astype(Out.dtype))


# Neighbouring query blocks of one head in clusters of two share each K and
# V block by TMA multicast (non-causal; bench.py --only attention-cluster).
attention_cluster = attention.replace_hints(num_ctas=2)


@tile.kernel
def layernorm_chunked(x, w, b, y, eps, BLOCK: tile.Constant[int]):
    # Rows too long for registers (as Triton's tutorial does): pass 1 streams
    # the row for its sum and sum of squares, pass 2 re-reads it (from L2)
    # and normalizes.
    r = tile.bid(0)
    n = x.shape[1]
    total = tile.zeros((1, BLOCK), tile.float32)
    squares = tile.zeros((1, BLOCK), tile.float32)
    for c in tile.range(tile.cdiv(n, BLOCK)):
        t = tile.load(x, index=(r, c), shape=(1, BLOCK)).astype(tile.float32)
        total = total + t
        squares = squares + t * t
    mean = tile.sum(total) / n
    rstd = tile.rsqrt(tile.sum(squares) / n - mean * mean + eps)
    for c in tile.range(tile.cdiv(n, BLOCK)):
        t = tile.load(x, index=(r, c), shape=(1, BLOCK)).astype(tile.float32)
        wt = tile.load(w, index=(c,), shape=(BLOCK,)).astype(tile.float32)[None, :]
        bt = tile.load(b, index=(c,), shape=(BLOCK,)).astype(tile.float32)[None, :]
        tile.store(y, index=(r, c), tile=((t - mean) * rstd * wt + bt).astype(y.dtype))


# -- autotuned (issue 18): bench.py's "tile" rows; "tile-fixed" keeps the
# hand-picked configs above. The spaces contain those configs exactly, and
# are narrow enough that one bench run tunes in a few minutes (each config
# compiles once per dtype): 64/128-row tiles, BK 64, the compiler's warps,
# its ring depth (4 where it fits) or 3 or 6 stages, GROUP 8 or 16, both
# schedules (a block per tile, or persistent); attention's tiles and ring
# depths. Configs that compile to the same binary are timed once.
MATMUL_SPACE = tile.autotune_configs.matmul("float16", block_k=(64,), num_warps=(None,),
                                            num_stages=(0, 3, 6), group=(8, 16),
                                            persistent=(False, True)) + \
    tile.autotune_configs.matmul("float16", block_m=(64,), block_n=(128,), block_k=(64,),
                                 num_warps=(None,), num_stages=(0, 6), group=(8,),
                                 persistent=(False,), num_ctas=(2,))
# The last two: the small tiles in clusters of two sharing B (multicast),
# which halves the pair's B traffic from L2; cuBLAS runs 1024^3 f16 in
# 1x2 clusters of 128x64 tiles (2026-12-06). Unmeasured when added.
matmul_tuned = tile.autotune(configs=MATMUL_SPACE, key=["a", "b", "c"])(matmul)
# Plus 64-row blocks in twos on an SM: one consumer warpgroup, 24/232
# registers (.maxnreg 128) and 3 slots (105 KB at D 64), as cuDNN runs D 64
# (64x128 blocks of one warpgroup); unmeasured when added (2026-12-06).
# And 128x128 blocks whose consumer warpgroups take turns at their wgmmas
# (ping_pong): on an H100 (2026-12-07, same process, TILE_PING_PONG=1)
# +1.5-2% on the causal D128 rows, 0.5-2% slower on the others: the tuner
# picks per key. And at D 64 128x256 blocks in 2 slots (144 KB): on an
# H100 (2026-12-07, one process) 1.207 ms against 128x128's 1.283 and
# SDPA's 1.200; causal 0.694 / 0.696 / 0.655. attention_prune drops it at
# D 128, where it does not fit.
ATTENTION_SPACE = tile.autotune_configs.attention(128, num_stages=(0, 3)) + \
    tile.autotune_configs.attention(128, block_m=(64,), block_n=(128,), num_stages=(3,),
                                    ws_registers=((24, 232),)) + \
    tile.autotune_configs.attention(128, block_m=(128,), block_n=(128,), ping_pong=(True,)) + \
    tile.autotune_configs.attention(64, block_m=(128,), block_n=(256,), num_stages=(2,))
attention_tuned = tile.autotune(
    configs=ATTENTION_SPACE, key=["q", "k", "D", "CAUSAL", "GROUP"],
    prune_configs_by={"early_config_prune": tile.autotune_configs.attention_prune()})(attention)


# -- batched matmul (issue 17): a batch grid axis and 3-d tiles of one
# batch each, as cuTile users write bmm; the mma is 2-d (tile-level
# canonicalization keeps the accumulator 2-d across the loop).
# 128x256 tiles as the matmul's: 0.94x torch.bmm on the H200 (2026-12-02),
# 128x128 0.78x (both on wgmma rings with staged stores).
BMM_CONFIG = dict(BM=128, BN=256, BK=64)


@tile.kernel
def bmm(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int], BK: tile.Constant[int]):
    z, pm, pn = tile.bid(2), tile.bid(0), tile.bid(1)
    acc = tile.zeros((1, BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(a.shape[2], BK)):
        at = tile.load(a, index=(z, pm, k), shape=(1, BM, BK))
        bt = tile.load(b, index=(z, k, pn), shape=(1, BK, BN))
        acc = tile.mma(at, bt, acc)
    tile.store(c, index=(z, pm, pn), tile=acc.astype(c.dtype))


# -- fp8, tf32 and int8 (issues 16 and 17): C = A @ B with B given transposed
# (N x K), both operands K-major, the only layout sm_90's wgmma reads these
# kinds in. fp8: f32 accumulator and output, fast accumulation (FAST: the
# fp8 tensor cores' own, as torch._scaled_mm(use_fast_accum=True)). tf32:
# f32 inputs that the tensor cores read as tf32 (the low mantissa bits
# dropped, as cuBLAS's tf32 does), f32 out. int8: exact i32 accumulation.
FP8_MATMUL_CONFIG = dict(BM=128, BN=256, BK=128, FAST=True)
TF32_MATMUL_CONFIG = dict(BM=128, BN=256, BK=32)
INT8_MATMUL_CONFIG = dict(BM=128, BN=256, BK=128)


@tile.kernel
def matmul_tn(a, bt, c, BM: tile.Constant[int], BN: tile.Constant[int],
              BK: tile.Constant[int], FAST: tile.Constant[bool] = False):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), c.dtype)
    for k in tile.range(tile.cdiv(a.shape[1], BK)):
        at = tile.load(a, index=(pm, k), shape=(BM, BK))
        bt_t = tile.transpose(tile.load(bt, index=(pn, k), shape=(BN, BK)))
        acc = tile.mma(at, bt_t, acc, allow_tf32=True, use_fast_acc=FAST)
    tile.store(c, index=(pm, pn), tile=acc)
