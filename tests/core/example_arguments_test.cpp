// --input specs (InputSpec::parse/text) and the arguments they make against a method's schema
// (example_arguments.h): every form reads back from its own text, each value has the type its
// argument declares, and each misfit is refused naming the argument and the form to give.
#include "doctest_torch.h"  // before any libtorch header

#include <string>
#include <vector>

#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include "3_export/1_load/example_arguments.h"
#include "onnxport/errors.h"
#include "onnxport/options.h"

using namespace onnxport;
using namespace onnxport::core;

namespace {

std::vector<InputSpec> parse_all(const std::vector<std::string>& texts) {
  std::vector<InputSpec> specs;
  for (const auto& t : texts) specs.push_back(InputSpec::parse(t));
  return specs;
}

std::string refusal(const std::vector<std::string>& texts, const std::string& schema) {
  try {
    make_example_arguments(parse_all(texts), 0, torch::jit::parseSchema(schema), "forward");
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
  return "";
}

}  // namespace

TEST_CASE("each --input form reads back from its own text") {
  const std::vector<std::pair<std::string, std::string>> forms = {
      {"x:1x3x8x8", "x:1x3x8x8:float32"},
      {"x:scalar:int64", "x:scalar:int64"},
      {"x=in/x.npy", "x=in/x.npy"},
      {"x:in/x.npy", "x=in/x.npy"},
      {"sr:int=16000", "sr:int=16000"},
      {"flags:bool[]=1,0", "flags:bool[]=1,0"},
      {"mode:str=a,b", "mode:str=a,b"},
      {"empty:int[]=", "empty:int[]="},
      {"mask:none", "mask:none"},
      {"hc:(1x2,2x3:int64)", "hc:(1x2:float32,2x3:int64)"},
      {"d:{a:2,b:int=4,c:[none,y.npy]}", "d:{a:2:float32,b:int=4,c:[none,y.npy]}"},
      {"t:()", "t:()"},
  };
  for (const auto& [given, text] : forms) {
    CAPTURE(given);
    const InputSpec spec = InputSpec::parse(given);
    CHECK(spec.text() == text);
    CHECK(InputSpec::parse(spec.text()).text() == text);
  }
}

TEST_CASE("malformed specs are refused with what is wrong") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"sr=16000", "'16000' is read as a .npy file name"},
      {"sr:int=abc", "'abc' is not an int"},
      {"b:bool=2", "'2' is not a bool"},
      {"x:(2x3", "'(' is not closed by ')'"},
      {"x:(2x3,)", "an element is empty"},
      {"x:((1),2))", "unbalanced brackets"},
      {"x:{2x3}", "a dict element is written KEY:VALUE"},
      {"x:(int[]=1,2)", "a list of values inside a collection is written [int=V,int=V]"},
      {"x:long=3", "unknown value type 'long'"},
      {"x:((((((((((((((((((1))))))))))))))))))", "collections nest deeper than 16 levels"},
  };
  for (const auto& [text, message] : bad) {
    CAPTURE(text);
    bool refused = false;
    try {
      InputSpec::parse(text);
    } catch (const ConfigError& e) {
      refused = true;
      CHECK(std::string(e.what()).find(message) != std::string::npos);
    }
    CHECK(refused);
  }
}

TEST_CASE("arguments take the types their schema declares") {
  const auto schema = torch::jit::parseSchema(
      "f(Tensor x, int sr, float scale, bool[] flags, Tensor? mask, (Tensor, Tensor) hc, Dict(str, Tensor) d, "
      "str mode, Scalar s, int[2] sizes) -> Tensor");
  const auto args = make_example_arguments(
      parse_all({"x:2x3", "sr:int=16000", "scale:int=2", "flags:bool[]=1,0", "mask:none", "hc:(2,3:int64)",
                 "d:{a:4}", "mode:str=linear", "s:float=0.5", "sizes:int[]=3,4"}),
      0, schema, "f");
  REQUIRE(args.size() == 10);
  CHECK(args[0].toTensor().sizes() == at::IntArrayRef({2, 3}));
  CHECK(args[1].toInt() == 16000);
  CHECK(args[2].isDouble());  // an int given for a float argument is that float
  CHECK(args[2].toDouble() == 2.0);
  CHECK(args[3].toBoolList().vec() == std::vector<bool>({true, false}));
  CHECK(args[4].isNone());
  CHECK((args[5].toTupleRef().elements()[1].toTensor().scalar_type() == at::kLong));
  CHECK(args[6].toGenericDict().at("a").toTensor().sizes() == at::IntArrayRef({4}));
  CHECK(args[7].toStringRef() == "linear");
  CHECK(args[8].toDouble() == 0.5);
  CHECK(args[9].toIntVector() == std::vector<int64_t>({3, 4}));
}

TEST_CASE("a spec that does not fit its argument is refused naming both and the form") {
  CHECK(refusal({"sr:16000"}, "f(int sr) -> Tensor")
            .find("argument 'sr' of forward is int, the spec gives a tensor") != std::string::npos);
  CHECK(refusal({"sr:16000"}, "f(int sr) -> Tensor").find("give it as --input sr:int=VALUE") != std::string::npos);
  CHECK(refusal({"s:float=1.5"}, "f(int s) -> Tensor").find("the spec gives a float") != std::string::npos);
  CHECK(refusal({"m:none"}, "f(Tensor m) -> Tensor").find("give it as --input m:SHAPE[:DTYPE] or m=FILE.npy") !=
        std::string::npos);
  CHECK(refusal({"f:int[]=1"}, "f(bool[] f) -> Tensor").find("give it as --input f:bool[]=V,V") != std::string::npos);
  CHECK(refusal({"hc:(2)"}, "f((Tensor, Tensor) hc) -> Tensor")
            .find("give it as --input hc:(SHAPE[:DTYPE],SHAPE[:DTYPE])") != std::string::npos);
  CHECK(refusal({"x:2"}, "f(Tensor x, int sr) -> Tensor").find("no --input for argument 'sr'") != std::string::npos);
  CHECK(refusal({"x:2"}, "f(Tensor x, int sr=3) -> Tensor").empty());  // a default needs no spec
  CHECK(refusal({"x:2", "y:2"}, "f(Tensor x) -> Tensor").find("forward takes 1 argument (x: Tensor), 2 --input") !=
        std::string::npos);
}
