//===- TilePipelineMmaTma.cpp - TMA rings of tile-pipeline-mma ------------===//
//
// tile-pipeline-mma with mma-pipelining=tma: a matmul-shaped sm_90 loop (one
// f16/bf16 wgmma whose A and B are loads of kernel arrays marked
// `tile.tma_ok`, its accumulator only carried to the next iteration) streams
// A [m][k] and B [k][n] (fp8, tf32 and int8: B^T [n][k]) through S-slot
// rings that TMA fills.
//
// - The kernel gets one tensor-map argument per operand (last, marked
//   `tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = N>`): the box is
//   one swizzled panel of the block (rows x 128 bytes, or 64 for a 64-byte
//   swizzled A), so a block of several panels (B, 256 wide: four) is one
//   TMA copy per panel, each landing in the panel wgmma's descriptors read
//   (the 128-byte swizzle TMA writes is the layout of the ring's type). Out
//   of bounds the boxes read zeros: no bounds arithmetic.
// - One mbarrier per slot ("full"), initialized for one arrival. Iteration
//   j's copies (issued only when j < the trip count) arrive on barrier
//   j % S expecting the bytes of both blocks; iteration j waits on it with
//   parity (j / S) % 2.
// - Slots are reused as in the cp.async ring (emitRing's `lag`): the wgmma
//   of iteration i stays in flight until iteration i + 1's mma waits for
//   it, so iteration i copies iteration i + S - 2 into the slot of
//   iteration i - 2, after the block barrier that every thread passes only
//   once its wgmmas of i - 2 are done. That barrier is the empty barrier.
// - After the loop: the last wgmma is waited for, nothing is in flight (no
//   copy past the end was issued), and the barriers are invalidated between
//   two block barriers, so the bytes may serve the next loop's ring.
//
//
// pipelineTmaB: a loop of several wgmmas whose B operands are loads
// (attention's K^T and V, A in registers) gets one ring per B, filled
// the same way; every mma waits for its wgmma, so iteration i refills the
// slot of iteration i - 1. Rows the loop loads beside them (a (1, n) block
// of per-column values: the backward's lse and delta of each query block)
// come through rings of their own filled by the same copies, and are read
// back (tilegpu.read_shared) where first used: no global loads, and no
// registers held across the mmas, in the loop.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/TileTiling.h"
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::pipeline;

namespace {

/// One operand's load, its index computation, the kernel array it reads
/// and, once built, its tensor map and ring.
struct TmaOperand {
  LoadOp load;
  llvm::SetVector<Operation *> slice;
  BlockArgument array;
  int64_t rows = 0, cols = 0, swizzle = 0;
  Value map, ring;
  // What the mma reads: the load's element type, or the type a bitcast
  // views its bytes as (u8 codes as fp8); the map and ring hold it.
  Type elemType;
};

/// Whether TMA copies what `load` reads: any plain block load. Unlike
/// cp.async's 16-byte copies it needs no divisibility of the extents: TMA
/// bounds every element.
bool tmaLoadable(LoadOp load) { return pipeline::isPlainBlockLoad(load); }

/// The kernel argument `load` reads, when TMA may read it: an array
/// argument of the tile.kernel marked tile.tma_ok (its launches proved TMA
/// can describe it).
BlockArgument tmaArray(LoadOp load) {
  auto arg = dyn_cast<BlockArgument>(load.getArray());
  if (!arg)
    return {};
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || !func->hasAttr("tile.kernel") ||
      !func.getArgAttr(arg.getArgNumber(), TileDialect::getTmaOkAttrName()))
    return {};
  return arg;
}

/// The block `o.load` reads is whole swizzled panels TMA can fill: rows
/// of `swizzle` bytes, at most 256 of them, 8-row groups (panels start
/// 1024-byte aligned) and whole 1024-byte slots.
bool fitsTma(TmaOperand &o, scf::ForOp forOp, int64_t swizzle) {
  auto type = cast<RankedTensorType>(o.load.getType());
  unsigned rank = type.getRank();
  o.rows = type.getDimSize(rank - 2);
  o.cols = type.getDimSize(rank - 1);
  o.swizzle = swizzle;
  int64_t eb = storageBytes(type.getElementType());
  if ((o.cols * eb) % swizzle || o.rows > 256 || o.rows % 8 ||
      (o.rows * o.cols * eb) % 1024)
    return false;
  for (Value v : o.load->getOperands())
    if (!pipeline::collectIndexSlice(v, forOp, o.slice))
      return false;
  return true;
}

