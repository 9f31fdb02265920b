//===- InputLimits.h - limits on textual IR before it is parsed -*- C++ -*-===//
//
// The MLIR parser recurses once per nesting level (a stack overflow past a
// few thousand levels) and parses integer literals in time cubic in their
// length; it crashes on a dense array of `index`. tile-opt and the compile
// entry point (tilec, launches) check the text for these first and report a
// diagnostic instead.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_INPUTLIMITS_H
#define TILE_COMPILER_INPUTLIMITS_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::tile {

/// Brackets, braces, parentheses and angle brackets nested deeper than this
/// are rejected: the parser (and passes walking the regions) need about 2 KiB
/// of stack per level, and a thread may have as little as 1 MiB. Real kernels
/// nest fewer than 20 levels.
constexpr unsigned kMaxInputNesting = 256;
/// Integer literals with more digits than this are rejected (their parse
/// time is cubic in the length; no tile type holds more than 20 digits).
constexpr unsigned kMaxLiteralDigits = 512;

/// Where and why a text exceeds a limit.
struct InputLimitViolation {
  size_t offset; // in the text
  std::string message;
};

/// The first place `text` exceeds a limit, if any. Strings and `//`
/// comments are skipped; MLIR bytecode (binary) is not checked.
std::optional<InputLimitViolation>
findInputLimitViolation(llvm::StringRef text);

/// The violation as "<bufferName>:line:col: error: message\n".
std::string formatInputLimitViolation(llvm::StringRef text,
                                      llvm::StringRef bufferName,
                                      const InputLimitViolation &violation);

} // namespace mlir::tile

#endif
