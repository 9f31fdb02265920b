//===- ArgPack.cpp - Python values to cuLaunchKernel parameters -----------===//

#include "runtime/ArgPack.h"

#include <cstring>
#include <limits>

using namespace tile::runtime;

std::string Param::str() const {
  switch (kind) {
  case Ptr:
    return "ptr";
  case I32:
    return "i32";
  case I64:
    return "i64";
  case F32:
    return "f32";
  case F64:
    return "f64";
  case Array:
    return "array:" + std::to_string(rank);
  }
  return "?";
}

std::optional<Param> Param::parse(std::string_view text) {
  if (text == "ptr")
    return Param{Ptr};
  if (text == "i32")
    return Param{I32};
  if (text == "i64")
    return Param{I64};
  if (text == "f32")
    return Param{F32};
  if (text == "f64")
    return Param{F64};
  std::string_view prefix = "array:";
  if (text.substr(0, prefix.size()) != prefix || text.size() == prefix.size() ||
      text.size() > prefix.size() + 2)
    return std::nullopt;
  int rank = 0;
  for (char c : text.substr(prefix.size())) {
    if (c < '0' || c > '9')
      return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  return Param{Array, rank};
}

ArgPlan::ArgPlan(Signature signature) : sig(std::move(signature)) {
  for (size_t p = 0; p < sig.size(); ++p) {
    first.push_back(slots.size());
    auto add = [&](SlotKind k, size_t n) {
      slots.insert(slots.end(), n, k);
      owner.insert(owner.end(), n, uint32_t(p));
    };
    switch (sig[p].kind) {
    case Param::Ptr:
      add(SlotKind::Ptr, 1);
      break;
    case Param::I32:
      add(SlotKind::I32, 1);
      break;
    case Param::I64:
      add(SlotKind::I64, 1);
      break;
    case Param::F32:
      add(SlotKind::F32, 1);
      break;
    case Param::F64:
      add(SlotKind::F64, 1);
      break;
    case Param::Array:
      add(SlotKind::Ptr, 1);
      add(SlotKind::I64, 2 * size_t(sig[p].rank)); // extents, then strides
      break;
    }
  }
}

std::string ArgPlan::describe(size_t i) const {
  uint32_t p = owner[i];
  std::string text = "argument " + std::to_string(i);
  if (sig[p].kind != Param::Array)
    return text + " (" + sig[p].str() + " parameter " + std::to_string(p) +
           ")";
  size_t k = i - first[p];
  size_t rank = size_t(sig[p].rank);
  std::string what = k == 0       ? "data pointer"
                     : k <= rank  ? "extent " + std::to_string(k - 1)
                                  : "stride " + std::to_string(k - 1 - rank);
  return text + " (" + what + " of array parameter " + std::to_string(p) + ")";
}

PackedArgs::PackedArgs(const ArgPlan &plan, size_t extra) : plan(plan) {
  size_t n = plan.size();
  if (n + extra <= kInline) {
    cells = inlineCells;
    ptrs = inlinePtrs;
  } else {
    heapCells.resize(n);
    heapPtrs.resize(n + extra);
    cells = heapCells.data();
    ptrs = heapPtrs.data();
  }
  for (size_t i = 0; i < n; ++i) {
    cells[i] = 0;
    ptrs[i] = &cells[i];
  }
  for (size_t j = 0; j < extra; ++j)
    ptrs[n + j] = nullptr;
}

template <typename T> static void store(uint64_t &cell, T value) {
  // The driver reads sizeof(T) bytes at the cell's address.
  std::memcpy(&cell, &value, sizeof(T));
}

void PackedArgs::setInt(size_t i, int64_t value) {
  switch (plan.slot(i)) {
  case SlotKind::Ptr:
  case SlotKind::I64:
    store(cells[i], value);
    return;
  case SlotKind::I32:
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      throw ArgError(plan.describe(i) + ": " + std::to_string(value) +
                     " does not fit in i32; this kernel was specialized for "
                     "32-bit ints");
    store(cells[i], int32_t(value));
    return;
  case SlotKind::F32:
    store(cells[i], float(value));
    return;
  case SlotKind::F64:
    store(cells[i], double(value));
    return;
  }
}

void PackedArgs::setUInt(size_t i, uint64_t value) {
  SlotKind k = plan.slot(i);
  if (k == SlotKind::Ptr || (k == SlotKind::I64 && value <= INT64_MAX)) {
    store(cells[i], value);
    return;
  }
  if (value > uint64_t(std::numeric_limits<int64_t>::max()))
    throw ArgError(plan.describe(i) + ": " + std::to_string(value) +
                   " is out of range");
  setInt(i, int64_t(value));
}

void PackedArgs::setFloat(size_t i, double value) {
  switch (plan.slot(i)) {
  case SlotKind::F32:
    store(cells[i], float(value));
    return;
  case SlotKind::F64:
    store(cells[i], value);
    return;
  default:
    throw ArgError(plan.describe(i) + ": expected an int, got the float " +
                   std::to_string(value));
  }
}
