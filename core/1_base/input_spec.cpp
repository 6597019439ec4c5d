// --input's text forms (onnxport/options.h, InputSpec): parsed here, typed against the exported
// method's schema in core/3_export/1_load/example_arguments.cpp.
#include <set>

#include "onnxport/errors.h"
#include "onnxport/options.h"

namespace onnxport {

namespace {

class SpecParser {
 public:
  explicit SpecParser(const std::string& whole) : whole_(whole) {}

  [[noreturn]] void fail(const std::string& what, const std::string& hint = "") const {
    ErrorContext ctx;
    ctx.hint = hint.empty() ? "e.g. --input x:1x3x224x224:float32, --input x=x.npy, --input sr:int=16000, "
                              "--input mask:none, --input hc:(1x2x4,1x2x4)"
                            : hint;
    throw ConfigError("--input '" + whole_ + "': " + what, ctx);
  }

  // One element: what follows "NAME:" at the top level, or an element of a collection.
  InputSpec element(const std::string& text, bool top_level, int depth = 0) const {
    InputSpec spec;
    if (depth > kMaxDepth) fail("collections nest deeper than " + std::to_string(kMaxDepth) + " levels");
    if (text.empty()) fail("an element is empty");
    if (text == "none") {
      spec.kind = InputSpec::Kind::None;
      return spec;
    }
    const char open = text.front();
    if (open == '(' || open == '[' || open == '{') return collection(text, depth);
    if (auto eq = text.find('='); eq != std::string::npos) return value(text.substr(0, eq), text.substr(eq + 1), top_level);
    if (ends_with(text, ".npy")) {
      spec.npy_file = text;
      return spec;
    }
    auto colon = text.find(':');
    spec.shape = shape(text.substr(0, colon));
    if (colon != std::string::npos) {
      try {
        spec.dtype = dtype_from_name(text.substr(colon + 1));
      } catch (const Error& e) {
        fail(e.message(), e.context().hint);
      }
    }
    return spec;
  }

 private:
  static bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  }

  std::vector<int64_t> shape(const std::string& text) const {
    std::vector<int64_t> dims;
    if (text.empty() || text == "scalar") return dims;
    size_t start = 0;
    while (true) {
      const size_t x = text.find('x', start);
      const std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
      try {
        size_t used = 0;
        const long long v = std::stoll(part, &used);
        if (used != part.size() || v < 0) throw std::invalid_argument(part);
        dims.push_back(v);
      } catch (const std::exception&) {
        fail("bad dimension '" + part + "'", "write the shape as 1x3x224x224 (or 'scalar')");
      }
      if (x == std::string::npos) break;
      start = x + 1;
    }
    return dims;
  }

