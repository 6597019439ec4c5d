// PackLoader: loading real op packs built by this test suite, and every way one can fail.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "onnxport/errors.h"
#include "onnxport/op_pack.h"
#include "onnxport/registry/loader.h"
#include "support.h"

using namespace onnxport;
using onnxport::test::entry_for;
using onnxport::test::RecordingGraph;
using onnxport::test::ValuePool;
using State = PackStatus::State;
namespace fs = std::filesystem;

namespace {

// Absolute canonical path of a test pack: "good" -> <pack dir>/libunit_good.so
std::string pack_file(const std::string& name, const std::string& dir = UNIT_PACK_DIR) {
  return fs::canonical(dir + "/libunit_" + name + ".so").string();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A fresh registry and loader per test: packs stay mapped, but registrations do not leak.
struct Loader {
  Registry registry;
  PackLoader loader{registry};
  const PackStatus& load(const std::string& name) { return loader.load_file(pack_file(name)); }
};

// Runs the symbolic registered for (op, opset) on a float tensor plus extra_args, into g.
void run_symbolic(const Registry& reg, const std::string& op, int opset, RecordingGraph& g,
                  std::vector<Value*> extra_args = {}) {
  const RegistryEntry& e = entry_for(reg, op, opset);
  ValuePool pool;
  TorchNode node;
  node.kind = op;
  std::vector<Value*> values{pool.tensor(DType::Float, {2, 2})};
  values.insert(values.end(), extra_args.begin(), extra_args.end());
  const std::vector<Value*> outs = e.fn(g, node, Args(values, node));
  CHECK(outs.size() >= 1);
}

}  // namespace

TEST_CASE("a good pack loads, reports its info block and registers its ops and domain") {
  Loader l;
  const PackStatus& st = l.load("good");
  INFO(st.error);
  REQUIRE(st.state == State::Loaded);
  CHECK(st.file == pack_file("good"));
  CHECK(st.id == "unit_good");
  CHECK(st.version == "1.2.3");
  CHECK(st.api_version == host_sdk_api_version());
  CHECK(st.abi_tag == host_abi_tag());
  CHECK(st.op_count == 3);
  REQUIRE(st.domains.size() == 1);
  CHECK(st.domains[0].domain == "com.test");
  CHECK(st.domains[0].version == 2);
  CHECK(st.error.empty());
  CHECK(std::string(st.state_name()) == "loaded");

  CHECK(l.registry.lookup("test::relu", 8) == nullptr);
  CHECK(entry_for(l.registry, "test::relu", 12).pack.file == st.file);
  CHECK(l.registry.domains().at("com.test").version == 2);
}

TEST_CASE("a loaded pack's symbolics run through the registry, per opset") {
  Loader l;
  REQUIRE(l.load("good").state == State::Loaded);
  for (int opset : {9, 12, 13, 17}) {
    CAPTURE(opset);
    RecordingGraph g;
    run_symbolic(l.registry, "test::relu", opset, g);
    REQUIRE(g.nodes().size() == 1);
    CHECK(g.nodes()[0].name == "Relu");
    CHECK(test::attr(g.nodes()[0], "since_i").as_int() == (opset >= 13 ? 13 : 9));
  }
  ValuePool pool;
  RecordingGraph g;
  run_symbolic(l.registry, "test::fancy", 17, g, {pool.constant(0.75)});
  REQUIRE(g.nodes().size() == 1);
  CHECK(g.nodes()[0].name == "com.test::Fancy");
  CHECK(test::attr(g.nodes()[0], "alpha_f").as_float() == 0.75);
}

TEST_CASE("an SDK error thrown inside a pack's symbolic reaches the host as its own type") {
  Loader l;
  REQUIRE(l.load("good").state == State::Loaded);
  RecordingGraph g;
  // test::fancy reads argument 1 as a float; give it none.
  CHECK_THROWS_AS(run_symbolic(l.registry, "test::fancy", 17, g), ArgumentError);
}

TEST_CASE("a pack built for another SDK API version is refused, naming file, got and expected") {
  Loader l;
  const PackStatus& st = l.load("api99");
  CHECK(st.state == State::Failed);
  CHECK(std::string(st.state_name()) == "failed");
  CHECK(st.api_version == 99);
  CHECK(contains(st.error, pack_file("api99")));
  CHECK(contains(st.error, "SDK API version 99"));
  CHECK(contains(st.error, "expects " + std::to_string(host_sdk_api_version())));
  CHECK_FALSE(l.registry.has_op("test::api99"));
}

TEST_CASE("a pack with another ABI tag is refused, naming file, got and expected") {
  Loader l;
  const PackStatus& st = l.load("badabi");
  CHECK(st.state == State::Failed);
  CHECK(st.abi_tag == "bogus");
  CHECK(contains(st.error, pack_file("badabi")));
  CHECK(contains(st.error, "\"bogus\""));
  CHECK(contains(st.error, host_abi_tag()));
  CHECK_FALSE(l.registry.has_op("test::badabi"));
}

TEST_CASE("a shared library without the entry points is not an op pack") {
  Loader l;
  const PackStatus& st = l.load("not_a_pack");
  CHECK(st.state == State::Failed);
  CHECK(contains(st.error, pack_file("not_a_pack")));
  CHECK(contains(st.error, kPackInfoSymbol));
  CHECK(contains(st.error, kPackRegisterSymbol));
}

TEST_CASE("a file that is not a shared library is reported with the loader's reason") {
  Loader l;
  const PackStatus& st = l.load("text");
  CHECK(st.state == State::Failed);
  CHECK(contains(st.error, pack_file("text")));
  const std::string prefix = "not a loadable shared library: ";
  REQUIRE(contains(st.error, prefix));
  const std::string reason = st.error.substr(st.error.find(prefix) + prefix.size());
  CHECK(!reason.empty());                            // dlerror's text follows
  CHECK_FALSE(contains(reason, pack_file("text")));  // without repeating the file
}

TEST_CASE("a missing file is a failed entry, not an exception") {
  Loader l;
  const std::string missing = std::string(UNIT_PACK_DIR) + "/libunit_missing.so";
  const PackStatus& st = l.loader.load_file(missing);
  CHECK(st.state == State::Failed);
  CHECK(contains(st.error, missing));
}

TEST_CASE("a second file with an already loaded pack id fails, naming both files") {
  Loader l;
  REQUIRE(l.load("sameid_a").state == State::Loaded);
  const PackStatus& st = l.load("sameid_b");
  CHECK(st.state == State::Failed);
  CHECK(st.id == "unit_sameid");
  CHECK(contains(st.error, pack_file("sameid_a")));
  CHECK(contains(st.error, pack_file("sameid_b")));
  CHECK(contains(st.error, "unit_sameid"));
  CHECK(l.registry.has_op("test::sameid_a"));
  CHECK_FALSE(l.registry.has_op("test::sameid_b"));
}

TEST_CASE("a pack registering an existing key without override fails, naming both files") {
  Loader l;
  REQUIRE(l.load("good").state == State::Loaded);
  const PackStatus& st = l.load("dup_plain");
  CHECK(st.state == State::Failed);
  CHECK(contains(st.error, "test::relu"));
  CHECK(contains(st.error, pack_file("good")));
  CHECK(contains(st.error, pack_file("dup_plain")));
  CHECK(entry_for(l.registry, "test::relu", 9).pack.id == "unit_good");
}

TEST_CASE("an overriding pack takes over the key and the registry says whom it replaced") {
  Loader l;
  REQUIRE(l.load("good").state == State::Loaded);
  const PackStatus& st = l.load("dup_override");
  INFO(st.error);
  REQUIRE(st.state == State::Loaded);
  const RegistryEntry& e = entry_for(l.registry, "test::relu", 9);
  CHECK(e.pack.id == "unit_dup_override");
  CHECK(e.is_override);
  REQUIRE(e.overridden.size() == 1);
  CHECK(e.overridden[0].file == pack_file("good"));

  RecordingGraph g;
  run_symbolic(l.registry, "test::relu", 12, g);
  REQUIRE(g.nodes().size() == 1);
  CHECK(g.nodes()[0].name == "Identity");
  CHECK(test::attr(g.nodes()[0], "pack_s").as_string() == "unit_dup_override");
  CHECK(entry_for(l.registry, "test::relu", 13).pack.id == "unit_good");  // not overridden
}

TEST_CASE("an exception from a pack's register function fails the pack with its message") {
  Loader l;
  const PackStatus& st = l.load("throws");
  CHECK(st.state == State::Failed);
  CHECK(contains(st.error, pack_file("throws")));
  CHECK(contains(st.error, "pack unit_throws refuses to register"));
  CHECK(l.registry.entries().empty());
}

TEST_CASE("the same file loads once, however it is named") {
  Loader l;
  REQUIRE(l.load("good").state == State::Loaded);
  const std::string indirect = std::string(UNIT_PACK_DIR) + "/../packs/./libunit_good.so";
  const PackStatus& again = l.loader.load_file(indirect);
  CHECK(again.state == State::Loaded);
  CHECK(again.file == pack_file("good"));

  const fs::path link_dir = fs::temp_directory_path() / ("onnxport_unit_" + std::to_string(::getpid()));
  fs::create_directories(link_dir);
  const fs::path link = link_dir / "libalias.so";
  fs::remove(link);
  fs::create_symlink(pack_file("good"), link);
  const PackStatus& via_link = l.loader.load_file(link.string());
  fs::remove_all(link_dir);
  CHECK(via_link.state == State::Loaded);

  CHECK(l.loader.packs().size() == 1);
}

TEST_CASE("a directory scan loads the *.so files directly in it, in name order") {
  Loader l;
  l.loader.load_dir(UNIT_SCAN_DIR);
  const auto& packs = l.loader.packs();
  REQUIRE(packs.size() == 3);  // not README.txt, directory.so/ or nested/
  CHECK(packs[0].file == pack_file("scan_a", UNIT_SCAN_DIR));
  CHECK(packs[0].state == State::Loaded);
  CHECK(packs[1].file == pack_file("scan_b", UNIT_SCAN_DIR));
  CHECK(packs[1].state == State::Loaded);
  CHECK(packs[2].file == pack_file("scan_c", UNIT_SCAN_DIR));
  CHECK(packs[2].state == State::Failed);
  CHECK(l.registry.has_op("test::scan_a"));
  CHECK(l.registry.has_op("test::scan_b"));
  CHECK_FALSE(l.registry.has_op("test::scan_nested"));
}

TEST_CASE("scanning a directory full of broken packs records each file and never throws") {
  Loader l;
  l.loader.load_dir(UNIT_PACK_DIR);
  std::map<std::string, State> states;
  for (const PackStatus& st : l.loader.packs()) {
    states[fs::path(st.file).filename().string()] = st.state;
  }
  // Name order puts the override first, so both plain registrations of test::relu load
  // and are recorded as overridden.
  const std::map<std::string, State> expected = {
      {"libunit_api99.so", State::Failed},        {"libunit_badabi.so", State::Failed},
      {"libunit_dup_override.so", State::Loaded}, {"libunit_dup_plain.so", State::Loaded},
      {"libunit_good.so", State::Loaded},         {"libunit_not_a_pack.so", State::Failed},
      {"libunit_sameid_a.so", State::Loaded},     {"libunit_sameid_b.so", State::Failed},
      {"libunit_text.so", State::Failed},         {"libunit_throws.so", State::Failed},
  };
  CHECK(states == expected);
  CHECK(l.loader.packs().size() == expected.size());
  CHECK(entry_for(l.registry, "test::relu", 9).overridden.size() == 2);
}

TEST_CASE("a missing directory is reported as a failed entry") {
  Loader l;
  const std::string dir = std::string(UNIT_PACK_DIR) + "/no_such_dir";
  l.loader.load_dir(dir);
  REQUIRE(l.loader.packs().size() == 1);
  CHECK(l.loader.packs()[0].state == State::Failed);
  CHECK(contains(l.loader.packs()[0].error, dir));
}

TEST_CASE("built-in packs are looked for next to libonnxport_registry") {
  const fs::path lib_dir = fs::path(UNIT_REGISTRY_LIB).parent_path();
  CHECK(fs::path(builtin_pack_dir()) == lib_dir / "onnxport" / "packs");
}

TEST_CASE("ONNXPORT_PLUGIN_PATH is split on ':' into absolute directories") {
  const char* old = std::getenv("ONNXPORT_PLUGIN_PATH");
  const std::string saved = old ? old : "";
  ::setenv("ONNXPORT_PLUGIN_PATH", "/opt/a::relative/b:/opt/c", 1);
  const std::vector<std::string> dirs = env_pack_dirs();
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0] == "/opt/a");
  CHECK(dirs[1] == (fs::current_path() / "relative/b").string());
  CHECK(dirs[2] == "/opt/c");

  ::unsetenv("ONNXPORT_PLUGIN_PATH");
  CHECK(env_pack_dirs().empty());
  if (old) ::setenv("ONNXPORT_PLUGIN_PATH", saved.c_str(), 1);
}
