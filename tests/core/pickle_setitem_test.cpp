// setitem_as_setitems: a pickle's one-entry dicts (SETITEM) as MARK ... SETITEMS, which libtorch 1.13's
// unpickler reads. The bytes are Python's pickle.dumps([{'a': 1}, {'b': {'c': 'd'}}, {}], protocol=2);
// the expected ones load to the same value in Python (checked when this test was written).
#include <doctest/doctest.h>

#include <string>

#include "1_base/pickle_setitem.h"

using onnxport::core::setitem_as_setitems;

namespace {

std::string bytes(const char* text, size_t size) { return std::string(text, size); }

}  // namespace

TEST_CASE("each SETITEM becomes SETITEMS with a MARK before its key, nested ones too") {
  const std::string pickle = bytes("\200\002]q\000(}q\001X\001\000\000\000aq\002K\001s}q\003X\001\000\000\000bq\004}q\005X\001\000\000\000cq\006X\001\000\000\000dq\007ss}q\010e.", 57);
  const std::string expected = bytes("\200\002]q\000(}q\001(X\001\000\000\000aq\002K\001u}q\003(X\001\000\000\000bq\004}q\005(X\001\000\000\000cq\006X\001\000\000\000dq\007uu}q\010e.", 60);
  CHECK(setitem_as_setitems(pickle) == expected);
}

TEST_CASE("a pickle without SETITEM, or with an opcode the rewrite does not know, is left as it is") {
  const std::string plain = bytes("\200\002}q\000(X\001\000\000\000aq\001K\001X\001\000\000\000bq\002K\002u.", 28);  // {'a': 1, 'b': 2}
  CHECK(setitem_as_setitems(plain) == plain);
  const std::string unknown = bytes("\200\002}q\000\377X\001\000\000\000aK\001s.", 16);  // 0xff: no opcode
  CHECK(setitem_as_setitems(unknown) == unknown);
}
