// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <stencil/error.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace stencil::detail {

OutputFile::OutputFile(std::string path, std::string call)
    : m_path(std::move(path)), m_call(std::move(call)) {
  errno = 0;
  m_file = std::fopen(m_path.c_str(), "wb");
  if (m_file == nullptr) fail("cannot open", errno);
}

namespace {
/// Removes what a failed write left, if it is a plain file: the path may
/// name a device (/dev/stdout, /dev/full) or a link, which are not ours.
void remove_partial(std::string const& path) noexcept {
  std::error_code ec;
  if (std::filesystem::is_regular_file(
          std::filesystem::symlink_status(path, ec))) {
    std::filesystem::remove(path, ec);
  }
}
}  // namespace

OutputFile::~OutputFile() {
  if (m_file != nullptr) {
    std::fclose(m_file);
    remove_partial(m_path);
  }
}

void OutputFile::write(void const* data, std::size_t bytes) {
  errno = 0;
  if (bytes != 0 && std::fwrite(data, 1, bytes, m_file) != bytes) {
    fail("cannot write", errno);
  }
}

void OutputFile::close() {
  errno = 0;
  std::FILE* const file = std::exchange(m_file, nullptr);
  if (std::fclose(file) != 0) {
    int const error_number = errno;
    remove_partial(m_path);
    fail("cannot write", error_number);
  }
}

void OutputFile::fail(char const* what, int error_number) {
  // Some C libraries leave errno unset on a short write; say so rather
  // than print "Success".
  std::string const reason = error_number != 0 ? std::strerror(error_number)
                                               : "the write was cut short";
  throw_error(concat(m_call, ": ", what, " '", m_path, "': ", reason));
}

}  // namespace stencil::detail
