// The evaluator refuses a tensor whose size a file decides when it cannot fit in memory, before
// allocating it: with overcommit the allocation would succeed and filling it kill the process.
#include "doctest_torch.h"  // before any libtorch header

#include "2_eval/kernel.h"
#include "support.h"

using namespace onnxport::core::eval;
using onnxport::core_test::attr_i;
using onnxport::core_test::node_proto;

namespace {

at::Tensor longs(std::vector<int64_t> v) { return at::tensor(v, at::TensorOptions().dtype(at::kLong)); }

// The message of the KernelError the op's kernel throws on these inputs ("" if none).
std::string refusal(const onnx::NodeProto& node, const std::vector<at::Tensor>& inputs, int opset = 17) {
  std::vector<EvalValue> values(inputs.begin(), inputs.end());
  const KernelContext ctx(node, opset, values, {});
  try {
    standard_kernels().at(node.op_type()).run(ctx);
  } catch (const KernelError& e) {
    return e.what();
  }
  return "";
}

const at::Tensor kSmall = at::ones({2, 2});

}  // namespace

TEST_CASE("outputs sized by the file past the machine's memory are refused before allocation, naming the op") {
  const int64_t huge = int64_t{1} << 40;  // elements: 4 TiB of float
  const std::pair<onnx::NodeProto, std::vector<at::Tensor>> cases[] = {
      {node_proto("ConstantOfShape", {"s"}, {"y"}), {longs({huge})}},
      {node_proto("Tile", {"x", "r"}, {"y"}), {kSmall, longs({huge, 1})}},
      {node_proto("Expand", {"x", "s"}, {"y"}), {at::ones({1, 2}), longs({huge, 2})}},
      {node_proto("Range", {"a", "b", "c"}, {"y"}), {longs({0}).reshape({}), longs({huge}).reshape({}), longs({1}).reshape({})}},
      {node_proto("Pad", {"x", "p"}, {"y"}), {kSmall, longs({huge, 0, 0, 0})}},
      {node_proto("OneHot", {"i", "d", "v"}, {"y"}), {longs({0, 1}), longs({huge}), at::ones({2})}},
      {node_proto("Resize", {"x", "", "", "s"}, {"y"}), {kSmall, at::Tensor(), at::Tensor(), longs({huge, 2})}},
  };
  for (const auto& entry : cases) {
    const onnx::NodeProto& node = entry.first;
    const std::vector<at::Tensor>& inputs = entry.second;
    CAPTURE(node.op_type());
    const std::string message = refusal(node, inputs);
    CHECK(message.find(node.op_type() + ":") == 0);
    CHECK(message.find("larger than this machine's memory") != std::string::npos);
  }
  // Sizes past int64 are refused too, not wrapped around.
  const std::string overflow = refusal(node_proto("ConstantOfShape", {"s"}, {"y"}), {longs({huge, huge, huge})});
  CHECK(overflow.find("more bytes than a 64-bit size can count") != std::string::npos);
}

TEST_CASE("the memory limit can be lowered, and what fits is still computed") {
  set_evaluator_memory_limit(1024);
  CHECK(refusal(node_proto("ConstantOfShape", {"s"}, {"y"}), {longs({255})}) == "");
  CHECK(refusal(node_proto("ConstantOfShape", {"s"}, {"y"}), {longs({257})}).find("(1.0 KiB)") != std::string::npos);
  set_evaluator_memory_limit(0);
  CHECK(refusal(node_proto("ConstantOfShape", {"s"}, {"y"}), {longs({257})}) == "");
  CHECK(refusal(node_proto("Range", {"a", "b", "c"}, {"y"}),
                {longs({std::numeric_limits<int64_t>::min()}).reshape({}), longs({std::numeric_limits<int64_t>::max()}).reshape({}),
                 longs({1}).reshape({})})
            .find("64-bit") != std::string::npos);
}

TEST_CASE("what grows an item at a time stops at the memory limit: sequences and a Loop's scan outputs") {
  set_evaluator_memory_limit(64 * kBytesPerItem);
  // SplitToSequence of 100 rows: 100 items of 512 bytes each is past 64 items' worth.
  CHECK(refusal(node_proto("SplitToSequence", {"x"}, {"s"}), {at::ones({100, 1})}).find("the sequence reached 100 items") !=
        std::string::npos);
  CHECK(refusal(node_proto("SplitToSequence", {"x"}, {"s"}), {at::ones({10, 1})}) == "");
  set_evaluator_memory_limit(0);
}