/// `o.map` and `o.ring`: the tensor map of `o.array` with one swizzled
/// panel per box, and a buffer of `slots` slots in front of `forOp`.
LogicalResult makeMapAndRing(TmaOperand &o, scf::ForOp forOp, int64_t slots,
                             Operation *where) {
  auto type = cast<RankedTensorType>(o.load.getType());
  Type elemType = o.elemType ? o.elemType : type.getElementType();
  SmallVector<int64_t> box(type.getRank(), 1);
  box[type.getRank() - 2] = o.rows;
  box[type.getRank() - 1] =
      o.swizzle ? o.swizzle / storageBytes(elemType) : o.cols;
  FailureOr<Value> map =
      tensorMapArg(forOp->getParentOfType<func::FuncOp>(), o.array,
                   tilegpu::TensorMapType::get(forOp.getContext(), box,
                                               elemType, o.swizzle));
  if (failed(map))
    return where->emitError("cannot add a tensor-map argument to the kernel");
  o.map = *map;
  o.ring = allocRing(forOp, o.rows, o.cols, elemType, slots, o.swizzle, 0);
  return success();
}

/// The bytes of one block of `o`.
int64_t blockBytes(TmaOperand &o) {
  return o.rows * o.cols *
         storageBytes(
             cast<RankedTensorType>(o.load.getType()).getElementType());
}

/// The (1, n) row loads of `forOp`'s body besides `operands` that TMA can
/// copy unswizzled into 128-byte aligned slots (n * element bytes a
/// multiple of 128, n <= 256), with their index slices.
SmallVector<TmaOperand> collectRowLoads(scf::ForOp forOp,
                                        ArrayRef<TmaOperand> operands) {
  SmallVector<TmaOperand> rows;
  for (LoadOp load : forOp.getBody()->getOps<LoadOp>()) {
    if (llvm::any_of(operands, [&](TmaOperand o) { return o.load == load; }))
      continue;
    auto type = cast<RankedTensorType>(load.getType());
    TmaOperand o;
    o.load = load;
    o.array = tmaArray(load);
    if (!o.array || !tmaLoadable(load) || type.getRank() != 2 ||
        type.getDimSize(0) != 1 || type.getDimSize(1) > 256 ||
        (type.getDimSize(1) * storageBytes(type.getElementType())) % 128)
      continue;
    o.rows = 1;
    o.cols = type.getDimSize(1);
    bool sliced = llvm::all_of(load->getOperands(), [&](Value v) {
      return pipeline::collectIndexSlice(v, forOp, o.slice);
    });
    if (sliced)
      rows.push_back(std::move(o));
  }
  return rows;
}

/// Moves `read` and the pure ops computing from it alone (reshapes,
/// scales, broadcasts) down to the first op that combines them with
/// anything else, so that what it reads is live only where it is used.
void sinkToFirstUse(Operation *read) {
  Block *block = read->getBlock();
  DenseSet<Operation *> chain{read};
  SmallVector<Operation *> moving{read};
  auto fromChain = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && chain.contains(def);
  };
  Operation *stop = block->getTerminator();
  for (Operation *op = read->getNextNode(); op != stop;
       op = op->getNextNode()) {
    bool uses = false;
    op->walk([&](Operation *nested) {
      uses |= llvm::any_of(nested->getOperands(), fromChain);
    });
    if (!uses) {
      if (writesMemory(op)) { // the read stays before writes
        stop = op;
        break;
      }
      continue;
    }
    bool onlyChain = llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return fromChain(v) || !def || def->getBlock() != block ||
             def->isBeforeInBlock(read);
    });
    if (!onlyChain || !isMemoryEffectFree(op) || op->getNumRegions()) {
      stop = op;
      break;
    }
    chain.insert(op);
    moving.push_back(op);
  }
  for (Operation *op : moving)
    op->moveBefore(stop);
}

