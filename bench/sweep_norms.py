"""Times tile's softmax and layernorm over rows-per-block, chunk sizes and
warp counts on the shapes bench.py measures; prints GB/s and Triton's
figure beside the best. Needs a GPU, torch and triton."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import tile  # noqa: E402
import kernels as K  # noqa: E402
import peers_triton as T  # noqa: E402


def variant(k, warps):
    return tile.kernel(num_warps=warps)(k.fn) if warps else k


def gbps(fn, nbytes):
    return nbytes / do_bench(fn, return_mode="median") / 1e6


def main():
    for (M, N) in [(8192, 8192), (4096, 32768)]:
        X = torch.randn(M, N, device="cuda", dtype=torch.float16)
        W = torch.randn(N, device="cuda", dtype=torch.float16)
        B = torch.randn(N, device="cuda", dtype=torch.float16)
        Y = torch.empty_like(X)
        nb = 4 * M * N
        warps = 8 if N <= 8192 else 16
        blk = triton.next_power_of_2(N)
        print(f"{M}x{N} triton softmax {gbps(lambda: T.softmax_k[(M,)](X, Y, X.stride(0), N, B=blk, num_warps=warps), nb):.0f}"
              f" layernorm {gbps(lambda: T.layernorm_k[(M,)](X, Y, W, B, X.stride(0), N, 1e-5, B=blk, num_warps=warps), nb):.0f} GB/s")
        ref_s = torch.softmax(X.float(), -1)
        ref_l = torch.nn.functional.layer_norm(X.float(), (N,), W.float(), B.float(), 1e-5)
        for rows in (1, 2):
            for w in (0, 8, 16, 32):
                if rows * N > 65536:
                    continue
                try:
                    k = variant(K.softmax, w)
                    f = lambda: k[(M // rows,)](X, Y, ROWS=rows, BLOCK=N)  # noqa: E731
                    f()
                    assert torch.allclose(Y.float(), ref_s, atol=2e-3)
                    print(f"  softmax rows={rows} warps={w or 'auto'}: {gbps(f, nb):.0f} GB/s")
                    k = variant(K.layernorm, w)
                    f = lambda: k[(M // rows,)](X, W, B, Y, 1e-5, ROWS=rows, BLOCK=N)  # noqa: E731
                    f()
                    assert torch.allclose(Y.float(), ref_l, atol=2e-2)
                    print(f"  layernorm rows={rows} warps={w or 'auto'}: {gbps(f, nb):.0f} GB/s")
                except Exception as e:  # noqa: BLE001
                    print(f"  rows={rows} warps={w}: {type(e).__name__}: {str(e)[:120]}")
        for chunk in (2048, 4096, 8192, 16384):
            if chunk > N:
                continue
            for w in (0, 8, 16):
                try:
                    k = variant(K.layernorm_chunked, w)
                    f = lambda: k[(M,)](X, W, B, Y, 1e-5, BLOCK=chunk)  # noqa: E731
                    f()
                    assert torch.allclose(Y.float(), ref_l, atol=2e-2)
                    print(f"  layernorm_chunked block={chunk} warps={w or 'auto'}: {gbps(f, nb):.0f} GB/s")
                except Exception as e:  # noqa: BLE001
                    print(f"  chunked {chunk} warps={w}: {type(e).__name__}: {str(e)[:120]}")


if __name__ == "__main__":
    main()
