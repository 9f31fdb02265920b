//===- HostJit.h - a JIT-compiled tile kernel on the host -------*- C++ -*-===//
//
// The CPU ABI (docs/internals.md section 4). After `tile-to-host` the kernel
// is an LLVM function taking, per argument in signature order,
//   array of rank r:  ptr allocated, ptr aligned, i64 offset,
//                     i64 sizes[r], i64 strides[r]   (a memref descriptor)
//   scalar:           its value (i32, i64, f32, f64)
// then i32 bid_x, bid_y, bid_z, num_blocks_x, num_blocks_y, num_blocks_z.
// It runs one block. The JIT (LLVM ORC) adds a packed wrapper
// `_mlir_<kernel>(void **args)`, args[i] pointing at argument i, as
// mlir::ExecutionEngine does, and calls that.
//
// A launch receives the flat argument list of docs/internals.md section 2
// as 8-byte slots (per array: data pointer, extents, strides in elements;
// per scalar its value in the slot's low bytes) and points the packed
// arguments straight into it: both descriptor pointers at the data slot, the
// offset at a constant zero. Blocks are spread over a pool of threads in
// chunks of consecutive linear block ids (x fastest).
//
// compileForCpu emits the kernel as a relocatable object (getObject) and
// loads that into the JIT; loadForCpu loads such an object again, in another
// process, without running any pass: the on-disk cache stores it.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_CPU_HOSTJIT_H
#define TILE_COMPILER_CPU_HOSTJIT_H

#include "compiler/Driver.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir::tile {

/// One kernel argument as the CPU ABI sees it.
struct HostArg {
  enum class Kind : uint8_t { Array, I32, I64, F32, F64 };
  Kind kind;
  /// Arrays: extents and strides proven at compile time (kDynamic if not).
  std::vector<int64_t> shape, strides;
  unsigned rank() const { return shape.size(); }
  /// How many flat values the argument takes: 1 + 2 * rank for an array.
  unsigned numFlat() const {
    return kind == Kind::Array ? 1 + 2 * rank() : 1;
  }
};

class HostKernel {
public:
  HostKernel();
  ~HostKernel();

  const std::string &getName() const { return name; }
  const StageList &getStages() const { return stages; }
  const std::vector<HostArg> &getArgs() const { return args; }
  size_t getNumFlatArgs() const { return numFlat; }
  /// False when compiled from a stage that lost the tile signature (the
  /// LLVM dialect): such a kernel only has its stages.
  bool isLaunchable() const { return launchable; }

  /// The object code the JIT runs (empty when not compiled by this build).
  const std::string &getObject() const { return object; }
  /// The ABI of each argument as text: "array:<rank>:<extents>:<strides>"
  /// ("?" for dynamic), "i32", "i64", "f32", "f64". A cached object is only
  /// loaded for a module with the same signature.
  std::vector<std::string> getSignature() const;

  /// Runs the grid on the flat arguments, packed as described above. Returns
  /// an error message (empty on success). Safe to call from several threads.
  std::string launch(std::array<int64_t, 3> grid, const uint64_t *flat) const;

private:
  friend FailureOr<std::unique_ptr<HostKernel>>
  compileForCpu(ModuleOp, const CompileOptions &, CompileFailure &);
  friend FailureOr<std::unique_ptr<HostKernel>>
  loadForCpu(ModuleOp, const std::string &, StageList, std::string &);

  std::string name;
  StageList stages;
  std::vector<HostArg> args;
  size_t numFlat = 0;
  /// For each packed argument before the grid ones: the flat slot it points
  /// at, or -1 for the constant zero offset.
  std::vector<int> plan;
  std::string object;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*entry)(void **) = nullptr;
  bool launchable = true;
};

/// The kernel of `module` running `object` (a HostKernel::getObject that
/// compileForCpu produced for the same module and host), with `stages` for
/// `k.asm`. Runs no pass and leaves the module as it is. Fails, saying why in
/// `error`, when the module has no launchable tile kernel or the object does
/// not load or lacks the kernel's entry point.
FailureOr<std::unique_ptr<HostKernel>> loadForCpu(ModuleOp module,
                                                  const std::string &object,
                                                  StageList stages,
                                                  std::string &error);

/// What the JIT compiles for: the target triple, the host CPU's name and
/// features, and LLVM's version. Object code built for anything else must
/// never be loaded. Computed once.
const std::string &hostTargetIdentity();

} // namespace mlir::tile

#endif // TILE_COMPILER_CPU_HOSTJIT_H
