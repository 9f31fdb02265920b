//===- CudaKernel.cpp - _tile.Kernel for CUDA targets ---------------------===//
//
// compileCudaKernel first looks the kernel up in the on-disk cache (key: the
// module's text with locations, the compiler's build identity, the target,
// the codegen options and ptxas's version); on a hit it compiles nothing. On
// a miss it runs compileForGpu and stores the cubin. The kernel loads its
// cubin into a context on its first launch there, through the runtime's
// dlopen'ed driver.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include "compiler/Driver.h"
#include "dialects/tile/TileDialect.h"
#include "dialects/tilegpu/TileGpuDialect.h"
#include "runtime/ArgPack.h"
#include "runtime/BuildInfo.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaModule.h"
#include "runtime/DiskCache.h"
#include "runtime/TensorMap.h"

#ifdef TILE_HAVE_GPU
#include "compiler/gpu/GpuTarget.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace tile_py;
namespace rt = tile::runtime;

namespace {

/// The tensor maps of every kernel, by their encoding (a launch encodes
/// each of its maps once per array, box and swizzle).
rt::TensorMapCache &tensorMapCache() {
  static rt::TensorMapCache *cache = new rt::TensorMapCache(256);
  return *cache;
}

class CudaKernel : public Kernel {
public:
  CudaKernel(std::string kernelName, std::string targetName, int warps,
             int shared, rt::Signature signature, std::string cubin,
             std::vector<rt::TensorMapParam> maps = {})
      : plan(std::move(signature)), maps(std::move(maps)),
        module(rt::CudaDriver::get(), cubin, kernelName, unsigned(shared)) {
    name = std::move(kernelName);
    target = std::move(targetName);
    numWarps = warps;
    sharedMem = shared;
    binaries.emplace_back("cubin", std::move(cubin));
    for (const rt::TensorMapParam &m : this->maps)
      tensorMaps.push_back(m.str());
  }

  void launch(const std::array<int64_t, 3> &grid, const py::tuple &args,
              uintptr_t stream) override {
    launchValues(grid, &PyTuple_GET_ITEM(args.ptr(), 0), size_t(args.size()),
                 stream);
  }

  void launchValues(const std::array<int64_t, 3> &grid, PyObject *const *args,
                    size_t n, uintptr_t stream) override {
    launchWith(grid, args, n, stream, /*dependent=*/false);
  }

  void launchDependent(const std::array<int64_t, 3> &grid,
                       const py::tuple &args, uintptr_t stream) override {
    launchWith(grid, &PyTuple_GET_ITEM(args.ptr(), 0), size_t(args.size()),
               stream, /*dependent=*/true);
  }

private:
  void launchWith(const std::array<int64_t, 3> &grid, PyObject *const *args,
                  size_t n, uintptr_t stream, bool dependent) {
    if (n != plan.size())
      throw LaunchError{"kernel '" + name + "' takes " +
                        std::to_string(plan.size()) +
                        " flat argument values, got " + std::to_string(n)};
    std::string gridWrong = gridError(grid);
    if (!gridWrong.empty())
      throw LaunchError{"kernel '" + name + "': " + gridWrong};
    rt::LaunchConfig config;
    for (int d = 0; d < 3; ++d)
      config.grid[d] = unsigned(grid[d]);
    config.block = {unsigned(32 * numWarps), 1, 1};
    config.sharedMem = unsigned(sharedMem);
    config.programmaticDependentLaunch = dependent;
    // Clusters where the grid divides; the kernel runs alone otherwise.
    if (clusterSize > 1 && grid[0] % clusterSize == 0)
      config.clusterDimX = unsigned(clusterSize);

    rt::PackedArgs packed(plan, maps.size());
    try {
      for (size_t i = 0; i < n; ++i)
        pack(packed, i, args[i]);
    } catch (const rt::ArgError &e) {
      throw LaunchError{"kernel '" + name + "': " + e.what()};
    }
    checkDisjoint(packed);
    // Tensor maps (TMA), after the other parameters: 64-byte-aligned
    // 128-byte values the driver copies at the launch.
    rt::TensorMapBytes inlineMaps[kInlineMaps];
    std::vector<rt::TensorMapBytes> heapMaps;
    rt::TensorMapBytes *mapBytes = inlineMaps;
    if (maps.size() > kInlineMaps) {
      heapMaps.resize(maps.size());
      mapBytes = heapMaps.data();
    }
    for (size_t j = 0; j < maps.size(); ++j) {
      encodeTensorMap(packed, maps[j], mapBytes[j]);
      packed.setExtra(j, &mapBytes[j]);
    }
    auto cuStream = reinterpret_cast<rt::cu::CUstream>(stream);
    try {
      // A loaded kernel's launch only queues work: it keeps the GIL, as
      // torch's launches do (dropping and retaking it cost more than the
      // rest of the launch, and hand it to any thread waiting for it).
      // Loading a module takes milliseconds: that goes without the GIL.
      if (!module.launchIfLoaded(config, cuStream, packed.params())) {
        py::gil_scoped_release release;
        module.launch(config, cuStream, packed.params());
      }
    } catch (const rt::CudaError &e) {
      throw LaunchError{e.what()};
    }
  }

