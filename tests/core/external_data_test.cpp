// resolve_external_data: what a file may name (inside its directory) and what it may not.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "1_base/external_data.h"
#include "onnxport/errors.h"

namespace fs = std::filesystem;
using onnxport::ModelError;
using onnxport::core::DataFile;
using onnxport::core::resolve_external_data;

namespace {

struct ModelDir {
  fs::path root;  // holds `model/` (the model's directory) and `outside.bin` beside it
  fs::path model;
  ModelDir() {
    char pattern[] = "/tmp/onnxport-external-data-XXXXXX";
    root = ::mkdtemp(pattern);
    model = root / "model";
    fs::create_directories(model / "weights");
    std::ofstream(root / "outside.bin") << "0123456789abcdef";
    std::ofstream(model / "w.bin") << "0123456789abcdef";
    std::ofstream(model / "weights" / "w.bin") << "0123456789abcdef";
  }
  ~ModelDir() { fs::remove_all(root); }
};

onnx::TensorProto external(const std::string& location, const std::string& offset = "0",
                           const std::string& length = "16") {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location}, {"offset", offset},
                                   {"length", length}}) {
    auto* entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  return t;
}

std::string refusal(const onnx::TensorProto& t, const fs::path& dir, DataFile rule = DataFile::MustExist) {
  try {
    resolve_external_data(t, dir.string(), rule);
  } catch (const ModelError& e) {
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("external data inside the model's directory resolves, through links that stay inside too") {
  ModelDir d;
  fs::create_symlink("weights/w.bin", d.model / "link.bin");
  for (const char* location : {"w.bin", "weights/w.bin", "./weights/w.bin", "link.bin", "weights//w.bin"}) {
    CAPTURE(location);
    const auto ref = resolve_external_data(external(location, "4", "12"), d.model.string());
    CHECK(fs::equivalent(ref.path, d.model / fs::path(location)));
    CHECK(ref.offset == 4);
    CHECK(ref.length == 12);
  }
  CHECK(resolve_external_data(external("missing.bin"), d.model.string(), DataFile::MayBeMissing).path ==
        (d.model / "missing.bin").string());
}

TEST_CASE("external data that leaves the directory or names no file is refused, naming the tensor and location") {
  ModelDir d;
  fs::create_symlink("../outside.bin", d.model / "out.bin");
  fs::create_symlink(d.model, d.model / "weights" / "loop");
  fs::create_symlink("/dev/zero", d.model / "zero.bin");
  const std::pair<std::string, const char*> cases[] = {
      {"../outside.bin", "has a '..' component"},
      {"weights/../../outside.bin", "has a '..' component"},
      {(d.root / "outside.bin").string(), "is an absolute path"},
      {"out.bin", "leaves the model's directory through a symbolic link"},
      {"zero.bin", "leaves the model's directory through a symbolic link"},
      {"weights", "names a directory"},
      {"weights/loop", "names a directory"},
      {"missing.bin", "cannot be opened"},
      {"", "names no location"},
  };
  for (const auto& entry : cases) {
    const std::string& location = entry.first;
    const std::string problem = entry.second;
    CAPTURE(location);
    const std::string message = refusal(external(location), d.model);
    CHECK(message.find(problem) != std::string::npos);
    CHECK(message.find("'w'") != std::string::npos);
  }
  CHECK(refusal(external("../outside.bin"), d.model, DataFile::MayBeMissing).find("'..'") != std::string::npos);
  CHECK(refusal(external("w.bin", "-1"), d.model).find("offset '-1'") != std::string::npos);
  CHECK(refusal(external("w.bin", "0", "12x"), d.model).find("length '12x'") != std::string::npos);
}
