// AlexNet built with the C++ frontend (random weights, fixed seed), traced and exported
// in-process with onnxport's C++ API: the end-to-end example of PyTorch's exporter docs, in C++.
#include <torch/torch.h>

#include <fstream>
#include <iostream>

#include "onnxport/errors.h"
#include "onnxport/export.h"

namespace nn = torch::nn;

struct AlexNetImpl : nn::Module {
  nn::Sequential features{nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)),
                          nn::ReLU(nn::ReLUOptions(true)),
                          nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                          nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)),
                          nn::ReLU(nn::ReLUOptions(true)),
                          nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)),
                          nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)),
                          nn::ReLU(nn::ReLUOptions(true)),
                          nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)),
                          nn::ReLU(nn::ReLUOptions(true)),
                          nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)),
                          nn::ReLU(nn::ReLUOptions(true)),
                          nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2))};
  nn::AdaptiveAvgPool2d avgpool{nn::AdaptiveAvgPool2dOptions({6, 6})};
  nn::Sequential classifier{nn::Dropout(0.5),      nn::Linear(256 * 6 * 6, 4096), nn::ReLU(nn::ReLUOptions(true)),
                            nn::Dropout(0.5),      nn::Linear(4096, 4096),        nn::ReLU(nn::ReLUOptions(true)),
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

// Writes a float32 tensor as .npy, so the test suite can replay the sample in ONNX Runtime.
void save_npy(const std::string& path, const torch::Tensor& t) {
  std::string shape;
  for (int64_t d : t.sizes()) shape += std::to_string(d) + ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.write(reinterpret_cast<const char*>(&len), 2);
  f << header;
  torch::Tensor c = t.contiguous().to(torch::kFloat);
  f.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
}

// alexnet [OUT.onnx] [--save-io PREFIX]: PREFIX.in0.npy, PREFIX.out0.npy and PREFIX.json.
int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "alexnet.onnx";
  const std::string io_prefix = argc > 3 && std::string(argv[2]) == "--save-io" ? argv[3] : "";
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
    onnxport::Exporter exporter;  // built-in op packs, found next to libonnxport_registry
    const torch::Tensor input = torch::randn({10, 3, 224, 224});
    auto report = exporter.export_function(
        [&](std::vector<torch::jit::IValue> in) { return torch::jit::IValue(model->forward(in.at(0).toTensor())); },
        {input}, out, options, names);
    if (!io_prefix.empty()) {
      save_npy(io_prefix + ".in0.npy", input);
      save_npy(io_prefix + ".out0.npy", model->forward(input));
      const std::string base = io_prefix.substr(io_prefix.find_last_of('/') + 1);
      std::ofstream(io_prefix + ".json") << "{\"model\": \"\", \"inputs\": [{\"name\": \"actual_input_1\", \"file\": \""
                                         << base << ".in0.npy\"}], \"outputs\": [{\"file\": \"" << base
                                         << ".out0.npy\"}]}\n";
    }
    std::cout << "exported " << out << ": " << report.node_count << " nodes, " << report.initializer_count
              << " initializers, " << report.initializer_bytes / (1024 * 1024) << " MiB of parameters\n";
  } catch (const onnxport::Error& e) {
    std::cerr << "alexnet sample: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
