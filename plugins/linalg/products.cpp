// Products and contractions. tensordot/inner become Transpose + Reshape + MatMul when shapes are
// static (every opset, and what inference engines handle best) and Einsum otherwise.
#include <algorithm>

#include "linalg.h"
#include "onnxport/helpers.h"
#include "reduce_common.h"

namespace onnxport::linalg {

using namespace helpers;

namespace {

std::vector<int64_t> other_dims(int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(d);
  return out;
}

std::vector<int64_t> pick(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(shape[static_cast<size_t>(d)]);
  return out;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> concat_dims(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Value* permuted(Graph& g, Value* v, const std::vector<int64_t>& perm) {
  return is_identity(perm) ? v : transpose(g, v, perm);
}

// The contraction as an Einsum equation: a's dims are letters a, b, c, ...; b's contracted dims
// reuse the letters of the a dims they pair with.
std::string contraction_equation(int64_t ra, int64_t rb, const std::vector<int64_t>& da,
                                 const std::vector<int64_t>& db) {
  std::string lhs, rhs(static_cast<size_t>(rb), ' '), out;
  for (int64_t i = 0; i < ra; ++i) lhs += static_cast<char>('a' + i);
  char next = static_cast<char>('a' + ra);
  for (size_t k = 0; k < db.size(); ++k) rhs[static_cast<size_t>(db[k])] = lhs[static_cast<size_t>(da[k])];
  for (char& c : rhs)
    if (c == ' ') c = next++;
  for (int64_t d : other_dims(ra, da)) out += lhs[static_cast<size_t>(d)];
  for (int64_t d : other_dims(rb, db)) out += rhs[static_cast<size_t>(d)];
  return lhs + "," + rhs + "->" + out;
}

// dot/vdot (1-d . 1-d -> 0-d) and mv (2-d . 1-d): one MatMul.
Value* matmul(Graph& g, const TorchNode&, const Args& a) {
  return g.op("MatMul", promote(g, {a.tensor(0), a.tensor(1)}));
}

Value* outer(Graph& g, const TorchNode&, const Args& a) { return outer_product(g, a.tensor(0), a.tensor(1)); }

// inner(a, b): contracts the last dims; a 0-d operand just scales the other.
Value* inner(Graph& g, const TorchNode& n, const Args& a) {
  Value *x = a.tensor(0), *y = a.tensor(1);
  const int64_t rx = rank_of(x, n.kind), ry = rank_of(y, n.kind);
  if (rx == 0 || ry == 0) return g.op("Mul", promote(g, {x, y}));
  return contract(g, n, x, y, {rx - 1}, {ry - 1});
}

// tensordot(self, other, dims_self, dims_other)
Value* tensordot(Graph& g, const TorchNode& n, const Args& a) {
  return contract(g, n, a.tensor(0), a.tensor(1), a.is(2), a.is(3));
}

// einsum(equation, tensors, path=None): ONNX Einsum (opset 12) takes the same equations.
Value* einsum(Graph& g, const TorchNode& n, const Args& a) {
  std::string equation = a.s(0);
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  std::vector<Value*> operands = promote(g, a.list(1));
  if (operands.empty() || dtype_of(operands[0]) != DType::Bool)
    return g.op("Einsum", operands, {{"equation_s", equation}});
  // ONNX Einsum takes no bool: computed in int64. torch gives bool where nothing is summed
  // (a transpose, a diagonal) and int64 sums otherwise, as the trace recorded.
  for (Value*& v : operands) v = cast(g, v, DType::Int64);
  const DType recorded = n.output_types.empty() ? DType::Undefined : n.output_types[0].dtype;
  return cast(g, g.op("Einsum", operands, {{"equation_s", equation}}),
              recorded == DType::Undefined ? DType::Bool : recorded);
}

// kron(a, b): with both padded to the same rank r, the product of a as [a0,1,a1,1,...] and b
// as [1,b0,1,b1,...] reshaped to [a0*b0, a1*b1, ...].
Value* kron(Graph& g, const TorchNode& n, const Args& a) {
  std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
  const int64_t ra = rank_of(xy[0], n.kind), rb = rank_of(xy[1], n.kind), r = std::max(ra, rb);
  auto pad = [&](Value* v, int64_t rank) {
    std::vector<int64_t> lead;
    for (int64_t i = 0; i < r - rank; ++i) lead.push_back(i);
    return lead.empty() ? v : unsqueeze(g, v, lead);
  };
  Value* pa = pad(xy[0], ra);
  Value* pb = pad(xy[1], rb);
  if (r == 0) return g.op("Mul", {pa, pb});
  std::vector<int64_t> odd, even;
  for (int64_t i = 0; i < r; ++i) {
    odd.push_back(2 * i + 1);
    even.push_back(2 * i);
  }
  Value* interleaved = g.op("Mul", {unsqueeze(g, pa, odd), unsqueeze(g, pb, even)});
  auto sa = static_shape(pa), sb = static_shape(pb);
  if (sa && sb) {
    std::vector<int64_t> shape;
    for (size_t i = 0; i < sa->size(); ++i) shape.push_back((*sa)[i] * (*sb)[i]);
    return reshape(g, interleaved, shape);
  }
  return reshape(g, interleaved, g.op("Mul", {shape_of(g, pa), shape_of(g, pb)}));
}

// trace(self): the sum of the main diagonal of a matrix (integers sum as int64).
Value* trace(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = reduce::widen_integral(g, a.tensor(0));
  if (auto r = x->rank(); r && *r != 2) throw ArgumentError(n.kind + ": expected a 2-d tensor, found " + x->describe());
  return helpers::reduce(g, "ReduceSum", g.op("Mul", {x, g.op("EyeLike", {x})}), {}, false);
}

}  // namespace

Value* outer_product(Graph& g, Value* a, Value* b) {
  std::vector<Value*> xy = promote(g, {a, b});
  return g.op("Mul", {unsqueeze(g, xy[0], {1}), xy[1]});
}

int64_t broadcast_axis(Graph& g, const TorchNode& n, Value* v, int64_t dim, const std::vector<Value*>& operands) {
  if (dim < 0 && g.opset() >= 11) return dim;
  const int64_t rank = rank_of(v, n.kind);
  if (dim < 0) return normalize_dim(dim, rank);
  int64_t out_rank = 0;
  for (const Value* o : operands) out_rank = std::max(out_rank, rank_of(o, n.kind));
  const int64_t axis = normalize_dim(dim, out_rank) - (out_rank - rank);
  if (axis < 0) throw ArgumentError(n.kind + ": dim " + std::to_string(dim) + " does not exist in " + v->describe());
  return axis;
}

Value* contract(Graph& g, const TorchNode& n, Value* a, Value* b, std::vector<int64_t> da, std::vector<int64_t> db) {
  const int64_t ra = rank_of(a, n.kind), rb = rank_of(b, n.kind);
  if (da.size() != db.size())
    throw ArgumentError(n.kind + ": both operands need the same number of contracted dims, got " +
                        std::to_string(da.size()) + " and " + std::to_string(db.size()));
  da = normalize_dims(da, ra);
  db = normalize_dims(db, rb);
  std::vector<Value*> xy = promote(g, {a, b});
  const std::vector<int64_t> free_a = other_dims(ra, da), free_b = other_dims(rb, db);
  auto sa = static_shape(a), sb = static_shape(b);
  if (sa && sb) {
    if (pick(*sa, da) != pick(*sb, db))
      throw ArgumentError(n.kind + ": contracted dims have different sizes (" + a->describe() + " and " +
                          b->describe() + ")");
    const int64_t m = product(pick(*sa, free_a)), k = product(pick(*sa, da)), cols = product(pick(*sb, free_b));
    Value* a2 = reshape(g, permuted(g, xy[0], concat_dims(free_a, da)), std::vector<int64_t>{m, k});
    Value* b2 = reshape(g, permuted(g, xy[1], concat_dims(db, free_b)), std::vector<int64_t>{k, cols});
    const std::vector<int64_t> out_shape = concat_dims(pick(*sa, free_a), pick(*sb, free_b));
    Value* y = g.op("MatMul", {a2, b2});
    return out_shape == std::vector<int64_t>{m, cols} ? y : reshape(g, y, out_shape);
  }
  if (g.opset() < 12)
    throw ArgumentError(n.kind + " of tensors with dynamic shapes (" + a->describe() + ", " + b->describe() +
                        ") needs ONNX Einsum, from opset 12 (target is opset " + std::to_string(g.opset()) + ")");
  return g.op("Einsum", xy, {{"equation_s", contraction_equation(ra, rb, da, db)}});
}

void add_products(Registrar& r) {
  r.add("aten::dot", 9, matmul);
  r.add("aten::vdot", 9, matmul);
  r.add("aten::mv", 9, matmul);
  r.add("aten::outer", 9, outer);
  r.add("aten::ger", 9, outer);
  r.add("aten::inner", 9, inner);
  r.add("aten::tensordot", 9, tensordot);
  r.add("aten::einsum", 12, einsum);
  r.add("aten::kron", 9, kron);
  r.add("aten::trace", 9, trace);
}

}  // namespace onnxport::linalg
