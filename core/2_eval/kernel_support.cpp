// KernelContext and the helpers kernel families share; the table of every standard kernel.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include <onnx/defs/schema.h>

#include "2_eval/kernel.h"

namespace onnxport::core::eval {

KernelContext::KernelContext(const onnx::NodeProto& node, int opset, const std::vector<EvalValue>& inputs,
                             SubgraphRunner run_subgraph)
    : node_(node), opset_(opset), inputs_(inputs), run_subgraph_(std::move(run_subgraph)) {}

const EvalValue& KernelContext::value(size_t i) const {
  if (i >= inputs_.size()) fail("input " + std::to_string(i) + " is missing");
  return inputs_[i];
}

const at::Tensor& KernelContext::input(size_t i) const {
  const EvalValue& v = value(i);
  if (v.is_sequence()) fail("input " + std::to_string(i) + " is a sequence where a tensor is expected");
  if (!v.tensor.defined()) fail("input " + std::to_string(i) + " is missing");
  return v.tensor;
}

at::Tensor KernelContext::optional_input(size_t i) const {
  if (!has_input(i)) return {};
  return input(i);
}

const std::vector<at::Tensor>& KernelContext::sequence_input(size_t i) const {
  const EvalValue& v = value(i);
  if (!v.is_sequence()) fail("input " + std::to_string(i) + " is a tensor where a sequence is expected");
  return *v.sequence;
}

namespace {

const onnx::AttributeProto* find(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace

bool KernelContext::has_attr(const char* name) const { return find(node_, name) != nullptr; }

int64_t KernelContext::attr_i(const char* name, int64_t fallback) const {
  const auto* a = find(node_, name);
  return a ? a->i() : fallback;
}

float KernelContext::attr_f(const char* name, float fallback) const {
  const auto* a = find(node_, name);
  return a ? a->f() : fallback;
}

std::string KernelContext::attr_s(const char* name, const std::string& fallback) const {
  const auto* a = find(node_, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> KernelContext::attr_ints(const char* name, std::vector<int64_t> fallback) const {
  const auto* a = find(node_, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<float> KernelContext::attr_floats(const char* name, std::vector<float> fallback) const {
  const auto* a = find(node_, name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : fallback;
}

std::vector<std::string> KernelContext::attr_strings(const char* name) const {
  const auto* a = find(node_, name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : std::vector<std::string>{};
}

std::optional<at::Tensor> KernelContext::attr_t(const char* name) const {
  const auto* a = find(node_, name);
  if (!a || !a->has_t()) return std::nullopt;
  return tensor_from_proto(a->t());
}

const onnx::GraphProto& KernelContext::attr_g(const char* name) const {
  const auto* a = find(node_, name);
  if (!a || !a->has_g()) fail(std::string("graph attribute '") + name + "' is missing");
  return a->g();
}

std::vector<EvalValue> KernelContext::run_subgraph(const onnx::GraphProto& graph,
                                                   const std::vector<EvalValue>& inputs) const {
  if (!run_subgraph_) fail("sub-graphs cannot be run here");
  return run_subgraph_(graph, inputs);
}

void KernelContext::fail(const std::string& what) const { throw KernelError(node_.op_type() + ": " + what); }

at::ScalarType scalar_type_of_onnx(int32_t onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return at::kFloat;
    case onnx::TensorProto::DOUBLE: return at::kDouble;
    case onnx::TensorProto::FLOAT16: return at::kHalf;
    case onnx::TensorProto::BFLOAT16: return at::kBFloat16;
    case onnx::TensorProto::INT8: return at::kChar;
    case onnx::TensorProto::UINT8: return at::kByte;
    case onnx::TensorProto::INT16: return at::kShort;
    case onnx::TensorProto::INT32: return at::kInt;
    case onnx::TensorProto::INT64: return at::kLong;
    case onnx::TensorProto::BOOL: return at::kBool;
    case onnx::TensorProto::COMPLEX64: return at::kComplexFloat;
    case onnx::TensorProto::COMPLEX128: return at::kComplexDouble;
    default:
      throw KernelError("ONNX data type " + std::to_string(onnx_type) +
                        " has no ATen equivalent (uint16/32/64 and strings are not evaluated)");
  }
}

int32_t onnx_type_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return onnx::TensorProto::FLOAT;
    case at::kDouble: return onnx::TensorProto::DOUBLE;
    case at::kHalf: return onnx::TensorProto::FLOAT16;
    case at::kBFloat16: return onnx::TensorProto::BFLOAT16;
    case at::kChar: return onnx::TensorProto::INT8;
    case at::kByte: return onnx::TensorProto::UINT8;
    case at::kShort: return onnx::TensorProto::INT16;
    case at::kInt: return onnx::TensorProto::INT32;
    case at::kLong: return onnx::TensorProto::INT64;
    case at::kBool: return onnx::TensorProto::BOOL;
    case at::kComplexFloat: return onnx::TensorProto::COMPLEX64;
    case at::kComplexDouble: return onnx::TensorProto::COMPLEX128;
    default: throw KernelError(std::string("ATen type ") + c10::toString(t) + " has no ONNX equivalent");
  }
}

namespace {

// Copies typed repeated-field values into a new tensor of `type`, converting element by element.
template <class Field>
at::Tensor from_field(const Field& field, const std::vector<int64_t>& shape, at::ScalarType field_type,
                      at::ScalarType type) {
  using T = typename Field::value_type;
  auto values = at::empty({static_cast<int64_t>(field.size())}, at::TensorOptions().dtype(field_type));
  std::vector<T> copy(field.begin(), field.end());
  if (!copy.empty()) std::memcpy(values.data_ptr(), copy.data(), copy.size() * sizeof(T));
  return values.to(type).reshape(shape);
}

}  // namespace

namespace {

std::string byte_size_text(double bytes) {
  const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit ? "%.1f %s" : "%.0f %s", bytes, units[unit]);
  return text;
}

std::atomic<int64_t> memory_limit{0};
std::atomic<int64_t> loop_limit{0};

// What one tensor or one growing collection may take: physical memory, or the lowered limit.
double memory_budget() {
  static const double physical =
      static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  const int64_t lowered = memory_limit.load();
  return lowered > 0 ? static_cast<double>(lowered) : physical;
}

}  // namespace

void set_evaluator_memory_limit(int64_t bytes) { memory_limit = bytes; }

void set_evaluator_loop_limit(int64_t iterations) { loop_limit = iterations; }
int64_t evaluator_loop_limit() { return loop_limit; }

std::string too_large_for_memory(c10::IntArrayRef dims, at::ScalarType type) {
  std::string shape = "[";
  for (size_t i = 0; i < dims.size(); ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
  shape += "]";
  int64_t bytes = static_cast<int64_t>(c10::elementSize(type));
  bool overflow = false;
  for (int64_t d : dims) {
    if (d < 0) return "shape " + shape + " has a negative dimension";
    overflow = overflow || __builtin_mul_overflow(bytes, d, &bytes);
  }
  const std::string of = "shape " + shape + " of " + std::string(c10::toString(type));
  if (overflow) return of + " has more bytes than a 64-bit size can count";
  const double memory = memory_budget();
  if (static_cast<double>(bytes) <= memory) return {};
  return of + " (" + byte_size_text(static_cast<double>(bytes)) + ") is larger than this machine's memory (" +
         byte_size_text(memory) + ")";
}

int64_t held_bytes(const at::Tensor& item) {
  return kBytesPerItem + (item.defined() ? static_cast<int64_t>(item.nbytes()) : 0);
}

int64_t held_bytes(const std::vector<at::Tensor>& items) {
  int64_t bytes = 0;
  for (const auto& t : items) bytes += held_bytes(t);
  return bytes;
}

void require_held_fits(const KernelContext& ctx, int64_t bytes, size_t items, const std::string& what) {
  const double memory = memory_budget();
  if (static_cast<double>(bytes) > memory)
    ctx.fail(what + " reached " + std::to_string(items) + " items (" + byte_size_text(static_cast<double>(bytes)) +
             "), more than this machine's memory (" + byte_size_text(memory) + ")");
}

void require_fits_in_memory(const KernelContext& ctx, c10::IntArrayRef dims, at::ScalarType type) {
  const std::string why = too_large_for_memory(dims, type);
  if (!why.empty()) ctx.fail("the output of " + why);
}

at::Tensor tensor_from_proto(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw KernelError("tensor '" + t.name() + "' keeps its data in an external file");
  const at::ScalarType type = scalar_type_of_onnx(t.data_type());
  const std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (const std::string why = too_large_for_memory(shape, type); !why.empty())
    throw KernelError("tensor '" + t.name() + "': " + why);
  const auto options = at::TensorOptions().dtype(type);
  if (t.has_raw_data()) {
    auto out = at::empty(shape, options);
    const std::string& raw = t.raw_data();
    if (raw.size() != static_cast<size_t>(out.nbytes()))
      throw KernelError("tensor '" + t.name() + "' has " + std::to_string(raw.size()) + " bytes of data for " +
                        std::to_string(out.nbytes()) + " expected");
    if (!raw.empty()) std::memcpy(out.data_ptr(), raw.data(), raw.size());
    return out;
  }
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return from_field(t.float_data(), shape, at::kFloat, type);
    case onnx::TensorProto::DOUBLE: return from_field(t.double_data(), shape, at::kDouble, type);
    case onnx::TensorProto::INT64: return from_field(t.int64_data(), shape, at::kLong, type);
    case onnx::TensorProto::COMPLEX64: {
      auto parts =
          from_field(t.float_data(), {static_cast<int64_t>(t.float_data_size() / 2), 2}, at::kFloat, at::kFloat);
      return at::view_as_complex(parts).reshape(shape);
    }
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: {
      // int32_data holds the 16-bit patterns.
      auto bits = from_field(t.int32_data(), shape, at::kInt, at::kShort);
      return bits.view(type);
    }
    default:  // the other integer types and bool store their values in int32_data
      return from_field(t.int32_data(), shape, at::kInt, type);
  }
}

std::vector<int64_t> int_values(const at::Tensor& t) {
  auto c = t.to(at::kLong).contiguous().reshape({-1});
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

int64_t normalize_axis(int64_t axis, int64_t rank, const KernelContext& ctx) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

at::Tensor widened(const at::Tensor& t) {
  const auto type = t.scalar_type();
  return type == at::kHalf || type == at::kBFloat16 ? t.to(at::kFloat) : t;
}

const KernelTable& standard_kernels() {
  static const KernelTable table = [] {
    KernelTable all;
    // Each family fills its own table, so that an op two families claim is caught here instead of
    // one silently replacing the other.
    for (auto* family : {register_elementwise_kernels, register_shape_kernels, register_reduction_kernels,
                         register_nn_kernels, register_misc_kernels, register_control_flow_kernels}) {
      KernelTable part;
      family(part);
      for (auto& [op, entry] : part)
        if (!all.emplace(op, std::move(entry)).second)
          throw std::logic_error("two evaluator kernel families register ONNX op " + op);
    }
    return all;
  }();
  return table;
}

int onnx_version_at(const std::string& op, int opset) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, opset, "");
  return schema == nullptr ? 0 : schema->SinceVersion();
}

namespace {

bool same_parameters(const std::vector<onnx::OpSchema::FormalParameter>& a,
                     const std::vector<onnx::OpSchema::FormalParameter>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].GetName() != b[i].GetName() || a[i].GetOption() != b[i].GetOption()) return false;
  return true;
}

bool same_attributes(const onnx::OpSchema& a, const onnx::OpSchema& b) {
  if (a.attributes().size() != b.attributes().size()) return false;
  for (const auto& [name, attr] : a.attributes()) {
    auto other = b.attributes().find(name);
    if (other == b.attributes().end() || other->second.type != attr.type || other->second.required != attr.required ||
        other->second.default_value.SerializeAsString() != attr.default_value.SerializeAsString())
      return false;
  }
  return true;
}

// Whether version `newer` of op differs from the version before it in element types only.
bool changes_types_only(const std::string& op, int newer) {
  const onnx::OpSchema* now = onnx::OpSchemaRegistry::Schema(op, newer, "");
  const onnx::OpSchema* before = onnx::OpSchemaRegistry::Schema(op, newer - 1, "");
  return now != nullptr && before != nullptr && same_parameters(now->inputs(), before->inputs()) &&
         same_parameters(now->outputs(), before->outputs()) && same_attributes(*now, *before);
}

}  // namespace

bool implements_version_at(const std::string& op, const KernelEntry& entry, int opset) {
  // A kernel of an op that began after 17 (Gelu-20) implements at least its first version.
  const int through = std::max(entry.through_version, entry.since_opset);
  int version = onnx_version_at(op, opset);
  while (version > through) {
    if (!changes_types_only(op, version)) return false;
    version = onnx_version_at(op, version - 1);
  }
  return true;
}

}  // namespace onnxport::core::eval
