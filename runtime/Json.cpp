//===- Json.cpp - the small JSON subset cache metadata needs -------------===//

#include "runtime/Json.h"

#include <cstdio>

using namespace tile::runtime;

const Json *Json::get(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  auto it = objectValue.find(std::string(key));
  return it == objectValue.end() ? nullptr : &it->second;
}

std::optional<int64_t> Json::getInt(std::string_view key) const {
  const Json *v = get(key);
  if (!v || !v->isInt())
    return std::nullopt;
  return v->intValue;
}

std::optional<std::string> Json::getString(std::string_view key) const {
  const Json *v = get(key);
  if (!v || !v->isString())
    return std::nullopt;
  return v->stringValue;
}

bool Json::operator==(const Json &o) const {
  return kind == o.kind && intValue == o.intValue &&
         stringValue == o.stringValue && arrayValue == o.arrayValue &&
         objectValue == o.objectValue;
}

static void quote(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}

void Json::dumpTo(std::string &out, int indent) const {
  std::string pad(2 * (indent + 1), ' ');
  switch (kind) {
  case Kind::Null:
    out += "null";
    return;
  case Kind::Bool:
    out += intValue ? "true" : "false";
    return;
  case Kind::Int:
    out += std::to_string(intValue);
    return;
  case Kind::String:
    quote(out, stringValue);
    return;
  case Kind::Array: {
    // Arrays of scalars stay on one line: signatures read better that way.
    bool nested = false;
    for (const Json &v : arrayValue)
      nested |= v.kind == Kind::Array || v.kind == Kind::Object;
    out += '[';
    for (size_t i = 0; i < arrayValue.size(); ++i) {
      if (i)
        out += nested ? "," : ", ";
      if (nested)
        out += "\n" + pad;
      arrayValue[i].dumpTo(out, indent + 1);
    }
    if (nested && !arrayValue.empty())
      out += "\n" + std::string(2 * indent, ' ');
    out += ']';
    return;
  }
  case Kind::Object: {
    if (objectValue.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (const auto &[key, value] : objectValue) {
      if (!first)
        out += ",\n";
      first = false;
      out += pad;
      quote(out, key);
      out += ": ";
      value.dumpTo(out, indent + 1);
    }
    out += '\n';
    out += std::string(2 * indent, ' ');
    out += '}';
    return;
  }
  }
}

std::string Json::dump() const {
  std::string out;
  dumpTo(out, 0);
  out += '\n';
  return out;
}

namespace {
/// Recursive-descent parser; every error returns nullopt.
class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  std::optional<Json> parseDocument() {
    auto v = parseValue(0);
    skipSpace();
    if (!v || pos != text.size())
      return std::nullopt;
    return v;
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  std::optional<Json> parseValue(int depth) {
    if (depth > 64)
      return std::nullopt;
    skipSpace();
    if (pos >= text.size())
      return std::nullopt;
    char c = text[pos];
    if (c == '{')
      return parseObject(depth);
    if (c == '[')
      return parseArray(depth);
    if (c == '"') {
      auto s = parseString();
      if (!s)
        return std::nullopt;
      return Json(std::move(*s));
    }
    if (consume("true"))
      return Json(true);
    if (consume("false"))
      return Json(false);
    if (consume("null"))
      return Json();
    return parseInt();
  }

  std::optional<Json> parseInt() {
    size_t start = pos;
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    uint64_t value = 0;
    size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      uint64_t next = value * 10 + uint64_t(text[pos] - '0');
      if (next / 10 != value) // overflow
        return std::nullopt;
      value = next;
      ++pos;
      ++digits;
    }
    if (!digits || value > uint64_t(INT64_MAX) + (negative ? 1 : 0)) {
      pos = start;
      return std::nullopt;
    }
    return Json(negative ? int64_t(0 - value) : int64_t(value));
  }

  std::optional<std::string> parseString() {
    if (!consume("\""))
      return std::nullopt;
    std::string out;
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return std::nullopt;
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return std::nullopt;
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text[pos++];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= unsigned(h - '0');
          else if (h >= 'a' && h <= 'f')
            code |= unsigned(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F')
            code |= unsigned(h - 'A' + 10);
          else
            return std::nullopt;
        }
        // Metadata is ASCII; encode the BMP as UTF-8 for completeness.
        if (code < 0x80) {
          out += char(code);
        } else if (code < 0x800) {
          out += char(0xC0 | (code >> 6));
          out += char(0x80 | (code & 0x3F));
        } else {
          out += char(0xE0 | (code >> 12));
          out += char(0x80 | ((code >> 6) & 0x3F));
          out += char(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::optional<Json> parseArray(int depth) {
    ++pos; // '['
    Json out = Json::array();
    skipSpace();
    if (consume("]"))
      return out;
    while (true) {
      auto v = parseValue(depth + 1);
      if (!v)
        return std::nullopt;
      out.push(std::move(*v));
      skipSpace();
      if (consume("]"))
        return out;
      if (!consume(","))
        return std::nullopt;
    }
  }

  std::optional<Json> parseObject(int depth) {
    ++pos; // '{'
    Json out = Json::object();
    skipSpace();
    if (consume("}"))
      return out;
    while (true) {
      skipSpace();
      auto key = parseString();
      if (!key)
        return std::nullopt;
      skipSpace();
      if (!consume(":"))
        return std::nullopt;
      auto v = parseValue(depth + 1);
      if (!v)
        return std::nullopt;
      out[*key] = std::move(*v);
      skipSpace();
      if (consume("}"))
        return out;
      if (!consume(","))
        return std::nullopt;
    }
  }

  std::string_view text;
  size_t pos = 0;
};
} // namespace

std::optional<Json> Json::parse(std::string_view text) {
  return Parser(text).parseDocument();
}
