"""Flash attention forward in fp8 (e4m3): flash_attention.py's kernel with
Q, K and V as float8_e4m3fn, O in f16 or f32. sm_90's fp8 tensor cores
read both operands K-major, so V comes transposed, (kv heads, D, L), as
FlashAttention-3's and Triton's fp8 forwards take it; P is rounded to e4m3
for P V, the softmax statistics stay f32.

On sm_90 (use_fast_acc) both mmas are fp8 wgmmas: Q and K^T from shared
memory, P from registers (rearranged from the accumulator's layout into
the fp8 A fragment by two shuffles a register). Arrays are torch's
float8_e4m3fn tensors, or uint8 codes (NumPy has no fp8 dtype), which the
kernel views as e4m3 with tile.bitcast (a no-op on fp8 arrays).

Measured (bench's tile-fp8 row, an H100, 2026-12-07, one process): 1.10x
SDPA's f16 forward at B4 H32 L4096 D128 (1.622 against bench's f16 kernel's
1.800 ms), 1.12x causal, 1.15x / 1.22x at L16384, 1.11x GQA. The last
H200 run (2026-12-06, an older tree) read it within 1% of the f16 kernel
on the causal rows. See docs/performance.md."""

import math
import sys

import numpy as np

from _common import Device, check, tile
from flash_attention import block_and_head, online_softmax_step, query_block_state

FP8 = tile.float8_e4m3fn


@tile.kernel
def attention_fp8(q, k, vt, out, seq, scale, BM: tile.Constant[int], BN: tile.Constant[int],
                  D: tile.Constant[int], CAUSAL: tile.Constant[bool],
                  GROUP: tile.Constant[int] = 1):
    # q, out: (batch*heads, L, D); k: (batch*kv_heads, L, D); vt: V^T,
    # (batch*kv_heads, D, L).
    qb, bh = block_and_head(CAUSAL, LONGEST_LAST=True)
    Q, rows, m, l, acc = query_block_state(q, bh, qb, BM, D)
    Q = tile.bitcast(Q, FP8)
    n_blocks = tile.cdiv(seq, BN)
    if CAUSAL:
        n_blocks = min(n_blocks, tile.cdiv((qb + 1) * BM, BN))
    for j in tile.range(n_blocks):
        m, l, acc = online_softmax_step(Q, k, vt, bh // GROUP, j, rows, seq, scale, m, l,
                                        acc, BN, D, MASK=True, CAUSAL=CAUSAL, FP8=FP8)
    o = acc / l[:, None]
    tile.store(out, index=(bh, qb, 0), tile=tile.reshape(o.astype(out.dtype), (1, BM, D)))


def e4m3_values(codes):
    """float8_e4m3fn codes (uint8) -> float64 values (finite codes only)."""
    c = codes.astype(np.int64)
    e, man = (c >> 3) & 15, c & 7
    v = np.where(e == 0, man * 2.0 ** -9, (1 + man / 8) * 2.0 ** (e - 7))
    return np.where(c & 0x80, -v, v)


def random_e4m3(rng, shape):
    """Random e4m3 codes of magnitudes 2^-3..2^2 (exponent fields 4..8)."""
    sign = rng.integers(0, 2, shape) << 7
    return (sign | rng.integers(4, 9, shape) << 3 | rng.integers(0, 8, shape)).astype(np.uint8)


def run(dev, q, k, v, seq, causal, bm, bn):
    """attention_fp8 over the first `seq` keys and queries of e4m3 codes (q,
    k, v: (heads, L, D) uint8) on the device, O in f32, poisoned first."""
    batch_heads, length, d = q.shape
    out = dev.empty((batch_heads, length, d), np.float32)
    attention_fp8[(tile.cdiv(seq, bm), batch_heads)](
        dev.put(q), dev.put(k), dev.put(np.swapaxes(v, 1, 2)), out, seq,
        1.0 / math.sqrt(d), BM=bm, BN=bn, D=d, CAUSAL=causal,
        GROUP=batch_heads // k.shape[0])
    return dev.get(out)


def main(batch_heads=4, seq=200, d=64, bm=64, bn=64):
    from flash_attention import reference
    dev = Device()
    rng = np.random.default_rng(0)
    # L padded to 16 codes: V^T's rows (L long) must be 16-byte aligned.
    length = -(-seq // 16) * 16
    q, k, v = (random_e4m3(rng, (batch_heads, length, d)) for _ in range(3))
    status = 0
    for causal in (False, True):
        got = run(dev, q, k, v, seq, causal, bm, bn)[:, :seq]
        want = reference(*(e4m3_values(x[:, :seq]) for x in (q, k, v)),
                         1.0 / math.sqrt(d), causal)
        # P is rounded to e4m3 (3 bits of mantissa) for P V.
        status |= check(f"flash_attention_fp8(causal={causal})", got, want,
                        rtol=0.0, atol=0.05 * np.abs(want).max())
    return status


if __name__ == "__main__":
    sys.exit(main())
