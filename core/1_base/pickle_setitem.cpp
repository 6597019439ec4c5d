#include "1_base/pickle_setitem.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace onnxport::core {

namespace {

uint64_t little_endian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

std::string setitem_as_setitems(const std::string& pickle) {
  // Walks the opcodes keeping, for each value on the pickle machine's stack, the offset where the
  // opcodes that made it begin (a MARK is an entry too), so that a SETITEM's key is known to begin
  // where its MARK goes.
  struct Entry {
    size_t start;
    bool mark;
  };
  std::vector<Entry> stack;
  std::vector<size_t> marks_before;  // offsets that get a MARK
  std::vector<size_t> setitems;      // offsets of SETITEM opcodes
  const auto pop_to_mark = [&stack]() -> size_t {
    while (!stack.empty() && !stack.back().mark) stack.pop_back();
    if (stack.empty()) return SIZE_MAX;
    const size_t start = stack.back().start;
    stack.pop_back();
    return start;
  };
  const auto pop = [&stack](size_t n) -> size_t {  // the start of the lowest of the n popped
    size_t start = SIZE_MAX;
    for (size_t i = 0; i < n && !stack.empty(); ++i) {
      start = stack.back().start;
      stack.pop_back();
    }
    return start;
  };
  size_t at = 0;
  while (at < pickle.size()) {
    const size_t op_at = at;
    const unsigned char op = static_cast<unsigned char>(pickle[at++]);
    size_t argument = 0;  // bytes after the opcode
    auto length = [&](int bytes) {
      if (at + bytes > pickle.size()) return false;
      argument = bytes + little_endian(pickle, at, bytes);
      return true;
    };
    bool pushes = false;
    switch (op) {
      case '.':  // STOP
        at = pickle.size();
        continue;
      case '(':  // MARK
        stack.push_back({op_at, true});
        continue;
      case 'K': case 'q': case 'h': case 0x80:  // BININT1, BINPUT, BINGET, PROTO
        argument = 1;
        pushes = op == 'K' || op == 'h';
        break;
      case 'M':  // BININT2
        argument = 2;
        pushes = true;
        break;
      case 'J': case 'r': case 'j':  // BININT, LONG_BINPUT, LONG_BINGET
        argument = 4;
        pushes = op != 'r';
        break;
      case 'G':  // BINFLOAT
        argument = 8;
        pushes = true;
        break;
      case 0x95:  // FRAME
        argument = 8;
        break;
      case 0x94:  // MEMOIZE
        break;
      case 'N': case 0x88: case 0x89: case ']': case ')': case '}':  // NONE, NEWTRUE/FALSE, EMPTY_*
        pushes = true;
        break;
      case 0x8a: case 'U': case 'C': case 0x8c:  // LONG1, SHORT_BINSTRING, SHORT_BINBYTES, SHORT_BINUNICODE
        if (!length(1)) return pickle;
        pushes = true;
        break;
      case 0x8b: case 'T': case 'B': case 'X':  // LONG4, BINSTRING, BINBYTES, BINUNICODE
        if (!length(4)) return pickle;
        pushes = true;
        break;
      case 'c': {  // GLOBAL: module and name, each ending in a newline
        size_t end = pickle.find('\n', at);
        end = end == std::string::npos ? end : pickle.find('\n', end + 1);
        if (end == std::string::npos) return pickle;
        argument = end + 1 - at;
        pushes = true;
        break;
      }
      case '0':  // POP
        pop(1);
        break;
      case '1': case 'e': case 'u':  // POP_MARK, APPENDS, SETITEMS
        pop_to_mark();
        break;
      case 'a': case 'b':  // APPEND, BUILD
        pop(1);
        break;
      case 'l': case 't': case 'd': {  // LIST, TUPLE, DICT
        const size_t start = pop_to_mark();
        stack.push_back({start, false});
        break;
      }
      case 0x85: case 0x86: case 0x87: case 'R': case 0x81: case 0x93: case 'Q': {
        // TUPLE1-3, REDUCE, NEWOBJ, STACK_GLOBAL, BINPERSID: n values become one
        const size_t n = op == 0x85 ? 1 : op == 0x86 ? 2 : op == 0x87 ? 3 : op == 'Q' ? 1 : 2;
        stack.push_back({pop(n), false});
        break;
      }
      case 's': {  // SETITEM: the dict stays; key and value are its entry
        if (stack.size() < 3) return pickle;
        marks_before.push_back(stack[stack.size() - 2].start);
        setitems.push_back(op_at);
        pop(2);
        break;
      }
      default:
        return pickle;  // an opcode not handled here: the unpickler says what it is
    }
    if (pushes) stack.push_back({op_at, false});
    at += argument;
  }
  if (setitems.empty()) return pickle;
  std::string out;
  out.reserve(pickle.size() + setitems.size());
  size_t next_mark = 0;
  std::vector<size_t> marks = marks_before;
  std::sort(marks.begin(), marks.end());
  size_t next_setitem = 0;
  for (size_t i = 0; i < pickle.size(); ++i) {
    while (next_mark < marks.size() && marks[next_mark] == i) {
      out.push_back('(');
      ++next_mark;
    }
    if (next_setitem < setitems.size() && setitems[next_setitem] == i) {
      out.push_back('u');
      ++next_setitem;
    } else {
      out.push_back(pickle[i]);
    }
  }
  return out;
}

}  // namespace onnxport::core
