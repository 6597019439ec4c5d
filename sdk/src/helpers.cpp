// Shared symbolic helpers (see onnxport/helpers.h).
#include "onnxport/helpers.h"

#include <cstring>

namespace onnxport::helpers {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool has_negative(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < 0) return true;
  return false;
}

// Before opset 11 most ops reject negative axes: make them absolute with the known rank.
std::vector<int64_t> axes_for_opset(Graph& g, const std::vector<int64_t>& axes, const Value* v, int64_t extra_rank,
                                    const std::string& op) {
  if (g.opset() >= 11 || !has_negative(axes)) return axes;
  const int64_t rank = rank_of(v, op + " with negative axes at opset " + str(g.opset())) + extra_rank;
  return normalize_dims(axes, rank);
}

enum Category { kBool = 0, kIntegral = 1, kFloating = 2, kOther = 3 };

Category category(DType d) {
  if (d == DType::Bool) return kBool;
  if (is_integral(d)) return kIntegral;
  if (is_floating(d)) return kFloating;
  return kOther;
}

DType default_dtype(Category c) {
  switch (c) {
    case kBool: return DType::Bool;
    case kIntegral: return DType::Int64;
    case kFloating: return DType::Float;
    case kOther: break;
  }
  return DType::Undefined;
}

bool is_unsigned(DType d) {
  return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
}

// The smallest signed integer type holding both a signed and an unsigned type.
DType signed_cover(DType s, DType u) {
  const size_t need = dtype_size(u) * 2;
  if (dtype_size(s) >= need) return s;
  switch (need) {
    case 2: return DType::Int16;
    case 4: return DType::Int32;
    default: return DType::Int64;
  }
}

// How an operand takes part in type promotion (torch's wrapped numbers < 0-d < dimensioned).
enum Priority { kNumber = 0, kZeroDim = 1, kDimensioned = 2 };

Priority priority(const Value* v) {
  if (v->is_constant()) {
    const Tensor* t = v->maybe_tensor();
    return t && t->rank() > 0 ? kDimensioned : kNumber;
  }
  if (v->is_scalar()) return kNumber;
  return v->rank() == std::optional<int64_t>(0) ? kZeroDim : kDimensioned;
}

std::optional<double> alpha_of(const TorchNode& n, const Args& a) {
  if (a.size() < 3) return std::nullopt;
  const std::string name = n.input_names.size() > 2 ? n.input_names[2] : "";
  if (name != "alpha" && !name.empty()) return std::nullopt;
  if (a.is_none(2)) return std::nullopt;
  if (auto f = a.at(2)->maybe_float()) return f;
  if (name == "alpha") a.fail(2, "a constant number");
  return std::nullopt;
}

}  // namespace

// ---------------------------------------------------------------- dims, ranks, dtypes

int64_t normalize_dim(int64_t dim, int64_t rank) {
  // Like torch, a 0-d tensor accepts dim 0 and -1.
  const int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r)
    throw ArgumentError("dimension " + str(dim) + " is out of range for a tensor of rank " + str(rank) +
                        " (expected a dim in [" + str(-r) + ", " + str(r - 1) + "])");
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.push_back(normalize_dim(d, rank));
  return out;
}

int64_t rank_of(const Value* v, const std::string& what) {
  if (auto r = v->rank()) return *r;
  throw ArgumentError(what + " needs the rank of its input, but the input (" + v->describe() +
                      ") has an unknown rank; give example inputs with known shapes, or use a target opset "
                      "where the mapping does not need the rank");
}

std::optional<int64_t> static_dim(const Value* v, int64_t dim) {
  const auto& shape = v->type().shape;
  if (!shape) return std::nullopt;
  const auto rank = static_cast<int64_t>(shape->size());
  if (dim < -rank || dim >= rank) return std::nullopt;
  const Dim& d = (*shape)[static_cast<size_t>(dim < 0 ? dim + rank : dim)];
  if (!d.is_static()) return std::nullopt;
  return d.value;
}

std::optional<std::vector<int64_t>> static_shape(const Value* v) {
  if (const Tensor* t = v->maybe_tensor()) return t->shape();
  return v->type().static_shape();
}

DType dtype_from_scalar_type(int64_t scalar_type) {
  switch (scalar_type) {
    case 0: return DType::UInt8;
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 3: return DType::Int32;
    case 4: return DType::Int64;
    case 5: return DType::Float16;
    case 6: return DType::Float;
    case 7: return DType::Double;
    case 9: return DType::Complex64;
    case 10: return DType::Complex128;
    case 11: return DType::Bool;
    case 15: return DType::BFloat16;
    default: break;
  }
  throw ArgumentError("torch scalar type " + str(scalar_type) +
                      " has no ONNX equivalent (supported: uint8, int8, int16, int32, int64, float16, float32, "
                      "float64, complex64, complex128, bool, bfloat16)");
}

