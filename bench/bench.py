"""tile beside torch and Triton on one GPU, in one process.

    python3 bench/bench.py [--out DIR] [--quick] [--only NAME,...]

Prints a table (time, GB/s or TFLOP/s, ratios against torch and Triton),
writes bench.json, bench.md and bench.png into DIR (default $OUT or .).
Every tile result is checked against torch before it is timed."""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402
import triton  # noqa: E402

import tile  # noqa: E402
import harness  # noqa: E402
import kernels as K  # noqa: E402
import peers_triton as T  # noqa: E402
from harness import (attempt, close, close_normwise, contest, note_binaries, rows,  # noqa: E402
                     with_env)

# The fixed attention kernel as an object of its own, compiled under
# TILE_SPLIT_MASKS=0 (its rows: tile-fixed-nosplit).
ATTENTION_NOSPLIT = K.attention.replace_hints()
ATTENTION_PINGPONG = K.attention.replace_hints()
# ... and under TILE_LATE_OPS_FIRST=1 (tile-late-first).
ATTENTION_LATE_FIRST = K.attention.replace_hints()
# ... and under TILE_TIED_FENCE=0 (tile-fixed-untied-fence: the wgmma fence
# in front of P V as before 2026-12-07), the persistent kernel too.
ATTENTION_UNTIED = K.attention.replace_hints()
ATTENTION_PERSISTENT_UNTIED = K.attention_persistent.replace_hints()
# ... and under TILE_MMA_OVERLAP=0 (tile-persistent-no-overlap: its key loop
# not rotated, as before 2026-12-07).
ATTENTION_PERSISTENT_NO_OVERLAP = K.attention_persistent.replace_hints()
# The persistent kernel with the default 40/232 register split (as before
# 2026-12-07; rows tile-persistent-40-232).
ATTENTION_PERSISTENT_40_232 = K.attention_persistent.replace_hints(ws_registers=(40, 232))
# The fixed matmul compiled under TILE_PREFETCH_TMAPS=1 (its rows:
# tile-fixed-prefetch, beside tile-fixed).
MATMUL_PREFETCH = K.matmul.replace_hints()


def run_vadd():
    n = 1 << 28
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    o = torch.empty_like(x)
    p = "vadd_fp32_2^28"
    attempt(p, "torch", lambda: torch.add(x, y, out=o), lambda: None, nbytes=12 * n)
    attempt(p, "triton", lambda: T.vadd_k[(triton.cdiv(n, 1024),)](x, y, o, n, B=1024),
            lambda: close(o, x + y, 0), nbytes=12 * n)
    o.fill_(float("nan"))
    attempt(p, "tile", lambda: K.vadd[(tile.cdiv(n, 4096),)](x, y, o, BLOCK=4096),
            lambda: close(o, x + y, 0), nbytes=12 * n)