/// Each row load of `rows` replaced by a read of this iteration's slot of
/// its ring, sunk to its first use.
void readRowsFromRings(scf::ForOp forOp, MutableArrayRef<TmaOperand> rows,
                       int64_t stages) {
  for (TmaOperand &o : rows) {
    OpBuilder b(o.load);
    Location loc = o.load.getLoc();
    Value slot = ringSlotAt(b, loc, forOp, forOp.getInductionVar(),
                            /*ahead=*/0, stages);
    auto ringType = cast<tilegpu::SharedBufferType>(o.ring.getType());
    Value one =
        tilegpu::SlotOp::create(b, loc, ringType.withSlots(1), o.ring, slot);
    auto read = tilegpu::ReadSharedOp::create(b, loc, o.load.getType(), one);
    o.load.replaceAllUsesWith(read.getResult());
    o.load.erase();
    sinkToFirstUse(read);
  }
}

/// The TMA copy of `o.load`'s block (its indices through `map`) into slot
/// `slot` of `o.ring`, arriving on barrier `slot` of `bars`.
void copyBlock(OpBuilder &b, Location loc, TmaOperand &o, IRMapping &map,
               Value bars, Value barrier, Value slot) {
  auto type = cast<RankedTensorType>(o.load.getType());
  SmallVector<Value> coords;
  for (int64_t d = type.getRank() - 1; d >= 0; --d)
    coords.push_back(arith::MulIOp::create(
        b, loc, map.lookupOrDefault(o.load.getIndices()[d]),
        constI32(b, loc, type.getDimSize(d))));
  auto ringType = cast<tilegpu::SharedBufferType>(o.ring.getType());
  Value dst =
      tilegpu::SlotOp::create(b, loc, ringType.withSlots(1), o.ring, slot);
  tilegpu::TmaLoadOp::create(b, loc, o.map, coords, dst, bars, barrier,
                             /*ctaMask=*/Value(), /*clusterRank=*/Value(),
                             /*cluster_size=*/IntegerAttr());
}

/// The copies of iteration `j` (i32) into slot `slot` of the rings, when
/// j < `trips`: thread 0 expects `bytes` on barrier `slot` and issues
/// each operand's TMA copies at the block's element coordinates (the
/// load's indices re-evaluated at iteration j, times the block).
void issueCopies(OpBuilder &b, Location loc, scf::ForOp forOp,
                 MutableArrayRef<TmaOperand> operands, Value bars, Value j,
                 Value slot, Value trips, int64_t bytes) {
  Value live =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, trips);
  auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value iv =
      arith::AddIOp::create(b, loc, forOp.getLowerBound(),
                            arith::MulIOp::create(b, loc, j, forOp.getStep()));
  tilegpu::MBarrierExpectTxOp::create(b, loc, bars, slot,
                                      constI32(b, loc, bytes));
  for (TmaOperand &o : operands) {
    IRMapping map;
    map.map(forOp.getInductionVar(), iv);
    for (Operation *op : o.slice)
      b.clone(*op, map);
    copyBlock(b, loc, o, map, bars, slot, slot);
  }
}

/// A TMA ring around `forOp` for `operands` (maps and rings not yet made),
/// `stages` slots with `depth` iterations in flight: the tensor maps and
/// rings, one "full" mbarrier per slot, the copies of iterations
/// 0..depth-1 in front of the loop, and at the top of the body the wait for
/// this iteration's slot, the block barrier (every thread is done with the
/// slot about to be refilled) and the copies of iteration it + depth.
LogicalResult buildTmaRing(scf::ForOp forOp, MutableArrayRef<TmaOperand> ops,
                           int64_t stages, int64_t depth, Operation *where,
                           Value &bars) {
  int64_t bytes = 0;
  for (TmaOperand &o : ops)
    bytes += blockBytes(o);
  for (TmaOperand &o : ops)
    if (failed(makeMapAndRing(o, forOp, stages, where)))
      return failure();

  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  bars = tilegpu::AllocMBarriersOp::create(
      b, loc, tilegpu::MBarriersType::get(forOp.getContext(), stages),
      IntegerAttr());
  for (int64_t s = 0; s < stages; ++s)
    tilegpu::MBarrierInitOp::create(b, loc, bars, constI32(b, loc, s),
                                    constI32(b, loc, 1));
  Value trips = arith::MaxSIOp::create(
      b, loc,
      arith::CeilDivSIOp::create(b, loc,
                                 arith::SubIOp::create(b, loc,
                                                       forOp.getUpperBound(),
                                                       forOp.getLowerBound()),
                                 forOp.getStep()),
      constI32(b, loc, 0));
  for (int64_t s = 0; s < depth; ++s)
    issueCopies(b, loc, forOp, ops, bars, constI32(b, loc, s),
                constI32(b, loc, s), trips, bytes);

  Block *body = forOp.getBody();
  b.setInsertionPointToStart(body);
  Value it = arith::DivSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, forOp.getInductionVar(),
                            forOp.getLowerBound()),
      forOp.getStep());
  Value c = constI32(b, loc, stages);
  Value slot = arith::RemSIOp::create(b, loc, it, c);
  Value parity = arith::RemSIOp::create(
      b, loc, arith::DivSIOp::create(b, loc, it, c), constI32(b, loc, 2));
  tilegpu::MBarrierWaitOp::create(b, loc, bars, slot, parity);
  gpu::BarrierOp::create(b, loc);
  Value ahead = arith::AddIOp::create(b, loc, it, constI32(b, loc, depth));
  issueCopies(b, loc, forOp, ops, bars, ahead,
              arith::RemSIOp::create(b, loc, ahead, c), trips, bytes);
  return success();
}

