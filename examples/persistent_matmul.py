"""C = A @ B with a persistent grid: one program per SM (the grid is a launch
parameter), each walking output tiles tile_id, tile_id + num_blocks, ... in a
`while` loop, so launch and tail cost is paid once per SM instead of once per
tile. Tiles are visited in L2-grouped order: GROUP_SIZE_M row-blocks go
through their column-blocks together, so neighbouring programs share A rows
and B columns in L2. On sm_90 the compiler splits the block around this loop
(tile-warp-specialize): a producer warpgroup walks the same tiles issuing
the TMA copies, so the next tile's operands arrive while the consumers
store this one (docs/performance.md, 2026-12-04)."""

import sys

import numpy as np

from _common import Device, check, tile


def grouped_tile(tile_id, num_bid_m, num_bid_n, GROUP_SIZE_M):
    """(row-block, column-block) of the tile_id-th output tile when the tiles
    go in groups of GROUP_SIZE_M row-blocks, column-major inside a group. The
    last group is short when num_bid_m is not a multiple of GROUP_SIZE_M."""
    tiles_per_group = GROUP_SIZE_M * num_bid_n
    first_bid_m = (tile_id // tiles_per_group) * GROUP_SIZE_M
    group_size_m = min(num_bid_m - first_bid_m, GROUP_SIZE_M)
    in_group = tile_id % tiles_per_group
    return first_bid_m + in_group % group_size_m, in_group // group_size_m


@tile.kernel
def persistent_matmul(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],
                      BK: tile.Constant[int], GROUP_SIZE_M: tile.Constant[int]):
    num_bid_m = tile.cdiv(a.shape[0], BM)
    num_bid_n = tile.cdiv(b.shape[1], BN)
    num_tiles = num_bid_m * num_bid_n
    tile_id = tile.bid(0)
    while tile_id < num_tiles:
        pm, pn = grouped_tile(tile_id, num_bid_m, num_bid_n, GROUP_SIZE_M)
        acc = tile.zeros((BM, BN), tile.float32)
        for k in tile.range(tile.cdiv(a.shape[1], BK)):
            x = tile.load(a, index=(pm, k), shape=(BM, BK))
            y = tile.load(b, index=(k, pn), shape=(BK, BN))
            acc = tile.mma(x, y, acc)
        tile.store(c, index=(pm, pn), tile=acc.astype(c.dtype))
        tile_id += tile.num_blocks(0)


def num_sms(dev):
    """The grid: one program per SM on CUDA, a few on the CPU backend."""
    if dev.torch is not None:
        return dev.torch.cuda.get_device_properties(0).multi_processor_count
    return 3


def run(dev, a, b, bm, bn, bk, group, programs):
    c = dev.empty((a.shape[0], b.shape[1]), np.float32)
    persistent_matmul[(programs,)](dev.put(a), dev.put(b), c, BM=bm, BN=bn, BK=bk,
                                   GROUP_SIZE_M=group)
    return dev.get(c)


def main(M=330, N=200, K=200, bm=64, bn=64, bk=32, group=4):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    got = run(dev, a, b, bm, bn, bk, group, num_sms(dev))
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-2 if dtype == np.float16 else 1e-4
    return check("persistent_matmul", got, want, rtol=tol, atol=tol * np.sqrt(K))


if __name__ == "__main__":
    sys.exit(main())