  void pack(rt::PackedArgs &packed, size_t i, PyObject *value) {
    // Exact ints first: pointers, extents and strides are most values, and
    // PyFloat_Check on an int walks the type's bases.
    if (PyLong_CheckExact(value)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
      if (!overflow) {
        packed.setInt(i, v);
        return;
      }
    } else if (PyFloat_Check(value)) {
      packed.setFloat(i, PyFloat_AS_DOUBLE(value));
      return;
    }
    // ints, bools, and anything with __index__ (NumPy integers)
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value));
    if (!index) {
      PyErr_Clear();
      // NumPy floats and other objects with __float__.
      double d = PyFloat_AsDouble(value);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw rt::ArgError(plan.describe(i) + ": expected an int or a float, "
                           "got " + std::string(Py_TYPE(value)->tp_name));
      }
      packed.setFloat(i, d);
      return;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (!overflow) {
      packed.setInt(i, v);
      return;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw rt::ArgError(plan.describe(i) + ": " +
                         py::str(index).cast<std::string>() +
                         " does not fit in 64 bits");
    }
    packed.setUInt(i, u);
  }

  /// The map `param` describes for this launch's array (its data pointer,
  /// extents and strides as packed), from the cache or the driver.
  void encodeTensorMap(const rt::PackedArgs &packed,
                       const rt::TensorMapParam &param,
                       rt::TensorMapBytes &out) {
    size_t first = plan.firstSlot(param.array);
    size_t rank = param.box.size();
    int64_t extents[5], strides[5];
    for (size_t d = 0; d < rank; ++d) {
      extents[d] = int64_t(packed.cellBits(first + 1 + d));
      strides[d] = int64_t(packed.cellBits(first + 1 + rank + d));
    }
    std::string why;
    std::optional<rt::TensorMapEncoding> encoding = rt::tensorMapEncoding(
        param, packed.cellBits(first), extents, strides, &why);
    if (!encoding)
      throw LaunchError{"kernel '" + name + "' reads array parameter " +
                        std::to_string(param.array) +
                        " through TMA, which cannot describe it: " + why};
    rt::CudaDriver &driver = rt::CudaDriver::get();
    int result;
    try {
      result = tensorMapCache().get(
          *encoding,
          [&](rt::TensorMapBytes &map, const rt::TensorMapEncoding &e) {
            return driver.encodeTensorMap(map, e);
          },
          out);
    } catch (const rt::CudaError &e) {
      throw LaunchError{e.what()};
    }
    if (result == -1)
      throw LaunchError{"kernel '" + name +
                        "' needs cuTensorMapEncodeTiled, which the CUDA "
                        "driver lacks (driver too old?)"};
    if (result)
      throw LaunchError{"kernel '" + name +
                        "': cuTensorMapEncodeTiled for "
                        "array parameter " +
                        std::to_string(param.array) + " (" + param.str() +
                        ") failed: " + driver.describe(result)};
  }

  /// The bytes [lo, hi) array parameter `p` spans as packed (its data
  /// pointer, extents, then element strides), empty when an extent is 0.
  std::pair<uint64_t, uint64_t> span(const rt::PackedArgs &packed, size_t p,
                                     int elemBytes) const {
    size_t first = plan.firstSlot(p);
    int rank = plan.signature()[p].rank;
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < rank; ++d) {
      int64_t extent = int64_t(packed.cellBits(first + 1 + d));
      int64_t stride = int64_t(packed.cellBits(first + 1 + rank + d));
      if (extent <= 0)
        return {0, 0};
      (stride < 0 ? lo : hi) += (extent - 1) * stride;
    }
    uint64_t base = packed.cellBits(first);
    return {base + uint64_t(lo * elemBytes),
            base + uint64_t((hi + 1) * elemBytes)};
  }

  /// The compiled kernel reads some arrays ahead of atomic updates of
  /// others (DisjointArrays): refuses a launch where such a pair shares
  /// memory, which the binary would read before the update it follows.
  void checkDisjoint(const rt::PackedArgs &packed) const {
    for (const mlir::tile::DisjointArrays &d : disjoint) {
      auto [wLo, wHi] = span(packed, size_t(d.written), d.writtenBytes);
      auto [rLo, rHi] = span(packed, size_t(d.read), d.readBytes);
      if (wLo < wHi && rLo < rHi && wLo < rHi && rLo < wHi)
        throw LaunchError{
            "kernel '" + name + "': array parameter " +
            std::to_string(d.written) + ", which it updates atomically in a "
            "loop, shares memory with array parameter " +
            std::to_string(d.read) + ", which that loop reads ahead of the "
            "updates (a TMA ring); pass arrays that do not overlap"};
    }
  }

