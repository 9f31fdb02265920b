//===- CudaApi.h - the slice of the CUDA driver API tile uses ---*- C++ -*-===//
//
// Declared here rather than taken from cuda.h so the runtime builds on
// machines without the CUDA toolkit; libcuda itself is only ever dlopen'ed.
// The values are ABI and match cuda.h (a unit test checks that when cuda.h is
// available).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_CUDAAPI_H
#define TILE_RUNTIME_CUDAAPI_H

#include <cstddef>

namespace tile::runtime::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
/// Asking the legacy stream while another stream captures in global mode.
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;

constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr int CU_STREAM_CAPTURE_STATUS_NONE = 0;

constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9;
constexpr int CU_SHAREDMEM_CARVEOUT_MAX_SHARED = 100;

/// The driver's special stream handles: they belong to whichever context is
/// current, so they cannot be asked for their context.
// cuLaunchKernelEx's configuration (cuda.h's CUlaunchConfig and
// CUlaunchAttribute, same layout): tile sets programmatic stream
// serialization (programmatic dependent launches) and the cluster
// dimension (thread-block clusters).
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

inline bool isSpecialStream(CUstream s) {
  return reinterpret_cast<size_t>(s) <= 2; // 0, CU_STREAM_LEGACY, PER_THREAD
}

} // namespace tile::runtime::cu

#endif
