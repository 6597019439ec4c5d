// OutputFile: a file appears complete or not at all; stale temporaries of ours are cleaned up.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "onnxport/errors.h"
#include "1_base/output_file.h"

namespace fs = std::filesystem;
using onnxport::ConfigError;
using onnxport::ExportError;
using onnxport::core::OutputFile;
using onnxport::core::remove_stale_temporaries;
using onnxport::core::temporary_name_for;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/onnxport-output-file-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.insert(e.path().filename().string());
    return names;
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

TEST_CASE("an output file is invisible until committed, then replaces the old one whole") {
  TempDir dir;
  const std::string out = dir.file("model.onnx");
  write(out, "old");
  {
    OutputFile file(out);
    file.stream() << "new contents";
    file.finish();
    CHECK(dir.entries() == std::set<std::string>{"model.onnx"});  // nothing named while writing
    CHECK(read(out) == "old");
    OutputFile::commit_all({&file});
  }
  CHECK(read(out) == "new contents");
  CHECK(dir.entries() == std::set<std::string>{"model.onnx"});
}

TEST_CASE("an output file never committed leaves nothing, and the old file untouched") {
  TempDir dir;
  const std::string out = dir.file("model.onnx");
  write(out, "old");
  {
    OutputFile file(out);
    file.stream() << std::string(1 << 20, 'x');
    file.finish();
  }  // e.g. an exception between writing and committing
  CHECK(read(out) == "old");
  CHECK(dir.entries() == std::set<std::string>{"model.onnx"});
}

TEST_CASE("a model and its data file are committed together") {
  TempDir dir;
  OutputFile data(dir.file("m.onnx.data")), model(dir.file("m.onnx"));
  data.stream() << "weights";
  model.stream() << "graph";
  data.finish();
  model.finish();
  OutputFile::commit_all({&data, &model});
  CHECK(read(dir.file("m.onnx")) == "graph");
  CHECK(read(dir.file("m.onnx.data")) == "weights");
  CHECK(dir.entries().size() == 2);
}

TEST_CASE("temporaries of ours left by a dead process are removed; a live process's are kept") {
  TempDir dir;
  const std::string out = dir.file("model.onnx");
  const std::string stale = temporary_name_for(out, dead_pid());
  const std::string live = temporary_name_for(out, ::getppid());
  const std::string other = dir.file(".other.onnx.onnxport-tmp-1");  // another output's
  for (const auto& f : {stale, live, other}) write(f, "partial");
  CHECK(remove_stale_temporaries(out) == 1);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
  {
    OutputFile file(out);  // a new write cleans up too
  }
  CHECK(fs::exists(live));
}

TEST_CASE("an output path that is a directory or in a missing directory is refused, naming it") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(OutputFile(dir.path.string()), doctest::Contains((dir.path.string() + "' is a directory").c_str()),
                       ConfigError);
  const std::string missing = dir.file("no_such_dir/model.onnx");
  CHECK_THROWS_WITH_AS(OutputFile{missing}, doctest::Contains(missing.c_str()), ExportError);
}
