//===- ConvertTileToGpu.cpp - thread-mapped tile IR to per-thread code ----===//
//
// Moves each kernel into a gpu.func with the ABI of docs/internals.md
// section 3, then converts tile ops and tensors with the patterns of the
// TileToGpu*.cpp files (one per op family).
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/GpuPipeline.h"
#include "compiler/gpu/GpuTarget.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tile/TileGpuAsmOps.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Kernel argument types: per array a global pointer, its i64 extents and
/// i64 strides; per tensor map the generic address of its grid-constant
/// parameter (translateToPtx makes it one); scalars as they are.
SmallVector<Type> expandArgTypes(MLIRContext *ctx, TypeRange types) {
  SmallVector<Type> out;
  Type i64 = IntegerType::get(ctx, 64);
  for (Type t : types) {
    if (auto array = dyn_cast<ArrayType>(t)) {
      out.push_back(LLVM::LLVMPointerType::get(ctx, 1));
      out.append(2 * array.getRank(), i64);
      continue;
    }
    if (isa<tilegpu::TensorMapType>(t)) {
      out.push_back(LLVM::LLVMPointerType::get(ctx));
      continue;
    }
    out.push_back(t);
  }
  return out;
}

/// The setmaxnreg plan tile-warp-specialize left in `func`: the
/// producers' and consumers' register counts and warpgroups.
struct WarpgroupRegisterPlan {
  int32_t producer = 0, consumer = 0, producers = 1, groups = 0;
  SmallVector<NVVM::SetMaxRegisterOp> increases;

  WarpgroupRegisterPlan(func::FuncOp func, int32_t threads)
      : groups(threads / 128) {
    func.walk([&](NVVM::SetMaxRegisterOp op) {
      if (op.getAction() == NVVM::SetMaxRegisterAction::decrease) {
        producer = std::max<int32_t>(producer, op.getRegCount());
      } else {
        consumer = std::max<int32_t>(consumer, op.getRegCount());
        increases.push_back(op);
      }
    });
    func.walk([&](scf::IfOp split) {
      if (auto ws = split->getAttrOfType<tilegpu::WarpSpecializedAttr>(
              tilegpu::WarpSpecializedAttr::getAttrName()))
        producers = ws.getProducers() / 4;
    });
  }
  int32_t consumers() const { return groups - producers; }
  bool valid() const { return producer && consumer && consumers() > 0; }
  /// Registers a thread of the block holds on average (multiple of 8).
  int32_t perThread() const {
    int32_t avg =
        (producer * producers + consumer * consumers() + groups - 1) / groups;
    return (avg + 7) / 8 * 8;
  }
};

/// The registers a thread may hold with `blocks` blocks of `threads` an SM
/// (allocated per warp in multiples of 8, 255 at most).
static int32_t registerCap(int32_t threads, int32_t blocks) {
  return std::min(248, 65536 / (threads * blocks) / 8 * 8);
}

/// The consumers' registers a thread when `blocks` blocks share an SM:
/// the plan's, or what the cap leaves them (planWarpgroupRegisters).
static int32_t cappedConsumer(const WarpgroupRegisterPlan &plan,
                              int32_t threads, int32_t blocks) {
  int32_t cap = registerCap(threads, blocks);
  if (plan.perThread() <= cap)
    return plan.consumer;
  return std::min(plan.consumer,
                  (cap * plan.groups - plan.producer * plan.producers) /
                      plan.consumers() / 8 * 8);
}

/// A warp-specialized kernel launches every warp with the registers its
/// setmaxnreg plan redistributes: (producer x P + consumer x C) / (P + C)
/// per thread for P producer and C consumer warpgroups, as `.maxnreg` (ptxas
/// then allocates exactly that; assembleCubin drops it for code that needs
/// more). Left to ptxas, a small kernel got 64 or 128, the consumers'
/// setmaxnreg.inc 232 waited forever for registers no warp could free, and
/// the 64x64 persistent matmul hung on the H200. When an occupancy
/// (minctasm) caps the block's registers lower, the consumers ask for what
/// the cap leaves them.
void planWarpgroupRegisters(func::FuncOp func, gpu::GPUFuncOp gpuFunc,
                            int32_t threads) {
  WarpgroupRegisterPlan plan(func, threads);
  if (!plan.valid())
    return;
  int32_t blocks = 1;
  if (auto minBlocks = gpuFunc->getAttrOfType<IntegerAttr>("nvvm.minctasm"))
    blocks = std::max<int32_t>(1, minBlocks.getInt());
  int32_t cap = registerCap(threads, blocks);
  int32_t perThread = plan.perThread();
  if (perThread > cap) {
    perThread = cap;
    for (NVVM::SetMaxRegisterOp op : plan.increases)
      op.setRegCount(cappedConsumer(plan, threads, blocks));
  }
  gpuFunc->setAttr(
      "nvvm.maxnreg",
      IntegerAttr::get(IntegerType::get(func.getContext(), 32), perThread));
}

