// SPDX-License-Identifier: Apache-2.0
// Helpers the tests share: checking a refusal's message, a host copy of a
// (sub)view, and running with a changed environment or a fresh scratch
// directory.
#pragma once

#include <stencil/error.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>

namespace stencil_test {

/// The suite's name of a stencil (`Op::name`); stencils without one
/// (Linear, test stencils) are "stencil".
template <class Op>
requires requires { Op::name; }
char const* name_of() { return Op::name; }
template <class Op>
char const* name_of() {
  return "stencil";
}

/// Expects `f` to throw stencil::error whose message starts "stencil: " and
/// contains every part.
template <class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected stencil::error";
  } catch (stencil::error const& e) {
    std::string const what = e.what();
    EXPECT_EQ(what.rfind("stencil: ", 0), 0u) << what;
    for (std::string const& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos)
          << "message lacks '" << part << "': " << what;
    }
  }
}

/// Sets (or, with std::nullopt, unsets) an environment variable for the
/// lifetime of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(char const* name, std::optional<std::string> const& value)
      : m_name(name) {
    if (char const* old = std::getenv(name)) m_old = old;
    set(value);
  }
  ScopedEnv(ScopedEnv const&) = delete;
  ScopedEnv& operator=(ScopedEnv const&) = delete;
  ~ScopedEnv() { set(m_old); }

  void set(std::optional<std::string> const& value) const {
    if (value) {
      ::setenv(m_name, value->c_str(), 1);
    } else {
      ::unsetenv(m_name);
    }
  }

 private:
  char const* m_name;
  std::optional<std::string> m_old;
};

/// A path in the temporary directory, named after the running test and
/// unique per call; nothing exists there yet.
inline std::filesystem::path scratch_directory(std::string const& prefix) {
  auto const* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path const dir =
      std::filesystem::temp_directory_path() /
      (prefix + "-" + (info ? info->name() : "test") + "-" +
       std::to_string(std::random_device{}()));
  std::filesystem::remove_all(dir);
  return dir;
}

/// A host copy of `v`, which may be a strided subview of device memory
/// (Kokkos copies between memory spaces only contiguous views).
template <class View>
auto host_copy(View const& v) {
  using Dense = Kokkos::View<typename View::non_const_data_type,
                             Kokkos::LayoutRight, typename View::memory_space>;
  auto const init = Kokkos::view_alloc(Kokkos::WithoutInitializing, "dense");
  Dense dense;
  if constexpr (View::rank == 2) {
    dense = Dense(init, v.extent(0), v.extent(1));
  } else {
    dense = Dense(init, v.extent(0), v.extent(1), v.extent(2));
  }
  Kokkos::deep_copy(dense, v);
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, dense);
}

}  // namespace stencil_test
