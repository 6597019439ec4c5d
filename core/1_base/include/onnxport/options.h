#pragma once
// Export options: torch.onnx.export's names and meanings, plus onnxport's own.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnxport/dtype.h"

namespace onnxport {

// One example argument of the exported method, as --input and the config's "inputs" give it:
//   a tensor       "x:1x3x224x224:float32" (random, fixed seed), "x:1x3x224x224" (float32),
//                  "x:scalar:int64", "x=inputs/x.npy" (exact values; shape and dtype from the file)
//   a value        "sr:int=16000", "scale:float=0.5", "flag:bool=1", "mode:str=linear",
//                  "flags:bool[]=1,0", "sizes:int[]=3,4" (a list or tuple of numbers)
//   None           "mask:none"
//   a collection   "hc:(1x2x4,1x2x4)" (tuple), "xs:[2x3,2x3]" (list), "d:{a:2x3,b:int=4}" (str-keyed
//                  dict); elements are any of these forms without the name (FILE.npy for a file),
//                  a list of numbers inside brackets as "[int=1,int=2]".
// The method's schema decides what each becomes (core/3_export/1_load/example_arguments.h).
struct InputSpec {
  enum class Kind { Tensor, Value, None, Tuple, List, Dict };
  Kind kind = Kind::Tensor;
  std::string name;            // graph input name (for a dict element: its key)
  std::vector<int64_t> shape;  // for random inputs
  DType dtype = DType::Float;
  std::string npy_file;  // exact values from a .npy file (shape/dtype from the file)
  // Kind::Value: "int", "float", "bool" or "str", and whether it is a list of them ("int[]").
  std::string value_type;
  bool value_list = false;
  std::vector<std::string> values;  // the text of each value (one unless value_list)
  std::vector<InputSpec> elements;  // Tuple, List, Dict (each element's name is its dict key)
  // Integers drawn like a given tensor (verify's further input sets) lie within its smallest and
  // largest value, so that token ids stay the kind the model was given; others are drawn in [0, 8).
  std::optional<std::pair<int64_t, int64_t>> int_range;

