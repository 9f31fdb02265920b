//===- CpuKernel.cpp - _tile.Kernel for the CPU backend -------------------===//
//
// The launch path: the flat Python tuple becomes 8-byte slots in the
// widths the kernel's signature asks for (the packing plan was fixed at
// compile time), then the blocks run with the GIL released.
//
// compileCpuKernel first looks the kernel up in the on-disk cache, as the
// CUDA path does (key: the module's text with locations, the compiler's build
// identity, "cpu" with the host's triple, CPU name and features, and the
// codegen options). On a hit it runs no pass: the cached object code goes
// straight into a fresh JIT (loadForCpu), with the stages kept for `k.asm`.
// An entry that does not fit (another signature or kernel, an object the JIT
// will not load) is dropped and the kernel compiled again.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "compiler/Driver.h"
#include "compiler/cpu/HostJit.h"
#include "runtime/BuildInfo.h"
#include "runtime/DiskCache.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <cstring>

using namespace tile_py;
using mlir::tile::HostArg;
using mlir::tile::HostKernel;
namespace rt = tile::runtime;

namespace {

class CpuKernel : public Kernel {
public:
  explicit CpuKernel(std::unique_ptr<HostKernel> host) : host(std::move(host)) {
    name = this->host->getName();
    target = "cpu";
    for (const auto &[stage, text] : this->host->getStages())
      stages.emplace_back(stage, text);
  }

  void launch(const std::array<int64_t, 3> &grid, const py::tuple &args,
              uintptr_t) override {
    if (!host->isLaunchable())
      throw LaunchError{"kernel '" + name + "' was compiled from the LLVM "
                        "dialect, which no longer says which arguments are "
                        "arrays: compile an earlier stage to launch it"};
    size_t n = host->getNumFlatArgs();
    if (static_cast<size_t>(args.size()) != n)
      throw LaunchError{"kernel '" + name + "' takes " + std::to_string(n) +
                        " flat arguments (per array: data pointer, shape, "
                        "strides; per scalar: its value), got " +
                        std::to_string(args.size())};
    llvm::SmallVector<uint64_t, 32> slots(n, 0);
    size_t pos = 0;
    for (const HostArg &arg : host->getArgs()) {
      if (arg.kind == HostArg::Kind::Array) {
        // PyLong_AsVoidPtr takes exact ints only; others go through
        // __index__ (NumPy integers).
        PyObject *ptr = args[pos].ptr();
        py::object index;
        if (!PyLong_Check(ptr)) {
          index = py::reinterpret_steal<py::object>(PyNumber_Index(ptr));
          check(pos, "a data pointer (int)");
          ptr = index.ptr();
        }
        slots[pos] = reinterpret_cast<uintptr_t>(PyLong_AsVoidPtr(ptr));
        check(pos, "a data pointer (int)");
        for (unsigned i = 1; i < arg.numFlat(); ++i)
          storeInt(slots, args, pos + i, /*bits=*/64);
      } else if (arg.kind == HostArg::Kind::I32) {
        storeInt(slots, args, pos, 32);
      } else if (arg.kind == HostArg::Kind::I64) {
        storeInt(slots, args, pos, 64);
      } else {
        double v = PyFloat_AsDouble(args[pos].ptr());
        check(pos, "a float");
        if (arg.kind == HostArg::Kind::F32) {
          float f = static_cast<float>(v);
          std::memcpy(&slots[pos], &f, sizeof(f));
        } else {
          std::memcpy(&slots[pos], &v, sizeof(v));
        }
      }
      pos += arg.numFlat();
    }
    std::string error = gridError(grid);
    if (!error.empty())
      throw LaunchError{"kernel '" + name + "': " + error};
    {
      py::gil_scoped_release release;
      error = host->launch(grid, slots.data());
    }
    if (!error.empty())
      throw LaunchError{"kernel '" + name + "': " + error};
  }

private:
  void check(size_t pos, const char *what) const {
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw LaunchError{"kernel '" + name + "': flat argument " +
                        std::to_string(pos) + " must be " + what};
    }
  }