/// Whether `blocks` blocks of a warp-specialized `func` leave its consumers
/// room for every mma accumulator at once (split over the consumer
/// threads) plus 32 registers for fragments, addresses and indices.
/// cuTile's attention sample at head dim 64 asks for 2 blocks of 384
/// threads: 96 registers, under S's 64 and O's 32 a thread (ptxas could not
/// fit an instruction in the cap); a 64x64 persistent matmul keeps 216.
static bool occupancyFitsAccumulators(func::FuncOp func, int32_t threads,
                                      int32_t blocks) {
  WarpgroupRegisterPlan plan(func, threads);
  if (!plan.valid())
    return true;
  int64_t consumerThreads = 128 * plan.consumers(), accRegs = 0;
  func.walk([&](tilegpu::MmaOp mma) {
    accRegs += cast<RankedTensorType>(mma.getType()).getNumElements() /
               consumerThreads;
  });
  return cappedConsumer(plan, threads, blocks) >= accRegs + 32;
}

/// Whether `blocks` blocks of `func` fit an SM's shared memory as far as
/// its reserved bytes (rings, staging: kSharedBytesAttr) tell: sm_90's
/// 228 KB an SM, 1 KB of it reserved per block. (sm_80 has 164 KB: there a
/// hint this passes may still not be met, and caps registers as before.)
bool occupancyFitsShared(func::FuncOp func, int64_t blocks) {
  constexpr int64_t kSharedPerSm = 228 * 1024, kReservedPerBlock = 1024;
  auto reserved = func->getAttrOfType<IntegerAttr>(kSharedBytesAttr);
  int64_t bytes = reserved ? reserved.getInt() : 0;
  return blocks * (bytes + kReservedPerBlock) <= kSharedPerSm;
}