  static InputSpec parse(const std::string& text);
  // The spec in the form parse reads: "x:1x3x224x224:float32", "x:scalar:int64", "x=inputs/x.npy",
  // "sr:int=16000", "hc:(1x2x4:float32,1x2x4:float32)".
  std::string text() const;
  bool is_tensor() const { return kind == Kind::Tensor; }
};


// The opsets an export can target, and the default. kMaxMappedOpset is the newest opset the
// built-in op packs map; a build exports up to max_opset(): that, or the newest opset whose
// operator schemas the linked ONNX has (17 with ONNX 1.12, 22 with ONNX 1.17), the lower.
constexpr int kMinOpset = 7;
constexpr int kMaxMappedOpset = 22;
constexpr int kDefaultOpset = 17;
int max_opset();

enum class TrainingMode { Eval, Preserve, Train };

// torch.onnx's operator_export_type: what happens to ops no op pack maps.
//   onnx               - the export fails, listing them;
//   onnx_aten          - every aten op (mapped or not) becomes an ATen node in org.pytorch.aten;
//   onnx_aten_fallback - unmapped ops become ATen nodes;
//   onnx_fallthrough   - unmapped ops are kept as-is in a domain named after their namespace.
enum class OperatorExportType { Onnx, OnnxAten, OnnxAtenFallback, OnnxFallthrough };

// How the model's forward becomes a graph:
//   trace  - the ops one run on the example inputs executes (loops unrolled, branches fixed);
//            a .pt saved by torch.jit.trace is used as saved, a scripted one is traced here;
//   script - the TorchScript graph as compiled, control flow kept (ONNX If/Loop);
//   auto   - script when a branch or loop, or a number taken from a tensor (int(t), t.item()),
//            depends on tensor values (or a branch or loop on sizes of dynamic axes), trace
//            otherwise.
enum class ExportMode { Trace, Script, Auto };

// torch.get_default_dtype() while the model is loaded, run and converted: the dtype of an integer
// true division and of a factory given no dtype. A saved .pt does not record the default of the
// process that saved it.
enum class DefaultDtype { Float32, Float64 };

struct ExportOptions {
  // torch.onnx.export parity
  bool export_params = true;
  bool verbose = false;
  TrainingMode training = TrainingMode::Eval;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  OperatorExportType operator_export_type = OperatorExportType::Onnx;
  int opset_version = kDefaultOpset;
  bool do_constant_folding = true;
  std::map<std::string, std::map<int64_t, std::string>> dynamic_axes;  // value name -> axis -> dim name
  bool keep_initializers_as_inputs = false;
  std::map<std::string, int> custom_opsets;  // domain -> version
  // onnxport's own
  ExportMode mode = ExportMode::Trace;
  DefaultDtype default_dtype = DefaultDtype::Float32;
  // With dynamic axes: run the TorchScript graph again at other sizes of those axes and fail if
  // the export fixed a size that changes (a baked-in Reshape target, an unrolled loop).
  bool check_dynamic_axes = true;
  // When the model cannot run with the dynamic axes grown at all, the proof has no evidence either
  // way (the model's own data may forbid other sizes, or a size was baked in): false fails the
  // export; true writes it with a warning (the Python package's default: torch.onnx checks nothing).
  bool warn_unproven_dynamic_axes = false;
  // Graph inputs that no node reads once the passes ran are dropped, as torch.onnx drops them
  // (the Python package's default, so that ONNX Runtime is fed as for torch.onnx's file).
  bool drop_unused_inputs = false;
  // A dynamic_axes name that is no graph input or output, or an axis beyond its rank, is a warning
  // and ignored, as in torch.onnx (the Python package's default), instead of an error.
  bool ignore_unknown_dynamic_axes = false;
  std::vector<InputSpec> inputs;
  // What is exported: `method` of the loaded module, or of its submodule at `submodule` (a dotted
  // path of attribute names; empty: the module itself).
  std::string method = "forward";
  std::string submodule;
  // Number arguments (int, float, bool) as 0-d graph inputs instead of constants in the graph.
  bool dynamic_numbers = false;
  // Each module tensor the exported method assigns is a graph input (named after the attribute,
  // its value in the file the example) and its value after the call a graph output ("<name>_out"),
  // so that a streaming model's state goes round the loop outside the graph.
  bool state_io = false;
  // Intermediate values made graph outputs after the model's own: module paths, TorchScript
  // value names or ONNX value names (extra_outputs.h).
  std::vector<std::string> extra_outputs;
  std::vector<std::string> plugin_dirs;
  bool strict = true;       // validate every g.op against ONNX's schema
  bool check = true;        // run the ONNX checker + shape inference on the written file
  bool provenance = false;  // each node's doc_string: op pack, torch op, module path, source
  uint64_t seed = 0;        // random example inputs
  // libtorch's intra-op threads while the export runs the model (intra_op_threads.h); 0 keeps
  // libtorch's own setting.
  int threads = 1;
  // Graph passes after conversion: 0 does what torch.onnx does (dead code, constant folding,
  // Conv+BN fusion); 1 also removes no-ops, merges repeated nodes and deduplicates initializers
  // (exact rewrites); 2 also moves constant Adds into Conv biases and Gemms (passes.h).
  int optimize = 1;
  // Every initializer goes to one file beside the model (ONNX external data): external_data_file,
  // or "<model file>.data" when that is empty. Without it, parameters go into the model unless
  // they would pass protobuf's 2 GiB limit (then to "<model file>.data", with a note in the report).
  bool external_data = false;
  std::string external_data_file;

  void validate() const;  // throws ConfigError
};

// Reads a JSON config whose keys are the option names above (throws ConfigError on unknown
// keys or wrong types, naming the file and key) into `options`. The keys are those of
// export_option_table() (onnxport/option_table.h).
void load_config_file(const std::string& path, ExportOptions& options);

const char* training_mode_name(TrainingMode m);
const char* export_mode_name(ExportMode m);
ExportMode parse_export_mode(const std::string& s);
const char* default_dtype_name(DefaultDtype d);
DefaultDtype parse_default_dtype(const std::string& s);
TrainingMode parse_training_mode(const std::string& s);
const char* operator_export_type_name(OperatorExportType t);
OperatorExportType parse_operator_export_type(const std::string& s);

}  // namespace onnxport
