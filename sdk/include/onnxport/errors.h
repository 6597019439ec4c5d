#pragma once
// One exception hierarchy for the SDK, the registry, the core and every op pack.
// Context (model file, torch op, op pack, module path, hint) is attached where it is known,
// usually by the layer that catches and re-throws, so a message says where and what next.
#include <stdexcept>
#include <string>

namespace onnxport {

struct ErrorContext {
  std::string model_file;   // the .pt being exported
  std::string torch_op;     // "aten::max_pool2d"
  std::string pack;         // op pack id ("nn") and its file, "nn (/.../libonnxport_nn.so)"
  std::string module_path;  // "features.0"
  std::string source;       // "model.py:42"
  std::string hint;         // what to do next

  // Named ways to build one, so call sites say which fields they fill.
  static ErrorContext with_hint(std::string hint);
  static ErrorContext for_file(std::string model_file, std::string hint = {});
  static ErrorContext for_pack(std::string pack, std::string hint = {});
  // A TorchScript node: its op, module path and source line (and the pack converting it).
  static ErrorContext for_node(std::string model_file, std::string torch_op, std::string module_path,
                               std::string source, std::string pack = {}, std::string hint = {});
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorContext ctx = {});
  const char* what() const noexcept override { return full_.c_str(); }
  const std::string& message() const { return message_; }
  const ErrorContext& context() const { return ctx_; }
  // Fill context fields that are still empty (inner layers know more than outer ones).
  void add_context(const ErrorContext& outer);
  virtual const char* kind() const { return "error"; }

 private:
  void compose();
  std::string message_;
  ErrorContext ctx_;
  std::string full_;
};

#define ONNXPORT_ERROR_KIND(Name, label)                \
  class Name : public Error {                           \
   public:                                              \
    using Error::Error;                                 \
    const char* kind() const override { return label; } \
  };

ONNXPORT_ERROR_KIND(ArgumentError, "argument error")       // a symbolic got an argument it can't use
ONNXPORT_ERROR_KIND(AttributeError, "attribute error")     // suffix/value mismatch in g.op attributes
ONNXPORT_ERROR_KIND(SchemaError, "schema error")           // strict mode: g.op violates ONNX's schema
ONNXPORT_ERROR_KIND(UnsupportedOpError, "unsupported op")  // nothing maps a torch op
ONNXPORT_ERROR_KIND(PackLoadError, "op pack error")        // an op pack can't be loaded or registered
ONNXPORT_ERROR_KIND(RegistryError, "registry error")       // duplicate registrations, bad keys
ONNXPORT_ERROR_KIND(ConfigError, "configuration error")    // CLI flags, config files, options
ONNXPORT_ERROR_KIND(ModelError, "model error")             // loading/tracing the TorchScript model
ONNXPORT_ERROR_KIND(ExportError, "export error")           // conversion, serialization, checking
#undef ONNXPORT_ERROR_KIND

}  // namespace onnxport
