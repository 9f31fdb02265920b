"""LayerNorm as a PyTorch custom op written with tile kernels, forward and
backward, inside a small nn.Module trained for a few steps under
torch.compile(fullgraph=True). Runs on CUDA tensors with the CUDA backend,
on CPU tensors with the CPU backend (needs torch; docs/torch.md).

The forward kernel normalizes one row per program and keeps each row's
mean and 1/std for the backward; the backward kernel computes dx per row
and the per-row products dy * xhat, which a column-sum kernel reduces to
the weight's gradient (and dy to the bias's)."""

import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_ROOT, "python-frontend"))

import torch  # noqa: E402

import tile  # noqa: E402
import tile.torch  # noqa: E402,F401  (custom ops; kernel[grid] inside torch.compile)


@tile.kernel
def ln_fwd(x, w, b, y, mean, rstd, eps, BLOCK: tile.Constant[int]):
    r = tile.bid(0)
    n = x.shape[1]
    cols = tile.arange(BLOCK)
    t = tile.reshape(tile.load(x, index=(r, 0), shape=(1, BLOCK)), (BLOCK,))
    mu = tile.sum(t) / n
    d = tile.where(cols < n, t - mu, 0.0)  # columns past n read as 0
    rs = tile.rsqrt(tile.sum(d * d) / n + eps)
    g = tile.load(w, index=(0,), shape=(BLOCK,))
    h = tile.load(b, index=(0,), shape=(BLOCK,))
    tile.store(y, index=(r, 0), tile=tile.reshape(d * rs * g + h, (1, BLOCK)))
    tile.store(mean, index=(r,), tile=tile.broadcast_to(mu, (1,)))
    tile.store(rstd, index=(r,), tile=tile.broadcast_to(rs, (1,)))


@tile.kernel
def ln_bwd(dy, x, w, mean, rstd, dx, dwp, BLOCK: tile.Constant[int]):
    # dx = rstd * (w*dy - mean(w*dy) - xhat * mean(w*dy * xhat)); dwp = dy * xhat
    r = tile.bid(0)
    n = x.shape[1]
    cols = tile.arange(BLOCK)
    t = tile.reshape(tile.load(x, index=(r, 0), shape=(1, BLOCK)), (BLOCK,))
    g = tile.reshape(tile.load(dy, index=(r, 0), shape=(1, BLOCK)), (BLOCK,))
    mu = tile.load(mean, index=(r,), shape=(1,))
    rs = tile.load(rstd, index=(r,), shape=(1,))
    xhat = tile.where(cols < n, (t - mu) * rs, 0.0)
    wdy = tile.load(w, index=(0,), shape=(BLOCK,)) * g
    c1 = tile.sum(xhat * wdy) / n
    c2 = tile.sum(wdy) / n
    tile.store(dx, index=(r, 0), tile=tile.reshape((wdy - (xhat * c1 + c2)) * rs, (1, BLOCK)))
    tile.store(dwp, index=(r, 0), tile=tile.reshape(g * xhat, (1, BLOCK)))


@tile.kernel
def col_sum(a, out, BM: tile.Constant[int], BN: tile.Constant[int]):
    c = tile.bid(0)
    acc = tile.zeros((BN,), a.dtype)
    for i in tile.range(tile.cdiv(a.shape[0], BM)):
        acc = acc + tile.sum(tile.load(a, index=(i, c), shape=(BM, BN)), axis=0)
    tile.store(out, index=(c,), tile=acc)


def _block(n):
    return max(16, 1 << (n - 1).bit_length())


@tile.torch.custom_op("tile_examples::layernorm_fwd", mutates_args=())
def layernorm_fwd(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
                  eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.shape
    y = torch.empty_like(x)
    mean = x.new_empty(m)
    rstd = x.new_empty(m)
    ln_fwd[(m,)](x, w, b, y, mean, rstd, eps, BLOCK=_block(n))
    return y, mean, rstd


@tile.torch.custom_op("tile_examples::layernorm_bwd", mutates_args=())
def layernorm_bwd(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, mean: torch.Tensor,
                  rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.shape
    dx = torch.empty_like(x)
    dwp = torch.empty_like(x)
    ln_bwd[(m,)](dy, x, w, mean, rstd, dx, dwp, BLOCK=_block(n))
    dw, db = w.new_empty(n), w.new_empty(n)
    grid = (tile.cdiv(n, 32),)
    col_sum[grid](dwp, dw, BM=32, BN=32)
    col_sum[grid](dy, db, BM=32, BN=32)
    return dx, dw, db


def _setup_context(ctx, inputs, output):
    x, w, _, _ = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, w, mean, rstd)
    ctx.mark_non_differentiable(mean, rstd)


def _backward(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = layernorm_bwd(dy.contiguous(), x, w, mean, rstd)
    return dx, dw, db, None


layernorm_fwd.register_autograd(_backward, setup_context=_setup_context)


def layernorm(x, w, b, eps=1e-5):
    """LayerNorm over the last axis of a contiguous x of any rank."""
    y, _, _ = layernorm_fwd(x.reshape(-1, x.shape[-1]).contiguous(), w, b, eps)
    return y.view(x.shape)


class TileLayerNorm(torch.nn.Module):
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))
        self.bias = torch.nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x):
        return layernorm(x, self.weight, self.bias, self.eps)


def make_model(norm, width=96, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(48, width), norm(width), torch.nn.GELU(),
                               torch.nn.Linear(width, 10))


def train(model, steps, device, compile_it):
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step_fn = model
    if compile_it:
        step_fn = torch.compile(model, fullgraph=True)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(64, 48, generator=gen).to(device)  # one batch: the loss must fall
    target = torch.randint(0, 10, (64,), generator=gen).to(device)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(step_fn(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main(steps=5):
    device = "cuda" if tile.default_backend() == "cuda" else "cpu"
    # The same model with torch's LayerNorm, eager, is the reference.
    want = train(make_model(torch.nn.LayerNorm), steps, device, compile_it=False)
    got = train(make_model(TileLayerNorm), steps, device, compile_it=True)
    worst = max(abs(a - b) for a, b in zip(got, want))
    ok = worst < 1e-3 and got[-1] < got[0]
    print(f"torch_layernorm_op on {device}: losses {['%.4f' % v for v in got]}, "
          f"torch.nn.LayerNorm {['%.4f' % v for v in want]}, max diff {worst:.2e}: "
          + ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
