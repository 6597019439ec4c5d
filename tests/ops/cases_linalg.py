"""Rows for the linalg pack: products, contractions, addmv/addr/baddbmm, cross, det, distances."""
import torch
import torch.nn.functional as F
from op_framework import case, f32, ints

INF = float("inf")

# ---- products

case("dot", ["dot"], [f32(5), f32(5)], torch.dot)
case("dot_int", ["dot"], [ints(6, low=-5, high=5), ints(6, low=-5, high=5)], torch.dot)
case("vdot", ["vdot"], [f32(4), f32(4)], torch.vdot)
case("mv", ["mv"], [f32(3, 4), f32(4)], torch.mv)
case("outer", ["outer"], [f32(3), f32(4)], torch.outer)
case("outer_promote", ["outer"], [ints(3), f32(2)], torch.outer)
case("ger", ["ger"], [f32(3), f32(4)], ir="""graph(%a : Tensor, %b : Tensor):
  %z : Tensor = aten::ger(%a, %b)
  return (%z)""")
case("inner", ["inner"], [f32(2, 3, 4), f32(5, 4)], torch.inner)
case("inner_1d_0d", ["inner"], [f32(4), f32(4), f32()], lambda a, b, s: (torch.inner(a, b), torch.inner(s, a)))
case("tensordot", ["tensordot"], [f32(2, 3, 4), f32(4, 3, 5)],
     lambda a, b: (torch.tensordot(a, b, ([1, 2], [1, 0])), torch.tensordot(a, b, ([-1], [0]))))
case("tensordot_int_dims", ["tensordot"], [f32(2, 3, 4), f32(3, 4, 2)], lambda a, b: torch.tensordot(a, b, dims=2))
case("tensordot_full", ["tensordot"], [f32(2, 3), f32(3, 2)], lambda a, b: torch.tensordot(a, b, ([0, 1], [1, 0])))
case("tensordot_dynamic", ["tensordot"], [f32(2, 3, 4), f32(4, 3, 5)],
     lambda a, b: torch.tensordot(a, b, ([1, 2], [1, 0])), since=12, dynamic={0: [0], 1: [2]},
     fails={11: "needs ONNX Einsum, from opset 12"})
case("einsum", ["einsum"], [f32(2, 3, 4), f32(2, 4, 5)],
     lambda a, b: (torch.einsum("bij,bjk->bik", a, b), torch.einsum("bij -> j", a), torch.einsum("...ij,...jk", a, b)),
     since=12, fails={9: "supported from opset 12", 11: "supported from opset 12"})
case("einsum_trace_outer", ["einsum"], [f32(4, 4), f32(3)],
     lambda m, v: (torch.einsum("ii", m), torch.einsum("i,j->ij", v, v), torch.einsum("ij->ji", m)), since=12)
# Bool operands: ONNX Einsum takes none (PyTorch's test_einsum).
case("einsum_bool", ["einsum"], [f32(3, 4), f32(2, 5, 5)],
     lambda a, b: (torch.einsum("ij->ji", a > 0), torch.einsum("...ii->...i", b > 0), torch.einsum("ij->j", a > 0)),
     since=12)  # torch sums bools as int64 (the last one)
case("kron", ["kron"], [f32(2, 3), f32(4, 5)], torch.kron)
case("kron_ranks", ["kron"], [f32(2, 3, 2), f32(3, 2), ints(2, 2)],
     lambda a, b, i: (torch.kron(a, b), torch.kron(b, a), torch.kron(i, i)))
case("kron_dynamic", ["kron"], [f32(2, 3), f32(4, 5)], torch.kron, dynamic={0: [0], 1: [1]})
case("trace", ["trace"], [f32(3, 4)], torch.trace)
case("trace_int", ["trace"], [ints(4, 4, low=-9, high=9, dtype=torch.int32)], torch.trace)

# ---- beta * self + alpha * product