public:
  std::vector<mlir::tile::DisjointArrays> disjoint;

private:
  static constexpr size_t kInlineMaps = 4;
  rt::ArgPlan plan;
  std::vector<rt::TensorMapParam> maps;
  rt::CudaModule module;
};

/// The cache entry attribute that lists the array pairs a kernel's
/// launches must keep apart ("written:bytes:read:bytes" per line).
constexpr const char *kDisjointAttr = "disjoint_arrays";

std::string disjointText(const std::vector<mlir::tile::DisjointArrays> &pairs) {
  std::string text;
  for (const mlir::tile::DisjointArrays &d : pairs)
    text += (text.empty() ? "" : "\n") + std::to_string(d.written) + ":" +
            std::to_string(d.writtenBytes) + ":" + std::to_string(d.read) +
            ":" + std::to_string(d.readBytes);
  return text;
}

/// disjointText's pairs, checked against the signature; nullopt when the
/// text is malformed or names a non-array parameter.
std::optional<std::vector<mlir::tile::DisjointArrays>>
parseDisjoint(std::string_view text, const rt::Signature &sig) {
  std::vector<mlir::tile::DisjointArrays> pairs;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    mlir::tile::DisjointArrays d;
    char extra;
    if (std::sscanf(line.c_str(), "%d:%d:%d:%d%c", &d.written, &d.writtenBytes,
                    &d.read, &d.readBytes, &extra) != 4)
      return std::nullopt;
    for (auto [arg, bytes] :
         {std::pair(d.written, d.writtenBytes), std::pair(d.read, d.readBytes)})
      if (arg < 0 || size_t(arg) >= sig.size() ||
          sig[size_t(arg)].kind != rt::Param::Array || bytes < 1 || bytes > 8)
        return std::nullopt;
    pairs.push_back(d);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return pairs;
}

/// The tensor maps of a compiled kernel as the runtime encodes them; a
/// CompileError when one does not fit the signature (a compiler bug).
std::vector<rt::TensorMapParam>
tensorMapParams(const std::vector<mlir::tile::TensorMapArg> &args,
                const rt::Signature &sig) {
  std::vector<rt::TensorMapParam> params;
  for (const mlir::tile::TensorMapArg &a : args) {
    rt::TensorMapParam p;
    std::optional<rt::TmaDataType> type =
        rt::TensorMapParam::parseDataType(a.elementType);
    bool ok = type && a.array >= 0 && size_t(a.array) < sig.size() &&
              sig[size_t(a.array)].kind == rt::Param::Array &&
              size_t(sig[size_t(a.array)].rank) == a.box.size();
    if (!ok)
      throw CompileError{"signature",
                         "error: a tensor-map parameter does not describe "
                         "an array parameter of the kernel\n",
                         ""};
    p.array = uint32_t(a.array);
    for (int64_t d : a.box)
      p.box.push_back(uint32_t(d));
    p.dataType = *type;
    p.swizzle = uint32_t(a.swizzle);
    params.push_back(std::move(p));
  }
  return params;
}

/// The cache entry attribute that lists a kernel's tensor maps, one
/// TensorMapParam::str() per line.
constexpr const char *kTensorMapsAttr = "tensor_maps";
constexpr const char *kClusterSizeAttr = "cluster_size";

