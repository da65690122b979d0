// SPDX-License-Identifier: Apache-2.0
// The file the output writers (vtk.cpp, png.cpp) write: private to src/.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace stencil::detail {

/// A binary file being written. Every failure throws stencil::error with
/// `call`, the path and the system's reason. A file not closed with
/// close() (a write threw) is removed by the destructor, so that a reader
/// never opens half a field and takes it for the whole.
class OutputFile {
 public:
  OutputFile(std::string path, std::string call);
  OutputFile(OutputFile const&) = delete;
  OutputFile& operator=(OutputFile const&) = delete;
  ~OutputFile();

  void write(void const* data, std::size_t bytes);
  void write(std::string const& text) { write(text.data(), text.size()); }
  /// Flushes and closes; a full disk often shows only here.
  void close();

 private:
  [[noreturn]] void fail(char const* what, int error_number);

  std::string m_path;
  std::string m_call;
  std::FILE* m_file = nullptr;
};

}  // namespace stencil::detail
