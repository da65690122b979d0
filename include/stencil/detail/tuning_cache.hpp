// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace stencil::detail {

/// The plan Auto's tuning timed fastest for one grid, as its cache keeps it:
/// enough to make the plan again with stencil::plan's own checks.
struct TunedChoice {
  PolicyKind policy = PolicyKind::naive;
  int depth = 0;      ///< TemporalBlocking, DeviceTiling
  int prefetch = -1;  ///< the native policies
  Tile tile{};        ///< SpatialBlocking
  double gcells = 0;  ///< measured while tuning
  /// Rank-2 TemporalBlocking: shared_memory or warp_registers as timed;
  /// automatic for the other policies.
  Tiles2D tiles = Tiles2D::automatic;
};

/// Whether Auto times its candidates: `policy.tune`, or STENCIL_AUTO_TUNE=1
/// in the environment (0 or unset: as the policy says; anything else is an
/// error).
bool tuning_requested(Auto const& policy);

/// cache_directory()/tuning.txt: one `key = value` line per tuned grid.
std::filesystem::path tuning_cache_file();

/// The cache key of a grid (a plan made by describe(), any policy) on
/// `device` (a GPU's UUID, or the host space and its thread count) for the
/// functor type named `functor`.
std::string tuning_key(std::string const& device, std::string const& functor,
                       Plan const& described);

/// The cached choice for `key`, or none where the file or the key is
/// missing. Throws stencil::error naming the file and line for a file this
/// library did not write (or wrote in another format). The file is parsed
/// again only when its size or modification time changes.
std::optional<TunedChoice> read_tuned_choice(std::filesystem::path const& file,
                                             std::string const& key);

/// Adds or replaces the entry for `key`, keeping the others; atomic (see
/// write_cache_file). Throws stencil::error if the file cannot be written.
void write_tuned_choice(std::filesystem::path const& file,
                        std::string const& key, TunedChoice const& choice);

}  // namespace stencil::detail
