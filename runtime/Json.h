//===- Json.h - the small JSON subset cache metadata needs ------*- C++ -*-===//
//
// Cache metadata is JSON so `python -m tile.cache` and people can read it.
// This is a strict, small reader/writer (objects, arrays, strings, integers,
// booleans, null); anything it cannot parse makes the entry a miss.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_JSON_H
#define TILE_RUNTIME_JSON_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tile::runtime {

class Json {
public:
  enum class Kind { Null, Bool, Int, String, Array, Object };

  Json() = default;
  Json(bool b) : kind(Kind::Bool), intValue(b) {}
  Json(int v) : kind(Kind::Int), intValue(v) {}
  Json(int64_t v) : kind(Kind::Int), intValue(v) {}
  Json(uint64_t v) : kind(Kind::Int), intValue(int64_t(v)) {}
  Json(const char *s) : kind(Kind::String), stringValue(s) {}
  Json(std::string s) : kind(Kind::String), stringValue(std::move(s)) {}
  static Json array() { return Json(Kind::Array); }
  static Json object() { return Json(Kind::Object); }

  Kind getKind() const { return kind; }
  bool isInt() const { return kind == Kind::Int; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  int64_t asInt() const { return intValue; }
  const std::string &asString() const { return stringValue; }
  const std::vector<Json> &items() const { return arrayValue; }
  const std::map<std::string, Json> &fields() const { return objectValue; }

  void push(Json v) { arrayValue.push_back(std::move(v)); }
  Json &operator[](const std::string &key) { return objectValue[key]; }
  /// The field `key` of an object, or null when absent or not an object.
  const Json *get(std::string_view key) const;
  /// Typed field access for readers: nullopt when absent or of another kind.
  std::optional<int64_t> getInt(std::string_view key) const;
  std::optional<std::string> getString(std::string_view key) const;

  /// Deterministic text: object keys sorted, two-space indentation.
  std::string dump() const;
  static std::optional<Json> parse(std::string_view text);

  bool operator==(const Json &o) const;
  bool operator!=(const Json &o) const { return !(*this == o); }

private:
  explicit Json(Kind k) : kind(k) {}
  void dumpTo(std::string &out, int indent) const;

  Kind kind = Kind::Null;
  int64_t intValue = 0;
  std::string stringValue;
  std::vector<Json> arrayValue;
  std::map<std::string, Json> objectValue;
};

} // namespace tile::runtime

#endif
