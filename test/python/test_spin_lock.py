"""Spin locks from tile.atomic_cas in a while loop (issue 15): the block takes
the lock once (a scalar atomic runs in one thread and its old value reaches
all of them), the critical section's plain loads and stores happen between
the acquiring CAS and the releasing atomic_xchg (acq_rel at gpu scope, a
block barrier on each side), on the CPU backend's thread pool as on the GPU.
Numerics tests run on the available backend; `gpu` ones need CUDA."""

import os
import runpy
import sys

import numpy as np
import pytest

import tile
from tilehelp import ROOT, Device, assert_close

pytestmark = pytest.mark.numerics


def _example(name):
    sys.path.insert(0, os.path.join(ROOT, "examples"))  # for its _common
    try:
        return runpy.run_path(os.path.join(ROOT, "examples", name), run_name="example")
    finally:
        sys.path.pop(0)


SPLITK = _example("splitk_matmul.py")


@pytest.fixture(scope="module")
def dev():
    return Device()


@tile.kernel
def count_under_lock(locks, counter):
    while tile.atomic_cas(locks, (0,), 0, 1) == 1:
        pass
    v = tile.load(counter, index=(0,), shape=(1,))
    tile.store(counter, index=(0,), tile=v + 1)
    tile.atomic_xchg(locks, (0,), 0)


@pytest.mark.parametrize("blocks", [1, 7, 20000])
def test_counter_incremented_non_atomically_under_the_lock(dev, blocks):
    """load, add 1, store under the lock: exactly one per block survives."""
    locks = dev.put(np.zeros(1, np.int32))
    counter = dev.put(np.zeros(1, np.int32))
    count_under_lock[(blocks,)](locks, counter)
    assert dev.get(counter)[0] == blocks
    assert dev.get(locks)[0] == 0


@tile.kernel
def add_rows_under_locks(locks, data, L: tile.Constant[int], W: tile.Constant[int]):
    """Block b adds b + 1 to all W elements of row b % L under lock b % L:
    the stores are spread over every thread of the block, the release made
    by one, so it must follow all of them."""
    b = tile.bid(0)
    r = b % L
    while tile.atomic_cas(locks, (r,), 0, 1) != 0:
        pass
    row = tile.load(data, index=(r, 0), shape=(1, W))
    tile.store(data, index=(r, 0), tile=row + (b + 1))
    tile.atomic_xchg(locks, (r,), 0)


def rows_want(blocks, L, W):
    want = np.zeros((L, W), np.int64)
    for b in range(blocks):
        want[b % L] += b + 1
    return want


@pytest.mark.parametrize("blocks,L,W", [(20000, 1, 1024), (20000, 3, 256), (5000, 8, 64)])
def test_whole_tile_updated_under_per_row_locks(dev, blocks, L, W):
    """Without the lock, 20000 blocks on the CPU pool's two threads already
    lose updates (200010000 expected, 10188637 seen)."""
    locks = dev.put(np.zeros(L, np.int32))
    data = dev.put(np.zeros((L, W), np.int32))
    add_rows_under_locks[(blocks,)](locks, data, L=L, W=W)
    np.testing.assert_array_equal(dev.get(data), rows_want(blocks, L, W))
    assert not dev.get(locks).any()


def run_splitk(dev, M, N, K, bm, bn, bk, split_k, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    grid = (tile.cdiv(M, bm), tile.cdiv(N, bn))
    c = dev.poisoned((M, N), np.float32)
    locks = dev.put(np.zeros(grid[0] * grid[1], np.int32))
    counts = dev.put(np.zeros(grid[0] * grid[1], np.int32))
    SPLITK["splitk"](dev.put(a), dev.put(b), c, locks, counts, K, grid, bm, bn, bk, split_k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(dev.get(c), want, rtol=1e-4, atol=1e-4 * np.sqrt(K))
    np.testing.assert_array_equal(dev.get(counts), split_k)
    assert not dev.get(locks).any()


@pytest.mark.parametrize("M,N,K,bm,bn,bk,split_k", [
    (128, 96, 1000, 64, 32, 32, 5),   # ragged K, an uneven last slice
    (100, 70, 300, 32, 32, 32, 4),    # ragged M, N (masked edges of C)
    (64, 64, 64, 32, 32, 32, 6),      # more slices than K tiles: some add zeros
    (32, 32, 512, 32, 32, 16, 1),     # one slice: no contention
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_splitk_matmul_against_float64(dev, M, N, K, bm, bn, bk, split_k, dtype):
    run_splitk(dev, M, N, K, bm, bn, bk, split_k, dtype)


def test_splitk_example_runs(dev):
    assert SPLITK["main"]() == 0


# -- GPU only: tensor-core paths and heavy contention -------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K,bm,bn,bk,split_k", [
    (256, 256, 4096, 128, 128, 64, 16),  # wgmma ring over a runtime K range
    (128, 256, 8192, 64, 128, 64, 32),
    (512, 512, 2048, 64, 64, 32, 8),     # 64 output tiles, 8 contenders each
])
def test_splitk_matmul_wgmma_gpu(dev, M, N, K, bm, bn, bk, split_k):
    run_splitk(dev, M, N, K, bm, bn, bk, split_k, np.float16, seed=1)


@pytest.mark.gpu
def test_splitk_matmul_repeated_gpu(dev):
    """The lock races differently each launch: ten launches, all exact."""
    for seed in range(10):
        run_splitk(dev, 192, 160, 1536, 64, 32, 64, 12, np.float16, seed=seed)


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_many_blocks_on_one_lock_gpu(dev, num_warps):
    k = tile.kernel(add_rows_under_locks.fn, num_warps=num_warps)
    blocks, L, W = 20000, 2, 2048
    locks = dev.put(np.zeros(L, np.int32))
    data = dev.put(np.zeros((L, W), np.int32))
    k[(blocks,)](locks, data, L=L, W=W)
    want = rows_want(blocks, L, W)
    np.testing.assert_array_equal(dev.get(data), (want + 2**31) % 2**32 - 2**31)
    assert not dev.get(locks).any()


@pytest.mark.gpu
def test_counter_65535_blocks_gpu(dev):
    locks = dev.put(np.zeros(1, np.int32))
    counter = dev.put(np.zeros(1, np.int32))
    count_under_lock[(65535,)](locks, counter)
    assert dev.get(counter)[0] == 65535
