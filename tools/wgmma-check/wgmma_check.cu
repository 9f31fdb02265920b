// wgmma-check: checks wgmma's shared-memory descriptor encoding on an sm_90
// GPU, apart from the compiler. D[128x64] = A[128x128] B[128x64], f16 in, f32
// out, two warpgroups (64 rows of A each, panel g): A stored M-major
// (transposed, tnspA) and B N-major (tnspB) in 128-byte-swizzled panels of
// 64 columns, the layout tile-pipeline-mma gives staged operands and rings.
// Each variant names its leading / stride byte offsets; the right encoding
// prints "bad 0". It told the 2026-12-05 session that the compiler's fields
// were right, so the fault was downstream (docs/performance.md).
//
// Build here (CUDA's nvcc, no GPU needed), run on the GPU machine:
//   nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o wgmma-check \
//     tools/wgmma-check/wgmma_check.cu
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_fp16.h>

constexpr int M = 128, N = 64, K = 128;

__device__ uint32_t swz(int row, int col, int rows) {
  // byte offset of element (row, col) in 64-col panels of `rows` rows.
  int panel = col / 64, c = col % 64;
  int chunk = (c * 2 / 16) ^ (row % 8);
  return panel * rows * 128 + row * 128 + chunk * 16 + (c * 2) % 16;
}

__device__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr >> 4) & 0x3FFF) | uint64_t(lbo >> 4) << 16 |
         uint64_t(sbo >> 4) << 32 | 1ull << 62;
}

extern "C" __global__ void __launch_bounds__(256)
    kern(const half *a, const half *b, float *d, int lboA, int sboA, int lboB,
         int sboB, int groupBytes) {
  extern __shared__ __align__(1024) unsigned char smem[];
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  base = (base + 1023) & ~1023u;
  unsigned char *sm = smem + (base - (uint32_t)__cvta_generic_to_shared(smem));
  unsigned char *sa = sm, *sb = sm + K * M * 2;
  // A^T stored [k][m] (M-major): element A[m][k] at swz(k, m, K).
  for (int i = threadIdx.x; i < M * K; i += blockDim.x) {
    int m = i / K, k = i % K;
    *(half *)(sa + swz(k, m, K)) = a[m * K + k];
  }
  // B stored [k][n] (N-major).
  for (int i = threadIdx.x; i < K * N; i += blockDim.x) {
    int k = i / N, n = i % N;
    *(half *)(sb + swz(k, n, K)) = b[k * N + n];
  }
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  int g = threadIdx.x / 128;
  float acc[32];
  for (int i = 0; i < 32; ++i)
    acc[i] = 0.f;
  uint64_t da = desc(base + g * groupBytes, lboA, sboA);
  uint64_t db = desc(base + K * M * 2, lboB, sboB);
  asm volatile("wgmma.fence.sync.aligned;");
  for (int kk = 0; kk < K; kk += 16) {
    uint64_t a_ = da + (kk * 128 >> 4), b_ = db + (kk * 128 >> 4);
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"
        " %32, %33, p, 1, 1, 1, 1;\n}\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
          "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
          "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),
          "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),
          "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]),
          "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31])
        : "l"(a_), "l"(b_));
  }
  asm volatile("wgmma.commit_group.sync.aligned;");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  int t = threadIdx.x % 128, w = t / 32, l = t % 32;
  for (int j = 0; j < N / 8; ++j)
    for (int q = 0; q < 4; ++q) {
      int row = 64 * g + 16 * w + l / 4 + 8 * (q >> 1),
          col = 8 * j + 2 * (l % 4) + (q & 1);
      d[row * N + col] = acc[4 * j + q];
    }
}

int main() {
  half *a, *b;
  float *d;
  cudaMallocManaged(&a, M * K * 2);
  cudaMallocManaged(&b, K * N * 2);
  cudaMallocManaged(&d, M * N * 4);
  srand(1);
  for (int i = 0; i < M * K; ++i)
    a[i] = __float2half((rand() % 17 - 8) / 8.f);
  for (int i = 0; i < K * N; ++i)
    b[i] = __float2half((rand() % 17 - 8) / 8.f);
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       100000);
  struct {
    const char *name;
    int lboA, sboA, lboB, sboB, group;
  } v[] = {
      {"ours (LBO k*128, SBO 1024)", K * 128, 1024, K * 128, 1024, K * 128},
      {"swapped A (LBO 1024, SBO k*128)", 1024, K * 128, K * 128, 1024,
       K * 128},
  };
  for (auto &c : v) {
    for (int i = 0; i < M * N; ++i)
      d[i] = NAN;
    kern<<<1, 256, 100000>>>(a, b, d, c.lboA, c.sboA, c.lboB, c.sboB, c.group);
    cudaError_t e = cudaDeviceSynchronize();
    double maxerr = 0;
    int bad = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double s = 0;
        for (int k = 0; k < K; ++k)
          s += (double)__half2float(a[m * K + k]) * __half2float(b[k * N + n]);
        double err = fabs(s - d[m * N + n]);
        if (!(err <= 1e-3)) {
          ++bad;
          if (err > maxerr || err != err)
            maxerr = err;
        }
      }
    printf("%-36s %s bad %d of %d, max err %g\n", c.name, cudaGetErrorString(e),
           bad, M * N, maxerr);
    if (e != cudaSuccess)
      return 1;
  }
  return 0;
}
