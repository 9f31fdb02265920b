//===- LinearLayoutTest.cpp - layout attributes as linear layouts ---------===//
//
// Expectations are derived from each layout's definition (TileAttrs.td), not
// from the conversion's output: a blocked thread owns a sizePerThread box and
// lanes/warps tile the dimensions in `order`; an m16n8 accumulator lane l
// holds rows l/4 and l/4 + 8, columns 2*(l%4) and 2*(l%4) + 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/gpu/LinearLayout.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <type_traits>

using namespace mlir;
using namespace mlir::tile;

namespace {

using Coord = SmallVector<int64_t, 4>;
using Bases = SmallVector<LinearLayout::Basis>;

class LayoutTest : public ::testing::Test {
protected:
  LayoutTest() { ctx.loadDialect<TileDialect>(); }

  BlockedLayoutAttr blocked(ArrayRef<unsigned> spt, ArrayRef<unsigned> tpw,
                            ArrayRef<unsigned> wpc, ArrayRef<unsigned> order) {
    return BlockedLayoutAttr::get(&ctx, spt, tpw, wpc, order);
  }
  MmaLayoutAttr mma(unsigned wm, unsigned wn) {
    return MmaLayoutAttr::get(&ctx, 2, {wm, wn});
  }
  LinearLayout linear(Attribute layout, ArrayRef<int64_t> shape) {
    FailureOr<LinearLayout> l = toLinearLayout(layout, shape);
    EXPECT_TRUE(succeeded(l));
    return succeeded(l) ? *l : LinearLayout();
  }

