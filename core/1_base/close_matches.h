#pragma once
// "did you mean" lists for names a user typed: the candidates nearest by edit distance.
#include <string>
#include <vector>

namespace onnxport::core {

// Up to `limit` candidates within a few edits of `name` (about a third of its length, at least
// 2), nearest first, ties in the candidates' order; none when nothing is that close.
std::vector<std::string> close_matches(const std::string& name, const std::vector<std::string>& candidates,
                                       size_t limit = 5);

// "'a', 'b' or 'c'" (empty for an empty list).
std::string quoted_alternatives(const std::vector<std::string>& names);

}  // namespace onnxport::core
