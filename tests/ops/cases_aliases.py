"""Alias ops TorchScript always normalizes away (aten::divide -> aten::div, ...): rows built from
TorchScript IR graphs, since no traced or scripted Python keeps them."""
from op_framework import case, f32, ints, nonzero, nonzero_ints


# ---- alias ops TorchScript always normalizes away: TorchScript IR graphs

IR_BINARY = """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::{op}(%x, %y)
  return (%z)"""
IR_UNARY_2INTS = """graph(%x : Tensor):
  %a : int = prim::Constant[value={a}]()
  %b : int = prim::Constant[value={b}]()
  %z : Tensor = aten::{op}(%x, %a, %b)
  return (%z)"""
case("divide", ["divide"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="divide"))
case("divide_", ["divide_"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="divide_"))
case("divide_floor", ["divide"], [f32(2, 3, low=-6, high=6), nonzero(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %mode : str = prim::Constant[value="floor"]()
  %z : Tensor = aten::divide(%x, %y, %mode)
  return (%z)""")
case("true_divide", ["true_divide"], [ints(2, 3), nonzero_ints(2, 3)], ir=IR_BINARY.format(op="true_divide"))
case("true_divide_", ["true_divide_"], [f32(2, 3), nonzero(2, 3)], ir=IR_BINARY.format(op="true_divide_"))
case("multiply", ["multiply"], [f32(2, 3), f32(3)], ir=IR_BINARY.format(op="multiply"))
case("multiply_", ["multiply_"], [f32(2, 3), f32(2, 3)], ir=IR_BINARY.format(op="multiply_"))
case("subtract", ["subtract"], [f32(2, 3), f32(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %alpha : float = prim::Constant[value=2.]()
  %z : Tensor = aten::subtract(%x, %y, %alpha)
  return (%z)""")
case("subtract_", ["subtract_"], [f32(2, 3), f32(2, 3)], ir="""graph(%x : Tensor, %y : Tensor):
  %alpha : int = prim::Constant[value=1]()
  %z : Tensor = aten::subtract_(%x, %y, %alpha)
  return (%z)""")
case("clip", ["clip"], [f32(3, 4)], ir="""graph(%x : Tensor):
  %lo : float = prim::Constant[value=-0.3]()
  %hi : float = prim::Constant[value=0.4]()
  %z : Tensor = aten::clip(%x, %lo, %hi)
  return (%z)""")
case("clip_", ["clip_"], [f32(3, 4)], ir="""graph(%x : Tensor):
  %lo : float = prim::Constant[value=-0.3]()
  %none : NoneType = prim::Constant()
  %z : Tensor = aten::clip_(%x, %lo, %none)
  return (%z)""")
case("swapaxes", ["swapaxes"], [f32(2, 3, 4)], ir=IR_UNARY_2INTS.format(op="swapaxes", a=0, b=-1))
case("swapdims", ["swapdims"], [f32(2, 3, 4)], ir=IR_UNARY_2INTS.format(op="swapdims", a=2, b=1))
case("concat", ["concat", "prim::ListConstruct"], [f32(2, 3), f32(2, 5)], ir="""graph(%x : Tensor, %y : Tensor):
  %dim : int = prim::Constant[value=-1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %z : Tensor = aten::concat(%l, %dim)
  return (%z)""")
