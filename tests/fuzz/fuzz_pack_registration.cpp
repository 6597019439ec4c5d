// What an op pack hands the loader: its id and its registrations (torch op keys, since-opsets,
// ONNX domains and versions). The bytes are read as a list of such entries; registering them
// must succeed or throw onnxport::Error, and never corrupt the registry.
#include <string>

#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/registrar.h"
#include "onnxport/registry/registry.h"

namespace {
// Entries are separated by '\n'; the first byte of an entry says what it is.
onnxport::Value* unused(onnxport::Graph&, const onnxport::TorchNode&, const onnxport::Args&) { return nullptr; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string all = onnxport::fuzz::text(data, size);
  onnxport::Registry registry;
  std::string pack_id = "fuzz";
  for (int round = 0; round < 2; ++round) {  // two packs: the second may clash with the first
    onnxport::Registrar registrar;
    try {
      for (size_t start = 0; start < all.size();) {
        const size_t end = std::min(all.find('\n', start), all.size());
        const std::string entry = all.substr(start, end - start);
        start = end + 1;
        if (entry.size() < 2) continue;
        const int number = static_cast<unsigned char>(entry[1]) - 64;
        const std::string name = entry.substr(2);
        switch (entry[0] % 4) {
          case 0: registrar.add(name, number, unused); break;
          case 1: registrar.add_override(name, number, unused); break;
          case 2: registrar.declare_domain(name, number); break;
          default: pack_id = name; break;
        }
      }
      registry.add_pack(onnxport::PackRef{pack_id, "/fuzz/" + pack_id + ".so"}, registrar);
    } catch (const onnxport::Error&) {
    }
  }
  for (int opset = 1; opset <= 18; ++opset) registry.lookup("aten::relu", opset);
  return 0;
}
