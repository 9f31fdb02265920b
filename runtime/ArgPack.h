//===- ArgPack.h - Python values to cuLaunchKernel parameters ---*- C++ -*-===//
//
// A kernel's signature is planned once into flat slots (docs/internals.md
// section 3: an array of rank r is a pointer, r i64 extents, r i64 strides;
// a scalar is its value); each launch then only converts values into a
// stack buffer and hands the driver pointers to them.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_ARGPACK_H
#define TILE_RUNTIME_ARGPACK_H

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tile::runtime {

/// One kernel parameter as the signature names it.
struct Param {
  enum Kind : uint8_t { Ptr, I32, I64, F32, F64, Array };
  Kind kind;
  int rank = 0; // arrays only

  /// "ptr", "i32", "i64", "f32", "f64", "array:<rank>".
  std::string str() const;
  static std::optional<Param> parse(std::string_view text);
  bool operator==(const Param &o) const {
    return kind == o.kind && rank == o.rank;
  }
};
using Signature = std::vector<Param>;

/// A wrong value for a parameter (bindings raise it as ValueError).
class ArgError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// What one flat value becomes in the parameter buffer.
enum class SlotKind : uint8_t { Ptr, I32, I64, F32, F64 };

class ArgPlan {
public:
  ArgPlan() = default;
  explicit ArgPlan(Signature signature);

  const Signature &signature() const { return sig; }
  /// Flat values a launch takes (what Python passes in `args`).
  size_t size() const { return slots.size(); }
  SlotKind slot(size_t i) const { return slots[i]; }
  /// "argument 2 (extent 1 of array argument 0)" for error messages.
  std::string describe(size_t i) const;
  /// The first slot of signature entry `p` (an array's data pointer).
  size_t firstSlot(size_t p) const { return first[p]; }

private:
  Signature sig;
  std::vector<SlotKind> slots;
  std::vector<uint32_t> owner; // slot -> signature index
  std::vector<size_t> first;   // signature index -> its first slot
};

/// The `void **` array for one launch. Values live in 8-byte cells; the
/// first 32 parameters need no allocation. `extra` parameters follow the
/// plan's slots (tensor maps: setExtra points them at their bytes).
class PackedArgs {
public:
  explicit PackedArgs(const ArgPlan &plan, size_t extra = 0);
  PackedArgs(const PackedArgs &) = delete;
  PackedArgs &operator=(const PackedArgs &) = delete;

  /// Integer value for slot `i` (pointers, ints; floats convert).
  void setInt(size_t i, int64_t value);
  /// Unsigned value (pointers above 2^63, uint64 ints).
  void setUInt(size_t i, uint64_t value);
  /// Floating value for slot `i`; an error on an integer slot.
  void setFloat(size_t i, double value);

  /// Parameter `plan.size() + j` is the bytes at `value` (which must live
  /// until the launch returns).
  void setExtra(size_t j, const void *value) {
    ptrs[plan.size() + j] = const_cast<void *>(value);
  }

  void **params() { return ptrs; }
  /// The bytes of slot `i` (tests check the layout).
  const void *cell(size_t i) const { return &cells[i]; }
  /// Slot `i` as the 64-bit value it holds (pointers, extents, strides).
  uint64_t cellBits(size_t i) const { return cells[i]; }

private:
  static constexpr size_t kInline = 32;
  const ArgPlan &plan;
  uint64_t inlineCells[kInline];
  void *inlinePtrs[kInline];
  std::vector<uint64_t> heapCells;
  std::vector<void *> heapPtrs;
  uint64_t *cells;
  void **ptrs;
};

} // namespace tile::runtime

#endif
