"""A tensor-parallel MLP block (Megatron's split) with tile kernels on every
rank:  Y = GELU(X W1 + b1) W2 + b2.

W1 and b1 are split by columns: rank r holds the r-th F/P columns and
computes its slice of the hidden activation, H_r = GELU(X W1_r + b1_r), with
no communication (`linear_gelu`: the matmul with the bias and the exact GELU
in its epilogue). W2 is split by rows: H_r W2_r (`linear`) is rank r's
partial sum of Y, an all-reduce adds the partial sums, and b2 is added once,
after it.

    torchrun --nproc_per_node=2 examples/tensor_parallel_mlp.py

runs one rank per GPU (NCCL; rank r on cuda:r). Every rank checks its Y
against the unsharded block run by the same kernels on its own GPU (the
single-GPU result) and against float64. Without torchrun the script runs
the P ranks' shards one after the other on one device and adds their
partial sums on the host: the same kernels and shards, the same checks (on
the CPU backend in CI)."""

import os
import sys

import numpy as np

from _common import Device, check, tile


def _product_tile(x, w, BM, BN, BK):
    """This program's BM x BN tile of x @ w, accumulated in float32."""
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(x.shape[1], BK)):
        acc = tile.mma(tile.load(x, index=(pm, k), shape=(BM, BK)),
                       tile.load(w, index=(k, pn), shape=(BK, BN)), acc)
    return acc


@tile.kernel
def linear_gelu(x, w, b, h, BM: tile.Constant[int], BN: tile.Constant[int],
                BK: tile.Constant[int]):
    pn = tile.bid(1)
    z = _product_tile(x, w, BM, BN, BK) + \
        tile.load(b, index=(pn,), shape=(BN,)).astype(tile.float32)[None, :]
    gelu = 0.5 * z * (1.0 + tile.erf(z * 0.7071067811865476))
    tile.store(h, index=(tile.bid(0), pn), tile=gelu.astype(h.dtype))


@tile.kernel
def linear(x, w, y, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int]):
    tile.store(y, index=(tile.bid(0), tile.bid(1)),
               tile=_product_tile(x, w, BM, BN, BK).astype(y.dtype))


def blocks(backend):
    """Tile sizes: 128x128x64 on the GPU, small ones on the CPU backend."""
    return dict(BM=128, BN=128, BK=64) if backend == "cuda" else dict(BM=32, BN=32, BK=16)


def inputs(M, D, F, dtype, seed=0):
    """X (M x D), W1 (D x F), b1 (F), W2 (F x D), b2 (D): the same on every
    rank (one seed), scaled so the activations stay O(1)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, D))
    w1 = rng.standard_normal((D, F)) / np.sqrt(D)
    b1 = rng.standard_normal(F) * 0.1
    w2 = rng.standard_normal((F, D)) / np.sqrt(F)
    b2 = rng.standard_normal(D) * 0.1
    return [a.astype(dtype) for a in (x, w1, b1, w2, b2)]


def shard(w1, b1, w2, rank, ranks):
    """Rank `rank`'s columns of W1 and b1 and rows of W2 (contiguous copies)."""
    f = w1.shape[1] // ranks
    cols = slice(rank * f, (rank + 1) * f)
    return (np.ascontiguousarray(w1[:, cols]), np.ascontiguousarray(b1[cols]),
            np.ascontiguousarray(w2[cols, :]))


def _output(dev, like, shape, dtype, poison):
    """An output array: NaN-poisoned for the checks, or (a benchmark) left
    as allocated on `like`'s GPU."""
    if poison or dev.torch is None:
        return dev.empty(shape, dtype)
    return dev.torch.empty(shape, dtype=getattr(dev.torch, np.dtype(dtype).name),
                           device=like.device)


def partial_sum(dev, x, w1, b1, w2, cfg, poison=True):
    """H = GELU(x w1 + b1), then H w2 in float32: one rank's share of Y (or,
    with the whole weights, Y less b2). Arrays already on `dev`."""
    M, F, D = x.shape[0], w1.shape[1], w2.shape[1]
    h = _output(dev, x, (M, F), np.float16 if dev.backend == "cuda" else np.float32, poison)
    linear_gelu[(tile.cdiv(M, cfg["BM"]), tile.cdiv(F, cfg["BN"]))](x, w1, b1, h, **cfg)
    y = _output(dev, x, (M, D), np.float32, poison)
    linear[(tile.cdiv(M, cfg["BM"]), tile.cdiv(D, cfg["BN"]))](h, w2, y, **cfg)
    return y


