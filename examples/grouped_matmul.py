"""Grouped GEMM, C[g] = A[g] @ B[g] for problems of different sizes in one
launch, written as a cuTile kernel (`import tile as ct`). The kernel takes
lists of arrays: it is compiled once per number of groups, whatever their
shapes. A persistent grid (one program per SM) walks the tiles of all groups
as one flattened sequence: program p takes tiles p, p + P, p + 2P, ... and,
group by group, computes those that fall in the group's range."""

import sys

import numpy as np

from _common import Device, check, tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def grouped_matmul(As, Bs, Cs, num_programs: ConstInt,
                   TM: ConstInt, TN: ConstInt, TK: ConstInt):
    tile_idx = ct.bid(0)
    group_start = 0  # the index of group g's first tile in the flattened sequence
    for g in ct.range(len(As)):  # a device loop: As[g] is selected at run time
        A, B, C = As[g], Bs[g], Cs[g]
        m_tiles = ct.num_tiles(A, 0, (TM, TK))
        k_tiles = ct.num_tiles(A, 1, (TM, TK))
        n_tiles = ct.num_tiles(B, 1, (TK, TN))
        group_tiles = m_tiles * n_tiles
        while tile_idx >= group_start and tile_idx < group_start + group_tiles:
            local = tile_idx - group_start
            mi, ni = local // n_tiles, local % n_tiles
            acc = ct.zeros((TM, TN), dtype=ct.float32)
            for kk in ct.range(k_tiles):
                a = ct.load(A, (mi, kk), shape=(TM, TK), padding_mode=ct.PaddingMode.ZERO)
                b = ct.load(B, (kk, ni), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
                acc = ct.mma(a, b, acc)
            ct.store(C, (mi, ni), tile=ct.astype(acc, C.dtype))
            tile_idx += num_programs
        group_start = group_start + group_tiles


def num_programs(dev):
    """One program per SM on CUDA, a few on the CPU backend."""
    if dev.torch is not None:
        return dev.torch.cuda.get_device_properties(0).multi_processor_count
    return 4


def main(groups=((256, 128, 192), (100, 300, 64), (64, 64, 500), (17, 200, 33)),
         tm=64, tn=64, tk=32):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    As = [rng.standard_normal((m, k)).astype(dtype) for m, k, _ in groups]
    Bs = [rng.standard_normal((k, n)).astype(dtype) for _, k, n in groups]
    Cs = [dev.empty((m, n), np.float32) for m, _, n in groups]
    programs = num_programs(dev)
    grouped_matmul[(programs,)]([dev.put(a) for a in As], [dev.put(b) for b in Bs], Cs,
                                programs, tm, tn, tk)
    status = 0
    tol = 1e-2 if dtype == np.float16 else 1e-4
    for g, (a, b, c) in enumerate(zip(As, Bs, Cs)):
        want = a.astype(np.float64) @ b.astype(np.float64)
        status |= check(f"grouped_matmul[{g}]", dev.get(c), want, rtol=tol,
                        atol=tol * np.sqrt(a.shape[1]))
    return status


if __name__ == "__main__":
    sys.exit(main())
