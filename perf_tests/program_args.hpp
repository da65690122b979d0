// SPDX-License-Identifier: Apache-2.0
// What the plain-main benchmark programs (stencil_perf_mpi,
// stencil_perf_ode) share: their command-line parsing helpers and the
// escaping of text in the JSON they write.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace stencil_perf {

/// A bad command line: the program prints it and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The non-empty parts of `s` between `sep`s.
inline std::vector<std::string> split(std::string const& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

/// Every one of `values` (given to `flag`) is one of `allowed`, or a
/// UsageError naming the first that is not and what would be valid.
inline void expect_one_of(std::string const& flag,
                          std::vector<std::string> const& values,
                          std::vector<std::string> const& allowed) {
  for (auto const& v : values) {
    bool known = false;
    for (auto const& a : allowed) known = known || v == a;
    if (known) continue;
    std::string valid;
    for (std::size_t i = 0; i < allowed.size(); ++i) {
      valid += (i == 0                    ? ""
                : i + 1 == allowed.size() ? " or "
                                          : ", ") +
               allowed[i];
    }
    throw UsageError(flag + ": '" + v + "'; use " + valid);
  }
}

/// `text` as a positive integer, or a UsageError naming `flag`.
inline int parse_positive(std::string const& flag, std::string const& text) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || value <= 0) {
    throw UsageError(flag + ": '" + text + "' is not a positive integer");
  }
  return value;
}

/// `s` as the inside of a JSON string.
inline std::string json_text(std::string const& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace stencil_perf
