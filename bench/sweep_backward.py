"""Times the attention backward's two kernels (attention_dkdv, attention_dq of
examples/flash_attention_backward.py, sm90_blocks) alone, under each pair of
hints num_stages x ws_registers and in clusters of two, in interleaved rounds
(medians); every variant's gradients are checked against the default's
first. Needs a GPU and torch.

    python3 bench/sweep_backward.py [--batch 1] [--seq 16384] [--dim 128] [--causal] [--quick]
        [--no-clusters]

Measured on an H100 (2026-12-06, docs/performance.md): at L16384 D128 no
variant is outside the run-to-run spread, and clusters of two lose 12% on
dK/dV; the defaults stay.
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import torch  # noqa: E402

import flash_attention_backward as FAB  # noqa: E402

STAGES = (0, 2, 4)  # 0: the compiler's choice (3 at d 128)
REGISTER_SPLITS = (None, (24, 240), (56, 224))  # None: the default (40, 232)
# And clusters of two at the defaults: neighbouring blocks of one head share
# each streamed block by TMA multicast (non-causal only: causal blocks'
# loops differ in length).
HINTS = [dict(num_stages=stages, ws_registers=split)
         for stages in STAGES for split in REGISTER_SPLITS]


def kernel_variants(q, k, v, do, lse, delta, dq, dk, dv, seq, d, causal, hint_sets,
                    clusters=True):
    """name -> (launch, the gradients it writes)."""
    (kv_bm, kv_bn), (q_bm, q_bn) = FAB.sm90_blocks(d)
    heads, kv_heads = q.shape[0], k.shape[0]
    scale = d ** -0.5
    out = {}
    for hints in hint_sets + ([] if causal or not clusters else [dict(num_ctas=2)]):
        label = " ".join(f"{key} {value}" for key, value in hints.items())
        dkdv = FAB.attention_dkdv.replace_hints(**hints)
        dqk = FAB.attention_dq.replace_hints(**hints)
        out[f"dkdv {label}"] = (lambda kern=dkdv: kern[(-(-seq // kv_bn), kv_heads)](
            q, k, v, do, lse, delta, dk, dv, seq, scale, BM=kv_bm, BN=kv_bn, D=d,
            CAUSAL=causal), (dk, dv))
        out[f"dq   {label}"] = (lambda kern=dqk: kern[(-(-seq // q_bm), heads)](
            q, k, v, do, lse, delta, dq, seq, scale, BM=q_bm, BN=q_bn, D=d, CAUSAL=causal),
            (dq,))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--seq", type=int, default=16384)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="the defaults, 4 stages, ws (24, 240) and clusters only")
    ap.add_argument("--no-clusters", action="store_true",
                    help="leave out the clusters of two")
    a = ap.parse_args()
    bh, seq, d = a.batch * a.heads, a.seq, a.dim
    q, k, v, do = (torch.randn(bh, seq, d, device="cuda", dtype=torch.float16)
                   for _ in range(4))
    dev = FAB._TorchDevice(poison=False)
    out, lse = FAB.forward(dev, q, k, v, a.causal, 64, 64)
    delta = torch.empty(bh, seq, device="cuda")
    FAB.attention_delta[(-(-seq // 64), bh)](out.half(), do, delta, BM=64, D=d)
    dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
    hint_sets = HINTS
    if a.quick:
        hint_sets = [dict(), dict(num_stages=4), dict(ws_registers=(24, 240))]
    variants = kernel_variants(q, k, v, do, lse, delta, dq, dk, dv, seq, d, a.causal,
                               hint_sets, clusters=not a.no_clusters)
    first = {}
    for name in list(variants):
        launch, grads = variants[name]
        try:
            for g in grads:
                g.fill_(float("nan"))
            launch()
            got = [g.float() for g in grads]
            want = first.setdefault(name[:4], got)
            err = max(((x - y).norm() / y.norm()).item() for x, y in zip(got, want))
            if not err < 1e-2:  # NaN fails too
                raise AssertionError(f"relative difference {err:.3g} from the default's")
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name}: {str(e)[:200]}")
            del variants[name]
    times = {name: [] for name in variants}
    for _ in range(a.rounds):
        for name, (launch, _) in variants.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            launch()
            start.record()
            for _ in range(3):
                launch()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / 3)
    print(f"{torch.cuda.get_device_name()}: B*H {bh} L {seq} D {d} causal {a.causal}")
    for name in variants:
        print(f"{name:44s} {statistics.median(times[name]):8.3f} ms")


if __name__ == "__main__":
    main()
