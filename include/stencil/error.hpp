// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace stencil {

/// Every error the library reports at run time derives from this type. The
/// message says what was wrong, with the offending values, and what would be
/// valid. A call that throws before running leaves its grid untouched.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class... Parts>
std::string concat(Parts const&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Throws stencil::error("stencil: " + message). Out of line so that the
/// checks inlined into hot code stay small.
[[noreturn]] void throw_error(std::string const& message);

}  // namespace detail
}  // namespace stencil

/// Throws stencil::error with the streamed message parts when `cond` is false.
/// Usage: STENCIL_EXPECT(halo >= radius, "halo ", halo, " is smaller than ...");
#define STENCIL_EXPECT(cond, ...)                                              \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ::stencil::detail::throw_error(                                          \
          ::stencil::detail::concat(__VA_ARGS__));                             \
    }                                                                          \
  } while (false)
