"""Triton 3.6 peers, as measured in shared/bench/peers.py (same kernels)."""
import triton
import triton.language as tl


@triton.jit
def vadd_k(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def softmax_k(X, Y, stride, n_cols, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    x = tl.load(X + r * stride + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(Y + r * stride + c, (e / tl.sum(e, 0)).to(Y.dtype.element_ty), mask=c < n_cols)


@triton.jit
def layernorm_k(X, Y, W, Bv, stride, N, eps, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    m = c < N
    x = tl.load(X + r * stride + c, mask=m, other=0.).to(tl.float32)
    mean = tl.sum(x, 0) / N
    d = tl.where(m, x - mean, 0.)
    var = tl.sum(d * d, 0) / N
    y = d / tl.sqrt(var + eps) * tl.load(W + c, mask=m) + tl.load(Bv + c, mask=m)
    tl.store(Y + r * stride + c, y.to(Y.dtype.element_ty), mask=m)


@triton.autotune(configs=[
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=4, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
], key=["M", "N", "K"])
@triton.jit
def mm_k(A, Bm, C, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
         BK: tl.constexpr, G: tl.constexpr):
    pid = tl.program_id(0)
    npm = tl.cdiv(M, BM)
    npn = tl.cdiv(N, BN)
    gsz = G * npn
    gid = pid // gsz
    fm = gid * G
    gm = min(npm - fm, G)
    pm = fm + ((pid % gsz) % gm)
    pn = (pid % gsz) // gm
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = A + rm[:, None] * sam + rk[None, :] * sak
    b = Bm + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.),
                      tl.load(b, mask=rk[:, None] < K - k * BK, other=0.))
        a += BK * sak
        b += BK * sbk
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(C + cm[:, None] * scm + cn[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))