/// After `forOp`'s ring: the barriers invalidated while no thread uses
/// them (nothing is in flight: no copy past the end was issued), so the
/// bytes may serve the next loop's ring.
void closeTmaRing(scf::ForOp forOp, Value bars, int64_t stages,
                  Value invariantBar = Value()) {
  Location loc = forOp.getLoc();
  OpBuilder b(forOp->getContext());
  Operation *last = forOp;
  // After the wait for the last wgmma, if the loop leaves one in flight.
  if (auto wait = dyn_cast_or_null<tilegpu::WaitMmaOp>(forOp->getNextNode()))
    last = wait;
  b.setInsertionPointAfter(last);
  gpu::BarrierOp::create(b, loc);
  for (int64_t s = 0; s < stages; ++s)
    tilegpu::MBarrierInvalOp::create(b, loc, bars, constI32(b, loc, s));
  if (invariantBar)
    tilegpu::MBarrierInvalOp::create(b, loc, invariantBar, constI32(b, loc, 0));
  gpu::BarrierOp::create(b, loc);
}

/// The bytes tile-stage-stores' padded-row buffer takes for the store of
/// `mma`'s accumulator in the body of a persistent loop (an `scf.while`
/// or `scf.for` at the kernel's top level) around `forOp`; 0 when there
/// is none.
int64_t persistentStoreBytes(scf::ForOp forOp, MmaOp mma) {
  Operation *outer = forOp->getParentOp();
  if (!isa<scf::WhileOp, scf::ForOp>(outer) ||
      !isa<func::FuncOp>(outer->getParentOp()))
    return 0;
  ArrayRef<int64_t> shape = mma.getType().getShape();
  for (StoreOp store : forOp->getBlock()->getOps<StoreOp>()) {
    auto type = cast<RankedTensorType>(store.getValue().getType());
    if (type.getShape() == shape)
      return shape[0] * (shape[1] + kStageRowPadding) *
             storageBytes(type.getElementType());
  }
  return 0;
}

} // namespace

/// The tensor-map argument of `func` describing `array` as `type`, added
/// after the others when the kernel has none yet.
FailureOr<Value> mlir::tile::pipeline::tensorMapArg(func::FuncOp func, BlockArgument array,
                              tilegpu::TensorMapType type) {
  StringRef name = tilegpu::TensorMapOfAttr::getArgAttrName();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto of = func.getArgAttrOfType<tilegpu::TensorMapOfAttr>(i, name);
        of && of.getArray() == array.getArgNumber() &&
        func.getArgumentTypes()[i] == type)
      return Value(func.getArgument(i));
  MLIRContext *ctx = func.getContext();
  unsigned n = func.getNumArguments();
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(
               StringAttr::get(ctx, name),
               tilegpu::TensorMapOfAttr::get(ctx, array.getArgNumber()))});
  if (failed(func.insertArgument(n, type, attrs, array.getLoc())))
    return failure();
  return Value(func.getArgument(n));
}

