// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>

namespace stencil::detail {

/// Replaces `file` with `contents` through a temporary file and a rename, so
/// that a reader never sees half a file and processes writing at once (MPI
/// ranks on one node) leave one whole version. Creates the directory.
/// Throws stencil::error naming `what` (e.g. "the model's calibration cache")
/// and the path if anything fails, and leaves no temporary behind.
void write_cache_file(std::filesystem::path const& file,
                      std::string const& contents, std::string const& what);

/// Removes spaces, tabs and carriage returns at both ends.
std::string trim_blanks(std::string const& text);

}  // namespace stencil::detail
