//===- TileModule.cpp - the tile._tile Python module ----------------------===//
//
// compile(ir, target, options) -> Kernel, the error types, and device
// queries; docs/internals.md section 2 is the contract.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"
#include "Timing.h"

#include "compiler/Driver.h"
#include "compiler/InputLimits.h"
#include "compiler/Registration.h"
#include "runtime/BuildInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

using namespace tile_py;

tile::runtime::CacheKeyInputs tile_py::moduleKeyInputs(mlir::ModuleOp module) {
  tile::runtime::CacheKeyInputs in;
  llvm::raw_string_ostream os(in.ir);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  in.buildId = tile::runtime::buildIdentity();
  return in;
}

py::dict Kernel::asmDict() const {
  py::dict d;
  for (const auto &[stage, text] : stages)
    d[py::str(stage)] = py::str(text);
  for (const auto &[stage, bytes] : binaries)
    d[py::str(stage)] = py::bytes(bytes);
  return d;
}

namespace {

const mlir::DialectRegistry &getRegistry() {
  static const mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::tile::registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

mlir::tile::CompileOptions parseOptions(const std::string &target,
                                        const py::dict &options) {
  mlir::tile::CompileOptions opts;
  opts.target = target;
  if (options.contains("num_warps"))
    opts.numWarps = options["num_warps"].cast<int>();
  if (options.contains("opt_level"))
    opts.optLevel = options["opt_level"].cast<int>();
  if (options.contains("dump_dir") && !options["dump_dir"].is_none())
    opts.dumpDir = options["dump_dir"].cast<std::string>();
  // Code generation switches (the frontend reads TILE_* into these once).
  if (options.contains("num_stages")) {
    opts.numStages = options["num_stages"].cast<int>();
    if (opts.numStages < 0 || opts.numStages > 16)
      throw py::value_error("num_stages must be 0 (chosen) to 16, not " +
                            std::to_string(opts.numStages));
  }
  if (options.contains("mma_pipeline")) {
    auto name = options["mma_pipeline"].cast<std::string>();
    std::optional<mlir::tile::MmaPipelining> mode =
        mlir::tile::parseMmaPipelining(name);
    if (!mode)
      throw py::value_error(
          "mma_pipeline must be off, regs, async or tma, not '" + name + "'");
    opts.mmaPipelining = *mode;
  }
  if (options.contains("warpgroup_mma"))
    opts.warpgroupMma = options["warpgroup_mma"].cast<bool>();
  if (options.contains("stage_stores"))
    opts.stageStores = options["stage_stores"].cast<bool>();
  if (options.contains("tma_stores"))
    opts.tmaStores = options["tma_stores"].cast<bool>();
  if (options.contains("prefetch_tmaps"))
    opts.prefetchTensorMaps = options["prefetch_tmaps"].cast<bool>();
  if (options.contains("warp_specialize")) {
    auto name = options["warp_specialize"].cast<std::string>();
    std::optional<mlir::tile::WarpSpecialization> mode =
        mlir::tile::parseWarpSpecialization(name);
    if (!mode)
      throw py::value_error(
          "warp_specialize must be off, attention or all, not '" + name + "'");
    opts.warpSpecialize = *mode;
  }
  if (options.contains("ws_registers")) {
    auto split = options["ws_registers"].cast<std::pair<int, int>>();
    opts.producerRegisters = split.first;
    opts.consumerRegisters = split.second;
  }
  if (options.contains("ping_pong"))
    opts.pingPong = options["ping_pong"].cast<bool>();
  if (options.contains("mma_overlap"))
    opts.overlapMmaChain = options["mma_overlap"].cast<bool>();
  if (options.contains("late_ops_first"))
    opts.lateOpsFirst = options["late_ops_first"].cast<bool>();
  if (options.contains("tied_fence"))
    opts.tiedWgmmaFence = options["tied_fence"].cast<bool>();
  if (options.contains("split_masks"))
    opts.splitUniformMasks = options["split_masks"].cast<bool>();
  if (options.contains("bulk_reduce"))
    opts.bulkReduce = options["bulk_reduce"].cast<bool>();
  if (options.contains("defer_mma_waits"))
    opts.deferMmaWaits = options["defer_mma_waits"].cast<bool>();
  if (options.contains("move_deferred_mmas"))
    opts.moveDeferredMmas = options["move_deferred_mmas"].cast<bool>();
  if (options.contains("delay_staged_mma"))
    opts.delayStagedMma = options["delay_staged_mma"].cast<bool>();
  if (options.contains("staged_mma"))
    opts.stagedOperands = options["staged_mma"].cast<bool>();
  if (options.contains("nvptx_register_scheduling"))
    opts.nvptxRegisterScheduling =
        options["nvptx_register_scheduling"].cast<bool>();
  // Debugging options (tilec): mlir-opt's flags, and where to resume.
  auto flag = [&](const char *key) {
    return options.contains(key) && options[key].cast<bool>();
  };
  opts.printIRAfterAll = flag("print_ir_after_all");
  opts.timePasses = flag("time_passes");
  opts.printDebugInfo = flag("print_debuginfo");
  if (options.contains("skip_stages"))
    opts.skipStages = options["skip_stages"].cast<std::vector<std::string>>();
  return opts;
}

std::unique_ptr<Kernel> compile(const std::string &ir,
                                const std::string &target,
                                const py::dict &options) {
  mlir::tile::CompileOptions opts = parseOptions(target, options);
  py::gil_scoped_release release;
  if (target != "cpu" && target.rfind("sm_", 0) != 0)
    throw CompileError{"target",
                       "error: unknown target '" + target +
                           "' (expected cpu, sm_80 or sm_90)\n",
                       ""};
  // One context per compile: compiles may run concurrently, and nothing in
  // the compiled kernel refers back to the IR.
  mlir::MLIRContext ctx(getRegistry(),
                        mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // Deep nesting or huge literals would overflow the parser's stack or
  // take minutes: a diagnostic instead (compiler/InputLimits.h).
  if (std::optional<mlir::tile::InputLimitViolation> violation =
          mlir::tile::findInputLimitViolation(ir))
    throw CompileError{
        "parse",
        mlir::tile::formatInputLimitViolation(ir, "<tile ir>", *violation), ""};
  {
    mlir::tile::DiagnosticCollector diagnostics(&ctx);
    module = mlir::parseSourceString<mlir::ModuleOp>(
        ir, mlir::ParserConfig(&ctx), "<tile ir>");
    if (!module) {
      std::string repro =
          mlir::tile::writeReproducer("kernel", "parse", "", ir, opts);
      throw CompileError{"parse", diagnostics.take(), repro};
    }
  }
  if (target == "cpu")
    return compileCpuKernel(*module, opts);
  return compileCudaKernel(*module, opts);
}

/// The exception types, defined in Python so that they carry attributes.
const char *kErrorsSource = R"py(
class CompileError(RuntimeError):
    """Compilation failed: .stage is the failing stage, .reproducer the path
    of a .mlir that reproduces it, str() the diagnostics."""
    def __init__(self, message="", stage="", reproducer=""):
        super().__init__(message)
        self.stage = stage
        self.reproducer = reproducer

class LaunchError(RuntimeError):
    """A kernel could not be launched (bad arguments, driver errors)."""
)py";

// The Python exception types, owned by the module's attributes.
PyObject *compileErrorType = nullptr;
PyObject *launchErrorType = nullptr;

void translateErrors(std::exception_ptr p) {
  try {
    if (p)
      std::rethrow_exception(p);
  } catch (const CompileError &e) {
    py::object error = py::reinterpret_borrow<py::object>(compileErrorType)(
        e.message, e.stage, e.reproducer);
    PyErr_SetObject(compileErrorType, error.ptr());
  } catch (const LaunchError &e) {
    PyErr_SetString(launchErrorType, e.message.c_str());
  }
}

/// `Kernel.fast_launch(grid, args, stream)`: the per-call path without
/// pybind11's overload dispatch and argument casters (which cost more than
/// the driver's own launch). `self` is (kernel object, capsule of Kernel*):
/// the tuple keeps the kernel alive, the capsule reaches it in one load.
PyObject *fastLaunch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  auto *kernel = static_cast<Kernel *>(
      PyCapsule_GetPointer(PyTuple_GET_ITEM(self, 1), nullptr));
  if (nargs != 3 || !PyTuple_Check(args[0]) ||
      PyTuple_GET_SIZE(args[0]) != 3 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError,
                    "fast_launch(grid: (x, y, z), args: tuple, stream: int)");
    return nullptr;
  }
  if (!fastLaunchValues(*kernel, args[0], &PyTuple_GET_ITEM(args[1], 0),
                        size_t(PyTuple_GET_SIZE(args[1])), args[2]))
    return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef fastLaunchDef = {
    "fast_launch",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fastLaunch)),
    METH_FASTCALL, "launch(grid, args, stream) without argument conversion"};

} // namespace