FailureOr<bool> mlir::tile::pipeline::pipelineTma(scf::ForOp forOp,
                                                  int64_t numStages,
                                                  bool epilogueRoom) {
  Block *body = forOp.getBody();
  SmallVector<MmaOp> mmas(body->getOps<MmaOp>());
  if (mmas.size() != 1)
    return false;
  MmaOp mma = mmas.front();
  MmaKind kind = getMmaKind(mma);
  MmaTilingAttr tiling = mma.getTilingAttr();
  // fp8, tf32 and int8: A [m][k] and B^T [n][k], both K-major
  // (streamsKMajor).
  bool kMajor = kind == MmaKind::TF32 || kind == MmaKind::I8 ||
                kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2;
  if ((kind != MmaKind::F16 && kind != MmaKind::BF16 && !kMajor) || !tiling ||
      !tiling.isWarpgroup() || !onlyFeedsNextIteration(mma, forOp))
    return false;
  auto func = forOp->getParentOfType<func::FuncOp>();
  TmaOperand ops[2];
  // A batched matmul's blocks of one batch come through reshapes (their
  // boxes keep the unit batch dimension).
  SmallVector<Operation *> views;
  if (kMajor) {
    // The ring holds what TMA copies: blocks of the mma's own element type
    // (not fp8 bytes bitcast after the load).
    Type in = getElementTypeOrSelf(mma.getA().getType());
    if (!streamsKMajor(mma, &ops[0].load, &ops[1].load, &views, &views) ||
        getElementTypeOrSelf(ops[0].load.getType()) != in ||
        getElementTypeOrSelf(ops[1].load.getType()) != in)
      return false;
  } else {
    ops[0].load = findLoadThroughUnitReshapes(mma.getA(), body, &views);
    ops[1].load = findLoadThroughUnitReshapes(mma.getB(), body, &views);
  }
  for (TmaOperand &o : ops) {
    if (!o.load || o.load->getBlock() != body || !o.load->hasOneUse() ||
        !tmaLoadable(o.load))
      return false;
    o.array = tmaArray(o.load);
    if (!o.array)
      return false;
  }
  if (ops[0].load == ops[1].load || !func)
    return false;
  auto aType = cast<RankedTensorType>(mma.getA().getType());
  int64_t eb = storageBytes(aType.getElementType());
  // A's rows are K long (128-byte panels, or 64-byte ones for K = 32
  // f16); B's [k][n] rows are N long, in 128-byte panels; B^T's [n][k]
  // rows are K long, as A's.
  int64_t aSwizzle = warpgroupSwizzle(aType.getDimSize(1) * eb);
  if (!fitsTma(ops[0], forOp, aSwizzle) ||
      !fitsTma(ops[1], forOp, kMajor ? aSwizzle : 128))
    return false;
  int64_t bytes = 0;
  for (TmaOperand &o : ops)
    bytes += o.rows * o.cols * eb;
  // The wgmma in flight needs three slots; blocks too large for three are
  // left to the cp.async ring, whose wgmmas can wait in two.
  if (numStages <= 0 && 3 * bytes > kMaxSharedBytes)
    return false;
  int64_t automatic = warpgroupRingStages(bytes);
  if (int64_t staged = epilogueRoom ? persistentStoreBytes(forOp, mma) : 0) {
    // 1 KB for the mbarriers and the rest of the kernel's scratch.
    int64_t room = (kMaxSharedBytes - staged - 1024) / bytes;
    if (room >= 3)
      automatic = std::min(automatic, room);
  }
  FailureOr<int64_t> slots = ringSlots(mma, automatic, numStages, 3, bytes);
  if (failed(slots))
    return failure();
  // The wgmma of iteration i stays in flight until iteration i + 1's mma
  // waits for it: iteration i refills the slot of iteration i - 2.
  int64_t stages = *slots;
  Value bars;
  if (failed(buildTmaRing(forOp, ops, stages, stages - 2, mma, bars)))
    return failure();
  replaceWithSharedMma(mma, forOp, stages, ops[0].ring, ops[1].ring,
                       /*bTransposed=*/kMajor, /*inFlight=*/true);
  for (Operation *view : views) // from the mma's operand down to the load
    view->erase();
  for (TmaOperand &o : ops)
    o.load.erase();

  // After the loop: the accumulators once the last wgmma is done.
  waitForInFlightAccumulators(forOp);
  closeTmaRing(forOp, bars, stages);
  return true;
}