  // "int=16000", "bool[]=1,0" (a list's values split at commas only at the top level: inside a
  // collection, a list of numbers is written as a bracketed list of values).
  InputSpec value(const std::string& type, const std::string& text, bool top_level) const {
    static const std::set<std::string> kTypes = {"int", "float", "bool", "str"};
    InputSpec spec;
    spec.kind = InputSpec::Kind::Value;
    spec.value_list = type.size() > 2 && type.compare(type.size() - 2, 2, "[]") == 0;
    spec.value_type = spec.value_list ? type.substr(0, type.size() - 2) : type;
    if (!kTypes.count(spec.value_type))
      fail("unknown value type '" + type + "'", "give a value as int=, float=, bool= or str= (a list as int[]=1,2)");
    if (spec.value_list && !top_level)
      fail("a list of values inside a collection is written [" + spec.value_type + "=V," + spec.value_type + "=V]");
    if (!spec.value_list) {
      spec.values.push_back(text);
    } else if (!text.empty()) {
      size_t start = 0;
      while (true) {
        const size_t comma = text.find(',', start);
        spec.values.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    for (const auto& v : spec.values) check_value(spec.value_type, v);
    return spec;
  }

  void check_value(const std::string& type, const std::string& v) const {
    if (type == "str") return;
    if (type == "bool") {
      if (v != "0" && v != "1" && v != "true" && v != "false")
        fail("'" + v + "' is not a bool", "write a bool as 1, 0, true or false");
      return;
    }
    try {
      size_t used = 0;
      if (type == "int")
        (void)std::stoll(v, &used);
      else
        (void)std::stod(v, &used);
      if (used == v.size()) return;
    } catch (const std::exception&) {
    }
    fail("'" + v + "' is not " + (type == "int" ? "an int" : "a float"));
  }

  // "(A,B)", "[A,B]", "{k:A,l:B}": elements split at the commas outside any bracket.
  InputSpec collection(const std::string& text, int level) const {
    const char open = text.front();
    const char close = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (text.back() != close) fail(std::string("'") + open + "' is not closed by '" + close + "'");
    InputSpec spec;
    spec.kind = open == '(' ? InputSpec::Kind::Tuple : open == '[' ? InputSpec::Kind::List : InputSpec::Kind::Dict;
    const std::string inner = text.substr(1, text.size() - 2);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      const char c = i < inner.size() ? inner[i] : ',';
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (depth < 0) fail("unbalanced brackets");
      if (c != ',' || depth > 0) continue;
      const std::string part = inner.substr(start, i - start);
      start = i + 1;
      if (part.empty() && inner.empty()) break;  // "()" or "[]": no elements
      if (spec.kind != InputSpec::Kind::Dict) {
        spec.elements.push_back(element(part, false, level + 1));
        continue;
      }
      const size_t colon = part.find(':');
      if (colon == std::string::npos || colon == 0) fail("a dict element is written KEY:VALUE, got '" + part + "'");
      InputSpec entry = element(part.substr(colon + 1), false, level + 1);
      entry.name = part.substr(0, colon);
      spec.elements.push_back(std::move(entry));
    }
    if (depth != 0) fail("unbalanced brackets");
    return spec;
  }

  static constexpr int kMaxDepth = 16;
  const std::string& whole_;
};

std::string element_text(const InputSpec& spec) {
  switch (spec.kind) {
    case InputSpec::Kind::None: return "none";
    case InputSpec::Kind::Value: {
      std::string text = spec.value_type + (spec.value_list ? "[]=" : "=");
      for (size_t i = 0; i < spec.values.size(); ++i) text += (i ? "," : "") + spec.values[i];
      return text;
    }
    case InputSpec::Kind::Tuple:
    case InputSpec::Kind::List:
    case InputSpec::Kind::Dict: {
      const bool dict = spec.kind == InputSpec::Kind::Dict;
      std::string text(1, spec.kind == InputSpec::Kind::Tuple ? '(' : dict ? '{' : '[');
      for (size_t i = 0; i < spec.elements.size(); ++i)
        text += (i ? "," : "") + (dict ? spec.elements[i].name + ":" : "") + element_text(spec.elements[i]);
      return text + (spec.kind == InputSpec::Kind::Tuple ? ')' : dict ? '}' : ']');
    }
    case InputSpec::Kind::Tensor: break;
  }
  if (!spec.npy_file.empty()) return spec.npy_file;
  std::string dims;
  for (int64_t d : spec.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return (spec.shape.empty() ? "scalar" : dims) + ":" + dtype_name(spec.dtype);
}

}  // namespace

InputSpec InputSpec::parse(const std::string& text) {
  const SpecParser parser(text);
  const auto eq = text.find('=');
  const auto colon = text.find(':');
  if (eq != std::string::npos && (colon == std::string::npos || eq < colon)) {  // NAME=FILE.npy
    InputSpec spec;
    spec.name = text.substr(0, eq);
    spec.npy_file = text.substr(eq + 1);
    if (spec.name.empty() || spec.npy_file.empty()) parser.fail("expected NAME=FILE.npy");
    const auto& file = spec.npy_file;
    if (file.find_first_not_of("0123456789.-+e") == std::string::npos)
      parser.fail("'" + file + "' is read as a .npy file name",
                  "give a number as --input " + spec.name + ":int=" + file + " (or :float=)");
    return spec;
  }
  if (colon == std::string::npos || colon == 0) parser.fail("expected NAME:SHAPE[:DTYPE], NAME=FILE.npy or NAME:TYPE=VALUE");
  InputSpec spec = parser.element(text.substr(colon + 1), true);
  spec.name = text.substr(0, colon);
  return spec;
}

std::string InputSpec::text() const {
  if (kind == Kind::Tensor && !npy_file.empty()) return name + "=" + npy_file;
  return name + ":" + element_text(*this);
}

}  // namespace onnxport