/// Moves `func` into a gpu.func in `gpuModule`; arrays are rebuilt from
/// their parts by an unrealized cast that the memory patterns look through.
/// With `prefetchTensorMaps`, thread 0 prefetches the tensor maps first.
LogicalResult moveToGpuFunc(func::FuncOp func, gpu::GPUModuleOp gpuModule,
                            int numWarps, bool prefetchTensorMaps) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  SmallVector<Type> argTypes =
      expandArgTypes(ctx, func.getFunctionType().getInputs());
  auto gpuFunc = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                        b.getFunctionType(argTypes, {}));
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  gpuFunc.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(blockWarps(func, numWarps)) * 32, 1, 1}));
  // Two blocks per SM (registers capped at 64K / 2 / threads) hide one
  // block's shared-memory staging and barriers behind the other's mma; worth
  // it for a single mma loop whose accumulator and (double-buffered)
  // operand tiles leave room for fragments and addresses.
  int64_t regs = 0, mmas = 0, threads = numWarps * 32;
  auto count = [&](RankedTensorType acc, RankedTensorType a,
                   RankedTensorType bTile) {
    ++mmas;
    regs += acc.getNumElements() / threads;
    for (RankedTensorType type : {a, bTile})
      regs += 2 * type.getNumElements() * storageBytes(type.getElementType()) /
              (4 * threads);
  };
  func.walk([&](Operation *op) {
    if (auto mma = dyn_cast<MmaOp>(op); mma && getMmaKind(mma) != MmaKind::Fma)
      count(cast<RankedTensorType>(mma.getType()),
            cast<RankedTensorType>(mma.getA().getType()),
            cast<RankedTensorType>(mma.getB().getType()));
    if (auto mma = dyn_cast<tilegpu::MmaOp>(op))
      count(cast<RankedTensorType>(mma.getType()), mma.getATileType(),
            mma.getBTileType());
  });
  bool warpSpecialized = false;
  func.walk([&](NVVM::SetMaxRegisterOp) { warpSpecialized = true; });
  // (A warp-specialized kernel's registers are its setmaxnreg plan's.)
  if (mmas == 1 && regs <= 96 && numWarps >= 4 && !warpSpecialized)
    gpuFunc->setAttr("nvvm.minctasm", b.getI32IntegerAttr(2));
  // The kernel's own occupancy hint (@tile.kernel(occupancy=N)) wins where
  // N blocks' shared memory fits an SM and, warp-specialized, their
  // register cap leaves the consumers room for their accumulators
  // (occupancyFitsAccumulators). Where not (cuTile's attention sample asks
  // for 2; its warp-specialized rings take 160 KB at 128x128 blocks, and at
  // head dim 64 the cap is 80 registers a thread), the cap would buy
  // nothing: it left the consumers 96 registers and 4 KB of spills, and at
  // head dim 64 ran at 0.24x SDPA on the H200.
  if (auto occupancy = func->getAttrOfType<IntegerAttr>("tile.occupancy")) {
    int32_t threads = int32_t(blockWarps(func, numWarps)) * 32;
    if (occupancyFitsShared(func, occupancy.getInt()) &&
        occupancyFitsAccumulators(func, threads, occupancy.getInt()))
      gpuFunc->setAttr("nvvm.minctasm",
                       b.getI32IntegerAttr(occupancy.getInt()));
    else
      gpuFunc->removeAttr("nvvm.minctasm");
  }
  if (warpSpecialized)
    planWarpgroupRegisters(func, gpuFunc,
                           int32_t(blockWarps(func, numWarps)) * 32);
  // Where the conversion's scratch starts (sharedBase).
  if (auto reserved = func->getAttr(kSharedBytesAttr))
    gpuFunc->setAttr(kSharedBytesAttr, reserved);
  Block &entry = gpuFunc.getBody().front();
  Block &oldEntry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned next = 0;
  SmallVector<int32_t> tensorMaps;
  for (BlockArgument arg : oldEntry.getArguments()) {
    if (isa<tilegpu::TensorMapType>(arg.getType())) {
      tensorMaps.push_back(next);
      arg.replaceAllUsesWith(
          UnrealizedConversionCastOp::create(b, arg.getLoc(), arg.getType(),
                                             entry.getArgument(next++))
              .getResult(0));
      continue;
    }
    if (auto array = dyn_cast<ArrayType>(arg.getType())) {
      unsigned n = 1 + 2 * array.getRank();
      SmallVector<Value> parts(entry.getArguments().slice(next, n));
      auto cast =
          UnrealizedConversionCastOp::create(b, arg.getLoc(), array, parts);
      arg.replaceAllUsesWith(cast.getResult(0));
      next += n;
      continue;
    }
    arg.replaceAllUsesWith(entry.getArgument(next++));
  }
  if (!tensorMaps.empty())
    gpuFunc->setAttr(kGridConstantArgsAttr, b.getDenseI32ArrayAttr(tensorMaps));
  if (!tensorMaps.empty() && prefetchTensorMaps) {
    // Thread 0 fetches the descriptors first thing (prefetch.tensormap, as
    // CUTLASS's kernels do), so the first TMA copy, issued after the
    // barriers' set-up, need not wait for them.
    Location loc = gpuFunc.getLoc();
    auto first = scf::IfOp::create(b, loc, isIssuingThread(b, loc),
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    for (int32_t arg : tensorMaps)
      NVVM::PrefetchOp::create(b, loc, /*cacheLevel=*/nullptr,
                               /*evictPriority=*/nullptr,
                               entry.getArgument(arg), /*predicate=*/Value(),
                               /*tensormap=*/true, /*uniform=*/false,
                               /*in_param_space=*/true);
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError("kernels must have a single block");
  // Splice the body after the casts, then swap the return.
  entry.getOperations().splice(entry.end(), oldEntry.getOperations());
  Operation *term = entry.getTerminator();
  if (!isa<func::ReturnOp>(term) || term->getNumOperands())
    return func.emitError("kernels return nothing");
  b.setInsertionPoint(term);
  gpu::ReturnOp::create(b, term->getLoc());
  term->erase();
  func.erase();
  return success();
}

struct ConvertTileToGpuPass
    : tile::impl::ConvertTileToGpuBase<ConvertTileToGpuPass> {
  using ConvertTileToGpuBase::ConvertTileToGpuBase;
  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertTileToGpuBase::getDependentDialects(registry);
    // The later lowering to NVVM finds its patterns through these.
    registerGpuLoweringExtensions(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto warpsAttr = module->getAttrOfType<IntegerAttr>(kNumWarpsAttr);
    if (!warpsAttr) {
      module.emitError("convert-tile-to-gpu needs tile-map-threads first");
      return signalPassFailure();
    }
    GpuLoweringState state;
    state.numWarps = warpsAttr.getInt();
    state.tiedWgmmaFence = tiedWgmmaFence;

    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        kernels.push_back(func);
    if (kernels.empty())
      return;

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "tile_kernels");
    b.setInsertionPointToStart(gpuModule.getBody());
    // The dynamic shared memory buffer, sized at launch.
    LLVM::GlobalOp::create(
        b, module.getLoc(),
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSharedSymbol,
        Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
    for (func::FuncOp func : kernels)
      if (failed(moveToGpuFunc(func, gpuModule, state.numWarps,
                               prefetchTensorMaps)))
        return signalPassFailure();

    TileGpuTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect, tilegpu::TileGpuDialect>();
    target.addLegalDialect<gpu::GPUDialect, NVVM::NVVMDialect,
                           LLVM::LLVMDialect, vector::VectorDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    // Read by sharedBase while the patterns run, removed after them.
    target.addLegalOp<tilegpu::ScratchBaseOp>();
    // The PTX the lowering writes itself, lowered by convert-gpu-to-nvvm.
    target.addLegalOp<PtxLoadGlobalOp, PtxStoreGlobalOp, PtxAtomGlobalOp,
                      PtxWgmmaWaitOp, PtxWgmmaFenceOp, PtxWgmmaRegAOp>();
    auto noTensors = [](Operation *op) {
      auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
      return llvm::none_of(op->getOperandTypes(), isTensor) &&
             llvm::none_of(op->getResultTypes(), isTensor);
    };
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect,
                                      tensor::TensorDialect>(noTensors);
    // Scalar correctly rounded quotients too (RoundedQuotientPattern).
    target.addDynamicallyLegalOp<arith::TruncFOp>([&](arith::TruncFOp op) {
      return noTensors(op) && !roundedQuotientOperands(op).first;
    });
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    populateTileToGpuElementwisePatterns(converter, patterns, state);
    populateTileToGpuMemoryPatterns(converter, patterns, state);
    populateTileToGpuReducePatterns(converter, patterns, state);
    populateTileToGpuShapePatterns(converter, patterns, state);
    populateTileToGpuMmaPatterns(converter, patterns, state);
    populateTileToGpuDebugPatterns(converter, patterns, state);
    populateTileToGpuLaunchOrderPatterns(converter, patterns, state);
    populateTileGpuToNvvmPatterns(converter, patterns, state);
    // Buffers of tile-allocate-shared, then the scratch above them.
    int64_t reserved = 0;
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>())
      if (auto bytes = func->getAttrOfType<IntegerAttr>(kSharedBytesAttr))
        reserved = std::max(reserved, bytes.getInt());
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      return signalPassFailure();
    state.sharedMem = std::max(state.sharedMem, reserved);
    // Scratch offsets are in the lowered code now.
    gpuModule.walk([](tilegpu::ScratchBaseOp marker) { marker.erase(); });

    narrowRegionBarriers(gpuModule);
    // The array and tensor-map casts are dead once every use is lowered.
    gpuModule.walk([](UnrealizedConversionCastOp cast) {
      if (cast->use_empty() && cast->getNumResults() == 1 &&
          isa<ArrayType, tilegpu::TensorMapType>(cast.getResult(0).getType()))
        cast.erase();
    });
    gpuModule->setAttr("tile.shared_mem", b.getI32IntegerAttr(state.sharedMem));
    gpuModule->setAttr(kNumWarpsAttr, b.getI32IntegerAttr(state.numWarps));
  }
};

} // namespace