/// A wgmma's A that is a block loaded in front of the loop (attention's Q,
/// the backward's K and V, or K^T): TMA copies it once into a one-slot
/// buffer the wgmma reads, instead of fragments held in registers by the
/// whole loop. One buffer per load, whatever number of wgmmas read it.
struct InvariantA {
  TmaOperand op;
  SmallVector<Operation *> views;
};

/// The invariant operand of `mma` (its A, or the B of a staged A), if TMA
/// can fill a wgmma's buffer from it: nothing between the load and the
/// loop writes memory (the copy is issued right before the loop).
/// `transposed`: the mma reads the block's transpose (an M-major A, in
/// 128-byte panels of the block's rows). A B is read N-major: [k][n]
/// rows in 128-byte panels.
static std::optional<InvariantA> invariantA(MmaOp mma, scf::ForOp forOp,
                                            Type elemType, bool &transposed,
                                            bool ofB = false) {
  InvariantA a;
  transposed = false;
  Value operand = ofB ? mma.getB() : mma.getA();
  a.op.load = findLoadThroughView(operand, forOp->getBlock(), &a.views,
                                  &transposed, /*sharedViews=*/true);
  if (!a.op.load || !tmaLoadable(a.op.load) ||
      a.op.load.getType().getElementType() != elemType || (ofB && transposed))
    return std::nullopt;
  for (Operation *op = a.op.load->getNextNode(); op != forOp;
       op = op->getNextNode())
    if (writesMemory(op))
      return std::nullopt;
  a.op.array = tmaArray(a.op.load);
  a.op.elemType = getElementTypeOrSelf(operand.getType());
  auto aType = cast<RankedTensorType>(mma.getA().getType());
  int64_t eb = storageBytes(aType.getElementType());
  int64_t swizzle = transposed || ofB
                        ? 128
                        : warpgroupSwizzle(aType.getDimSize(1) * eb);
  if (!a.op.array || !fitsTma(a.op, forOp, swizzle))
    return std::nullopt;
  return a;
}

/// The register tile a staged mma writes into shared memory: B, or the
/// A^T an A is the transpose of (stagedOperand).
static Value stagedTile(MmaOp mma, scf::ForOp forOp) {
  if (stagedOperand(mma, forOp) == StagedOperand::B)
    return mma.getB();
  return mma.getA().getDefiningOp<PermuteOp>().getSrc();
}

/// Each staged mma as a tilegpu.mma reading its staged operand from a
/// two-slot buffer it is written into every iteration (an A as A^T,
/// M-major), the other from the invariant block's buffer `other`: the
/// slot a wgmma of the iteration before may still read is the other one,
/// and every thread waited for that wgmma before the barrier of this
/// iteration's stage_operand.
static void stageOperands(scf::ForOp forOp, ArrayRef<MmaOp> staged,
                          ArrayRef<Value> others, ArrayRef<bool> transposedOf) {
  for (auto [op, other, transposed] : llvm::zip(staged, others, transposedOf)) {
    MmaOp mma = op;
    bool stagesA = stagedOperand(mma, forOp) == StagedOperand::A;
    Value tile = stagedTile(mma, forOp);
    auto type = cast<RankedTensorType>(tile.getType());
    Value buffer =
        allocRing(forOp, type.getDimSize(0), type.getDimSize(1),
                  type.getElementType(), /*stages=*/2, /*swizzle=*/128, 0);
    OpBuilder b(mma);
    Location loc = mma.getLoc();
    auto one = cast<tilegpu::SharedBufferType>(buffer.getType()).withSlots(1);
    Value slot = tilegpu::SlotOp::create(
        b, loc, one, buffer,
        ringSlotAt(b, loc, forOp, forOp.getInductionVar(), 0, 2));
    tilegpu::StageOperandOp::create(b, loc, tile, slot);
    auto otherType = cast<tilegpu::SharedBufferType>(other.getType());
    Value fixed = tilegpu::SlotOp::create(b, loc, otherType.withSlots(1), other,
                                          constI32(b, loc, 0));
    auto shared = tilegpu::MmaOp::create(
        b, loc, mma.getType(), stagesA ? slot : fixed, stagesA ? fixed : slot,
        mma.getAcc(), /*bTransposed=*/false, /*inFlight=*/false,
        /*aTransposed=*/stagesA || transposed, mma.getFastAccumulation(),
        mma.getTilingAttr());
    Operation *view = stagesA ? mma.getA().getDefiningOp() : nullptr;
    mma.getResult().replaceAllUsesWith(shared.getResult());
    mma.erase();
    if (view && view->use_empty())
      view->erase();
  }
}

