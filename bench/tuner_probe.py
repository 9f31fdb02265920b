"""Whether the autotuner reads attention's configs as bench does: at B4 H32
L4096 D64 (f16, causal and not) the tuner's choice, then its two leading
configs (64-row blocks two to an SM; 128-row blocks) and SDPA timed by
bench's interleaved medians, together and each alone. Run with
TILE_PRINT_AUTOTUNING=1 to see the tuner's readings of every config:

    bash scripts/device-run.sh python bench/tuner_probe.py

(2026-12-07: the tuner read the 64-row config at 1.62 ms where bench had
read 1.24; see docs/performance.md.)"""
import os
import sys
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402
import harness as Hn  # noqa: E402


def main():
    Bz, H, L, D = 4, 32, 4096, 64
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    small = K.attention.replace_hints(num_stages=3, ws_registers=(24, 232))
    for causal in (False, True):
        K.attention_tuned[lambda m: (L // m["BM"], Bz * H)](q, k, v, o, D ** -0.5, D=D,
                                                           CAUSAL=causal, GROUP=1)
        torch.cuda.synchronize()
        print("tuner chose", K.attention_tuned.best_config, flush=True)
        bm64 = lambda: small[(L // 64, Bz * H)](q, k, v, o, D ** -0.5, BM=64, BN=128, D=D,  # noqa
                                               CAUSAL=causal, GROUP=1)
        bm128 = lambda: K.attention[(L // 128, Bz * H)](  # noqa
            q, k, v, o, D ** -0.5, BM=128, BN=128, D=D, CAUSAL=causal, GROUP=1)
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa
            q.view(Bz, H, L, D), k.view(Bz, H, L, D), v.view(Bz, H, L, D), is_causal=causal)
        print(f"causal={causal} interleaved [bm64(24,232), bm128, sdpa]:",
              [round(x, 4) for x in Hn.interleaved_medians([bm64, bm128, sdpa])], flush=True)
        print(f"causal={causal} bm64 alone:", [round(x, 4) for x in Hn.interleaved_medians([bm64])],
              " bm128 alone:", [round(x, 4) for x in Hn.interleaved_medians([bm128])], flush=True)


if __name__ == "__main__":
    main()