def rowwise_config(n):
    block = triton.next_power_of_2(n)
    rows = max(1, 4096 // block)
    return rows, block


def run_norms(shapes):
    for (M, N) in shapes:
        X = torch.randn(M, N, device="cuda", dtype=torch.float16)
        Y = torch.empty_like(X)
        B = triton.next_power_of_2(N)
        warps = 8 if N <= 8192 else 16
        ref = torch.softmax(X.float(), -1)
        p = f"softmax_fp16_{M}x{N}"
        nb = 4 * M * N
        attempt(p, "torch", lambda: torch.softmax(X, -1), lambda: None, nbytes=nb)
        attempt(p, "triton", lambda: T.softmax_k[(M,)](X, Y, X.stride(0), N, B=B, num_warps=warps),
                lambda: close(Y, ref, 2e-3), nbytes=nb)
        rows_, block = rowwise_config(N)
        Y.fill_(float("nan"))
        attempt(p, "tile", lambda: K.softmax[(tile.cdiv(M, rows_),)](X, Y, ROWS=rows_, BLOCK=block),
                lambda: close(Y, ref, 2e-3), nbytes=nb)
        W = torch.randn(N, device="cuda", dtype=torch.float16)
        Bv = torch.randn(N, device="cuda", dtype=torch.float16)
        ref = torch.nn.functional.layer_norm(X.float(), (N,), W.float(), Bv.float(), 1e-5)
        p = f"layernorm_fp16_{M}x{N}"
        attempt(p, "torch", lambda: torch.nn.functional.layer_norm(X, (N,), W, Bv), lambda: None, nbytes=nb)
        attempt(p, "triton", lambda: T.layernorm_k[(M,)](X, Y, W, Bv, X.stride(0), N, 1e-5, B=B, num_warps=warps),
                lambda: close(Y, ref, 2e-2), nbytes=nb)
        Y.fill_(float("nan"))
        run = lambda: K.layernorm[(tile.cdiv(M, rows_),)](X, W, Bv, Y, 1e-5, ROWS=rows_, BLOCK=block)  # noqa: E731
        attempt(p, "tile", run, lambda: close(Y, ref, 2e-2), nbytes=nb)
        del X, Y


def run_matmul(shapes, clusters=False):
    """f16 and bf16 C = A @ B for each (M, N, K) (an int S is S^3); with
    `clusters`, the fixed and persistent kernels also in clusters of two
    (num_ctas=2: multicast B) beside them, and no autotuned row."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for dt in (torch.float16, torch.bfloat16):
        for shape in shapes:
            M, N, Kd = (shape,) * 3 if isinstance(shape, int) else shape
            A = torch.randn(M, Kd, device="cuda", dtype=dt)
            Bm = torch.randn(Kd, N, device="cuda", dtype=dt)
            C = torch.empty(M, N, device="cuda", dtype=dt)
            ref = A.float() @ Bm.float()
            p = f"matmul_{str(dt)[6:]}_" + (f"{M}" if M == N == Kd else f"{M}x{N}x{Kd}")
            fl = 2 * M * N * Kd

            def relerr():
                e = ((C.float() - ref).norm() / ref.norm()).item()
                if e > 1e-2:
                    raise AssertionError(f"relative error {e:.3g}")

            poison = lambda: C.fill_(float("nan"))  # noqa: E731
            cfg = K.matmul_config(M, N)
            tiles = tile.cdiv(M, cfg["BM"]) * tile.cdiv(N, cfg["BN"])
            contest(p, [
                ("torch", lambda: torch.matmul(A, Bm), lambda: None),
                ("triton", lambda: T.mm_k[lambda m: (triton.cdiv(M, m["BM"]) * triton.cdiv(N, m["BN"]),)](
                    A, Bm, C, M, N, Kd, A.stride(0), A.stride(1), Bm.stride(0), Bm.stride(1), C.stride(0),
                    C.stride(1)), relerr, None, poison),
            ] + ([] if clusters else [
                # autotune (first call tunes) against the hand-picked config.
                ("tile", lambda: K.matmul_tuned[K.matmul_grid(M, N, sms)](A, Bm, C), relerr,
                 K.matmul_tuned, poison),
            ]) + [
                ("tile-fixed", lambda: K.matmul[(tiles,)](A, Bm, C, **cfg), relerr, None, poison),
                ("tile-fixed-prefetch", with_env("TILE_PREFETCH_TMAPS", "1", lambda: MATMUL_PREFETCH[
                    (tiles,)](A, Bm, C, **cfg)), relerr, None, poison),
                # The same tiles from one block per SM looping over them (a while loop).
                ("tile-persistent", lambda: K.matmul_persistent[(min(sms, tiles),)](A, Bm, C, **cfg),
                 relerr, None, poison),
            ] + ([
                ("tile-cluster", lambda: K.matmul_cluster[(tiles,)](A, Bm, C, **cfg), relerr, None,
                 poison),
                ("tile-persistent-cluster", lambda: K.matmul_persistent_cluster[
                    (min(sms, tiles),)](A, Bm, C, **cfg), relerr, None, poison),
            ] if clusters else []), flops=fl)
            binaries = {"tile-fixed": lambda: K.matmul.compile(A, Bm, C, **cfg)}
            if not clusters:
                binaries["tile"] = lambda: K.matmul_tuned.compile(A, Bm, C)
            note_binaries(p, binaries)


def run_bmm(Z=8, S=2048):
    """f16 batched matmul, Z batches of S^3, against torch.bmm."""
    A = torch.randn(Z, S, S, device="cuda", dtype=torch.float16)
    Bm = torch.randn(Z, S, S, device="cuda", dtype=torch.float16)
    C = torch.empty(Z, S, S, device="cuda", dtype=torch.float16)
    ref = torch.bmm(A.float(), Bm.float())

    def relerr():
        e = ((C.float() - ref).norm() / ref.norm()).item()
        if e > 1e-2:
            raise AssertionError(f"relative error {e:.3g}")
    cfg = K.BMM_CONFIG
    grid = (tile.cdiv(S, cfg["BM"]), tile.cdiv(S, cfg["BN"]), Z)
    # 128x128 tiles beside the chosen 128x256 (one run, both rows).
    narrow = dict(cfg, BN=128)
    narrow_grid = (tile.cdiv(S, narrow["BM"]), tile.cdiv(S, narrow["BN"]), Z)
    poison = lambda: C.fill_(float("nan"))  # noqa: E731
    contest(f"bmm_float16_{Z}x{S}", [
        ("torch", lambda: torch.bmm(A, Bm), lambda: None),
        ("tile", lambda: K.bmm[grid](A, Bm, C, **cfg), relerr, None, poison),
        ("tile-128x128", lambda: K.bmm[narrow_grid](A, Bm, C, **narrow), relerr, None, poison),
    ], flops=2 * Z * S ** 3)


def run_matmul_fp8(S=4096):
    """fp8 e4m3 A (M x K) times B given as N x K (the layout torch._scaled_mm
    and sm_90's fp8 wgmma take), f32 out, fast accumulation on both sides,
    against torch._scaled_mm (cuBLAS)."""
    p = f"matmul_fp8e4m3_tn_{S}"
    fl = 2 * S ** 3
    A = (torch.randn(S, S, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    Bt = (torch.randn(S, S, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    C = torch.empty(S, S, device="cuda", dtype=torch.float32)
    ref = A.float() @ Bt.float().t()
    one = torch.tensor(1.0, device="cuda")

    def relerr(out=C, who="tile"):  # fast accumulation: ~13-14 bits of the running sum
        e = ((out - ref).norm() / ref.norm()).item()
        print(f"{p}: {who} relative error {e:.3g}", flush=True)
        if e > 1e-2:
            raise AssertionError(f"relative error {e:.3g}")

    def scaled_mm():
        return torch._scaled_mm(A, Bt.t(), scale_a=one, scale_b=one, out_dtype=torch.float32,
                                use_fast_accum=True)
    attempt(p, "torch", scaled_mm, lambda: relerr(scaled_mm(), "torch"), flops=fl)
    C.fill_(float("nan"))
    cfg = K.FP8_MATMUL_CONFIG
    attempt(p, "tile", lambda: K.matmul_tn[(S // cfg["BM"], S // cfg["BN"])](A, Bt, C, **cfg),
            relerr, flops=fl)


def run_matmul_tn(S=4096):
    """tf32 and int8 C = A B with B given as N x K (both operands K-major:
    the layout sm_90's wgmma takes for them, and cuBLAS's int8 kernels),
    against torch.matmul with TF32 allowed and torch._int_mm, one contest
    each (torch and tile timed run by run in turn)."""
    fl = 2 * S ** 3
    # tf32: inputs keep 10 mantissa bits; against float64.
    A = torch.randn(S, S, device="cuda")
    Bt = torch.randn(S, S, device="cuda")
    C = torch.full((S, S), float("nan"), device="cuda")
    ref = A.double() @ Bt.double().t()
    p = f"matmul_tf32_tn_{S}"

    def relerr(out, who):
        e = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{p}: {who} relative error {e:.3g}", flush=True)
        if not e <= 4e-3:  # NaN fails too
            raise AssertionError(f"relative error {e:.3g}")

    def torch_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(A, Bt.t())
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    cfg = K.TF32_MATMUL_CONFIG
    grid = (S // cfg["BM"], S // cfg["BN"])
    contest(p, [
        ("torch", torch_tf32, lambda: relerr(torch_tf32(), "torch")),
        ("tile", lambda: K.matmul_tn[grid](A, Bt, C, **cfg), lambda: relerr(C, "tile"),
         None, lambda: C.fill_(float("nan"))),
    ], flops=fl)
    # int8: exact i32 sums.
    A8 = torch.randint(-128, 128, (S, S), device="cuda", dtype=torch.int8)
    B8t = torch.randint(-128, 128, (S, S), device="cuda", dtype=torch.int8)
    C32 = torch.full((S, S), -1, device="cuda", dtype=torch.int32)
    ref8 = torch._int_mm(A8, B8t.t())
    p = f"matmul_int8_tn_{S}"

    def exact():
        if not torch.equal(C32, ref8):
            raise AssertionError("int8 result differs from torch._int_mm")
    cfg = K.INT8_MATMUL_CONFIG
    grid = (S // cfg["BM"], S // cfg["BN"])
    contest(p, [
        ("torch", lambda: torch._int_mm(A8, B8t.t()), lambda: None),
        ("tile", lambda: K.matmul_tn[grid](A8, B8t, C32, **cfg), exact, None,
         lambda: C32.fill_(-1)),
    ], flops=fl)


def attention_row(Bz, H, Hkv, L, D, dtype, causal, backward=False):
    """A bench row's name: the first shape keeps the name it has always had."""
    heads = f"H{H}" + (f"KV{Hkv}" if Hkv != H else "")
    kind = "attn_bwd" if backward else "attn"
    return f"{kind}{'_causal' if causal else ''}_{dtype}_B{Bz}{heads}L{L}D{D}"


def attention_inputs(Bz, H, Hkv, L, D, dtype):
    """q (B, H, L, D) and k, v (B, H_kv, L, D), random."""
    dt = getattr(torch, {"fp16": "float16", "bf16": "bfloat16"}[dtype])
    q = torch.randn(Bz, H, L, D, device="cuda", dtype=dt)
    k, v = (torch.randn(Bz, Hkv, L, D, device="cuda", dtype=dt) for _ in range(2))
    return q, k, v


def run_attention(shapes, clusters=False):
    """Forward attention per shape, causal and not; with `clusters`, the
    fixed kernel also in clusters of two (num_ctas=2: neighbouring query
    blocks share K and V; causal kernels stay unclustered) beside it."""
    import flash_attention as FA
    import flash_attention_fp8 as FA8
    # The example's kernel compiled under TILE_LATE_OPS_FIRST=1.
    example_late_first = FA.attention.replace_hints()
    # ... and with bench's 24/240 register split (whether it becomes the
    # default for attention-shaped warp-specialized kernels).
    example_split = FA.attention.replace_hints(ws_registers=(24, 240))
    example_late_first_split = FA.attention.replace_hints(ws_registers=(24, 240))
    example_untied = FA.attention.replace_hints()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for (Bz, H, Hkv, L, D, dtype) in shapes:
        q, k, v = attention_inputs(Bz, H, Hkv, L, D, dtype)
        o = torch.empty_like(q)
        fl = 4 * Bz * H * L * L * D
        gqa = dict(enable_gqa=True) if Hkv != H else {}
        group = H // Hkv
        for causal in (False, True):
            p = attention_row(Bz, H, Hkv, L, D, dtype, causal)
            # SDPA's own output is the reference (a float32 one at L 16384
            # would not fit): both are within 1e-3 of the exact result.
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                   **gqa)
            f = fl / 2 if causal else fl
            BM, BN = K.ATTENTION_CONFIG["BM"], K.ATTENTION_CONFIG["BN"]
            q3, o3 = (t.view(Bz * H, L, D) for t in (q, o))
            k3, v3 = (t.view(Bz * Hkv, L, D) for t in (k, v))
            poison = lambda: o.fill_(float("nan"))  # noqa: E731
            check = lambda: close(o, ref, 2e-2)  # noqa: E731

            def fixed(kern):  # bench's kernel's arguments
                return lambda: kern[(L // BM, Bz * H)](
                    q3, k3, v3, o3, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal, GROUP=group)

            def example(kern):  # the example's (`seq` at run time)
                return lambda: kern[(L // BM, Bz * H)](
                    q3, k3, v3, o3, L, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal, GROUP=group)

            def persistent(kern):  # one block per SM
                return lambda: kern[(sms,)](
                    q3, k3, v3, o3, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal, GROUP=group)

            entries = [
                ("torch-sdpa", lambda: torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, **gqa), lambda: None),
                ("tile", lambda: K.attention_tuned[lambda m: (L // m["BM"], Bz * H)](
                    q3, k3, v3, o3, D ** -0.5, D=D, CAUSAL=causal, GROUP=group), check,
                 K.attention_tuned, poison),
                ("tile-fixed", fixed(K.attention), check, None, poison),
                # The kernel as a user writes it (examples/flash_attention.py:
                # K^T by an `order` load, `seq` at run time, keys past it masked).
                ("tile-example", example(FA.attention), check, None, poison),
                # cuTile's attention sample's form, on the 4-d tensors.
                ("tile-cutile-form", lambda: K.attention_cutile_form[(L // BM, Bz * H)](
                    q, k, v, o, D ** -0.5, H=H, BM=BM, BN=BN, D=D, GROUP=group,
                    CAUSAL=causal), check, None, poison),
            ]
            # fp8 (e4m3) forward (examples/flash_attention_fp8.py): the inputs
            # rounded to e4m3, V transposed, O in f16; checked normwise against
            # SDPA on the rounded inputs (P's rounding to e4m3 moves O by about
            # 1.2%; against the unrounded inputs it was 5.3%, H200 2026-12-06).
            # (Only where its row runs: at L16384 the reference ran an H100
            # out of memory.)
            if dtype == "fp16" and D % 128 == 0 and (harness.IMPLS is None
                                                     or "tile-fp8" in harness.IMPLS):
                q8, k8 = (t.to(torch.float8_e4m3fn) for t in (q3, k3))
                vt8 = v3.transpose(1, 2).contiguous().to(torch.float8_e4m3fn)
                ref8 = torch.nn.functional.scaled_dot_product_attention(
                    *(t.half().reshape(Bz, -1, L, D) for t in (q8, k8, vt8.transpose(1, 2))),
                    is_causal=causal, **gqa)
                entries.append(("tile-fp8", lambda: FA8.attention_fp8[(L // BM, Bz * H)](
                    q8, k8, vt8, o3, L, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal,
                    GROUP=group), lambda ref8=ref8: close_normwise(o, ref8, 0.03), None,
                    poison))
            # Causal variants that mask only the diagonal block: two loops (unmasked,
            # then masked), and one loop masking under a runtime `if` (the first
            # shape only).
            variants = [("tile-diag", K.attention_diag),
                        ("tile-diag-if", K.attention_diag_if)] \
                if causal and (Bz, H, Hkv, L, D, dtype) == shapes[0] else []
            for impl, kern in variants:
                entries.append((impl, lambda kern=kern: kern[(L // BM, Bz * H)](
                    q3, k3, v3, o3, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal), check, None, poison))
            if causal:  # every key block masked (before tile-split-uniform-masks)
                entries.append(("tile-fixed-nosplit", with_env(
                    "TILE_SPLIT_MASKS", "0", fixed(ATTENTION_NOSPLIT)), check, None, poison))
            if clusters and not causal:
                entries.append(("tile-cluster", fixed(K.attention_cluster), check, None, poison))
            # (row, launch, compile-time switch): O's rescale before S_j's
            # issue (tile-overlap-mma-chain's late-ops-first), bench's
            # kernel and the example's; the example with bench's 24/240
            # split; the fence in front of P V's wgmmas as before 2026-12-07
            # (NVVM's plain fence: ptxas fenced each wgmma whose fragment
            # came after, and serialized the persistent kernel's); the two
            # consumer warpgroups taking turns at each iteration's mmas; one
            # block per SM walking the tiles, causal ones longest first.
            for impl, launch, switch in [
                    ("tile-late-first", fixed(ATTENTION_LATE_FIRST), ("TILE_LATE_OPS_FIRST", "1")),
                    ("tile-example-late-first", example(example_late_first),
                     ("TILE_LATE_OPS_FIRST", "1")),
                    ("tile-example-24-240", example(example_split), None),
                    ("tile-example-late-first-24-240", example(example_late_first_split),
                     ("TILE_LATE_OPS_FIRST", "1")),
                    ("tile-fixed-untied-fence", fixed(ATTENTION_UNTIED), ("TILE_TIED_FENCE", "0")),
                    ("tile-example-untied-fence", example(example_untied),
                     ("TILE_TIED_FENCE", "0")),
                    ("tile-persistent-untied-fence", persistent(ATTENTION_PERSISTENT_UNTIED),
                     ("TILE_TIED_FENCE", "0")),
                    ("tile-persistent-no-overlap", persistent(ATTENTION_PERSISTENT_NO_OVERLAP),
                     ("TILE_MMA_OVERLAP", "0")),
                    ("tile-pingpong", fixed(ATTENTION_PINGPONG), ("TILE_PING_PONG", "1")),
                    ("tile-persistent-40-232", persistent(ATTENTION_PERSISTENT_40_232), None),
                    ("tile-persistent", persistent(K.attention_persistent), None)]:
                entries.append((impl, with_env(*switch, launch) if switch else launch, check,
                                None, poison))
            contest(p, entries, flops=f)
            note_binaries(p, {"tile": lambda: K.attention_tuned.compile(
                                  q3, k3, v3, o3, D ** -0.5, D=D, CAUSAL=causal, GROUP=group),
                              "tile-fixed": lambda: K.attention.compile(
                                  q3, k3, v3, o3, D ** -0.5, BM=BM, BN=BN, D=D, CAUSAL=causal,
                                  GROUP=group)})


def run_attention_backward(shapes):
    """The FlashAttention-2 backward of examples/flash_attention_backward.py
    (dQ, dK, dV from O and the row lse; blocks by head dim: sm90_blocks)
    against torch's autograd of SDPA's backward; the forward runs once
    outside the timing for both. The gradients are
    allocated as torch allocates SDPA's (in the inputs' dtype, not
    poisoned); the check compares them with SDPA's."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import flash_attention_backward as FAB
    import importlib.util

    def example_copy(name):
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(HERE, "..", "examples", "flash_attention_backward.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    # A second copy of the example, whose kernels compile with
    # TILE_BULK_REDUCE=1 (dQ by TMA bulk reductions; the option is read when
    # a kernel compiles): its row beside the atomics', in one process.
    FAB_BULK = example_copy("fab_bulk")
    # And a third, compiled with TILE_SPLIT_MASKS=0: its loops keep their
    # masks where they are all true (before tile-split-uniform-masks).
    FAB_NOSPLIT = example_copy("fab_nosplit")
    # And a fourth, the fused kernel with TILE_DELAY_STAGED_MMA=1 too (dQ's
    # product one iteration late: the warpgroups hand dS over by mbarriers).
    FAB_DELAYED = example_copy("fab_delayed")
    # And a fifth whose gradient kernels tie the wgmma fence to the A
    # fragments (the compiler's default; the example's kernels ask for the
    # plain fence): tile-tied-fence beside tile.
    FAB_TIED = example_copy("fab_tied")
    for name in ("attention_dkdv", "attention_dkdv_waits_in_place", "attention_dq"):
        setattr(FAB_TIED, name, getattr(FAB_TIED, name).replace_hints(tied_wgmma_fence=True))

    for (Bz, H, Hkv, L, D, dtype) in shapes:
        q4, k4, v4 = attention_inputs(Bz, H, Hkv, L, D, dtype)
        dout4 = torch.randn_like(q4)
        q, dout = q4.view(Bz * H, L, D), dout4.view(Bz * H, L, D)
        k, v = k4.view(Bz * Hkv, L, D), v4.view(Bz * Hkv, L, D)
        gqa = dict(enable_gqa=True) if Hkv != H else {}
        for causal in (False, True):
            p = attention_row(Bz, H, Hkv, L, D, dtype, causal, backward=True)
            # FlashAttention-2's count: the backward is 2.5x the forward's 4*L*L*D.
            fl = 2.5 * 4 * Bz * H * L * L * D / (2 if causal else 1)
            # SDPA gets (B, H, L, D): on 3-d inputs torch runs its math
            # backend, not its flash kernels.
            qt, kt, vt = (x.detach().clone().requires_grad_(True) for x in (q4, k4, v4))
            ref_out = torch.nn.functional.scaled_dot_product_attention(
                qt, kt, vt, is_causal=causal, **gqa)
            ref = [g.reshape(-1, L, D) for g in torch.autograd.grad(
                ref_out, (qt, kt, vt), dout4, retain_graph=True)]
            dev = FAB._TorchDevice()
            out, lse = FAB.forward(dev, q, k, v, causal, 64, 64)
            out = out.to(q.dtype)  # O as TileAttention keeps it (and SDPA its own)
            fast = FAB._TorchDevice(poison=False)
            serial = FAB._TorchDevice(poison=False, overlap=False)
            got = []

            def tile_bwd(fab=FAB, dev=fast, in_place=None):
                kv_blocks, q_blocks = fab.sm90_blocks(D)
                got[:] = fab.backward(dev, q, k, v, out, lse, dout, causal, 64, 64,
                                      dkdv_blocks=kv_blocks, dq_blocks=q_blocks,
                                      grad_dtype=q.dtype, dkdv_in_place=in_place)

            def tile_bwd_fused(fab=FAB):
                # attention_dkdvdq: FlashAttention-2's five products in one
                # kernel, dQ added by relaxed atomics (dQ^T = K^T dS^T on
                # wgmma, dS^T staged through shared memory).
                kv_blocks, _ = fab.sm90_blocks(D)
                got[:] = fab.backward(fast, q, k, v, out, lse, dout, causal, 64, 64,
                                      dkdv_blocks=kv_blocks, grad_dtype=q.dtype,
                                      fused_dq=True)

            def check():
                for g, r in zip(got, ref):
                    e = ((g.float() - r.float()).norm() / r.float().norm()).item()
                    if not e <= 2e-2:  # NaN fails too
                        raise AssertionError(f"relative error {e:.3g}")
            contest(p, [
                ("torch-sdpa", lambda: torch.autograd.grad(ref_out, (qt, kt, vt), dout4,
                                                           retain_graph=True), lambda: None),
                ("tile", tile_bwd, check),
                # The dK/dV and dQ kernels one after the other on one stream
                # (tile's row runs them on two).
                ("tile-one-stream", lambda: tile_bwd(dev=serial), check),
                ("tile-tied-fence", lambda: tile_bwd(FAB_TIED), check),
                # The dK/dV kernel as before its waits in place at d 128
                # (one wait per product, no ROUND_P, 40/232 registers).
                ("tile-dkdv-waits-each", lambda: tile_bwd(in_place=False), check),
                # ... and the in-place dK/dV kernel where backward() does not
                # take it (d 64, bf16, GQA: it spilled there before the tied
                # wgmma fence; at d 64 non-causal and GQA it no longer does).
                ("tile-dkdv-in-place", lambda: tile_bwd(in_place=True), check),
                ("tile-nosplit", with_env("TILE_SPLIT_MASKS", "0",
                                          lambda: tile_bwd(FAB_NOSPLIT)), check),
                # The fused kernel as designed: its dQ product on wgmma
                # (TILE_STAGED_MMA=1); without it that product ran on
                # mma.sync at 6-54 TFLOP/s (H100, 2026-12-05).
                ("tile-fused-dq", with_env("TILE_STAGED_MMA", "1", tile_bwd_fused), check),
                ("tile-fused-dq-bulk", with_env("TILE_STAGED_MMA", "1", with_env(
                    "TILE_BULK_REDUCE", "1", lambda: tile_bwd_fused(FAB_BULK))), check),
                ("tile-fused-dq-delayed", with_env("TILE_STAGED_MMA", "1", with_env(
                    "TILE_BULK_REDUCE", "1", with_env("TILE_DELAY_STAGED_MMA", "1",
                                                      lambda: tile_bwd_fused(FAB_DELAYED)))),
                 check),
            ], flops=fl)


def run_launch_overhead():
    # Host time per call of a tiny launch, back to back. The VM's speed drifts
    # within a run, so the implementations take turns (7 rounds of 2000 calls)
    # and each keeps its best round: the same rule for all three.
    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    o = torch.empty_like(x)
    impls = [("torch", lambda: torch.add(x, y, out=o)),
             ("triton", lambda: T.vadd_k[(1,)](x, y, o, 1024, B=1024)),
             ("tile", lambda: K.vadd[(1,)](x, y, o, BLOCK=1024))]
    best, errors = {}, {}
    for name, fn in impls:
        try:
            for _ in range(100):
                fn()
        except Exception as e:  # noqa: BLE001
            errors[name] = str(e)[:300]
    torch.cuda.synchronize()
    for _ in range(7):
        for name, fn in impls:
            if name in errors:
                continue
            t = time.perf_counter()
            for _ in range(2000):
                fn()
            torch.cuda.synchronize()
            us = (time.perf_counter() - t) / 2000 * 1e6
            best[name] = min(us, best.get(name, us))
    for name, _ in impls:
        if name in errors:
            rows.append({"problem": "launch_overhead", "impl": name, "error": errors[name]})
        else:
            rows.append({"problem": "launch_overhead", "impl": name, "us_per_call": best[name]})
        print(json.dumps(rows[-1]), flush=True)


COMPILE_SNIPPET = r"""
import os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {here!r}); sys.path.insert(0, {pf!r})
import torch
x = torch.randn(4096, 1024, device="cuda", dtype=torch.float16); y = torch.empty_like(x)
torch.cuda.synchronize()
t1 = time.perf_counter()
import tile, kernels as K
from tile import backend
backend.load()
t2 = time.perf_counter()
K.softmax[(4096,)](x, y, ROWS=1, BLOCK=1024)
torch.cuda.synchronize()
t3 = time.perf_counter()
print("IMPORT_MS", (t2 - t1) * 1e3, "FIRST_CALL_MS", (t3 - t2) * 1e3)
"""


def run_compile_times():
    import tempfile
    cache = tempfile.mkdtemp(prefix="tile-cache-")
    code = COMPILE_SNIPPET.format(here=HERE, pf=os.path.join(HERE, "..", "python-frontend"))
    for label in ("cold", "warm"):
        env = dict(os.environ, TILE_CACHE_DIR=cache)
        try:
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
            ms = float(out.stdout.split("FIRST_CALL_MS")[1].split()[0])
            imp = float(out.stdout.split("IMPORT_MS")[1].split()[0])
            rows.append({"problem": f"first_call_{label}_cache(trace + compile or load + launch)",
                         "impl": "tile", "ms": ms})
            rows.append({"problem": f"import_tile_{label}", "impl": "tile", "ms": imp})
        except Exception as e:  # noqa: BLE001
            rows.append({"problem": f"first_call_{label}_cache", "impl": "tile", "error": (str(e) + out.stderr[-500:])[:800]})
        print(json.dumps(rows[-1]), flush=True)


def table():
    by = {}
    for r in rows:
        by.setdefault(r["problem"], {})[r["impl"]] = r
    lines = ["| problem | impl | ms | GB/s | TFLOP/s | us/call | tile vs torch | tile vs triton |",
             "|---|---|---|---|---|---|---|---|"]
    for prob, impls in by.items():
        for name, r in impls.items():
            def fmt(k, d=3):
                v = r.get(k)
                return "" if v is None or v != v else f"{v:.{d}f}"
            ratio_t = ratio_tr = ""
            # tile and its variants (tile-persistent, ...) get the ratios.
            t = r if name.startswith("tile") else {}
            if "ms" in t and t["ms"] == t["ms"]:
                base = impls.get("torch") or impls.get("torch-sdpa")
                if base and base.get("ms") == base.get("ms") and "ms" in base:
                    ratio_t = f"{base['ms'] / t['ms']:.2f}x"
                if "triton" in impls and impls["triton"].get("ms") == impls["triton"].get("ms"):
                    ratio_tr = f"{impls['triton']['ms'] / t['ms']:.2f}x"
            if "us_per_call" in t:
                if "torch" in impls and "us_per_call" in impls["torch"]:
                    ratio_t = f"{impls['torch']['us_per_call'] / t['us_per_call']:.2f}x"
                if "triton" in impls and "us_per_call" in impls["triton"]:
                    ratio_tr = f"{impls['triton']['us_per_call'] / t['us_per_call']:.2f}x"
            err = r.get("error", "")
            shown = f"{name} ({r['config']})" if r.get("config") else name  # autotune's choice
            if r.get("binary"):
                shown += f" [binary {r['binary']}]"
            lines.append(f"| {prob} | {shown} | {fmt('ms', 4)} | {fmt('GB/s', 0)} | {fmt('TFLOP/s', 1)} | "
                         f"{fmt('us_per_call', 2)} | {ratio_t} | {ratio_tr}{(' ERROR: ' + err[:120]) if err else ''} |")
    return "\n".join(lines)


def chart(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    by = {}
    for r in rows:
        if "ms" in r and r["ms"] == r["ms"] and not r["problem"].startswith("first_call"):
            by.setdefault(r["problem"], {})[r["impl"]] = r["ms"]
    probs = [p for p in by if "tile" in by[p]]
    if not probs:
        return
    fig, ax = plt.subplots(figsize=(max(8, len(probs) * 0.8), 5))
    for i, impl in enumerate(["torch", "triton", "tile"]):
        vals = []
        for p in probs:
            base = by[p].get("torch") or by[p].get("torch-sdpa")
            v = by[p].get(impl if impl != "torch" else ("torch" if "torch" in by[p] else "torch-sdpa"))
            vals.append(base / v if base and v else 0)
        ax.bar([j + i * 0.27 for j in range(len(probs))], vals, 0.27, label=impl)
    ax.set_xticks([j + 0.27 for j in range(len(probs))])
    ax.set_xticklabels(probs, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("speed relative to torch (higher is better)")
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--quick", action="store_true", help="one shape per problem")
    ap.add_argument("--attention-shapes", default="",
                    help="comma-separated indices into the attention shapes (0: B4 H32 L4096 "
                         "D128, 1: D64, 2: B1 L16384, 3: GQA, 4: bf16): only those")
    ap.add_argument("--only", default="", help="comma-separated: vadd,norms,matmul,matmul-shapes,matmul-tn,bmm,attention,attention-bwd,launch,compile; "
                         "matmul-cluster and attention-cluster (num_ctas=2 rows) run only when named")
    ap.add_argument("--repeats", type=int, default=3,
                    help="do_bench medians per row, the best kept (default %(default)s)")
    ap.add_argument("--impls", default="",
                    help="comma-separated: only these rows (e.g. tile,tile-fixed-untied-fence; "
                         "torch's rows always run)")
    a = ap.parse_args()
    harness.REPEATS = max(1, a.repeats)
    harness.IMPLS = set(a.impls.split(",")) if a.impls else None
    only = set(filter(None, a.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    torch.manual_seed(0)
    norm_shapes = [(32768, 1024), (8192, 8192), (4096, 32768)]
    mm_sizes = [1024, 4096, 8192]
    # (B, H, H_kv, L, D, dtype): issue 19's shapes, the first as before.
    attn_shapes = [(4, 32, 32, 4096, 128, "fp16"), (4, 32, 32, 4096, 64, "fp16"),
                   (1, 32, 32, 16384, 128, "fp16"), (4, 32, 8, 4096, 128, "fp16"),
                   (4, 32, 32, 4096, 128, "bf16")]
    if a.attention_shapes:
        attn_shapes = [attn_shapes[int(i)] for i in a.attention_shapes.split(",")]
    if a.quick:
        attn_shapes = attn_shapes[:1]
        norm_shapes, mm_sizes = norm_shapes[:1], [4096]
    if want("compile"):
        run_compile_times()
    if want("vadd"):
        run_vadd()
    if want("norms"):
        run_norms(norm_shapes)
    if want("matmul-shapes"):  # issue 17's non-square rows
        run_matmul([(12288, 4096, 2560), (8192, 8192, 1024), (4096, 4096, 16384)])
    if want("matmul"):
        run_matmul(mm_sizes)
    if "matmul-cluster" in only:  # clusters of two beside the same kernels (issue 17)
        run_matmul(mm_sizes + [(12288, 4096, 2560), (8192, 8192, 1024), (4096, 4096, 16384)],
                   clusters=True)
    if want("matmul") or want("matmul-tn"):  # the K-major kinds: fp8, tf32, int8
        run_matmul_fp8()
        run_matmul_tn()
    if want("matmul") or want("bmm"):
        run_bmm()
    if want("attention"):
        run_attention(attn_shapes)
    if "attention-cluster" in only:  # clusters of two beside the same kernel (issue 19)
        run_attention(attn_shapes, clusters=True)
    if want("attention-bwd"):
        run_attention_backward(attn_shapes)
    if want("launch"):
        run_launch_overhead()
    md = table()
    print(md)
    os.makedirs(a.out, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
            "torch": torch.__version__, "triton": triton.__version__}
    json.dump({"meta": meta, "results": rows}, open(os.path.join(a.out, "bench.json"), "w"), indent=1)
    open(os.path.join(a.out, "bench.md"), "w").write(f"{meta}\n\n{md}\n")
    try:
        chart(os.path.join(a.out, "bench.png"))
    except Exception as e:  # noqa: BLE001
        print("chart failed:", e)


if __name__ == "__main__":
    main()