void Kernel::launchValues(const std::array<int64_t, 3> &grid,
                          PyObject *const *args, size_t n, uintptr_t stream) {
  py::tuple values(n);
  for (size_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(values.ptr(), Py_ssize_t(i), args[i]);
  }
  launch(grid, values, stream);
}

Kernel *tile_py::fastLaunchKernel(PyObject *callable) {
  if (!PyCFunction_Check(callable) ||
      PyCFunction_GET_FUNCTION(callable) != fastLaunchDef.ml_meth)
    return nullptr;
  return static_cast<Kernel *>(PyCapsule_GetPointer(
      PyTuple_GET_ITEM(PyCFunction_GET_SELF(callable), 1), nullptr));
}

bool tile_py::fastLaunchValues(Kernel &kernel, PyObject *grid3,
                               PyObject *const *args, size_t n,
                               PyObject *stream) {
  std::array<int64_t, 3> grid;
  for (int d = 0; d < 3; ++d) {
    grid[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(grid3, d));
    if (grid[d] == -1 && PyErr_Occurred())
      return false;
  }
  uintptr_t s = PyLong_AsUnsignedLongLongMask(stream);
  if (s == uintptr_t(-1) && PyErr_Occurred())
    return false;
  try {
    kernel.launchValues(grid, args, n, s);
  } catch (const LaunchError &e) {
    PyErr_SetString(launchErrorType, e.message.c_str());
    return false;
  } catch (py::error_already_set &e) {
    e.restore();
    return false;
  } catch (const std::exception &e) {
    PyErr_SetString(launchErrorType, e.what());
    return false;
  }
  return true;
}

