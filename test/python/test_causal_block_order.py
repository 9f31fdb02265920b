"""The causal attention kernels' block order (examples/flash_attention.py
block_and_head): every (block, head) of the grid exactly once, and in
FlashAttention-3's order: heads in sections of CAUSAL_SECTION, the blocks
with the most work of a whole section before any shorter one. Runs on any
backend; the GPU suite runs the kernels that use it against float64."""

import numpy as np
import pytest

import tile
from tilehelp import Device, load_script

FA = load_script("examples", "flash_attention.py")
block_and_head = FA["block_and_head"]
SECTION = FA["CAUSAL_SECTION"]


@tile.kernel
def record_order(order, CAUSAL: tile.Constant[bool], LONGEST_LAST: tile.Constant[bool]):
    # order[head, block] = the program's place in launch order.
    blk, head = block_and_head(CAUSAL, LONGEST_LAST)
    place = tile.bid(1) * tile.num_blocks(0) + tile.bid(0)
    tile.store(order, index=(head, blk), tile=tile.full((1, 1), place, tile.int32))


def expected_order(n_blocks, n_heads, longest_last):
    """(block, head) in launch order: sections of SECTION heads; inside one,
    step by step from the longest block, every head of the section."""
    out = []
    for first in range(0, n_heads, SECTION):
        heads = range(first, min(first + SECTION, n_heads))
        for step in range(n_blocks):
            blk = n_blocks - 1 - step if longest_last else step
            out += [(blk, h) for h in heads]
    return out


@pytest.mark.parametrize("n_blocks,n_heads", [(5, 10), (1, 3), (7, SECTION), (3, 1),
                                               (4, 2 * SECTION + 1)])
@pytest.mark.parametrize("longest_last", [True, False])
def test_causal_order_is_longest_first_by_sections(n_blocks, n_heads, longest_last):
    dev = Device()
    order = dev.poisoned((n_heads, n_blocks), np.int32)
    record_order[(n_blocks, n_heads)](order, CAUSAL=True, LONGEST_LAST=longest_last)
    got = dev.get(order)
    want = np.empty((n_heads, n_blocks), np.int64)
    for place, (blk, head) in enumerate(expected_order(n_blocks, n_heads, longest_last)):
        want[head, blk] = place
    np.testing.assert_array_equal(got, want)


def test_non_causal_order_is_the_grid():
    dev = Device()
    order = dev.poisoned((6, 5), np.int32)
    record_order[(5, 6)](order, CAUSAL=False, LONGEST_LAST=True)
    np.testing.assert_array_equal(dev.get(order), np.arange(30).reshape(6, 5))
