"""Numerics of tile's tensor-core paths on a CUDA GPU, against float64.

    python3 bench/check_gpu_mma.py [-k SUBSTRING] [-x]

Matmul (f16, bf16, tf32, int8; shapes that are and are not multiples of the
block; K loops of 1..64 iterations; 4 and 8 warps; the benchmark's kernel
and block sizes) and flash attention (causal or not, D = 64 and 128, the
benchmark's kernel). Prints PASS/FAIL per case; exits 1 on any failure."""
import argparse
import math
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402

import tile  # noqa: E402
import kernels as K  # noqa: E402


def _mm(a, b, c, TF32: tile.Constant[bool], BM: tile.Constant[int],
        BN: tile.Constant[int], BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), c.dtype)
    for k in tile.range(tile.cdiv(a.shape[1], BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc, allow_tf32=TF32)
    tile.store(c, index=(pm, pn), tile=acc)


mm4 = tile.kernel(num_warps=4)(_mm)
mm8 = tile.kernel(num_warps=8)(_mm)
mm_auto = tile.kernel(_mm)

results = []


def report(name, ok, detail):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name:58s} {detail}", flush=True)


def operands(dt, M, N, Kd, gen):
    if dt == torch.int8:
        a = torch.randint(-8, 8, (M, Kd), generator=gen, dtype=torch.int8)
        b = torch.randint(-8, 8, (Kd, N), generator=gen, dtype=torch.int8)
    else:
        a = torch.randn(M, Kd, generator=gen).to(dt)
        b = torch.randn(Kd, N, generator=gen).to(dt)
    return a.cuda(), b.cuda()


def check_matmul(kern, dt, M, N, Kd, BM, BN, BK, tf32=False):
    name = (f"matmul {str(dt)[6:]:8s} {M}x{N}x{Kd} blk {BM}x{BN}x{BK} "
            f"w{kern.num_warps or 'auto'}")
    gen = torch.Generator().manual_seed(M * 7 + N * 13 + Kd)
    a, b = operands(dt, M, N, Kd, gen)
    cdt = torch.int32 if dt == torch.int8 else torch.float32
    c = torch.full((M, N), -7, dtype=cdt, device="cuda")
    kern[(math.ceil(M / BM), math.ceil(N / BN))](a, b, c, TF32=tf32, BM=BM, BN=BN, BK=BK)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    if dt == torch.int8:
        err = (c.double() - ref).abs().max().item()
        return report(name, err == 0, f"max abs err {err:.3g} (exact)")
    # float32 accumulation of K products of N(0, 1).
    tol = 1e-4 * math.sqrt(Kd) + 1e-5
    if tf32:
        # tf32 rounds inputs to 10 bits: the bound is what torch's own tf32
        # matmul misses by on these operands (with 50% headroom), not a guess.
        allow = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        theirs = (a @ b).double()
        torch.backends.cuda.matmul.allow_tf32 = allow
        tol = max(tol, 1.5 * (theirs - ref).abs().max().item())
    err = (c.double() - ref).abs().max().item()
    report(name, err <= tol, f"max abs err {err:.3g} tol {tol:.3g}")


def check_bench_matmul(dt, S, cfg):
    BM, BN, BK = cfg["BM"], cfg["BN"], cfg["BK"]
    name = f"bench matmul {str(dt)[6:]:8s} {S[0]}x{S[1]}x{S[2]} blk {BM}x{BN}x{BK}"
    gen = torch.Generator().manual_seed(sum(S))
    a, b = operands(dt, S[0], S[1], S[2], gen)
    c = torch.full((S[0], S[1]), float("nan"), dtype=dt, device="cuda")
    K.matmul[(math.ceil(S[0] / BM) * math.ceil(S[1] / BN),)](a, b, c, **cfg)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    # The result is rounded to dt: relative error of one rounding plus sums.
    eps = 2 ** -8 if dt == torch.bfloat16 else 2 ** -11
    tol = eps * ref.abs() + 1e-4 * math.sqrt(S[2])
    bad = ((c.double() - ref).abs() > tol) | c.isnan()
    err = (c.double() - ref).abs().max().item()
    report(name, not bad.any().item(), f"max abs err {err:.3g}, {bad.sum().item()} bad")


