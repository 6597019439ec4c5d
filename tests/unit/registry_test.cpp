// Registry: opset dispatch, duplicates, overrides and custom domains, with in-process packs.
#include <doctest/doctest.h>

#include <string>

#include "onnxport/errors.h"
#include "onnxport/registry/registry.h"
#include "support.h"

using namespace onnxport;
using onnxport::test::entry_for;

namespace {

const PackRef kPackA{"pack_a", "/opt/packs/libpack_a.so"};
const PackRef kPackB{"pack_b", "/opt/packs/libpack_b.so"};
const PackRef kPackC{"pack_c", "/opt/packs/libpack_c.so"};

Value* nothing(Graph&, const TorchNode&, const Args&) { return nullptr; }

// A registrar with `ops` registered (plain, or as overrides) for each since-opset given.
Registrar registrar_with(const std::string& op, std::initializer_list<int> since, bool overrides = false) {
  Registrar r;
  for (int s : since) {
    if (overrides) {
      r.add_override(op, s, nothing);
    } else {
      r.add(op, s, nothing);
    }
  }
  return r;
}

Registrar registrar_with_domain(const std::string& domain, int version) {
  Registrar r;
  r.declare_domain(domain, version);
  return r;
}

// The RegistryError message of f(), or "" if it does not throw one.
template <class F>
std::string registry_error(F&& f) {
  try {
    f();
  } catch (const RegistryError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("lookup picks the greatest since-opset not above the target opset") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::hardtanh", {9, 11, 13}));
  CHECK(reg.lookup("aten::hardtanh", 8) == nullptr);
  struct Row {
    int opset, since;
  };
  for (Row row : {Row{9, 9}, Row{10, 9}, Row{11, 11}, Row{12, 11}, Row{13, 13}, Row{17, 13}}) {
    CAPTURE(row.opset);
    const RegistryEntry* e = reg.lookup("aten::hardtanh", row.opset);
    REQUIRE(e != nullptr);
    CHECK(e->since_opset == row.since);
    CHECK(e->torch_op == "aten::hardtanh");
    CHECK(e->pack.id == "pack_a");
  }
  CHECK(reg.lookup("aten::relu", 17) == nullptr);
}

TEST_CASE("has_op, earliest_opset and sorted entries") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::b", {13, 9}));
  reg.add_pack(kPackB, registrar_with("aten::a", {11}));
  CHECK(reg.has_op("aten::a"));
  CHECK_FALSE(reg.has_op("aten::c"));
  CHECK(reg.earliest_opset("aten::b") == 9);
  CHECK_FALSE(reg.earliest_opset("aten::c"));

  const auto entries = reg.entries();
  REQUIRE(entries.size() == 3);
  CHECK(entries[0]->torch_op == "aten::a");
  CHECK(entries[1]->torch_op == "aten::b");
  CHECK(entries[1]->since_opset == 9);
  CHECK(entries[2]->since_opset == 13);
}

TEST_CASE("different since-opsets of one op may come from different packs") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::op", {9}));
  reg.add_pack(kPackB, registrar_with("aten::op", {13}));
  CHECK(entry_for(reg, "aten::op", 12).pack.id == "pack_a");
  CHECK(entry_for(reg, "aten::op", 13).pack.id == "pack_b");
}

TEST_CASE("a duplicate key names the key and both packs' files, and adds nothing") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::relu", {9}));
  Registrar second = registrar_with("aten::relu", {9});
  second.add("aten::fresh", 9, nothing);  // would be new: must not be added either
  const std::string msg = registry_error([&] { reg.add_pack(kPackB, second); });
  CHECK(contains(msg, "aten::relu"));
  CHECK(contains(msg, kPackA.file));
  CHECK(contains(msg, kPackB.file));
  CHECK(contains(msg, "add_override"));
  CHECK_FALSE(reg.has_op("aten::fresh"));
  CHECK(entry_for(reg, "aten::relu", 9).pack.id == "pack_a");
}