/// The parameter list of the module's kernel, as internals.md section 3
/// lays it out.
rt::Signature kernelSignature(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    if (!func->hasAttr("tile.kernel"))
      continue;
    rt::Signature sig;
    for (mlir::Type type : func.getArgumentTypes()) {
      // IR that tilec resumes past tile-pipeline-mma carries the tensor
      // maps as parameters after the user's; the binary lists them.
      if (llvm::isa<mlir::tilegpu::TensorMapType>(type))
        continue;
      if (auto array = llvm::dyn_cast<mlir::tile::ArrayType>(type))
        sig.push_back({rt::Param::Array, int(array.getRank())});
      else if (type.isInteger(32))
        sig.push_back({rt::Param::I32});
      else if (type.isInteger(64))
        sig.push_back({rt::Param::I64});
      else if (type.isF32())
        sig.push_back({rt::Param::F32});
      else if (type.isF64())
        sig.push_back({rt::Param::F64});
      else {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "error: kernel '" << func.getSymName()
           << "' has a parameter of type " << type
           << ", which the CUDA kernel ABI cannot pass\n";
        throw CompileError{"signature", text, ""};
      }
    }
    return sig;
  }
  throw CompileError{"signature", "error: no func.func marked tile.kernel\n",
                     ""};
}

/// The version banner of the ptxas that compiles for us: a new ptxas may
/// emit different code for the same PTX. Run once per ptxas per process.
std::string ptxasVersion() {
#ifdef TILE_HAVE_GPU
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::string path = mlir::tile::findPtxas();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(path);
  if (it != versions.end())
    return it->second;
  std::string out;
  std::string quoted = "'";
  for (char c : path)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  if (FILE *pipe = ::popen((quoted + " --version 2>&1").c_str(), "r")) {
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0)
      out.append(buf, n);
    if (::pclose(pipe) != 0)
      out = "unusable: " + out;
  }
  return versions[path] = path + "\n" + out;
#else
  return "";
#endif
}

rt::CacheKeyInputs cacheKey(mlir::ModuleOp module,
                            const mlir::tile::CompileOptions &opts) {
  rt::CacheKeyInputs in = moduleKeyInputs(module);
  in.target = opts.target;
  in.options = mlir::tile::codegenOptionsText(opts);
  in.toolVersion = ptxasVersion();
  return in;
}

bool dumping(const mlir::tile::CompileOptions &opts) {
  return !opts.dumpDir.empty();
}

std::vector<std::string> signatureText(const rt::Signature &sig) {
  std::vector<std::string> text;
  for (const rt::Param &p : sig)
    text.push_back(p.str());
  return text;
}

/// The kernel of a cache entry, or null when the entry does not fit.
std::unique_ptr<Kernel> fromEntry(const rt::CacheEntry &entry,
                                  const std::string &target,
                                  rt::Signature sig) {
  if (entry.payloadKind != "cubin" || entry.signature != signatureText(sig))
    return nullptr;
  std::vector<rt::TensorMapParam> maps;
  auto attr = entry.attrs.find(kTensorMapsAttr);
  if (attr != entry.attrs.end()) {
    std::string_view text = attr->second;
    while (!text.empty()) {
      size_t end = text.find('\n');
      auto map = rt::TensorMapParam::parse(text.substr(0, end));
      if (!map || map->array >= sig.size() ||
          sig[map->array].kind != rt::Param::Array ||
          size_t(sig[map->array].rank) != map->box.size())
        return nullptr; // recompiled
      maps.push_back(std::move(*map));
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
  }
  std::vector<mlir::tile::DisjointArrays> disjoint;
  if (auto d = entry.attrs.find(kDisjointAttr); d != entry.attrs.end()) {
    auto pairs = parseDisjoint(d->second, sig);
    if (!pairs)
      return nullptr; // recompiled
    disjoint = std::move(*pairs);
  }
  int clusterSize = 1;
  if (auto c = entry.attrs.find(kClusterSizeAttr); c != entry.attrs.end())
    if (llvm::StringRef(c->second).getAsInteger(10, clusterSize) ||
        clusterSize < 2 || clusterSize > 8)
      return nullptr; // recompiled
  auto kernel = std::make_unique<CudaKernel>(
      entry.kernelName, target, entry.numWarps, entry.sharedMem, std::move(sig),
      entry.payload, std::move(maps));
  kernel->clusterSize = clusterSize;
  kernel->disjoint = std::move(disjoint);
  kernel->stages = entry.stages;
  return kernel;
}

/// A kernel compiled by tilec from IR past the 'gpu' stage: its tile-level
/// signature is gone, so it has stages to inspect but cannot be launched.
class InspectOnlyKernel : public Kernel {
public:
  void launch(const std::array<int64_t, 3> &, const py::tuple &,
              uintptr_t) override {
    throw LaunchError{"kernel '" + name +
                      "' was compiled from IR after the 'gpu' stage (tilec "
                      "resuming) and has no signature to launch with"};
  }
};

bool hasTileKernel(mlir::ModuleOp module) {
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (func->hasAttr("tile.kernel"))
      return true;
  return false;
}

} // namespace

