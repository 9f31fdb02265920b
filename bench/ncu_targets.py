"""Launches each benchmark kernel of tile and its Triton peer a few times, so
that Nsight Compute can profile them side by side:

    ncu -k regex:'layernorm|softmax|mm_k|matmul' --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section Occupancy ... python3 bench/ncu_targets.py norms

Arguments pick the groups: norms, matmul, cluster, attention, attention-d64,
attention-fp8 (the e4m3 forward beside the f16 one), attention-persistent[-causal]
(the one-tile forward beside the persistent one), backward (default: norms and matmul; cluster is tile's matmul with and
without clusters of two; attention is tile's forward beside SDPA's at head
dim 128, attention-d64 the same at 64, backward the
dK/dV and dQ kernels of examples/flash_attention_backward.py beside SDPA's
backward; backward-fused adds the fused attention_dkdvdq, backward-delayed
the fused one with its dQ product one iteration late). Needs a GPU, torch and
triton."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402
import triton  # noqa: E402

import tile  # noqa: E402
import kernels as K  # noqa: E402
import peers_triton as T  # noqa: E402

REPEAT = 2


def norms():
    for (M, N) in [(8192, 8192), (4096, 32768)]:
        X = torch.randn(M, N, device="cuda", dtype=torch.float16)
        W = torch.randn(N, device="cuda", dtype=torch.float16)
        B = torch.randn(N, device="cuda", dtype=torch.float16)
        Y = torch.empty_like(X)
        warps = 8 if N <= 8192 else 16
        for _ in range(REPEAT):
            T.softmax_k[(M,)](X, Y, X.stride(0), N, B=N, num_warps=warps)
            T.layernorm_k[(M,)](X, Y, W, B, X.stride(0), N, 1e-5, B=N, num_warps=warps)
            K.softmax[(M,)](X, Y, ROWS=1, BLOCK=N)
            K.layernorm[(M,)](X, W, B, Y, 1e-5, ROWS=1, BLOCK=N)
        torch.cuda.synchronize()


def matmul():
    S = 4096
    a = torch.randn(S, S, device="cuda", dtype=torch.float16)
    b = torch.randn(S, S, device="cuda", dtype=torch.float16)
    c = torch.empty(S, S, device="cuda", dtype=torch.float16)
    cfg = K.MATMUL_CONFIG
    grid = (tile.cdiv(S, cfg["BM"]) * tile.cdiv(S, cfg["BN"]),)
    for _ in range(REPEAT):
        K.matmul[grid](a, b, c, **cfg)
        # Triton's best config for this size, without autotuning launches.
        T.mm_k.fn[(triton.cdiv(S, 128) * triton.cdiv(S, 256),)](
            a, b, c, S, S, S, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BM=128, BN=256, BK=64, G=8, num_warps=8, num_stages=3)
    torch.cuda.synchronize()


def cluster():
    """f16 4096^3, bench's fixed config: tile's matmul as one block per
    tile and in clusters of two (num_ctas=2: pairs share B by multicast)."""
    S = 4096
    a, b, c = (torch.randn(S, S, device="cuda", dtype=torch.float16) for _ in range(3))
    cfg = K.MATMUL_CONFIG
    grid = (tile.cdiv(S, cfg["BM"]) * tile.cdiv(S, cfg["BN"]),)
    for _ in range(REPEAT):
        K.matmul[grid](a, b, c, **cfg)
        K.matmul_cluster[grid](a, b, c, **cfg)
    torch.cuda.synchronize()


def attention(D=128):
    """f16 B4 H32 L4096 head dim D, non-causal: tile's forward (bench's
    fixed config) and torch's scaled_dot_product_attention."""
    Bz, H, L = 4, 32, 4096
    q, k, v = (torch.randn(Bz, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    BM, BN = K.ATTENTION_CONFIG["BM"], K.ATTENTION_CONFIG["BN"]
    q3, k3, v3, o3 = (t.view(Bz * H, L, D) for t in (q, k, v, o))
    for _ in range(REPEAT):
        K.attention[(L // BM, Bz * H)](q3, k3, v3, o3, D ** -0.5, BM=BM, BN=BN, D=D,
                                       CAUSAL=False, GROUP=1)
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()


def attention_persistent(causal):
    """f16 B4 H32 L4096 D128: bench's one-tile forward beside the persistent
    one (one block per SM walking the tiles), `causal` or not."""
    Bz, H, L, D = 4, 32, 4096, 128
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for _ in range(REPEAT):
        K.attention[(L // 128, Bz * H)](q, k, v, o, D ** -0.5, BM=128, BN=128, D=D,
                                        CAUSAL=causal, GROUP=1)
        K.attention_persistent[(sms,)](q, k, v, o, D ** -0.5, BM=128, BN=128, D=D,
                                       CAUSAL=causal, GROUP=1)
    torch.cuda.synchronize()


def attention_fp8(D=128):
    """e4m3 B4 H32 L4096 head dim D, non-causal: examples/flash_attention_fp8.py
    (V transposed, O in f16) beside bench's f16 forward on the same shape."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import flash_attention_fp8 as FA8
    Bz, H, L = 4, 32, 4096
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    q8, k8 = (t.to(torch.float8_e4m3fn) for t in (q, k))
    vt8 = v.transpose(1, 2).contiguous().to(torch.float8_e4m3fn)
    o = torch.empty_like(q)
    BM, BN = K.ATTENTION_CONFIG["BM"], K.ATTENTION_CONFIG["BN"]
    for _ in range(REPEAT):
        FA8.attention_fp8[(L // BM, Bz * H)](q8, k8, vt8, o, L, D ** -0.5, BM=BM, BN=BN, D=D,
                                             CAUSAL=False)
        K.attention[(L // BM, Bz * H)](q, k, v, o, D ** -0.5, BM=BM, BN=BN, D=D,
                                       CAUSAL=False, GROUP=1)
    torch.cuda.synchronize()


def backward(fused=False, delayed=False):
    """f16 B4 H32 L4096 D128, non-causal: the example's attention_dkdv and
    attention_dq (bench's blocks) and SDPA's backward; `fused`: the fused
    attention_dkdvdq (TILE_STAGED_MMA=1, TILE_BULK_REDUCE=1) too; `delayed`:
    it with TILE_DELAY_STAGED_MMA=1."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import math
    if fused:  # read when the kernels compile, before the module loads
        os.environ.update(TILE_STAGED_MMA="1", TILE_BULK_REDUCE="1",
                          TILE_DELAY_STAGED_MMA="1" if delayed else "0")
    import flash_attention_backward as FAB
    Bz, H, L, D = 4, 32, 4096, 128
    q, k, v, do = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16)
                   for _ in range(4))
    dev = FAB._TorchDevice(poison=False)
    out, lse = FAB.forward(dev, q, k, v, False, 64, 64)
    delta = torch.empty(Bz * H, L, device="cuda")
    FAB.attention_delta[(L // 64, Bz * H)](out, do, delta, BM=64, D=D)
    dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
    (kv_bm, kv_bn), (q_bm, q_bn) = FAB.sm90_blocks(D)
    q4, k4, v4, do4 = (t.view(Bz, H, L, D).clone().requires_grad_(True) for t in (q, k, v, do))
    o4 = torch.nn.functional.scaled_dot_product_attention(q4, k4, v4)
    for _ in range(REPEAT):
        FAB.attention_dkdv[(L // kv_bn, Bz * H)](q, k, v, do, lse, delta, dk, dv, L,
                                                 1 / math.sqrt(D), BM=kv_bm, BN=kv_bn,
                                                 D=D, CAUSAL=False, GROUP=1)
        FAB.attention_dq[(L // q_bm, Bz * H)](q, k, v, do, lse, delta, dq, L,
                                              1 / math.sqrt(D), BM=q_bm, BN=q_bn, D=D,
                                              CAUSAL=False, GROUP=1)
        if fused:
            FAB.backward(dev, q, k, v, out, lse, do, False, 64, 64, dkdv_blocks=(kv_bm, kv_bn),
                         grad_dtype=q.dtype, fused_dq=True)
        torch.cuda.synchronize()
        torch.autograd.grad(o4, (q4, k4, v4), do4, retain_graph=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    groups = sys.argv[1:] or ["norms", "matmul"]
    for g in groups:
        {"norms": norms, "matmul": matmul, "cluster": cluster, "attention": attention,
         "attention-d64": lambda: attention(64), "attention-fp8": attention_fp8,
         "attention-persistent": lambda: attention_persistent(False),
         "attention-persistent-causal": lambda: attention_persistent(True),
         "backward": backward,
         "backward-fused": lambda: backward(fused=True),
         "backward-delayed": lambda: backward(fused=True, delayed=True)}[g]()
