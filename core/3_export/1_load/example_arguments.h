#pragma once
// Example arguments from --input specs (onnxport/options.h, InputSpec): tensors drawn or read from
// .npy files, numbers, strings, None, and tuples, lists and dicts of them. Typed by the exported
// method's schema when there is one, so that a spec that does not fit its argument is refused in
// one line (the argument, its declared type, the form to give) before libtorch sees it.
#include <torch/script.h>

#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport::core {

// `method`: "forward", "_model.forward" (named in errors). ConfigError for more specs than
// arguments, and for an argument without a spec or a default.
std::vector<torch::jit::IValue> make_example_arguments(const std::vector<InputSpec>& specs, uint64_t seed,
                                                       const c10::FunctionSchema& schema, const std::string& method);

// The --input form for an argument of this type: "sr:int=VALUE", "x:SHAPE[:DTYPE] or x=FILE.npy".
std::string input_form(const std::string& name, const c10::TypePtr& type);

}  // namespace onnxport::core
