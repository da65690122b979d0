// SPDX-License-Identifier: Apache-2.0
#include <stencil/detail/neighbourhood.hpp>
#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>

namespace stencil::detail {

void throw_error(std::string const& message) {
  throw error("stencil: " + message);
}

void throw_bad_input(std::string const& message) {
  throw bad_input("stencil: " + message);
}

void throw_unsupported(std::string const& message) {
  throw unsupported("stencil: " + message);
}

void throw_out_of_memory(std::string const& message,
                         std::size_t requested_bytes,
                         std::size_t available_bytes) {
  throw out_of_memory("stencil: " + message, requested_bytes, available_bytes);
}

void throw_device_error(std::string const& call,
                        std::string const& device_message,
                        std::string const& where) {
  throw device_error(concat("stencil: device error ", device_message, " in ",
                            call, " at ", where),
                     call, device_message);
}

void abort_offset_beyond_radius(int radius, int const* offsets, int count) {
  std::string list;
  for (int d = 0; d < count; ++d)
    list += concat(d == 0 ? "" : ", ", offsets[d]);
  std::string const text = concat(
      "stencil::in: in(", list, ") reads beyond the stencil's declared radius ",
      radius, "; every offset must be between -", radius, " and ", radius,
      " (declare a larger radius, or read within it)");
  Kokkos::abort(text.c_str());
  std::abort();  // Kokkos::abort does not return; this says so to the compiler
}

std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024) return concat(bytes, " bytes");
  char const* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace stencil::detail
