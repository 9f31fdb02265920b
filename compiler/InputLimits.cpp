//===- InputLimits.cpp - limits on textual IR before it is parsed ---------===//
#include "compiler/InputLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::tile;

/// The magic number that starts MLIR bytecode.
static constexpr llvm::StringLiteral kBytecodeMagic("ML\xefR");

static bool isIdentifierStart(char c) {
  return llvm::isAlpha(c) || llvm::is_contained("_$%@#^!", c);
}

static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || llvm::is_contained("_$.-", c);
}

/// Whether the identifier text[start, end) opens `array<index`: MLIR 22's
/// parser takes the element width of `index` as a float's and crashes
/// (mlir-opt too; compiler fuzzer, seed 20261211).
static bool isIndexDenseArray(llvm::StringRef text, size_t start, size_t end) {
  if (text.slice(start, end) != "array")
    return false;
  llvm::StringRef rest = text.substr(end).ltrim();
  if (!rest.consume_front("<"))
    return false;
  rest = rest.ltrim();
  return rest.consume_front("index") &&
         (rest.empty() || !isIdentifierChar(rest.front()));
}

std::optional<InputLimitViolation>
tile::findInputLimitViolation(llvm::StringRef text) {
  if (text.starts_with(kBytecodeMagic))
    return std::nullopt;
  unsigned depth = 0;
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '"') { // A string: to the closing quote or the end of the line.
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      continue;
    }
    if (text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      continue; // npos ends the loop
    }
    // `->`, `>=` and `<=` (function types, integer sets) are not brackets.
    if (text.substr(i).starts_with("->") || text.substr(i).starts_with(">=") ||
        text.substr(i).starts_with("<=")) {
      i += 2;
      continue;
    }
    if (isIdentifierStart(c)) { // Names and keywords may hold digits.
      size_t start = i;
      for (++i; i < n && isIdentifierChar(text[i]); ++i)
        ;
      if (isIndexDenseArray(text, start, i))
        return InputLimitViolation{
            start, "a dense array of `index` (array<index: ...>): MLIR's "
                   "parser crashes on it; use array<i64: ...>"};
      continue;
    }
    if (llvm::isDigit(c)) {
      size_t start = i;
      bool hex = text.substr(i).starts_with_insensitive("0x");
      if (hex)
        i += 2;
      while (i < n &&
             (hex ? llvm::isHexDigit(text[i]) : llvm::isDigit(text[i])))
        ++i;
      if (i - start > kMaxLiteralDigits)
        return InputLimitViolation{
            start, (llvm::Twine("a number literal of ") +
                    llvm::Twine(i - start) + " digits: at most " +
                    llvm::Twine(kMaxLiteralDigits) + " are accepted")
                       .str()};
      continue;
    }
    if (llvm::is_contained("{([<", c) && ++depth > kMaxInputNesting)
      return InputLimitViolation{
          i,
          (llvm::Twine("nesting deeper than ") + llvm::Twine(kMaxInputNesting) +
           " levels of brackets, braces, parentheses and angle brackets")
              .str()};
    if (llvm::is_contained("})]>", c) && depth)
      --depth;
    ++i;
  }
  return std::nullopt;
}

std::string
tile::formatInputLimitViolation(llvm::StringRef text,
                                llvm::StringRef bufferName,
                                const InputLimitViolation &violation) {
  llvm::StringRef before = text.take_front(violation.offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = violation.offset -
                  (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
  return (bufferName + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
          ": error: " + violation.message + "\n")
      .str();
}