def reference(x, w1, b1, w2, b2):
    """The block in float64 (exact GELU)."""
    from math import erf
    x, w1, b1, w2, b2 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2))
    z = x @ w1 + b1
    h = 0.5 * z * (1.0 + np.vectorize(erf)(z / np.sqrt(2.0)))
    return h @ w2 + b2


def tolerance(dtype, F):
    # f16 on the GPU: H is rounded to f16 before the second matmul.
    return (1e-2, 1e-2 * np.sqrt(F)) if dtype == np.float16 else (1e-4, 1e-4 * np.sqrt(F))


def main(M=96, D=64, F=128, ranks=2):
    """The ranks one after the other on one device (no torch.distributed)."""
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    cfg = blocks(dev.backend)
    x, w1, b1, w2, b2 = inputs(M, D, F, dtype)
    total = np.zeros((M, D), np.float32)
    for rank in range(ranks):
        w1r, b1r, w2r = shard(w1, b1, w2, rank, ranks)
        total += dev.get(partial_sum(dev, dev.put(x), dev.put(w1r), dev.put(b1r),
                                     dev.put(w2r), cfg))
    sharded = total + b2.astype(np.float32)
    single = dev.get(partial_sum(dev, dev.put(x), dev.put(w1), dev.put(b1), dev.put(w2),
                                 cfg)) + b2.astype(np.float32)
    rtol, atol = tolerance(dtype, F)
    # The ranks' partial sums add the hidden dimension in another order than
    # one accumulator: equal to float32 rounding, not bit for bit.
    status = check(f"tensor_parallel_mlp ({ranks} ranks vs 1)", sharded, single,
                   rtol=1e-5, atol=1e-5 * np.sqrt(F))
    return status | check("tensor_parallel_mlp vs float64", sharded,
                          reference(x, w1, b1, w2, b2), rtol=rtol, atol=atol)


# NVLink multicast off in NCCL, PyTorch and NVSHMEM: a program that uses it
# can take a shared host's GPUs out of service (the GPU machines ask for it).
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}


def start_nccl():
    """This torchrun rank on its GPU (cuda:LOCAL_RANK) in an NCCL process
    group, multicast off: (local rank, rank, ranks)."""
    import torch
    import torch.distributed as dist

    os.environ.update(NO_MULTICAST)
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    return local, dist.get_rank(), dist.get_world_size()


def main_distributed(M=4096, D=4096, F=16384):
    """One rank per GPU under torchrun: NCCL all-reduce of the partial sums."""
    import torch
    import torch.distributed as dist

    local, rank, ranks = start_nccl()
    dev = Device()
    cfg = blocks(dev.backend)
    host = inputs(M, D, F, np.float16)
    put = lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(local)  # noqa: E731
    x, w1, b1, w2, b2 = (put(a) for a in host)
    w1r, b1r, w2r = (put(a) for a in shard(host[1], host[2], host[3], rank, ranks))
    y = partial_sum(dev, x, w1r, b1r, w2r, cfg)
    dist.all_reduce(y)
    y += b2.float()
    single = partial_sum(dev, x, w1, b1, w2, cfg) + b2.float()
    got = y.cpu().numpy()
    status = check(f"rank {rank}: {ranks} ranks vs 1 GPU", got, single.cpu().numpy(),
                   rtol=1e-5, atol=1e-5 * np.sqrt(F))
    rows = slice(0, 256)  # float64 on the host for a slice of the rows
    want = reference(host[0][rows], *host[1:])
    rtol, atol = tolerance(np.float16, F)
    status |= check(f"rank {rank}: vs float64 (rows 0-255)", got[rows], want, rtol, atol)
    failed = torch.tensor([status], device=f"cuda:{local}")
    dist.all_reduce(failed)
    dist.destroy_process_group()
    return int(failed.item() != 0)


if __name__ == "__main__":
    sys.exit(main_distributed() if "LOCAL_RANK" in os.environ else main())
