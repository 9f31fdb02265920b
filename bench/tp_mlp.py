"""Tensor-parallel MLP block over the GPUs of one host (issue 21): tile's
kernels (examples/tensor_parallel_mlp.py) against the same program with
torch's matmul and GELU, both with NCCL's all-reduce of the partial sums.

    torchrun --nproc_per_node=1 bench/tp_mlp.py   # the 1-GPU row
    torchrun --nproc_per_node=2 bench/tp_mlp.py   # the 2-GPU rows

Each rank times the whole block (GELU(X W1_r + b1_r) W2_r, all-reduce, + b2)
with CUDA events, the implementations taking turns run by run, the median of
`--runs`; rank 0 prints one markdown row per rank and implementation (ms,
TFLOP/s of the rank's share). NVLink multicast stays off (tp.start_nccl)."""

import argparse
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import tensor_parallel_mlp as tp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="8192,8192,32768", help="M,D,F")
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    M, D, F = (int(v) for v in a.shape.split(","))
    local, rank, ranks = tp.start_nccl()
    dev = tp.Device()
    cfg = tp.blocks(dev.backend)
    gen = torch.Generator(device=f"cuda:{local}").manual_seed(0)
    rnd = lambda *s: torch.randn(*s, device=f"cuda:{local}", generator=gen)  # noqa: E731
    f = F // ranks
    x = rnd(M, D).half()
    w1, b1 = (rnd(D, f) / D ** 0.5).half(), (rnd(f) * 0.1).half()
    w2, b2 = (rnd(f, D) / F ** 0.5).half(), (rnd(D) * 0.1).float()

    def tile_block():
        y = tp.partial_sum(dev, x, w1, b1, w2, cfg, poison=False)
        dist.all_reduce(y)
        return y.add_(b2)

    def torch_block():
        h = torch.nn.functional.gelu(torch.addmm(b1, x, w1))
        y = torch.matmul(h, w2).float()
        dist.all_reduce(y)
        return y.add_(b2)

    got, want = tile_block(), torch_block()
    err = ((got - want).norm() / want.norm()).item()
    assert err < 1e-2, f"rank {rank}: tile vs torch relative error {err:.3g}"
    impls = {"tile": tile_block, "torch": torch_block}
    times = {k: [] for k in impls}
    for _ in range(a.runs):
        for name, fn in impls.items():
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end))
    flops = 2 * M * D * f * 2  # the rank's two matmuls
    mine = {k: float(np.median(v)) for k, v in times.items()}
    rows = [None] * ranks
    dist.all_gather_object(rows, (rank, mine))
    if rank == 0:
        print("| GPUs | rank | M,D,F | tile ms | torch ms | tile TFLOP/s | torch TFLOP/s | tile/torch |")
        print("|---|---|---|---|---|---|---|---|")
        for r, t in rows:
            print(f"| {ranks} | {r} | {M},{D},{F} | {t['tile']:.3f} | {t['torch']:.3f} | "
                  f"{flops / t['tile'] / 1e9:.1f} | {flops / t['torch'] / 1e9:.1f} | "
                  f"{t['torch'] / t['tile']:.2f}x |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
