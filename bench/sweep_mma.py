"""Times tile's matmul and attention over block sizes and warp counts.

    python3 bench/sweep_mma.py [--size 4096] [--only matmul|attention]

One line per configuration (TFLOP/s, checked against torch first), then
the best; MATMUL_CONFIG / ATTENTION_CONFIG in bench/kernels.py are what
bench.py uses. Needs a GPU, torch and triton (for do_bench)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import tile  # noqa: E402
import kernels as K  # noqa: E402


def variant(fn, warps):
    return tile.kernel(num_warps=warps)(fn.fn if hasattr(fn, "fn") else fn)


def sweep_matmul(S):
    a = torch.randn(S, S, device="cuda", dtype=torch.float16)
    b = torch.randn(S, S, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    best = None
    for (BM, BN, BK, warps) in ((128, 128, 32, 8), (128, 128, 32, 4), (128, 128, 64, 8),
                                (128, 128, 64, 4), (128, 256, 32, 8), (256, 128, 32, 8),
                                (128, 256, 64, 8), (64, 128, 32, 4), (128, 64, 64, 4),
                                (64, 64, 32, 4), (64, 128, 64, 4), (128, 64, 32, 4),
                                (64, 64, 64, 4), (64, 128, 32, 8), (128, 64, 32, 8),
                                (256, 128, 64, 8), (64, 256, 64, 4)):
        c = torch.empty(S, S, device="cuda", dtype=torch.float16)
        try:
            kern = variant(K.matmul, warps)
            grid = (tile.cdiv(S, BM) * tile.cdiv(S, BN),)
            run = lambda: kern[grid](a, b, c, BM=BM, BN=BN, BK=BK, GROUP=8)  # noqa: E731
            run()
            torch.cuda.synchronize()
            err = ((c.float() - ref).norm() / ref.norm()).item()
            if err > 1e-2:
                raise AssertionError(f"relative error {err:.3g}")
            ms = do_bench(run, return_mode="median")
            tf = 2 * S ** 3 / ms / 1e9
            print(f"matmul {S} BM{BM} BN{BN} BK{BK} w{warps}: {ms:.3f} ms {tf:.0f} TFLOP/s", flush=True)
            if best is None or tf > best[0]:
                best = (tf, BM, BN, BK, warps)
        except Exception as e:  # noqa: BLE001
            print(f"matmul {S} BM{BM} BN{BN} BK{BK} w{warps}: {type(e).__name__}: {str(e)[:200]}")
    print("best matmul:", best)


def sweep_attention():
    Bz, H, L, D = 4, 32, 4096, 128
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    for (BM, BN, warps) in ((128, 64, 8), (128, 64, 4), (128, 128, 8), (64, 64, 4), (128, 32, 8)):
        try:
            kern = variant(K.attention, warps)
            run = lambda: kern[(L // BM, Bz * H)](  # noqa: E731
                q, k, v, o, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=False)
            run()
            torch.cuda.synchronize()
            err = (o.float() - ref.float()).abs().max().item()
            if err > 2e-2:
                raise AssertionError(f"max abs error {err:.3g}")
            ms = do_bench(run, return_mode="median")
            print(f"attention BM{BM} BN{BN} w{warps}: {ms:.3f} ms "
                  f"{4 * Bz * H * L * L * D / ms / 1e9:.0f} TFLOP/s", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"attention BM{BM} BN{BN} w{warps}: {type(e).__name__}: {str(e)[:200]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if args.only in ("", "matmul"):
        sweep_matmul(args.size)
    if args.only in ("", "attention"):
        sweep_attention()


if __name__ == "__main__":
    main()