DType dtype_of(const Value* v) {
  const Value::Constant& c = v->constant();
  if (std::holds_alternative<int64_t>(c) || std::holds_alternative<std::vector<int64_t>>(c)) return DType::Int64;
  if (std::holds_alternative<double>(c) || std::holds_alternative<std::vector<double>>(c)) return DType::Double;
  if (std::holds_alternative<bool>(c)) return DType::Bool;
  if (const Tensor* t = v->maybe_tensor()) return t->dtype();
  return v->dtype();
}

std::optional<double> constant_number(const Value* v) {
  const Value::Constant& c = v->constant();
  if (auto* i = std::get_if<int64_t>(&c)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&c)) return *d;
  if (auto* b = std::get_if<bool>(&c)) return *b ? 1.0 : 0.0;
  if (const Tensor* t = v->maybe_tensor()) {
    const DType d = t->dtype();
    if (t->numel() == 1 && (is_floating(d) || is_integral(d) || d == DType::Bool)) return t->as_doubles()[0];
  }
  return std::nullopt;
}

Tensor full_tensor(DType dtype, const std::vector<int64_t>& shape, double value) {
  const Tensor one = Tensor::scalar_of(dtype, value);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const size_t width = one.nbytes();
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * width);
  for (int64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + static_cast<size_t>(i) * width, one.data(), width);
  return Tensor(dtype, shape, std::move(bytes));
}

Value* scalar_like(Graph& g, double value, const Value* like) {
  DType d = dtype_of(like);
  if (d == DType::Undefined || category(d) == kOther) d = DType::Float;
  return g.constant_scalar(d, value);
}

// ---------------------------------------------------------------- opset-aware ONNX snippets

Value* cast(Graph& g, Value* v, DType to) {
  if (to == DType::Undefined) return v;
  if (auto n = constant_number(v)) {
    // Plain numbers are re-made as tensors too: how the host would materialize them is its business.
    const Tensor* t = v->maybe_tensor();
    if (t && t->dtype() == to) return v;
    if (auto* i = std::get_if<int64_t>(&v->constant()); i && to == DType::Int64) return g.constant_int(*i);
    return g.constant(full_tensor(to, t ? t->shape() : std::vector<int64_t>{}, *n));
  }
  if (dtype_of(v) == to) return v;
  return g.op("Cast", {v}, {{"to_i", static_cast<int64_t>(to)}});
}

Value* unsqueeze(Graph& g, Value* v, const std::vector<int64_t>& axes) {
  const auto ax = axes_for_opset(g, axes, v, static_cast<int64_t>(axes.size()), "Unsqueeze");
  if (g.opset() >= 13) return g.op("Unsqueeze", {v, g.constant_ints(ax)});
  return g.op("Unsqueeze", {v}, {{"axes_i", ax}});
}

Value* squeeze(Graph& g, Value* v, const std::vector<int64_t>& axes) {
  if (axes.empty()) {
    // With a static shape the axes are explicit (and shape inference keeps the result's rank).
    auto shape = static_shape(v);
    if (!shape) return g.op("Squeeze", {v});
    std::vector<int64_t> ones;
    for (size_t i = 0; i < shape->size(); ++i)
      if ((*shape)[i] == 1) ones.push_back(static_cast<int64_t>(i));
    if (ones.empty()) return v;
    return squeeze(g, v, ones);
  }
  const auto ax = axes_for_opset(g, axes, v, 0, "Squeeze");
  if (g.opset() >= 13) return g.op("Squeeze", {v, g.constant_ints(ax)});
  return g.op("Squeeze", {v}, {{"axes_i", ax}});
}

Value* reshape(Graph& g, Value* v, const std::vector<int64_t>& shape) {
  return g.op("Reshape", {v, g.constant_ints(shape)});
}

Value* reshape(Graph& g, Value* v, Value* shape) { return g.op("Reshape", {v, cast(g, shape, DType::Int64)}); }

Value* transpose(Graph& g, Value* v, const std::vector<int64_t>& perm) {
  return g.op("Transpose", {v}, {{"perm_i", perm}});
}

Value* concat(Graph& g, const std::vector<Value*>& values, int64_t axis) {
  if (values.empty()) throw ArgumentError("concat: nothing to concatenate");
  if (values.size() == 1) return values[0];
  if (axis < 0 && g.opset() < 11) axis = normalize_dim(axis, rank_of(values[0], "Concat with a negative axis"));
  return g.op("Concat", values, {{"axis_i", axis}});
}

