"""Times tile's matmul for a few block configurations beside torch, under the
current environment (run it once per compiler switch to compare them):

    TILE_NVPTX_SCHED=source python3 bench/matmul_variants.py 4096 8192

One line per (size, configuration): TFLOP/s and the ratio to torch.matmul.
Needs a GPU, torch and triton (for do_bench)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import tile  # noqa: E402
import kernels as K  # noqa: E402

CONFIGS = [(128, 128, 32, 4, 8), (128, 128, 32, 4, 16), (128, 128, 64, 4, 8),
           (128, 256, 64, 8, 8)]


def main(sizes):
    env = " ".join(f"{k}={v}" for k, v in os.environ.items()
                   if k.startswith(("TILE_NVPTX", "TILE_GPU")))
    for S in sizes:
        a = torch.randn(S, S, device="cuda", dtype=torch.float16)
        b = torch.randn(S, S, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        torch_ms = do_bench(lambda: torch.matmul(a, b), return_mode="median")
        for (BM, BN, BK, warps, group) in CONFIGS:
            c = torch.full((S, S), float("nan"), device="cuda", dtype=torch.float16)
            kern = tile.kernel(num_warps=warps)(K.matmul.fn)
            grid = (tile.cdiv(S, BM) * tile.cdiv(S, BN),)
            run = lambda: kern[grid](a, b, c, BM=BM, BN=BN, BK=BK, GROUP=group)  # noqa: E731
            try:
                run()
                torch.cuda.synchronize()
                err = ((c.float() - ref).norm() / ref.norm()).item()
                if not err < 1e-2:
                    raise AssertionError(f"relative error {err:.3g}")
                ms = do_bench(run, return_mode="median")
                print(f"[{env or 'default'}] {S} BM{BM} BN{BN} BK{BK} w{warps} G{group}: "
                      f"{2 * S ** 3 / ms / 1e9:.0f} TFLOP/s, {torch_ms / ms:.2f}x torch", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"[{env}] {S} BM{BM} BN{BN} BK{BK} w{warps}: {type(e).__name__}: {str(e)[:160]}")


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [4096])
