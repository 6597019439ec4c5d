// What no export of MODEL.pt can avoid on this machine, for the export benchmark
// (bench_export.py): torch::jit::load of the archive (with the CLI's huge-page advice), one forward pass on the example
// inputs (an export needs it for the types of its values), and writing every parameter and buffer byte once to OUT. Run
// it as a fresh process under /usr/bin/time: the process's wall time then also holds libtorch's start-up, which every
// onnxport process pays before its first stage. Like the CLI, it exits without libtorch's teardown.
//
// Usage: onnxport_bench_floor MODEL.pt OUT INPUT.npy...
// Prints one line: "floor: load X s, forward Y s, write Z s, N bytes".
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <unordered_set>

#include "5_cli/huge_pages.h"
#include "5_cli/process_exit.h"
#include "1_base/intra_op_threads.h"
#include "1_base/npy.h"
#include "onnxport/options.h"
#include "1_base/torch_tensors.h"
#include "1_base/output_file.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each storage once: a parameter and a view of it (tied weights) share their bytes.
size_t write_parameter_bytes(const torch::jit::Module& module, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  std::unordered_set<const void*> written;
  size_t total = 0;
  auto write_tensor = [&](const at::Tensor& t) {
    if (!t.defined() || !written.insert(t.storage().data()).second) return;
    // In writes of onnxport's size, so that the floor writes the way an export does.
    const char* bytes = static_cast<const char*>(t.storage().data());
    for (size_t done = 0, n = t.storage().nbytes(); done < n;) {
      const size_t chunk = std::min(n - done, onnxport::core::kWriteChunkBytes);
      out.write(bytes + done, static_cast<std::streamsize>(chunk));
      done += chunk;
    }
    total += t.storage().nbytes();
  };
  for (const auto& p : module.parameters(/*recurse=*/true)) write_tensor(p);
  for (const auto& b : module.buffers(/*recurse=*/true)) write_tensor(b);
  out.close();
  if (!out) throw std::runtime_error("writing " + path + " failed");
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: onnxport_bench_floor MODEL.pt OUT INPUT.npy...\n";
    return 2;
  }
  try {
    onnxport::cli::use_huge_pages_for_large_buffers();
    auto start = std::chrono::steady_clock::now();
    torch::jit::Module module = torch::jit::load(argv[1]);
    module.eval();
    const double load = seconds_since(start);

    std::vector<torch::jit::IValue> inputs;
    for (int i = 3; i < argc; ++i) inputs.emplace_back(onnxport::core::to_aten(onnxport::core::read_npy(argv[i])));
    // One plain run, as the export's type recording does: no profiling runs, no optimization, and
    // libtorch's intra-op threads as the export sets them (ExportOptions::threads).
    torch::jit::setGraphExecutorOptimize(false);
    const onnxport::core::IntraOpThreads threads(onnxport::ExportOptions{}.threads);
    start = std::chrono::steady_clock::now();
    {
      torch::NoGradGuard no_grad;
      module.forward(inputs);
    }
    const double forward = seconds_since(start);

    start = std::chrono::steady_clock::now();
    const size_t bytes = write_parameter_bytes(module, argv[2]);
    const double write = seconds_since(start);
    std::printf("floor: load %.3f s, forward %.3f s, write %.3f s, %zu bytes\n", load, forward, write, bytes);
    // As the CLI ends: libtorch's teardown is not part of the floor, since an export can skip it.
    onnxport::cli::exit_without_teardown(0);
  } catch (const std::exception& e) {
    std::cerr << "onnxport_bench_floor: " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
}