Value* slice(Graph& g, Value* v, const std::vector<int64_t>& axes, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends, const std::vector<int64_t>& steps) {
  bool unit_steps = true;
  for (int64_t s : steps) unit_steps = unit_steps && s == 1;
  if (g.opset() >= 10) {
    std::vector<Value*> in{v, g.constant_ints(starts), g.constant_ints(ends), g.constant_ints(axes)};
    if (!unit_steps) in.push_back(g.constant_ints(steps));
    return g.op("Slice", in);
  }
  if (!unit_steps)
    throw ArgumentError("Slice with steps other than 1 needs opset 10 or later (target is opset " + str(g.opset()) +
                        ")");
  const auto ax = axes_for_opset(g, axes, v, 0, "Slice");
  return g.op("Slice", {v}, {{"axes_i", ax}, {"starts_i", starts}, {"ends_i", ends}});
}

Value* slice(Graph& g, Value* v, Value* starts, Value* ends, Value* axes, Value* steps) {
  if (g.opset() < 10) {
    auto s = starts->maybe_ints();
    auto e = ends->maybe_ints();
    auto ax = axes ? axes->maybe_ints() : std::nullopt;
    if (s && e && (!axes || ax)) {
      std::vector<int64_t> all_axes = ax ? *ax : std::vector<int64_t>{};
      if (!axes)
        for (size_t i = 0; i < s->size(); ++i) all_axes.push_back(static_cast<int64_t>(i));
      std::vector<int64_t> st;
      if (steps) {
        auto c = steps->maybe_ints();
        if (!c) throw ArgumentError("Slice with non-constant steps needs opset 10 or later");
        st = *c;
      }
      return slice(g, v, all_axes, *s, *e, st);
    }
    throw ArgumentError("Slice with bounds computed at run time needs opset 10 or later (target is opset " +
                        str(g.opset()) + ")");
  }
  std::vector<Value*> in{v, cast(g, starts, DType::Int64), cast(g, ends, DType::Int64)};
  if (axes || steps) in.push_back(axes ? cast(g, axes, DType::Int64) : nullptr);
  if (steps) in.push_back(cast(g, steps, DType::Int64));
  return g.op("Slice", in);
}

Value* shape_of(Graph& g, Value* v) { return g.op("Shape", {v}); }

Value* size(Graph& g, Value* v, int64_t dim, bool as_1d) {
  if (auto d = static_dim(v, dim)) return as_1d ? g.constant_ints({*d}) : g.constant_int(*d);
  if (dim < 0) {
    if (auto r = v->rank())
      dim = normalize_dim(dim, *r);
    else if (g.opset() < 11)
      throw ArgumentError("the size of dimension " + str(dim) + " of a tensor of unknown rank needs opset 11 or later");
  }
  Value* index = as_1d ? g.constant_ints({dim}) : g.constant_int(dim);
  return gather(g, shape_of(g, v), index, 0);
}

Value* gather(Graph& g, Value* data, Value* indices, int64_t axis) {
  return g.op("Gather", {data, indices}, {{"axis_i", axis}});
}

std::pair<Value*, Value*> complex_parts(Graph& g, Value* z) {
  return {gather(g, z, g.constant_int(0), -1), gather(g, z, g.constant_int(1), -1)};
}

Value* complex_from_parts(Graph& g, Value* re, Value* im) {
  const int64_t last = re->rank() ? *re->rank() : -1;
  return concat(g, {unsqueeze(g, re, {last}), unsqueeze(g, im, {last})}, -1);
}

Value* reduce(Graph& g, const std::string& op, Value* v, const std::vector<int64_t>& axes, bool keepdims) {
  const bool axes_as_input = g.opset() >= 18 || (op == "ReduceSum" && g.opset() >= 13);
  const auto ax = axes_for_opset(g, axes, v, 0, op);
  const Attrs keep{{"keepdims_i", keepdims ? 1 : 0}};
  if (ax.empty()) return g.op(op, {v}, keep);
  if (axes_as_input) return g.op(op, {v, g.constant_ints(ax)}, keep);
  return g.op(op, {v}, {{"axes_i", ax}, {"keepdims_i", keepdims ? 1 : 0}});
}