case("addmv", ["addmv"], [f32(3), f32(3, 4), f32(4)],
     lambda s, m, v: (torch.addmv(s, m, v), torch.addmv(s, m, v, beta=0.5, alpha=2), torch.addmv(s, m, v, beta=0)))
case("addmv_", ["addmv_"], [f32(3), f32(3, 4), f32(4)], lambda s, m, v: (s * 1).addmv_(m, v, alpha=-1))
case("addr", ["addr"], [f32(3, 4), f32(3), f32(4)],
     lambda s, a, b: (torch.addr(s, a, b), torch.addr(s[0], a, b, beta=2, alpha=0.5)))
case("addr_", ["addr_"], [f32(3, 4), f32(3), f32(4)], lambda s, a, b: (s * 1).addr_(a, b, beta=0))
case("baddbmm", ["baddbmm"], [f32(2, 3, 5), f32(2, 3, 4), f32(2, 4, 5)],
     lambda s, a, b: (torch.baddbmm(s, a, b), torch.baddbmm(s[0], a, b, beta=0.5, alpha=-2)))
case("baddbmm_", ["baddbmm_"], [f32(2, 3, 5), f32(2, 3, 4), f32(2, 4, 5)], lambda s, a, b: (s * 1).baddbmm_(a, b))

# ---- cross products

case("cross", ["cross"], [f32(2, 3, 4), f32(2, 3, 4)], lambda a, b: (torch.cross(a, b, dim=1), torch.cross(a, b)))
case("cross_int", ["cross"], [ints(4, 3, low=-5, high=5), ints(4, 3, low=-5, high=5)], lambda a, b: torch.cross(a, b, 1))
case("linalg_cross", ["linalg_cross"], [f32(4, 3), f32(4, 3)], torch.linalg.cross)
case("linalg_cross_dims", ["linalg_cross"], [f32(3, 2, 3), f32(1, 2, 3), f32(3, 1, 1)],
     lambda a, b, c: (torch.linalg.cross(a, b), torch.linalg.cross(a, c, dim=0), torch.linalg.cross(a, b, dim=-1)))

# ---- determinants (ONNX Det from opset 11)

case("linalg_det", ["linalg_det"], [f32(3, 3), f32(2, 4, 4)], lambda a, b: (torch.linalg.det(a), torch.det(b)),
     since=11, fails={9: "supported from opset 11"})
case("det", ["det"], [f32(2, 3, 3)], since=11, ir="""graph(%a : Tensor):
  %z : Tensor = aten::det(%a)
  return (%z)""")
case("logdet", ["logdet"], [f32(2, 3, 3)],
     lambda x: torch.logdet(x @ x.transpose(1, 2) + torch.eye(3)), since=11)
# ---- distances

case("cdist", ["cdist"], [f32(2, 5, 3), f32(2, 4, 3)],
     lambda a, b: (torch.cdist(a, b), torch.cdist(a, b, p=1), torch.cdist(a, b, p=INF), torch.cdist(a, b, p=3)))
case("cdist_2d", ["cdist"], [f32(5, 3), f32(4, 3)], lambda a, b: torch.cdist(a, b))
case("pairwise_distance", ["pairwise_distance"], [f32(4, 5), f32(4, 5), f32(1, 5)],
     lambda a, b, c: (F.pairwise_distance(a, b), F.pairwise_distance(a, b, p=1, keepdim=True),
                      F.pairwise_distance(a, c, eps=0.1), F.pairwise_distance(a, b, p=INF)))
case("cosine_similarity", ["cosine_similarity"], [f32(4, 5), f32(4, 5), f32(1, 5)],
     lambda a, b, c: (F.cosine_similarity(a, b), F.cosine_similarity(a, c, dim=-1), F.cosine_similarity(a, b, dim=0)))
case("cosine_similarity_3d", ["cosine_similarity"], [f32(2, 3, 4), f32(3, 4)],
     lambda a, b: (F.cosine_similarity(a, b, dim=1), F.cosine_similarity(a, b, dim=-1)))