PYBIND11_MODULE(_tile, m) {
  m.doc() = "tile's compiler and runtime: compile tile IR, launch kernels";

  py::dict scope;
  scope["__name__"] = "tile._tile";
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kErrorsSource, scope);
  py::object compileError = scope["CompileError"];
  py::object launchError = scope["LaunchError"];
  m.attr("CompileError") = compileError;
  m.attr("LaunchError") = launchError;

  compileErrorType = compileError.ptr();
  launchErrorType = launchError.ptr();
  py::register_exception_translator(&translateErrors);

  py::class_<Kernel>(m, "Kernel")
      .def_readonly("name", &Kernel::name)
      .def_readonly("target", &Kernel::target)
      .def_readonly("num_warps", &Kernel::numWarps)
      .def_readonly("shared_mem", &Kernel::sharedMem)
      .def_readonly("cluster_size", &Kernel::clusterSize)
      .def_readonly("tensor_maps", &Kernel::tensorMaps)
      .def_property_readonly("asm", &Kernel::asmDict)
      .def(
          "launch",
          [](Kernel &k, const std::array<int64_t, 3> &grid,
             const py::tuple &args, uintptr_t stream) {
            k.launch(grid, args, stream);
          },
          py::arg("grid"), py::arg("args"), py::arg("stream") = 0)
      .def(
          "launch_dependent",
          [](Kernel &k, const std::array<int64_t, 3> &grid,
             const py::tuple &args, uintptr_t stream) {
            k.launchDependent(grid, args, stream);
          },
          py::arg("grid"), py::arg("args"), py::arg("stream") = 0,
          "launch() as a programmatic dependent launch (CUDA: "
          "cuLaunchKernelEx with programmatic stream serialization)")
      .def_property_readonly(
          "fast_launch",
          [](py::object self) {
            py::capsule ptr(static_cast<const void *>(self.cast<Kernel *>()),
                            static_cast<const char *>(nullptr));
            py::tuple state = py::make_tuple(self, ptr);
            return py::reinterpret_steal<py::object>(
                PyCFunction_NewEx(&fastLaunchDef, state.ptr(), nullptr));
          },
          "launch(grid3, args, stream) with no keyword or default handling: "
          "the hot path the frontend binds once per kernel")
      .def("__repr__", [](const Kernel &k) {
        return "<_tile.Kernel " + k.name + " for " + k.target + ">";
      });

  if (!addDispatcher(m.ptr()) || !addGlobalWatch(m.ptr()))
    throw py::error_already_set();

  m.def("compile", &compile, py::arg("ir"), py::arg("target") = "cpu",
        py::arg("options") = py::dict(),
        "Compiles the tile IR text of one kernel for `target` ('cpu', "
        "'sm_80', 'sm_90'); raises CompileError.");
  m.def("cuda_device_count", &cudaDeviceCount,
        "Number of CUDA devices (0 without a driver).");
  m.def("cuda_device_capability", &cudaDeviceCapability, py::arg("device") = 0,
        "(major, minor) compute capability of a CUDA device.");
  registerTiming(m);
}
