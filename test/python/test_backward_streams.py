"""The attention backward's dK/dV and dQ kernels read none of each other's
results, so on torch they run on two streams (examples/
flash_attention_backward.py, _TorchDevice.concurrently): the tail of one
kernel's grid overlaps the other's. The current stream must still see
every gradient written before its next work."""

import numpy as np
import pytest

from test_fused_backward import _fresh_example, dev  # noqa: F401


@pytest.mark.gpu
def test_current_stream_waits_for_the_side_stream(dev):  # noqa: F811
    """Work queued after concurrently() on the current stream starts only
    when the side stream's launches are done: an event recorded after it
    completes only after the side stream's 50 ms sleep."""
    torch = dev.torch
    fab = _fresh_example("fab_streams_order")
    main = torch.cuda.current_stream()
    streams = []

    def side_launch():
        streams.append(torch.cuda.current_stream())
        torch.cuda._sleep(100_000_000)  # ~50 ms at 2 GHz

    fab._TorchDevice().concurrently(lambda: streams.append(main), side_launch)
    done = torch.cuda.Event()
    done.record(main)
    done.synchronize()
    assert streams[1] != main
    assert streams[1].query(), "the current stream did not wait for the side stream"
    torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_two_streams_give_the_one_stream_gradients(dev, causal):  # noqa: F811
    """Gradients poisoned with NaN, the same on two streams as on one, bit
    for bit (no atomics on the split path), and finite; a ragged length."""
    torch = dev.torch
    fab = _fresh_example("fab_streams")
    rng = np.random.default_rng(7 + causal)
    q, k, v, dout = (torch.tensor(rng.standard_normal((4, 333, 64)), dtype=torch.float16,
                                  device="cuda") for _ in range(4))
    results = []
    for overlap in (True, False):
        tdev = fab._TorchDevice(overlap=overlap)
        out, lse = fab.forward(tdev, q, k, v, causal, 64, 64)
        kv_blocks, q_blocks = fab.sm90_blocks(64)
        grads = fab.backward(tdev, q, k, v, out, lse, dout, causal, 64, 64,
                             dkdv_blocks=kv_blocks, dq_blocks=q_blocks)
        results.append([g.clone() for g in grads])  # on the current stream
    for two, one in zip(*results):
        assert torch.isfinite(two).all()
        assert torch.equal(two, one)
