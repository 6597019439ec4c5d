// Norms. Vector p-norms map to ReduceL1/ReduceL2/max|x| or sum(|x|^p)^(1/p) (reduce_common's
// vector_norm). Matrix norms: 'fro' is ReduceL2 over both dims, +-1 / +-inf the max/min of the
// column / row sums of |x|; 'nuc' and +-2 need singular values, which ONNX has no op for.
#include "onnxport/helpers.h"
#include "reduce.h"
#include "reduce_common.h"

namespace onnxport::reduce {
namespace {

using namespace helpers;

// An `ord`/`p` argument: a number, or a name ("fro", "nuc"), or None.
struct Order {
  std::optional<double> p;
  std::string name;
  bool none() const { return !p && name.empty(); }
};

Order order_arg(const TorchNode& n, const Args& a, const std::string& arg) {
  Value* v = named_arg(n, a, arg);
  if (!v || v->is_none()) return {};
  if (auto s = v->maybe_string()) return {std::nullopt, *s};
  if (auto f = v->maybe_float()) return {f, ""};
  throw ArgumentError(n.kind + ": argument '" + arg + "' must be a constant number or string, found " + v->describe());
}

std::string describe(const Order& o) {
  if (!o.name.empty()) return "'" + o.name + "'";
  return o.p ? std::to_string(*o.p) : "None";
}

Value* with_dtype(Graph& g, const TorchNode& n, const Args& a, Value* x) {
  if (auto d = named_dtype(n, a)) return cast(g, x, *d);
  return x;
}

// Two distinct dims for a matrix norm (default the last two).
std::vector<int64_t> matrix_dims(const TorchNode& n, const Value* dim, const Value* x) {
  std::vector<int64_t> dims{-2, -1};
  if (dim && !dim->is_none()) {
    auto given = dim->maybe_ints();
    if (!given || given->size() != 2)
      throw ArgumentError(n.kind + ": a matrix norm needs 'dim' to be two constant dims, found " + dim->describe());
    dims = *given;
  }
  dims = normalize_dims(dims, rank_of(x, n.kind + " (matrix norm)"));
  if (dims[0] == dims[1]) throw ArgumentError(n.kind + ": the two dims of a matrix norm must differ");
  return dims;
}

Value* matrix_norm(Graph& g, const TorchNode& n, Value* x, const Order& ord, const std::vector<int64_t>& dims,
                   bool keepdim) {
  x = to_float(g, x);
  if (ord.name == "fro") return helpers::reduce(g, "ReduceL2", x, dims, keepdim);
  const double p = ord.p.value_or(0.0);
  if (ord.name == "nuc" || (ord.p && (p == 2.0 || p == -2.0)))
    throw ArgumentError(n.kind + ": the matrix norm with ord=" + describe(ord) +
                        " needs singular values (an SVD), which ONNX has no operator for");
  if (!ord.p || !(p == 1.0 || p == -1.0 || p == kInf || p == -kInf))
    throw ArgumentError(n.kind + ": ord=" + describe(ord) +
                        " is not a matrix norm order (expected 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2)");
  // ord +-1: extreme column sum (sum over the row dim), +-inf: extreme row sum.
  const bool columns = p == 1.0 || p == -1.0;
  const int64_t summed = columns ? dims[0] : dims[1], other = columns ? dims[1] : dims[0];
  Value* sums = helpers::reduce(g, "ReduceSum", g.op("Abs", {x}), {summed}, true);
  Value* out = helpers::reduce(g, p > 0 ? "ReduceMax" : "ReduceMin", sums, {other}, true);
  return keepdim ? out : squeeze(g, out, {std::min(dims[0], dims[1]), std::max(dims[0], dims[1])});
}

// norm(self, p=2) | (self, p?, dim, keepdim) | with dtype: a vector p-norm.
Value* norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = with_dtype(g, n, a, a.tensor(0));
  const Order p = order_arg(n, a, "p");
  if (!p.name.empty())
    throw ArgumentError(n.kind + ": p=" + describe(p) +
                        " is not supported here (PyTorch records 'fro' as "
                        "aten::frobenius_norm and 'nuc' as aten::nuclear_norm)");
  return vector_norm(g, x, p.p.value_or(2.0), reduction_dims(n, named_arg(n, a, "dim"), x),
                     named_bool(n, a, "keepdim", false));
}

// frobenius_norm(self) | (self, dim, keepdim): the 2-norm of the elements over dim.
Value* frobenius_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = a.tensor(0);
  return vector_norm(g, x, 2.0, reduction_dims(n, named_arg(n, a, "dim"), x), named_bool(n, a, "keepdim", false));
}

Value* linalg_vector_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = with_dtype(g, n, a, a.tensor(0));
  const Order ord = order_arg(n, a, "ord");
  if (!ord.name.empty()) throw ArgumentError(n.kind + ": ord must be a number, found " + describe(ord));
  return vector_norm(g, x, ord.p.value_or(2.0), reduction_dims(n, named_arg(n, a, "dim"), x),
                     named_bool(n, a, "keepdim", false));
}

Value* linalg_matrix_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = with_dtype(g, n, a, a.tensor(0));
  Order ord = order_arg(n, a, "ord");
  if (ord.none()) ord.name = "fro";
  return matrix_norm(g, n, x, ord, matrix_dims(n, named_arg(n, a, "dim"), x), named_bool(n, a, "keepdim", false));
}

// linalg_norm(self, ord=None, dim=None, keepdim, dtype): a vector norm over one dim (or over
// everything when ord and dim are both None), a matrix norm over two dims (a 2-d input when
// dim is None).
Value* linalg_norm(Graph& g, const TorchNode& n, const Args& a) {
  Value* x = with_dtype(g, n, a, a.tensor(0));
  const Order ord = order_arg(n, a, "ord");
  Value* dim = named_arg(n, a, "dim");
  const bool keepdim = named_bool(n, a, "keepdim", false);
  std::optional<std::vector<int64_t>> dims;
  if (dim && !dim->is_none()) {
    dims = dim->maybe_ints();
    if (!dims) throw ArgumentError(n.kind + ": argument 'dim' must be constant, found " + dim->describe());
  }
  if (ord.none() && !dims) return vector_norm(g, x, 2.0, {}, keepdim);
  const size_t ndims = dims ? dims->size() : static_cast<size_t>(rank_of(x, n.kind + " without dim"));
  if (ndims == 1 && ord.name.empty()) {
    return vector_norm(g, x, ord.p.value_or(2.0), reduction_dims(n, dim, x), keepdim);
  }
  if (ndims == 2) {
    Order matrix_ord = ord;
    if (matrix_ord.none()) matrix_ord.name = "fro";
    return matrix_norm(g, n, x, matrix_ord, matrix_dims(n, dim, x), keepdim);
  }
  throw ArgumentError(n.kind + ": ord=" + describe(ord) +
                      " needs 'dim' to name 1 dim (vector norm) or 2 dims (matrix "
                      "norm), or a 1-d or 2-d input, found " +
                      std::to_string(ndims) + " dims");
}

}  // namespace

void add_norms(Registrar& r) {
  r.add("aten::norm", 9, norm);
  r.add("aten::frobenius_norm", 9, frobenius_norm);
  r.add("aten::linalg_vector_norm", 9, linalg_vector_norm);
  r.add("aten::linalg_matrix_norm", 9, linalg_matrix_norm);
  r.add("aten::linalg_norm", 9, linalg_norm);
}

}  // namespace onnxport::reduce