std::vector<Value*> split(Graph& g, Value* v, const std::vector<int64_t>& sizes, int64_t axis) {
  if (sizes.empty()) throw ArgumentError("split: no piece sizes given");
  if (sizes.size() == 1) return {v};
  if (axis < 0 && g.opset() < 11) axis = normalize_dim(axis, rank_of(v, "Split with a negative axis"));
  const int n = static_cast<int>(sizes.size());
  if (g.opset() >= 13) return g.op("Split", {v, g.constant_ints(sizes)}, {{"axis_i", axis}}, n);
  return g.op("Split", {v}, {{"axis_i", axis}, {"split_i", sizes}}, n);
}

std::vector<Value*> split_equal(Graph& g, Value* v, int64_t parts, int64_t axis) {
  if (parts < 1) throw ArgumentError("split_equal: " + std::to_string(parts) + " parts");
  if (axis < 0 && g.opset() < 11) axis = normalize_dim(axis, rank_of(v, "Split with a negative axis"));
  const int n = static_cast<int>(parts);
  if (g.opset() >= 18) return g.op("Split", {v}, {{"axis_i", axis}, {"num_outputs_i", parts}}, n);
  return g.op("Split", {v}, {{"axis_i", axis}}, n);
}

std::vector<Value*> split_in_pieces(Graph& g, Value* v, Value* piece, int64_t count, int64_t axis) {
  if (g.opset() < 10) throw ArgumentError("splitting a dimension of run-time size needs opset 10 or later");
  if (axis < 0) axis = normalize_dim(axis, rank_of(v, "splitting along a negative axis"));
  std::vector<Value*> pieces;
  Value* axes = g.constant_ints({axis});
  for (int64_t i = 0; i < count; ++i) {
    Value* start = i == 0 ? g.constant_ints({0}) : g.op("Mul", {piece, g.constant_ints({i})});
    Value* end = g.op("Mul", {piece, g.constant_ints({i + 1})});
    pieces.push_back(slice(g, v, start, end, axes, nullptr));
  }
  return pieces;
}

Value* split_in_pieces_to_sequence(Graph& g, Value* v, Value* piece, int64_t axis) {
  if (g.opset() < 11) throw ArgumentError("a run-time number of pieces needs opset 11 or later (SplitToSequence)");
  // Piece sizes: min(piece, size - start) for start in range(0, size, piece). Min takes int64
  // only from opset 12: Where(Less) instead.
  Value* total = size(g, v, axis, /*as_1d=*/true);
  Value* starts = g.op("Range", {g.constant_int(0), squeeze(g, total, {0}), squeeze(g, piece, {0})});
  Value* left = g.op("Sub", {total, starts});
  Value* sizes = g.op("Where", {g.op("Less", {left, piece}), left, piece});
  return g.op("SplitToSequence", {v, sizes}, {{"axis_i", axis}});
}

Value* chunk_piece(Graph& g, Value* size_1d, int64_t parts) { return chunk_piece(g, size_1d, g.constant_ints({parts})); }

Value* chunk_piece(Graph& g, Value* size_1d, Value* parts_1d) {
  // ceil(size / parts), and 1 for an empty axis (a piece of 0 would make Range step by 0).
  Value* minus_one = g.op("Sub", {parts_1d, g.constant_ints({1})});
  Value* ceil = g.op("Div", {g.op("Add", {size_1d, minus_one}), parts_1d});
  Value* empty = cast(g, g.op("Equal", {ceil, g.constant_ints({0})}), DType::Int64);
  return g.op("Add", {ceil, empty});
}

Value* pad_constant(Graph& g, Value* v, const std::vector<int64_t>& pads, double value) {
  if (g.opset() >= 11) {
    std::vector<Value*> in{v, g.constant_ints(pads)};
    if (value != 0.0) in.push_back(scalar_like(g, value, v));
    return g.op("Pad", in, {{"mode_s", "constant"}});
  }
  return g.op("Pad", {v}, {{"pads_i", pads}, {"mode_s", "constant"}, {"value_f", value}});
}

Value* int_list(Graph& g, Value* list) {
  if (auto c = list->maybe_ints()) return g.constant_ints(*c);
  if (list->is_list()) {
    std::vector<Value*> parts;
    for (Value* e : list->elements()) {
      if (auto i = e->maybe_int()) {
        parts.push_back(g.constant_ints({*i}));
        continue;
      }
      if (!e->is_tensor()) throw ArgumentError("an int list element is " + e->describe() + ", expected an int");
      Value* t = cast(g, e, DType::Int64);
      parts.push_back(e->rank() == std::optional<int64_t>(1) ? t : unsqueeze(g, t, {0}));
    }
    if (parts.empty()) return g.constant_ints({});
    return concat(g, parts, 0);
  }
  if (!list->is_tensor()) throw ArgumentError("expected an int list, found " + list->describe());
  Value* t = cast(g, list, DType::Int64);
  return list->rank() == std::optional<int64_t>(0) ? unsqueeze(g, t, {0}) : t;
}

