#pragma once
// The ONNX evaluator's kernels: one function per standard-domain op, computing a node with ATen.
// A family of ops (elementwise, shape, reductions, nn, ...) lives in one kernels/<family>.cpp,
// which fills a KernelTable with register_<family>_kernels. The graph runner (evaluator.h) and
// the constant folder call kernels through the table; kernels never see the graph.
#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnxport::core::eval {

// A value flowing between nodes: a tensor, or an ONNX sequence of tensors. An optional input
// left out (empty name) is a value with an undefined tensor and no sequence.
struct EvalValue {
  at::Tensor tensor;
  std::optional<std::vector<at::Tensor>> sequence;

  EvalValue() = default;
  EvalValue(at::Tensor t) : tensor(std::move(t)) {}  // NOLINT: a tensor is a value
  static EvalValue of_sequence(std::vector<at::Tensor> items) {
    EvalValue v;
    v.sequence = std::move(items);
    return v;
  }
  bool is_sequence() const { return sequence.has_value(); }
  bool present() const { return tensor.defined() || sequence.has_value(); }
};

// Thrown by a kernel for a node it cannot compute (an attribute value it does not handle, inputs
// that break the op's rules). The runner adds the node's name and op.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs one of the node's graph attributes (If branches, Loop/Scan bodies) on the given inputs,
// with the enclosing graphs' values visible; returns the sub-graph's outputs in order.
using SubgraphRunner = std::function<std::vector<EvalValue>(const onnx::GraphProto&, const std::vector<EvalValue>&)>;

// What a kernel sees: its node (attributes), the opset of the node's domain, its inputs.
class KernelContext {
 public:
  KernelContext(const onnx::NodeProto& node, int opset, const std::vector<EvalValue>& inputs,
                SubgraphRunner run_subgraph = {});

  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }

  size_t input_count() const { return inputs_.size(); }
  // Whether input i was given (not past the end, not an empty name).
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].present(); }
  // Input i as a tensor; KernelError if it is missing or a sequence.
  const at::Tensor& input(size_t i) const;
  // Input i, or an undefined tensor when it was left out.
  at::Tensor optional_input(size_t i) const;
  const std::vector<at::Tensor>& sequence_input(size_t i) const;
  const EvalValue& value(size_t i) const;
  // How many outputs the node names (trailing optional outputs may be omitted).
  size_t output_count() const { return static_cast<size_t>(node_.output_size()); }
  bool wants_output(size_t i) const { return i < output_count() && !node_.output(static_cast<int>(i)).empty(); }

  // Attributes, with the default when absent.
  bool has_attr(const char* name) const;
  int64_t attr_i(const char* name, int64_t fallback) const;
  float attr_f(const char* name, float fallback) const;
  std::string attr_s(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const char* name, std::vector<float> fallback = {}) const;
  std::vector<std::string> attr_strings(const char* name) const;
  // A tensor attribute as an ATen tensor (nullopt when absent).
  std::optional<at::Tensor> attr_t(const char* name) const;
  const onnx::GraphProto& attr_g(const char* name) const;  // KernelError when absent

  std::vector<EvalValue> run_subgraph(const onnx::GraphProto& graph, const std::vector<EvalValue>& inputs) const;

  // KernelError naming the op: "<op>: <what>".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const onnx::NodeProto& node_;
  int opset_;
  const std::vector<EvalValue>& inputs_;
  SubgraphRunner run_subgraph_;
};

// A kernel returns one value per output the node names (it may compute outputs the node does
// not want; extra ones are dropped).
using Kernel = std::function<std::vector<EvalValue>(const KernelContext&)>;

struct KernelEntry {
  Kernel run;
  int since_opset = 1;  // the first opset version of the op this kernel implements
  // The newest version of the op the kernel implements (at least since_opset's). Versions ONNX
  // added later are run only when ONNX's schemas show they differ from this one in element types
  // alone (see implements_version_at); a version that changed inputs, attributes or defaults
  // (AveragePool-19's dilations, Reduce*-18's axes input) has no kernel here until the kernel is
  // brought up to it.
  int through_version = 17;
};

