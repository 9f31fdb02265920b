//===- L2Flush.cpp - clearing L2 before a timed kernel run ----------------===//

#include "runtime/L2Flush.h"

#include "runtime/CudaModule.h"

#include <algorithm>
#include <map>
#include <mutex>

using namespace tile::runtime;
using namespace tile::runtime::cu;

// Each thread stores 16 zero bytes at a time, striding by the grid.
static const char kFlushPtx[] = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry tile_l2_flush(.param .u64 buffer, .param .u64 words)
{
  .reg .pred %p;
  .reg .b32 %r<6>;
  .reg .b64 %rd<7>;
  ld.param.u64 %rd1, [buffer];
  ld.param.u64 %rd2, [words];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  cvt.u64.u32 %rd3, %r4;
  mov.u32 %r5, %nctaid.x;
  mul.wide.u32 %rd4, %r5, %r2;
  mov.u32 %r0, 0;
LOOP:
  setp.ge.u64 %p, %rd3, %rd2;
  @%p bra DONE;
  shl.b64 %rd5, %rd3, 4;
  add.s64 %rd6, %rd1, %rd5;
  st.global.v4.u32 [%rd6], {%r0, %r0, %r0, %r0};
  add.s64 %rd3, %rd3, %rd4;
  bra LOOP;
DONE:
  ret;
}
)";

const char *tile::runtime::l2FlushPtx() { return kFlushPtx; }

bool tile::runtime::flushL2(CudaDriver &driver, CUstream stream, size_t bytes) {
  const CudaApiTable &api = driver.api();
  if (!api.cuMemAlloc || bytes < 16)
    return false;
  static std::mutex lock;
  // Kept for the process (never unloaded or freed: at exit the contexts
  // may be gone before static destructors run).
  static std::map<std::pair<CUcontext, size_t>, CUdeviceptr> buffers;
  static CudaModule *kernel =
      new CudaModule(driver, kFlushPtx, "tile_l2_flush", 0);
  CUcontext ctx = nullptr;
  driver.check(api.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  CUdeviceptr buffer = 0;
  {
    std::lock_guard<std::mutex> guard(lock);
    CUdeviceptr &slot = buffers[{ctx, bytes}];
    if (!slot)
      driver.check(api.cuMemAlloc(&slot, bytes), "cuMemAlloc (L2 flush)");
    buffer = slot;
  }
  unsigned long long words = bytes / 16;
  LaunchConfig config;
  config.block = {256, 1, 1};
  config.grid = {unsigned(std::min<unsigned long long>(
                     4096, (words + config.block[0] - 1) / config.block[0])),
                 1, 1};
  void *params[] = {&buffer, &words};
  kernel->launch(config, stream, params);
  return true;
}
