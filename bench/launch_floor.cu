// The driver's own launch cost on this machine: host time per launch of an
// empty kernel through the driver API, with no Python. Build and run on the
// GPU machine: nvcc -O2 -o /tmp/launch_floor bench/launch_floor.cu -lcuda && /tmp/launch_floor
#include <chrono>
#include <cstdio>
#include <cuda.h>

extern "C" __global__ void noop(float *x, long n) {}

int main() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  float *p = nullptr;
  long n = 1024;
  void *args[] = {&p, &n};
  CUfunction fn;
  cudaGetFuncBySymbol(&fn, (const void *)noop);
  for (int i = 0; i < 1000; ++i)
    cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
  cuCtxSynchronize();
  const int iters = 100000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
  cuCtxSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  std::printf("cuLaunchKernel: %.2f us per launch\n",
              std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
}
