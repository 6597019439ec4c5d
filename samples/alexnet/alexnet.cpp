// AlexNet built with the C++ frontend (random weights, fixed seed), traced and exported
// in-process with onnxport's C++ API: the end-to-end example of PyTorch's exporter docs, in C++.
#include <torch/torch.h>

#include <iostream>

#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace nn = torch::nn;

struct AlexNetImpl : nn::Module {
  nn::Sequential features{
      nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), nn::ReLU(nn::ReLUOptions(true)),
      nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
      nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)), nn::ReLU(nn::ReLUOptions(true)),
      nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
      nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)), nn::ReLU(nn::ReLUOptions(true)),
      nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)), nn::ReLU(nn::ReLUOptions(true)),
      nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)), nn::ReLU(nn::ReLUOptions(true)),
      nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2))};
  nn::AdaptiveAvgPool2d avgpool{nn::AdaptiveAvgPool2dOptions({6, 6})};
  nn::Sequential classifier{nn::Dropout(0.5), nn::Linear(256 * 6 * 6, 4096), nn::ReLU(nn::ReLUOptions(true)),
                            nn::Dropout(0.5), nn::Linear(4096, 4096), nn::ReLU(nn::ReLUOptions(true)),
                            nn::Linear(4096, 1000)};

  AlexNetImpl() {
    register_module("features", features);
    register_module("avgpool", avgpool);
    register_module("classifier", classifier);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = avgpool(features->forward(x));
    return classifier->forward(torch::flatten(x, 1));
  }
};
TORCH_MODULE(AlexNet);

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "alexnet.onnx";
  torch::manual_seed(0);
  AlexNet model;
  model->eval();
  torch::NoGradGuard no_grad;

  std::map<std::string, at::Tensor> names;  // initializers named features.0.weight, ...
  for (const auto& p : model->named_parameters()) names.emplace(p.key(), p.value());

  onnxport::ExportOptions options;
  options.opset_version = 17;
  options.input_names = {"actual_input_1"};
  options.output_names = {"output1"};
  try {
    onnxport::Exporter exporter;  // built-in op packs, found next to libonnxport_core
    auto report = exporter.export_function(
        [&](std::vector<torch::jit::IValue> in) { return torch::jit::IValue(model->forward(in.at(0).toTensor())); },
        {torch::randn({10, 3, 224, 224})}, out, options, names);
    std::cout << "exported " << out << ": " << report.node_count << " nodes, " << report.initializer_count
              << " initializers, " << report.initializer_bytes / (1024 * 1024) << " MiB of parameters\n";
  } catch (const onnxport::Error& e) {
    std::cerr << "alexnet sample: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