// ---------------------------------------------------------------- type promotion

DType promote_types(DType a, DType b) {
  if (a == b || b == DType::Undefined) return a;
  if (a == DType::Undefined) return b;
  const Category ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == kFloating) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (ca == kIntegral) {
    const bool ua = is_unsigned(a), ub = is_unsigned(b);
    if (ua == ub) return dtype_size(a) >= dtype_size(b) ? a : b;
    return ua ? signed_cover(b, a) : signed_cover(a, b);
  }
  return a;
}

DType result_type(const std::vector<Value*>& operands) {
  DType group[3] = {DType::Undefined, DType::Undefined, DType::Undefined};
  for (const Value* v : operands) {
    if (!v || !v->is_tensor()) continue;
    const DType d = dtype_of(v);
    if (d == DType::Undefined) continue;
    DType& slot = group[priority(v)];
    slot = promote_types(slot, d);
  }
  DType result = DType::Undefined;
  for (int p = kDimensioned; p >= kNumber; --p) {
    const DType d = group[p];
    if (d == DType::Undefined) continue;
    if (result == DType::Undefined) {
      result = d;
    } else if (category(d) > category(result)) {
      result = p == kNumber ? default_dtype(category(d)) : d;
    }
  }
  return result;
}

std::vector<Value*> promote(Graph& g, const std::vector<Value*>& operands) {
  const DType to = result_type(operands);
  std::vector<Value*> out;
  out.reserve(operands.size());
  for (Value* v : operands) out.push_back(v && to != DType::Undefined ? cast(g, v, to) : v);
  return out;
}

Value* arithmetic(Graph& g, const std::string& onnx_op, const std::vector<Value*>& operands) {
  const DType d = operands.empty() ? DType::Undefined : dtype_of(operands[0]);
  if (!is_narrow_integer(d) || g.opset() >= 14) return g.op(onnx_op, operands);
  std::vector<Value*> wide;
  for (Value* v : operands) wide.push_back(cast(g, v, DType::Int32));
  return cast(g, g.op(onnx_op, wide), d);
}

// ---------------------------------------------------------------- combinators

Symbolic unary(const std::string& onnx_op, Attrs attrs) {
  return [onnx_op, attrs](Graph& g, const TorchNode&, const Args& a) {
    return std::vector<Value*>{g.op(onnx_op, {a.tensor(0)}, attrs)};
  };
}

Symbolic unary_float(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) {
    Value* x = a.tensor(0);
    const DType d = dtype_of(x);
    if (is_integral(d) || d == DType::Bool) x = cast(g, x, DType::Float);
    return std::vector<Value*>{g.op(onnx_op, {x})};
  };
}

Symbolic binary(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode& n, const Args& a) {
    std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
    if (auto alpha = alpha_of(n, a); alpha && *alpha != 1.0) {
      const Value* like = dtype_of(xy[1]) != DType::Undefined ? xy[1] : xy[0];
      xy[1] = arithmetic(g, "Mul", {xy[1], scalar_like(g, *alpha, like)});
    }
    return std::vector<Value*>{arithmetic(g, onnx_op, xy)};
  };
}

Symbolic identity() {
  return [](Graph&, const TorchNode&, const Args& a) { return std::vector<Value*>{a.at(0)}; };
}

std::vector<Value*> in_place_results(Graph& g, const Args& a, std::vector<Value*> results) {
  if (results.empty() || a.size() == 0) return results;
  const Value* self = a.at(0);
  Value*& result = results[0];
  if (!self->is_tensor() || self->is_complex() || !result->is_tensor() || result->is_complex()) return results;
  const DType want = self->dtype();
  if (want != DType::Undefined && result->dtype() != DType::Undefined && result->dtype() != want)
    result = cast(g, result, want);
  return results;
}

bool is_int_or_bool(DType d) { return is_integral(d) || d == DType::Bool; }

bool is_narrow_integer(DType d) {
  return d == DType::UInt8 || d == DType::Int8 || d == DType::UInt16 || d == DType::Int16;
}

DType float_dtype_of(const Value* v) {
  const DType d = dtype_of(v);
  return is_floating(d) ? d : DType::Float;
}

Value* to_float(Graph& g, Value* v) { return is_int_or_bool(dtype_of(v)) ? cast(g, v, DType::Float) : v; }

void fail_node(const TorchNode& node, const std::string& message, const std::string& hint) {
  throw ArgumentError(message, ErrorContext::for_node({}, node.kind, node.module_path, node.source_location, {}, hint));
}

}  // namespace onnxport::helpers
