// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace stencil {

/// Every error the library reports at run time derives from this type. The
/// message says what was wrong, with the offending values, and what would be
/// valid. A call that throws before running leaves its grid untouched.
///
/// Catch one of the subclasses to tell the causes apart:
///   bad_input      a value the caller passed is invalid (an extent, a halo,
///                  a policy parameter, a plan made for another grid);
///   unsupported    valid input that this policy, backend or rank cannot run
///                  (a native policy on a periodic grid, a tile that does not
///                  fit the device);
///   out_of_memory  an allocation that cannot be satisfied, with the bytes
///                  asked and the bytes free;
///   device_error   a device call that failed, with the call and the
///                  device's own error string.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value the caller passed is invalid; the message names it and says what
/// would be valid.
class bad_input : public error {
 public:
  using error::error;
};

/// Valid input that the chosen policy, backend or rank cannot run; the
/// message says what can.
class unsupported : public error {
 public:
  using error::error;
};

/// An allocation that cannot be satisfied. Thrown before anything is
/// allocated where the library can tell in advance.
class out_of_memory : public error {
 public:
  /// `available_bytes` is 0 where the memory space cannot tell.
  out_of_memory(std::string const& message, std::size_t requested_bytes,
                std::size_t available_bytes)
      : error(message),
        m_requested(requested_bytes),
        m_available(available_bytes) {}
  std::size_t requested_bytes() const noexcept { return m_requested; }
  std::size_t available_bytes() const noexcept { return m_available; }

 private:
  std::size_t m_requested;
  std::size_t m_available;
};

/// A device runtime call that failed (a CUDA error, a kernel that could not
/// launch).
class device_error : public error {
 public:
  device_error(std::string const& message, std::string call,
               std::string device_message)
      : error(message),
        m_call(std::move(call)),
        m_device_message(std::move(device_message)) {}
  /// The call that failed, as written in the source.
  std::string const& call() const noexcept { return m_call; }
  /// The device runtime's name and description of the error.
  std::string const& device_message() const noexcept {
    return m_device_message;
  }

 private:
  std::string m_call;
  std::string m_device_message;
};

namespace detail {

template <class... Parts>
std::string concat(Parts const&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Throw the error classes with "stencil: " before the message; throw_error
/// throws the base class, for failures of the environment (a cache file
/// that cannot be written). Out of line
/// so that the checks inlined into hot code stay small.
[[noreturn]] void throw_error(std::string const& message);
[[noreturn]] void throw_bad_input(std::string const& message);
[[noreturn]] void throw_unsupported(std::string const& message);
[[noreturn]] void throw_out_of_memory(std::string const& message,
                                      std::size_t requested_bytes,
                                      std::size_t available_bytes);
[[noreturn]] void throw_device_error(std::string const& call,
                                     std::string const& device_message,
                                     std::string const& where);

/// A size in bytes as people read it: "298.0 GiB", "512 bytes".
std::string format_bytes(std::size_t bytes);

}  // namespace detail
}  // namespace stencil

/// Throws stencil::bad_input with the streamed message parts when `cond` is
/// false. Usage: STENCIL_EXPECT(halo >= radius, "halo ", halo, " is ...");
#define STENCIL_EXPECT(cond, ...)                  \
  do {                                             \
    if (!(cond)) {                                 \
      ::stencil::detail::throw_bad_input(          \
          ::stencil::detail::concat(__VA_ARGS__)); \
    }                                              \
  } while (false)

/// Throws stencil::unsupported with the streamed message parts when `cond`
/// is false: the input is valid, but this policy or backend cannot run it.
#define STENCIL_EXPECT_SUPPORTED(cond, ...)        \
  do {                                             \
    if (!(cond)) {                                 \
      ::stencil::detail::throw_unsupported(        \
          ::stencil::detail::concat(__VA_ARGS__)); \
    }                                              \
  } while (false)