  void storeInt(llvm::SmallVectorImpl<uint64_t> &slots, const py::tuple &args,
                size_t pos, int bits) const {
    long long v = PyLong_AsLongLong(args[pos].ptr());
    check(pos, "an int");
    if (bits == 32) {
      if (v < INT32_MIN || v > INT32_MAX)
        throw LaunchError{"kernel '" + name + "': flat argument " +
                          std::to_string(pos) + " = " + std::to_string(v) +
                          " does not fit the kernel's i32"};
      int32_t narrow = static_cast<int32_t>(v);
      std::memcpy(&slots[pos], &narrow, sizeof(narrow));
    } else {
      int64_t wide = v;
      std::memcpy(&slots[pos], &wide, sizeof(wide));
    }
  }

  std::unique_ptr<HostKernel> host;
};


rt::CacheKeyInputs cacheKey(mlir::ModuleOp module,
                            const mlir::tile::CompileOptions &opts) {
  rt::CacheKeyInputs in = moduleKeyInputs(module);
  // An object built for another CPU (or by another LLVM) is never served.
  in.target = "cpu";
  in.toolVersion = mlir::tile::hostTargetIdentity();
  in.options = mlir::tile::codegenOptionsText(opts);
  return in;
}

/// Whether this compile must run the pipeline: a dump directory asks for
/// every stage to be written, and the debugging options for output of the
/// passes; a resumed stage has no tile IR to key on.
bool mustCompile(const mlir::tile::CompileOptions &opts) {
  return !opts.dumpDir.empty() || opts.printIRAfterAll ||
         opts.timePasses || !opts.skipStages.empty();
}

/// The kernel of a cache entry, or null when the entry does not fit.
std::unique_ptr<HostKernel> fromEntry(mlir::ModuleOp module,
                                      const rt::CacheEntry &entry) {
  if (entry.payloadKind != "object" || entry.payload.empty())
    return nullptr;
  std::string error;
  auto host = mlir::tile::loadForCpu(
      module, entry.payload,
      mlir::tile::StageList(entry.stages.begin(), entry.stages.end()), error);
  if (mlir::failed(host))
    return nullptr;
  if ((*host)->getName() != entry.kernelName ||
      (*host)->getSignature() != entry.signature)
    return nullptr;
  return std::move(*host);
}

} // namespace

std::unique_ptr<Kernel>
tile_py::compileCpuKernel(mlir::ModuleOp module,
                          const mlir::tile::CompileOptions &opts) {
  bool cached = !mustCompile(opts);
  rt::CacheKeyInputs key;
  std::optional<rt::DiskCache> cache;
  if (cached) {
    key = cacheKey(module, opts);
    cache.emplace(rt::DiskCache::fromEnvironment());
    if (auto entry = cache->get(key)) {
      if (auto host = fromEntry(module, *entry))
        return std::make_unique<CpuKernel>(std::move(host));
      cache->reject(key); // sound on disk, yet unusable: replace it
    }
  }

  mlir::tile::CompileFailure failure;
  auto host = mlir::tile::compileForCpu(module, opts, failure);
  if (mlir::failed(host))
    throw CompileError{failure.stage, failure.message, failure.reproducer};
  if (cached && (*host)->isLaunchable() && !(*host)->getObject().empty()) {
    rt::CacheEntry entry;
    entry.kernelName = (*host)->getName();
    entry.signature = (*host)->getSignature();
    entry.payloadKind = "object";
    entry.payload = (*host)->getObject();
    entry.stages.assign((*host)->getStages().begin(),
                        (*host)->getStages().end());
    cache->put(key, entry); // best effort: a read-only cache only costs time
  }
  return std::make_unique<CpuKernel>(std::move(*host));
}
