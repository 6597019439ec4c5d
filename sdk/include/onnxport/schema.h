#pragma once
// Optional ONNX schemas for an op pack's custom-domain ops. A pack that declares one gets what
// standard ops get: strict mode checks every node it emits against the schema (inputs,
// outputs, attribute names and types, type constraints), ONNX's per-node inference types its
// outputs, and the final checker and shape inference cover it. Ops without a schema are
// written unchecked, as before. No ONNX header is involved: the host translates.
//
//   r.add_schema(CustomOpSchema("com.vendor", "FancyOp", 2)
//                    .input("X", "T")
//                    .output("Y", "T")
//                    .type_constraint("T", {DType::Float, DType::Double})
//                    .attribute("alpha", AttrType::Float, 1.0)
//                    .output_like_input(0, 0));
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnxport/attribute.h"
#include "onnxport/dtype.h"
#include "onnxport/types.h"

namespace onnxport {

using AttrType = ResolvedAttr::Type;

// What a schema's inference callback sees for one node.
struct SchemaInferenceInput {
  std::vector<TensorType> inputs;        // one per input slot; dtype Undefined when absent/unknown
  std::vector<ResolvedAttr> attributes;  // as set on the node (defaults are not filled in)
  const ResolvedAttr* attribute(const std::string& name) const;  // nullptr when not set
};

// Returns one type per output (fewer leaves the rest unknown; a dtype of Undefined or no shape
// leaves that part unknown). Throwing (e.g. ArgumentError) rejects the node.
using SchemaInferenceFn = std::function<std::vector<TensorType>(const SchemaInferenceInput&)>;

class CustomOpSchema {
 public:
  enum class Arity { Single, Optional, Variadic };
  struct Param {
    std::string name;
    std::string type;  // a type parameter ("T") or a fixed type ("tensor(int64)")
    Arity arity = Arity::Single;
    std::string doc;
  };
  struct TypeConstraint {
    std::string param;  // "T"
    std::vector<DType> allowed;
    std::string doc;
  };
  struct Attribute {
    std::string name;  // without suffix: "alpha"
    AttrType type = AttrType::Float;
    bool required = false;
    std::optional<AttrValue> default_value;
    std::string doc;
  };
  struct ShapeRule {
    enum class Kind { None, OutputLikeInput, Callback };
    Kind kind = Kind::None;
    std::vector<std::pair<int, int>> like;  // (output, input) pairs for OutputLikeInput
    SchemaInferenceFn fn;
  };

  // domain: a custom domain the pack declares; since_version: the domain version from which
  // this definition holds (a later add_schema with a higher version supersedes it).
  CustomOpSchema(std::string domain, std::string name, int since_version);

  CustomOpSchema& doc(std::string text);
  CustomOpSchema& input(std::string name, std::string type, Arity arity = Arity::Single, std::string doc = {});
  CustomOpSchema& output(std::string name, std::string type, Arity arity = Arity::Single, std::string doc = {});
  CustomOpSchema& type_constraint(std::string param, std::vector<DType> allowed, std::string doc = {});
  // Optional attribute with a default (its kind must fit `type`; ints are accepted for floats).
  CustomOpSchema& attribute(std::string name, AttrType type, AttrValue default_value, std::string doc = {});
  CustomOpSchema& required_attribute(std::string name, AttrType type, std::string doc = {});
  // Optional attribute without a default.
  CustomOpSchema& optional_attribute(std::string name, AttrType type, std::string doc = {});
  // Shape inference: output `output` has the element type and shape of input `input`
  // (repeatable for several outputs) ...
  CustomOpSchema& output_like_input(int output, int input);
  // ... or a callback that sees the input types and attributes and returns the output types.
  CustomOpSchema& infer(SchemaInferenceFn fn);

  const std::string& domain() const { return domain_; }
  const std::string& name() const { return name_; }
  int since_version() const { return since_version_; }
  const std::string& doc_text() const { return doc_; }
  const std::vector<Param>& inputs() const { return inputs_; }
  const std::vector<Param>& outputs() const { return outputs_; }
  const std::vector<TypeConstraint>& type_constraints() const { return constraints_; }
  const std::vector<Attribute>& attributes() const { return attributes_; }
  const ShapeRule& shape_rule() const { return shape_rule_; }
  std::string key() const;  // "com.vendor::FancyOp (since version 2)"

  // Throws RegistryError naming the schema and what is wrong: a type parameter without a
  // constraint (or the reverse), a variadic parameter that is not last, duplicate names, no
  // outputs, an output_like_input index out of range.
  void validate() const;

 private:
  std::string domain_, name_;
  int since_version_;
  std::string doc_;
  std::vector<Param> inputs_, outputs_;
  std::vector<TypeConstraint> constraints_;
  std::vector<Attribute> attributes_;
  ShapeRule shape_rule_;
};

}  // namespace onnxport
