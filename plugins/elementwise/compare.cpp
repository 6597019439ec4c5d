// Comparisons, logical ops and selection. Comparison operands are promoted to a common dtype
// first (ONNX requires equal input types).
#include "elementwise.h"
#include "onnxport/helpers.h"

namespace onnxport::elementwise {
namespace {

using namespace helpers;

// Equal on floats exists from opset 11; Less/Greater take every numeric type from opset 9.
// Before 11, float equality is "neither less nor greater".
Value* equal_9(Graph& g, Value* x, Value* y) {
  if (!is_floating(dtype_of(x))) return g.op("Equal", {x, y});
  return g.op("Not", {g.op("Or", {g.op("Less", {x, y}), g.op("Greater", {x, y})})});
}

Symbolic compare_equal_9(bool negate) {
  return [negate](Graph& g, const TorchNode&, const Args& a) {
    std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
    Value* out = equal_9(g, xy[0], xy[1]);
    return std::vector<Value*>{negate ? g.op("Not", {out}) : out};
  };
}

// Less/Greater(OrEqual) take no bool tensors: compare bools as 0/1 integers. Before opset 9
// Less/Greater take floats only: compare integers as floats, as torch.onnx's opset 8 does.
std::vector<Value*> orderable(Graph& g, std::vector<Value*> xy) {
  const DType d = dtype_of(xy[0]);
  if (g.opset() < 9 && !is_floating(d)) return {cast(g, xy[0], DType::Float), cast(g, xy[1], DType::Float)};
  if (d != DType::Bool) return xy;
  return {cast(g, xy[0], DType::Int32), cast(g, xy[1], DType::Int32)};
}

Symbolic compare(const std::string& onnx_op, bool negate) {
  return [onnx_op, negate](Graph& g, const TorchNode&, const Args& a) {
    std::vector<Value*> xy = promote(g, {a.tensor(0), a.tensor(1)});
    Value* out = g.op(onnx_op, onnx_op == "Equal" ? xy : orderable(g, xy));
    return std::vector<Value*>{negate ? g.op("Not", {out}) : out};
  };
}

Symbolic logical(const std::string& onnx_op) {
  return [onnx_op](Graph& g, const TorchNode&, const Args& a) {
    return std::vector<Value*>{g.op(onnx_op, {cast(g, a.tensor(0), DType::Bool), cast(g, a.tensor(1), DType::Bool)})};
  };
}

// &, |, ^ (aten::__and__, aten::bitwise_and, ...): on bool tensors the logical ops (And, Or, Xor);
// on integers ONNX's BitwiseAnd, BitwiseOr, BitwiseXor, which arrive at opset 18.
Symbolic bitwise(const std::string& logical_op) {
  return [logical_op](Graph& g, const TorchNode& n, const Args& a) {
    Value *x = a.tensor(0), *y = a.tensor(1);
    const DType d = result_type({x, y});
    if (d == DType::Bool || d == DType::Undefined)
      return std::vector<Value*>{g.op(logical_op, {cast(g, x, DType::Bool), cast(g, y, DType::Bool)})};
    if (!is_integral(d))
      throw ArgumentError(n.kind + " takes bool or integer tensors, got " + x->describe() + " and " + y->describe());
    if (g.opset() < 18)
      throw ArgumentError(n.kind + " of integer tensors needs ONNX's Bitwise" + logical_op +
                          ": supported from opset 18 (integer bitwise ops need ONNX opset 18)");
    return std::vector<Value*>{g.op("Bitwise" + logical_op, promote(g, {x, y}))};
  };
}

std::vector<Value*> logical_not(Graph& g, const TorchNode&, const Args& a) {
  return {g.op("Not", {cast(g, a.tensor(0), DType::Bool)})};
}

// ~x: Not on bool tensors, BitwiseNot (opset 18) on integers.
Value* bitwise_not(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  const DType d = dtype_of(x);
  if (d == DType::Bool) return g.op("Not", {x});
  if (!is_integral(d)) throw ArgumentError(n.kind + " takes a bool or integer tensor, got " + x->describe());
  if (g.opset() < 18)
    throw ArgumentError(n.kind + " is only exported for bool tensors below opset 18 (ONNX BitwiseNot needs opset 18)");
  return g.op("BitwiseNot", {x});
}

// x.eq_(y), x.logical_and_(y): the result is written into x, so it keeps x's dtype.
Symbolic into_self(Symbolic fn) {
  return [fn](Graph& g, const TorchNode& n, const Args& a) {
    return std::vector<Value*>{cast(g, fn(g, n, a).at(0), dtype_of(a.tensor(0)))};
  };
}

void add_with_inplace_into_self(Registrar& r, const std::string& torch_op, int since_opset, Symbolic fn) {
  r.add(torch_op, since_opset, fn);
  r.add(torch_op + "_", since_opset, into_self(fn));
}

Value* where(Graph& g, const TorchNode& n, const Args& a) {
  if (a.size() < 3) {
    // where(condition) = nonzero(condition, as_tuple=True): one index tensor per dim.
    Value* cond = a.tensor(0);
    const int64_t rank = rank_of(cond, n.kind);
    Value* indices = g.op("NonZero", {cast(g, cond, DType::Bool)});  // [rank, count]
    std::vector<Value*> per_dim;
    for (int64_t d = 0; d < rank; ++d) per_dim.push_back(gather(g, indices, g.constant_int(d), 0));
    return g.list(per_dim);
  }
  std::vector<Value*> xy = promote(g, {a.tensor(1), a.tensor(2)});
  // where(c, 0, 1.0): two numbers give torch's default dtype for their kind, as recorded.
  const DType recorded = n.output_types.empty() ? DType::Undefined : n.output_types[0].dtype;
  if (a.tensor(1)->is_scalar() && a.tensor(2)->is_scalar() && recorded != DType::Undefined)
    xy = {cast(g, xy[0], recorded), cast(g, xy[1], recorded)};
  return g.op("Where", {cast(g, a.tensor(0), DType::Bool), xy[0], xy[1]});
}

// masked_fill(x, mask, value): value takes x's dtype (it never widens x).
Value* masked_fill(Graph& g, const TorchNode&, const Args& a) {
  Value* x = a.tensor(0);
  return g.op("Where", {cast(g, a.tensor(1), DType::Bool), cast(g, a.tensor(2), dtype_of(x)), x});
}

}  // namespace

void add_compare(Registrar& r) {
  add_with_inplace_into_self(r, "aten::eq", 9, compare_equal_9(false));
  add_with_inplace_into_self(r, "aten::ne", 9, compare_equal_9(true));
  add_with_inplace_into_self(r, "aten::eq", 11, compare("Equal", false));
  add_with_inplace_into_self(r, "aten::ne", 11, compare("Equal", true));
  add_with_inplace_into_self(r, "aten::lt", 8, compare("Less", false));
  add_with_inplace_into_self(r, "aten::gt", 8, compare("Greater", false));
  add_with_inplace_into_self(r, "aten::le", 9, compare("Greater", true));
  add_with_inplace_into_self(r, "aten::ge", 9, compare("Less", true));
  add_with_inplace_into_self(r, "aten::le", 12, compare("LessOrEqual", false));
  add_with_inplace_into_self(r, "aten::ge", 12, compare("GreaterOrEqual", false));
  add_with_inplace_into_self(r, "aten::logical_and", 9, logical("And"));
  add_with_inplace_into_self(r, "aten::logical_or", 9, logical("Or"));
  add_with_inplace_into_self(r, "aten::logical_xor", 9, logical("Xor"));
  add_with_inplace_into_self(r, "aten::logical_not", 9, logical_not);
  for (const auto& [name, onnx_op] : {std::pair{"and", "And"}, {"or", "Or"}, {"xor", "Xor"}}) {
    r.add(std::string("aten::__") + name + "__", 9, bitwise(onnx_op));
    r.add(std::string("aten::__i") + name + "__", 9, bitwise(onnx_op));
    add_with_inplace(r, std::string("aten::bitwise_") + name, 9, bitwise(onnx_op));
  }
  add_with_inplace(r, "aten::bitwise_not", 9, bitwise_not);
  r.add("aten::where", 9, where);
  add_with_inplace(r, "aten::masked_fill", 9, masked_fill);
}

}  // namespace onnxport::elementwise