/// Copies every invariant A into its buffer in front of `forOp` (one
/// mbarrier `bar`, waited for by every thread right before the loop;
/// closeTmaRing invalidates it).
static LogicalResult copyInvariants(scf::ForOp forOp,
                                    MutableArrayRef<InvariantA> invariants,
                                    Value &bar) {
  if (invariants.empty())
    return success();
  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  bar = tilegpu::AllocMBarriersOp::create(
      b, loc, tilegpu::MBarriersType::get(forOp.getContext(), 1),
      IntegerAttr());
  Value zero = constI32(b, loc, 0);
  tilegpu::MBarrierInitOp::create(b, loc, bar, zero, constI32(b, loc, 1));
  gpu::BarrierOp::create(b, loc);
  int64_t bytes = 0;
  for (InvariantA &a : invariants)
    bytes += a.op.rows * a.op.cols *
             storageBytes(a.op.load.getType().getElementType());
  tilegpu::MBarrierExpectTxOp::create(b, loc, bar, zero,
                                      constI32(b, loc, bytes));
  for (InvariantA &a : invariants) {
    if (failed(makeMapAndRing(a.op, forOp, 1, a.op.load)))
      return failure();
    IRMapping same;
    copyBlock(b, loc, a.op, same, bar, zero, zero);
  }
  tilegpu::MBarrierWaitOp::create(b, loc, bar, zero, zero);
  return success();
}

