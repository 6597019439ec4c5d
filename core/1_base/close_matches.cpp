#include "1_base/close_matches.h"

#include <algorithm>
#include <set>

namespace onnxport::core {

namespace {

// Levenshtein distance, giving up (returning limit + 1) once every path exceeds `limit`.
size_t edit_distance(const std::string& a, const std::string& b, size_t limit) {
  const size_t longer = std::max(a.size(), b.size()), shorter = std::min(a.size(), b.size());
  if (longer - shorter > limit) return limit + 1;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    size_t row_min = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min > limit) return limit + 1;
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> close_matches(const std::string& name, const std::vector<std::string>& candidates,
                                       size_t limit) {
  const size_t max_edits = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, candidate index)
  std::set<std::string> seen;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == name || !seen.insert(candidates[i]).second) continue;
    const size_t d = edit_distance(name, candidates[i], max_edits);
    if (d <= max_edits) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t k = 0; k < scored.size() && k < limit; ++k) out.push_back(candidates[scored[k].second]);
  return out;
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

}  // namespace onnxport::core