std::unique_ptr<Kernel>
tile_py::compileCudaKernel(mlir::ModuleOp module,
                           const mlir::tile::CompileOptions &opts) {
#ifdef TILE_HAVE_GPU
  if (!opts.skipStages.empty() && !hasTileKernel(module)) {
    mlir::tile::CompileFailure failure;
    auto binary = mlir::tile::compileForGpu(module, opts, failure);
    if (mlir::failed(binary))
      throw CompileError{failure.stage, failure.message, failure.reproducer};
    auto kernel = std::make_unique<InspectOnlyKernel>();
    kernel->name = binary->kernelName;
    kernel->target = opts.target;
    kernel->numWarps = binary->numWarps;
    kernel->sharedMem = binary->sharedMem;
    kernel->clusterSize = binary->clusterSize;
    kernel->stages = std::move(binary->stages);
    kernel->binaries.emplace_back("cubin", std::move(binary->cubin));
    return kernel;
  }
  rt::Signature sig = kernelSignature(module);
  rt::CacheKeyInputs key = cacheKey(module, opts);
  rt::DiskCache cache = rt::DiskCache::fromEnvironment();
  // A dump directory asks for every stage to be written: compile for real.
  if (!dumping(opts))
    if (auto entry = cache.get(key))
      if (auto kernel = fromEntry(*entry, opts.target, sig))
        return kernel;

  mlir::tile::CompileFailure failure;
  auto binary = mlir::tile::compileForGpu(module, opts, failure);
  if (mlir::failed(binary))
    throw CompileError{failure.stage, failure.message, failure.reproducer};

  std::vector<rt::TensorMapParam> maps =
      tensorMapParams(binary->tensorMaps, sig);
  rt::CacheEntry entry;
  entry.kernelName = binary->kernelName;
  entry.numWarps = binary->numWarps;
  entry.sharedMem = binary->sharedMem;
  entry.signature = signatureText(sig);
  entry.payloadKind = "cubin";
  entry.payload = binary->cubin;
  if (!maps.empty()) {
    std::string text;
    for (const rt::TensorMapParam &m : maps)
      text += (text.empty() ? "" : "\n") + m.str();
    entry.attrs[kTensorMapsAttr] = text;
  }
  if (!binary->disjoint.empty())
    entry.attrs[kDisjointAttr] = disjointText(binary->disjoint);
  if (binary->clusterSize > 1)
    entry.attrs[kClusterSizeAttr] = std::to_string(binary->clusterSize);
  entry.stages.assign(binary->stages.begin(), binary->stages.end());
  bool hasPtx = false;
  for (const auto &stage : entry.stages)
    hasPtx |= stage.first == "ptx";
  if (!hasPtx)
    entry.stages.emplace_back("ptx", binary->ptx);
  cache.put(key, entry); // best effort: a read-only cache only costs time

  auto kernel = std::make_unique<CudaKernel>(
      binary->kernelName, opts.target, binary->numWarps, binary->sharedMem,
      std::move(sig), std::move(binary->cubin), std::move(maps));
  kernel->clusterSize = binary->clusterSize;
  kernel->disjoint = std::move(binary->disjoint);
  kernel->stages = std::move(entry.stages);
  return kernel;
#else
  (void)module;
  throw CompileError{"target",
                     "error: target " + opts.target +
                         " not available: this _tile was built without the "
                         "GPU backend\n",
                     ""};
#endif
}

int tile_py::cudaDeviceCount() { return rt::CudaDriver::get().deviceCount(); }

std::pair<int, int> tile_py::cudaDeviceCapability(int device) {
  try {
    std::string arch = rt::CudaDriver::get().archOf(device); // "sm_90"
    int cc = std::stoi(arch.substr(3));
    return {cc / 10, cc % 10};
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
}