FailureOr<bool>
mlir::tile::pipeline::pipelineTmaB(scf::ForOp forOp, int64_t numStages,
                                   SmallVectorImpl<BlockArgument> *ringArrays,
                                   bool withRows) {
  SmallVector<StreamedB> streamed;
  SmallVector<MmaOp> staged;
  if (!collectStreamedB(forOp, /*in16Bytes=*/false, streamed,
                        /*sharedLoads=*/true, &staged) ||
      !onlyStreamedUses(streamed))
    return false;
  // One ring per distinct load: a block read as B by several wgmmas (the
  // backward's Q as Q^T and as Q) fills one.
  SmallVector<TmaOperand> ops;
  SmallVector<unsigned> ringOf;
  Type elemType = streamed.front().load.getType().getElementType();
  for (StreamedB &s : streamed) {
    MmaTilingAttr tiling = s.mma.getTilingAttr();
    if (!tiling || !tiling.isWarpgroup() ||
        s.load.getType().getElementType() != elemType)
      return false;
    auto known = llvm::find_if(
        ops, [&](const TmaOperand &o) { return o.load == s.load; });
    if (known != ops.end()) {
      ringOf.push_back(known - ops.begin());
      continue;
    }
    TmaOperand o;
    o.load = s.load;
    o.elemType = getElementTypeOrSelf(s.mma.getB().getType());
    o.array = tmaArray(s.load);
    // Each block is read as rows of 128-byte panels: K [n][d] for K^T
    // (K-major), V [k][n] (N-major), as the cp.async ring lays them out.
    if (!o.array || !fitsTma(o, forOp, 128))
      return false;
    ringOf.push_back(ops.size());
    ops.push_back(std::move(o));
  }
  // Per mma (the streamed ones, then the staged ones): its invariant A
  // (-1: A stays in registers) and whether it reads A transposed.
  SmallVector<InvariantA> invariants;
  SmallVector<int> invariantOf;
  SmallVector<bool> transposedOf;
  SmallVector<MmaOp> mmas;
  for (StreamedB &s : streamed)
    mmas.push_back(s.mma);
  mmas.append(staged.begin(), staged.end());
  for (auto [index, mma] : llvm::enumerate(mmas)) {
    bool transposed = false;
    bool ofB = index >= streamed.size() &&
               stagedOperand(mma, forOp) == StagedOperand::A;
    std::optional<InvariantA> a =
        invariantA(mma, forOp, elemType, transposed, ofB);
    // A streamed mma's transposed A stays in registers, as before staged
    // operands: the M-major A (a_transposed) is only reached through them.
    if (a && transposed && index < streamed.size())
      a.reset();
    transposed = transposed && a;
    auto known = !a ? invariants.end()
                    : llvm::find_if(invariants, [&](const InvariantA &k) {
                        return k.op.load == a->op.load;
                      });
    // One buffer, one layout: a block read both ways has 128-byte panels.
    if (a && known != invariants.end() && known->op.swizzle != a->op.swizzle)
      return false;
    invariantOf.push_back(!a ? -1
                          : known != invariants.end()
                              ? known - invariants.begin()
                              : invariants.size());
    transposedOf.push_back(transposed);
    if (a && known == invariants.end())
      invariants.push_back(std::move(*a));
  }
  // A staged mma reads its other operand from shared memory.
  if (llvm::any_of(ArrayRef<int>(invariantOf).drop_front(streamed.size()),
                   [](int a) { return a < 0; }))
    return false;
  int64_t bytes = 0;
  for (TmaOperand &o : ops)
    bytes += blockBytes(o);
  // Inside another loop (a persistent kernel's walk over its tiles) the
  // ring stays live across that loop, so the scratch after this one goes
  // past it, and no rows (their rings would move with it).
  bool nested = forOp->getParentOfType<LoopLikeOpInterface>() != nullptr;
  SmallVector<TmaOperand> rows;
  if (withRows && !nested)
    rows = collectRowLoads(forOp, ops);
  for (TmaOperand &o : rows)
    bytes += blockBytes(o);
  // A third slot where it fits beside the invariant blocks: it lets
  // tile-overlap-mma-chain keep S_j's and P_{j-1} V_{j-1}'s wgmmas in flight
  // together (attention at D 128 and 128x128 blocks: 2 slots by
  // ringStages). The scratch after the loop reuses the ring
  // (tile-allocate-shared); kScratchSlack is left for the loop's own.
  // Nested, the ring stays live after the loop: where a persistent
  // attention's O then finds no room for its staging buffer,
  // tile-stage-stores sends it by TMA through Q's buffer.
  int64_t invariantBytes = 0;
  for (InvariantA &a : invariants)
    invariantBytes += a.op.rows * a.op.cols * storageBytes(elemType);
  for (MmaOp mma : staged) // two slots each
    invariantBytes +=
        2 * cast<RankedTensorType>(stagedTile(mma, forOp).getType())
                .getNumElements() *
        storageBytes(elemType);
  int64_t automatic = ringStages(bytes);
  if (automatic < 3 &&
      3 * bytes + invariantBytes + kScratchSlack <= kMaxSharedBytes)
    automatic = 3;
  FailureOr<int64_t> slots = ringSlots(streamed.front().mma, automatic,
                                       numStages, /*minimum=*/2, bytes);
  if (failed(slots))
    return failure();
  // Every mma waits for its wgmma: iteration i refills the slot of
  // iteration i - 1, which every thread finished before the block barrier.
  int64_t stages = *slots;
  Value bars, invariantBar;
  unsigned numOperands = ops.size();
  ops.append(rows.begin(), rows.end());
  if (failed(buildTmaRing(forOp, ops, stages, stages - 1, streamed.front().mma,
                          bars)) ||
      failed(copyInvariants(forOp, invariants, invariantBar)))
    return failure();
  for (auto [s, ring, a, transposed] :
       llvm::zip(streamed, ringOf, invariantOf, transposedOf))
    replaceWithSharedMma(s.mma, forOp, stages,
                         a < 0 ? Value() : invariants[a].op.ring,
                         ops[ring].ring, s.kMajor, /*inFlight=*/false,
                         transposed);
  SmallVector<Value> others;
  for (int a : ArrayRef<int>(invariantOf).drop_front(streamed.size()))
    others.push_back(invariants[a].op.ring);
  stageOperands(forOp, staged, others,
                ArrayRef<bool>(transposedOf).drop_front(streamed.size()));
  // The views and loads nothing reads any more (shared ones once all their
  // mmas are rewritten), the invariant A's included when unused.
  SmallVector<Operation *> extra;
  for (InvariantA &a : invariants) {
    extra.append(a.views.begin(), a.views.end());
    extra.push_back(a.op.load);
  }
  eraseStreamedViews(streamed, extra);
  readRowsFromRings(
      forOp, MutableArrayRef<TmaOperand>(ops).drop_front(numOperands), stages);
  closeTmaRing(forOp, bars, stages, invariantBar);
  if (ringArrays)
    for (TmaOperand &o : ops)
      ringArrays->push_back(o.array);
  return true;
}