  MLIRContext ctx;
};

/// How many (register, lane, warp) triples hold each element of the tile.
std::map<Coord, int> ownerCounts(const LinearLayout &l) {
  std::map<Coord, int> counts;
  for (int64_t r = 0; r < l.getNumRegs(); ++r)
    for (unsigned lane = 0; lane < (1u << l.lanes.size()); ++lane)
      for (unsigned w = 0; w < unsigned(l.getNumWarps()); ++w)
        ++counts[l.coordOf(r, lane, w)];
  return counts;
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

/// Every element is held, each by the same number of threads: 2^(replica
/// bits). Replica-free layouts are bijections from hardware bits to tile.
void expectCoversOnce(const LinearLayout &l, int replicas = 1) {
  std::map<Coord, int> counts = ownerCounts(l);
  EXPECT_EQ(int64_t(counts.size()), numElements(l.shape));
  for (auto &[coord, n] : counts) {
    for (unsigned d = 0; d < l.getRank(); ++d) {
      EXPECT_GE(coord[d], 0);
      EXPECT_LT(coord[d], l.shape[d]);
    }
    EXPECT_EQ(n, replicas);
  }
}

/// The inverse map: the (register, lane, warp) bits of `coord`, found per
/// dimension from its bits (each basis moves one dimension by a power of
/// two). Replica bits stay 0.
std::tuple<int64_t, unsigned, unsigned> owner(const LinearLayout &l,
                                              ArrayRef<int64_t> coord) {
  int64_t reg = 0;
  unsigned lane = 0, warp = 0;
  auto take = [&](ArrayRef<LinearLayout::Basis> bases, auto &bits) {
    for (auto [bit, basis] : llvm::enumerate(bases))
      for (unsigned d = 0; d < l.getRank(); ++d)
        if (basis[d] != 0 && (coord[d] & basis[d]))
          bits |= std::remove_reference_t<decltype(bits)>(1) << bit;
  };
  take(l.regs, reg);
  take(l.lanes, lane);
  take(l.warps, warp);
  return {reg, lane, warp};
}

//===----------------------------------------------------------------------===//
// #tile.blocked
//===----------------------------------------------------------------------===//

// 4 contiguous columns per thread, 8x4 lanes (columns first), 2x2 warps
// (columns first): lanes and warps cover 8 rows x 64 columns, so a 16x64
// tile repeats once along rows.
TEST_F(LayoutTest, BlockedRowMajor) {
  auto attr = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  LinearLayout l = linear(attr, {16, 64});
  EXPECT_EQ(l.shape, (Coord{16, 64}));
  EXPECT_EQ(l.regs, (Bases{{0, 1}, {0, 2}, {8, 0}}));
  EXPECT_EQ(l.lanes, (Bases{{0, 4}, {0, 8}, {0, 16}, {1, 0}, {2, 0}}));
  EXPECT_EQ(l.warps, (Bases{{0, 32}, {4, 0}}));
  EXPECT_EQ(l.getNumRegs(), 8);
  EXPECT_EQ(l.laneReplicaMask(), 0u);
  EXPECT_EQ(l.warpReplicaMask(), 0u);
  expectCoversOnce(l);

  // Element (9, 37): row 9 = repeat 8 + lane row 1, column 37 = warp column
  // 32 + lane column 4 + register column 1.
  EXPECT_EQ(l.coordOf(/*r=*/0b101, /*lane=*/0b01001, /*warp=*/0b01),
            (Coord{9, 37}));
  EXPECT_EQ(owner(l, {9, 37}), std::make_tuple(int64_t(0b101), 0b01001u, 1u));
  for (int64_t r = 0; r < l.getNumRegs(); ++r)
    EXPECT_EQ(l.regCoord(r), l.coordOf(r, 0, 0));
  // Thread coordinates: lane 13 of warp 3 starts at row 1 + 4, column
  // 4 * (13 % 8) + 32.
  EXPECT_EQ(l.coordOf(0, 13, 3), (Coord{5, 52}));
}

// The pattern is larger than the tile: bases past the tile replicate (lanes,
// warps) or disappear (registers).
TEST_F(LayoutTest, BlockedReplicatesOverSmallTile) {
  auto attr = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  LinearLayout l = linear(attr, {2, 16});
  EXPECT_EQ(l.regs, (Bases{{0, 1}, {0, 2}}));
  EXPECT_EQ(l.lanes, (Bases{{0, 4}, {0, 8}, {0, 0}, {1, 0}, {0, 0}}));
  EXPECT_EQ(l.warps, (Bases{{0, 0}, {0, 0}}));
  EXPECT_EQ(l.laneReplicaMask(), 0b10100u);
  EXPECT_EQ(l.warpReplicaMask(), 0b11u);
  // 2 replicating lane bits and 2 warp bits: 16 copies of each element.
  expectCoversOnce(l, 16);
  EXPECT_EQ(l, linear(attr, {16, 64}).restrictedTo({2, 16}));
}

// Column-major order: the same distribution with the dimensions swapped.
TEST_F(LayoutTest, BlockedOrderIsATranspose) {
  auto rowMajor = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  auto colMajor = blocked({4, 1}, {8, 4}, {2, 2}, {0, 1});
  LinearLayout t = linear(colMajor, {64, 16});
  EXPECT_EQ(t.regs, (Bases{{1, 0}, {2, 0}, {0, 8}}));
  EXPECT_EQ(t.permuted({1, 0}), linear(rowMajor, {16, 64}));
  EXPECT_EQ(t.permuted({1, 0}).permuted({1, 0}), t);
}

// A 3-d tile: dimension 0 fastest, then 2, then 1.
TEST_F(LayoutTest, Blocked3d) {
  auto attr = blocked({2, 1, 1}, {1, 8, 4}, {1, 1, 4}, {0, 2, 1});
  LinearLayout l = linear(attr, {4, 8, 32});
  EXPECT_EQ(l.regs, (Bases{{1, 0, 0}, {2, 0, 0}, {0, 0, 16}}));
  EXPECT_EQ(l.lanes,
            (Bases{{0, 0, 1}, {0, 0, 2}, {0, 1, 0}, {0, 2, 0}, {0, 4, 0}}));
  EXPECT_EQ(l.warps, (Bases{{0, 0, 4}, {0, 0, 8}}));
  expectCoversOnce(l);
}

//===----------------------------------------------------------------------===//
// #tile.mma
//===----------------------------------------------------------------------===//

// 2x2 warps of 16x8 instruction tiles (warp bit 0 along M) over 64x32: each
// warp holds two tiles along N (register bit 2) and two along M (bit 3).
TEST_F(LayoutTest, MmaAccumulator) {
  LinearLayout l = linear(mma(2, 2), {64, 32});
  EXPECT_EQ(l.regs, (Bases{{0, 1}, {8, 0}, {0, 16}, {32, 0}}));
  EXPECT_EQ(l.lanes, (Bases{{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}));
  EXPECT_EQ(l.warps, (Bases{{16, 0}, {0, 8}}));
  for (unsigned w = 0; w < 4; ++w)
    for (unsigned lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < 16; ++r) {
        int64_t row =
            lane / 4 + 8 * ((r >> 1) & 1) + 16 * (w % 2) + 32 * ((r >> 3) & 1);
        int64_t col =
            2 * (lane % 4) + (r & 1) + 8 * (w / 2) + 16 * ((r >> 2) & 1);
        ASSERT_EQ(l.coordOf(r, lane, w), (Coord{row, col}))
            << "r=" << r << " lane=" << lane << " warp=" << w;
        ASSERT_EQ(owner(l, {row, col}), std::make_tuple(r, lane, w));
      }
  expectCoversOnce(l);
}

// The wgmma accumulator: warps [4, 1] along M, one 64-row block of N = 64.
TEST_F(LayoutTest, MmaWarpgroup) {
  LinearLayout l = linear(mma(4, 1), {64, 64});
  EXPECT_EQ(l.warps, (Bases{{16, 0}, {32, 0}}));
  // A lane's registers: its two columns (bit 0), the row 8 below (bit 1),
  // then the same in each of the 8 column blocks of the warp's 16 rows.
  EXPECT_EQ(l.regs, (Bases{{0, 1}, {8, 0}, {0, 8}, {0, 16}, {0, 32}}));
  EXPECT_EQ(l.coordOf(0, 5, 3), (Coord{49, 2}));
  expectCoversOnce(l);
}

// A tile smaller than the warp grid: the extra warps replicate.
TEST_F(LayoutTest, MmaReplicatesWarps) {
  LinearLayout l = linear(mma(4, 2), {16, 16});
  EXPECT_EQ(l.warps, (Bases{{0, 0}, {0, 0}, {0, 8}}));
  EXPECT_EQ(l.warpReplicaMask(), 0b011u);
  EXPECT_EQ(l.regs, (Bases{{0, 1}, {8, 0}}));
  expectCoversOnce(l, 4);
}

//===----------------------------------------------------------------------===//
// #tile.slice
//===----------------------------------------------------------------------===//

// A row reduction of the blocked layout: the column lanes and warp hold the
// same row values.
TEST_F(LayoutTest, SliceOfBlocked) {
  auto parent = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  auto slice = SliceLayoutAttr::get(&ctx, 1, parent);
  LinearLayout l = linear(slice, {16});
  EXPECT_EQ(l.regs, (Bases{{8}}));
  EXPECT_EQ(l.lanes, (Bases{{0}, {0}, {0}, {1}, {2}}));
  EXPECT_EQ(l.warps, (Bases{{0}, {4}}));
  EXPECT_EQ(l.laneReplicaMask(), 0b00111u);
  EXPECT_EQ(l.warpReplicaMask(), 0b01u);
  expectCoversOnce(l, 16);
  // Reducing along the dimension gives the slice layout.
  EXPECT_EQ(l, linear(parent, {16, 64}).sliced(1));
  // expand_dims of the result: the parent over a size-1 column.
  EXPECT_EQ(l.withDimInserted(1), linear(parent, {16, 1}));
  EXPECT_EQ(l.withDimInserted(1).sliced(1), l);

  auto cols = SliceLayoutAttr::get(&ctx, 0, parent);
  LinearLayout c = linear(cols, {64});
  EXPECT_EQ(c.regs, (Bases{{1}, {2}}));
  EXPECT_EQ(c.lanes, (Bases{{4}, {8}, {16}, {0}, {0}}));
  EXPECT_EQ(c.warps, (Bases{{32}, {0}}));
  EXPECT_EQ(c, linear(parent, {16, 64}).sliced(0));
}

// The row statistics of attention (m, l): a lane holds rows l/4 and l/4 + 8
// of its warp's 16 rows, the four lanes of a row replicate it.
TEST_F(LayoutTest, SliceOfMma) {
  auto slice = SliceLayoutAttr::get(&ctx, 1, mma(2, 2));
  LinearLayout l = linear(slice, {64});
  EXPECT_EQ(l.regs, (Bases{{8}, {32}}));
  EXPECT_EQ(l.lanes, (Bases{{0}, {0}, {1}, {2}, {4}}));
  EXPECT_EQ(l.warps, (Bases{{16}, {0}}));
  for (unsigned lane = 0; lane < 32; ++lane)
    EXPECT_EQ(l.coordOf(1, lane, 1), (Coord{lane / 4 + 8 + 16}));
  expectCoversOnce(l, 8);
  EXPECT_EQ(l, linear(mma(2, 2), {64, 32}).sliced(1));
}

// A rank-0 tile is a slice of a one-element 1-d layout.
TEST_F(LayoutTest, SliceToRankZero) {
  auto slice = SliceLayoutAttr::get(&ctx, 0, blocked({1}, {32}, {4}, {0}));
  LinearLayout l = linear(slice, {});
  EXPECT_EQ(l.getRank(), 0u);
  EXPECT_EQ(l.getNumRegs(), 1);
  EXPECT_EQ(l.laneReplicaMask(), 0b11111u);
  EXPECT_EQ(l.warpReplicaMask(), 0b11u);
}

//===----------------------------------------------------------------------===//
// The interface and the wrappers the lowering calls
//===----------------------------------------------------------------------===//

TEST_F(LayoutTest, Interface) {
  auto b = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  auto m = mma(4, 2);
  auto s = SliceLayoutAttr::get(&ctx, 0, m);
  for (auto [attr, rank, warps] : {std::make_tuple(Attribute(b), 2u, 4),
                                   std::make_tuple(Attribute(m), 2u, 8),
                                   std::make_tuple(Attribute(s), 1u, 8)}) {
    auto iface = dyn_cast<LayoutAttrInterface>(attr);
    ASSERT_TRUE(iface);
    EXPECT_EQ(iface.getRank(), rank);
    EXPECT_EQ(iface.getNumWarps(), warps);
    EXPECT_EQ(getLayoutNumWarps(attr), warps);
  }
  EXPECT_EQ(getLayoutNumWarps(UnitAttr::get(&ctx)), 0);
  EXPECT_TRUE(failed(toLinearLayout(UnitAttr::get(&ctx), {4})));
  EXPECT_TRUE(failed(toLinearLayout(Attribute(), {4})));
  // Wrong rank: no linear form.
  EXPECT_TRUE(failed(toLinearLayout(b, {16})));
  EXPECT_TRUE(failed(toLinearLayout(m, {16, 16, 2})));
  EXPECT_TRUE(failed(toLinearLayout(s, {16, 16})));

  auto type = RankedTensorType::get({16, 64}, Float32Type::get(&ctx), b);
  EXPECT_EQ(*toLinearLayout(type), *b.toLinearLayout({16, 64}));
}

TEST_F(LayoutTest, VerifyShape) {
  auto b = blocked({1, 4}, {4, 8}, {2, 2}, {1, 0});
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto emit = [&] { return emitError(UnknownLoc::get(&ctx)); };
  EXPECT_TRUE(succeeded(b.verifyShape({16, 64}, emit)));
  EXPECT_TRUE(succeeded(b.verifyShape({1, 1}, emit)));
  EXPECT_TRUE(failed(b.verifyShape({16}, emit)));
  EXPECT_NE(message.find("is for rank 2, not for a tensor of rank 1"),
            std::string::npos)
      << message;
  EXPECT_TRUE(failed(b.verifyShape({16, 48}, emit)));
  EXPECT_NE(message.find("static power-of-two"), std::string::npos);
  EXPECT_TRUE(failed(b.verifyShape({ShapedType::kDynamic, 64}, emit)));
}

TEST_F(LayoutTest, Contiguity) {
  // 4 columns per thread: 4 consecutive registers along the columns.
  LinearLayout b = linear(blocked({1, 4}, {4, 8}, {2, 2}, {1, 0}), {16, 64});
  EXPECT_EQ(getContiguity(b, 1), 4);
  EXPECT_EQ(getContiguity(b, 0), 1);
  // The repeats along the columns are 128 apart: not contiguous with 0..3.
  LinearLayout wide =
      linear(blocked({1, 4}, {1, 32}, {1, 1}, {1, 0}), {1, 256});
  EXPECT_EQ(wide.regs, (Bases{{0, 1}, {0, 2}, {0, 128}}));
  EXPECT_EQ(getContiguity(wide, 1), 4);
  // Column-major: 8 consecutive rows per thread.
  LinearLayout t = linear(blocked({8, 1}, {4, 8}, {1, 4}, {0, 1}), {32, 32});
  EXPECT_EQ(getContiguity(t, 0), 8);
  EXPECT_EQ(getContiguity(t, 1), 1);
  // mma: two columns per lane.
  LinearLayout m = linear(mma(2, 2), {64, 32});
  EXPECT_EQ(getContiguity(m, 1), 2);
  EXPECT_EQ(getContiguity(m, 0), 1);
}

// The layout tile-map-threads gives a 64x64 f16 load on 4 warps: 16-byte
// runs (8 halves) per thread, 8 lanes along a row, warps down the rows.
TEST_F(LayoutTest, DefaultBlockedLayout) {
  BlockedLayoutAttr l = getDefaultBlockedLayout(&ctx, {64, 64}, 1, 16, 4);
  EXPECT_EQ(l, blocked({1, 8}, {4, 8}, {4, 1}, {1, 0}));
  // Long rows: a warp covers 256 columns, the warps the rest of the row;
  // unless the row is reduced, then the warps take rows (no shared memory).
  EXPECT_EQ(getDefaultBlockedLayout(&ctx, {64, 1024}, 1, 16, 4),
            blocked({1, 8}, {1, 32}, {1, 4}, {1, 0}));
  EXPECT_EQ(getDefaultBlockedLayout(&ctx, {64, 1024}, 1, 16, 4, 1),
            blocked({1, 8}, {1, 32}, {4, 1}, {1, 0}));
}

} // namespace