TEST_CASE("a key registered twice within one pack is refused, even as an override") {
  Registry reg;
  Registrar plain_and_override = registrar_with("aten::relu", {9});
  plain_and_override.add_override("aten::relu", 9, nothing);
  for (const Registrar& r : {registrar_with("aten::relu", {9, 9}), plain_and_override}) {
    const std::string msg = registry_error([&] { reg.add_pack(kPackA, r); });
    CHECK(contains(msg, "aten::relu"));
    CHECK(contains(msg, kPackA.file));
    CHECK(contains(msg, "twice"));
    CHECK(reg.entries().empty());
  }
}

TEST_CASE("an override replaces an earlier pack's entry and records it") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::relu", {9, 14}));
  reg.add_pack(kPackB, registrar_with("aten::relu", {9}, /*overrides=*/true));
  const RegistryEntry& e = entry_for(reg, "aten::relu", 9);
  CHECK(e.pack.id == "pack_b");
  CHECK(e.is_override);
  REQUIRE(e.overridden.size() == 1);
  CHECK(e.overridden[0].file == kPackA.file);
  // Other opsets of the op are untouched.
  CHECK(entry_for(reg, "aten::relu", 14).pack.id == "pack_a");
  CHECK(entry_for(reg, "aten::relu", 14).overridden.empty());
}

TEST_CASE("an override wins whatever the load order") {
  Registry reg;
  reg.add_pack(kPackB, registrar_with("aten::relu", {9}, /*overrides=*/true));
  reg.add_pack(kPackA, registrar_with("aten::relu", {9}));
  reg.add_pack(kPackC, registrar_with("aten::relu", {9}));
  const RegistryEntry& e = entry_for(reg, "aten::relu", 9);
  CHECK(e.pack.id == "pack_b");
  REQUIRE(e.overridden.size() == 2);
  CHECK(e.overridden[0].id == "pack_a");
  CHECK(e.overridden[1].id == "pack_c");
}

TEST_CASE("an override of a key nobody else registered is just an entry") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("vendor::op", {1}, /*overrides=*/true));
  CHECK(entry_for(reg, "vendor::op", 17).overridden.empty());
}

TEST_CASE("two overrides of one key are refused, naming both files") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with("aten::relu", {9}, true));
  const std::string msg = registry_error([&] { reg.add_pack(kPackB, registrar_with("aten::relu", {9}, true)); });
  CHECK(contains(msg, kPackA.file));
  CHECK(contains(msg, kPackB.file));
  CHECK(entry_for(reg, "aten::relu", 9).pack.id == "pack_a");
}

TEST_CASE("custom domains: agreement is fine, a version conflict names both packs") {
  Registry reg;
  reg.add_pack(kPackA, registrar_with_domain("com.vendor", 2));
  reg.add_pack(kPackB, registrar_with_domain("com.vendor", 2));
  REQUIRE(reg.domains().count("com.vendor") == 1);
  CHECK(reg.domains().at("com.vendor").version == 2);
  CHECK(reg.domains().at("com.vendor").pack.id == "pack_a");

  Registrar conflicting = registrar_with_domain("com.vendor", 3);
  conflicting.add("vendor::fancy", 1, nothing);
  const std::string msg = registry_error([&] { reg.add_pack(kPackC, conflicting); });
  CHECK(contains(msg, "com.vendor"));
  CHECK(contains(msg, kPackA.file));
  CHECK(contains(msg, kPackC.file));
  CHECK(contains(msg, "2"));
  CHECK(contains(msg, "3"));
  CHECK_FALSE(reg.has_op("vendor::fancy"));  // atomic: the pack's ops were not added
  CHECK(reg.domains().at("com.vendor").version == 2);
}

TEST_CASE("PackRef::describe names id and file") {
  CHECK(kPackA.describe() == "pack_a (/opt/packs/libpack_a.so)");
  CHECK(PackRef{"local", ""}.describe() == "local (in-process)");
}
