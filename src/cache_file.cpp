// SPDX-License-Identifier: Apache-2.0
#include <stencil/detail/cache_file.hpp>
#include <stencil/error.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

namespace stencil::detail {

void write_cache_file(std::filesystem::path const& file,
                      std::string const& contents, std::string const& what) {
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
    STENCIL_EXPECT(!ec, "cannot create the directory of ", what, " ",
                   file.parent_path(), ": ", ec.message(),
                   "; set STENCIL_CACHE_DIR to a writable directory");
  }
  // Unique per process, so that ranks writing at once on one node do not
  // write into each other's file before the rename.
  std::filesystem::path const temporary =
      file.string() + ".tmp-" + std::to_string(std::random_device{}());
  {
    std::ofstream out(temporary);
    STENCIL_EXPECT(out.good(), "cannot write ", what, " ", temporary, ": ",
                   std::strerror(errno),
                   "; set STENCIL_CACHE_DIR to a writable directory");
    out << contents;
    out.flush();
    if (!out.good()) {
      out.close();
      std::filesystem::remove(temporary, ec);
      throw_error(concat("writing ", what, " ", temporary,
                         " failed; set STENCIL_CACHE_DIR to a writable "
                         "directory with free space"));
    }
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw_error(concat("cannot replace ", what, " ", file, ": ", ec.message()));
  }
}

std::string trim_blanks(std::string const& text) {
  std::size_t const b = text.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  std::size_t const e = text.find_last_not_of(" \t\r");
  return text.substr(b, e - b + 1);
}

}  // namespace stencil::detail
