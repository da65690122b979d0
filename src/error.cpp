// SPDX-License-Identifier: Apache-2.0
#include <stencil/error.hpp>

namespace stencil::detail {

void throw_error(std::string const& message) {
  throw error("stencil: " + message);
}

}  // namespace stencil::detail