def check_attention(BH, L, D, causal, BM, BN):
    name = f"attention BH{BH} L{L} D{D} {'causal' if causal else 'full  '} BM{BM} BN{BN}"
    gen = torch.Generator().manual_seed(L + D + causal)
    q, k, v = (torch.randn(BH, L, D, generator=gen).half().cuda() for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = D ** -0.5
    K.attention[(L // BM, BH)](q, k, v, o, scale, BM=BM, BN=BN, D=D, CAUSAL=causal)
    torch.cuda.synchronize()
    s = (q.double() @ k.double().transpose(1, 2)) * scale
    if causal:
        mask = torch.ones(L, L, dtype=torch.bool, device="cuda").tril()
        s = s.masked_fill(~mask, float("-inf"))
    ref = torch.softmax(s, dim=-1) @ v.double()
    # P is rounded to f16 before P V; o to f16.
    err = (o.double() - ref).abs().max().item()
    ok = err <= 1e-2 and not o.isnan().any().item()
    report(name, ok, f"max abs err {err:.3g} tol 0.01")


def cases():
    c = []
    for dt in (torch.float16, torch.bfloat16):
        for kern in (mm4, mm8, mm_auto):
            for (M, N, Kd) in ((128, 128, 32), (256, 256, 64), (512, 384, 2048),
                               (200, 136, 100), (129, 72, 48), (64, 64, 16)):
                for (BM, BN, BK) in ((128, 128, 32), (64, 64, 32), (128, 256, 32),
                                     (128, 128, 64), (128, 256, 64), (64, 128, 64)):
                    if BM * BN > 128 * 128 and kern is mm4:
                        continue
                    c.append((f"mm-{dt}-{kern.num_warps}-{M}-{N}-{Kd}-{BM}-{BN}-{BK}",
                              lambda a=(kern, dt, M, N, Kd, BM, BN, BK): check_matmul(*a)))
    for kern in (mm4, mm8):
        for (M, N, Kd) in ((128, 128, 8), (192, 160, 200), (256, 128, 1024)):
            c.append((f"mm-tf32-{kern.num_warps}-{M}-{N}-{Kd}",
                      lambda a=(kern, torch.float32, M, N, Kd, 64, 64, 32): check_matmul(*a, tf32=True)))
            c.append((f"mm-int8-{kern.num_warps}-{M}-{N}-{Kd}",
                      lambda a=(kern, torch.int8, M, N, max(Kd, 64), 64, 64, 64): check_matmul(*a)))
    cfg = dict(K.MATMUL_CONFIG)
    for dt in (torch.float16, torch.bfloat16):
        for S in ((1024, 1024, 1024), (768, 1280, 512), (1000, 1000, 1000), (4096, 4096, 4096)):
            c.append((f"bench-mm-{dt}-{S}", lambda a=(dt, S, cfg): check_bench_matmul(*a)))
    BM, BN = K.ATTENTION_CONFIG["BM"], K.ATTENTION_CONFIG["BN"]
    for D in (64, 128):
        for causal in (False, True):
            for (BH, L) in ((2, 128), (3, 512), (2, 1024)):
                c.append((f"attn-{BH}-{L}-{D}-{causal}",
                          lambda a=(BH, L, D, causal, BM, BN): check_attention(*a)))
            c.append((f"attn-small-{D}-{causal}",
                      lambda a=(2, 256, D, causal, 64, 64): check_attention(*a)))
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("-x", action="store_true", help="stop at the first failure")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("FAIL  no CUDA device")
        return 1
    for cid, fn in cases():
        if args.k not in cid:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - a crash is a failure
            report(cid, False, f"{type(e).__name__}: {str(e)[:300]}")
            traceback.print_exc(limit=2)
        if args.x and not all(results):
            break
    n_fail = results.count(False)
    print(f"\n{len(results) - n_fail} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
