#include "onnxport/errors.h"

namespace onnxport {

ErrorContext ErrorContext::with_hint(std::string hint) {
  ErrorContext c;
  c.hint = std::move(hint);
  return c;
}

ErrorContext ErrorContext::for_file(std::string model_file, std::string hint) {
  ErrorContext c;
  c.model_file = std::move(model_file);
  c.hint = std::move(hint);
  return c;
}

ErrorContext ErrorContext::for_pack(std::string pack, std::string hint) {
  ErrorContext c;
  c.pack = std::move(pack);
  c.hint = std::move(hint);
  return c;
}

ErrorContext ErrorContext::for_node(std::string model_file, std::string torch_op, std::string module_path,
                                    std::string source, std::string pack, std::string hint) {
  return ErrorContext{std::move(model_file),  std::move(torch_op), std::move(pack),
                      std::move(module_path), std::move(source),   std::move(hint)};
}

Error::Error(const std::string& message, ErrorContext ctx)
    : std::runtime_error(message), message_(message), ctx_(std::move(ctx)) {
  compose();
}

void Error::add_context(const ErrorContext& outer) {
  auto fill = [](std::string& mine, const std::string& theirs) {
    if (mine.empty()) mine = theirs;
  };
  fill(ctx_.model_file, outer.model_file);
  fill(ctx_.torch_op, outer.torch_op);
  fill(ctx_.pack, outer.pack);
  fill(ctx_.module_path, outer.module_path);
  fill(ctx_.source, outer.source);
  fill(ctx_.hint, outer.hint);
  compose();
}

// "<message> (op aten::x, pack nn (/p/libonnxport_nn.so), module features.0, at m.py:3,
//  model m.pt) — hint"
void Error::compose() {
  std::string where;
  auto part = [&where](const char* label, const std::string& v) {
    if (v.empty()) return;
    where += where.empty() ? "" : ", ";
    where += label;
    where += v;
  };
  part("op ", ctx_.torch_op);
  part("pack ", ctx_.pack);
  part("module ", ctx_.module_path.empty() ? std::string() : ctx_.module_path);
  part("at ", ctx_.source);
  part("model ", ctx_.model_file);
  full_ = message_;
  if (!where.empty()) full_ += " (" + where + ")";
  if (!ctx_.hint.empty()) full_ += " — " + ctx_.hint;
}

}  // namespace onnxport