// Whether `entry` implements `op`'s version at `opset` (standard domain): the version ONNX's
// schemas give for that opset is entry.through_version or older, or every version ONNX added
// since entry.through_version has the same inputs, outputs and attributes (names, arity,
// defaults) as the one before it (Reshape-19, -21 and Cast-21 add float8 and 4-bit types, which
// no model onnxport writes holds; a kernel refuses a type it cannot hold).
bool implements_version_at(const std::string& op, const KernelEntry& entry, int opset);
// The version of `op` ONNX's schemas give at `opset` (0 when ONNX has no such op).
int onnx_version_at(const std::string& op, int opset);
using KernelTable = std::unordered_map<std::string, KernelEntry>;

// Every standard-domain kernel, filled once from the families below (std::logic_error if two
// families register one op).
const KernelTable& standard_kernels();

void register_elementwise_kernels(KernelTable& table);   // math, comparison, logic, activations
void register_shape_kernels(KernelTable& table);         // reshape, slice, gather, concat, pad, ...
void register_reduction_kernels(KernelTable& table);     // Reduce*, ArgMax/Min, TopK, CumSum, softmax
void register_nn_kernels(KernelTable& table);            // conv, pool, norm, resize, rnn, RoiAlign, losses
void register_misc_kernels(KernelTable& table);          // quantize, NMS, DFT/STFT, windows, random ops
void register_control_flow_kernels(KernelTable& table);  // If, Loop, Scan, sequences

// --- helpers shared by kernel families ----------------------------------------------------
// ONNX TensorProto data type <-> ATen scalar type (KernelError for types ATen lacks).
at::ScalarType scalar_type_of_onnx(int32_t onnx_type);
int32_t onnx_type_of(at::ScalarType t);
// A TensorProto's data (raw or typed fields) as a new ATen tensor; external data is not read here.
at::Tensor tensor_from_proto(const onnx::TensorProto& t);
// The values of a 1-d (or 0-d) integer tensor.
std::vector<int64_t> int_values(const at::Tensor& t);
// A possibly negative axis made non-negative for a tensor of rank `rank` (KernelError when out
// of range).
int64_t normalize_axis(int64_t axis, int64_t rank, const KernelContext& ctx);
// Half and bfloat16 as float (other types as they are): ATen's CPU kernels lack several ops for
// them (convolution, pooling, softmax, cumsum, mm); the caller casts the result back.
at::Tensor widened(const at::Tensor& t);
// Outputs whose size a file decides (ConstantOfShape's shape, Tile's repeats, Range's bounds...)
// are checked before they are allocated: with overcommit a too large one would be granted and
// the process killed while it is filled. Empty when a tensor of `dims` and `type` fits in this
// machine's physical memory; otherwise why not ("shape [1099511627776] of float (4 TiB) is larger
// than this machine's memory (23.4 GiB)").
std::string too_large_for_memory(c10::IntArrayRef dims, at::ScalarType type);
// The same limit for what grows one item at a time: a sequence, a Loop's scan outputs. `bytes`
// counts the items' data plus kBytesPerItem each (an ATen tensor's own objects).
constexpr int64_t kBytesPerItem = 512;
int64_t held_bytes(const at::Tensor& item);
int64_t held_bytes(const std::vector<at::Tensor>& items);
void require_held_fits(const KernelContext& ctx, int64_t bytes, size_t items, const std::string& what);
// Lowers the limit below physical memory (0: back to physical memory). The run fuzz target keeps
// each input's tensors small this way; the product never calls it.
void set_evaluator_memory_limit(int64_t bytes);
// A cap on the iterations of one Loop (0: none, as in the product and in ONNX Runtime: a Loop of
// 2^48 trips runs until interrupted). The run fuzz target sets one so that such a file is not
// counted as a hang.
void set_evaluator_loop_limit(int64_t iterations);
int64_t evaluator_loop_limit();
// KernelError naming the op when too_large_for_memory says so.
void require_fits_in_memory(const KernelContext& ctx, c10::IntArrayRef dims, at::ScalarType type);
// One output.
inline std::vector<EvalValue> single(at::Tensor t) { return {EvalValue(std::move(t))}; }

}  // namespace onnxport::core::eval
