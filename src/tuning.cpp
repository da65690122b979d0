// SPDX-License-Identifier: Apache-2.0
#include <stencil/detail/cache_file.hpp>
#include <stencil/detail/tuning_cache.hpp>
#include <stencil/error.hpp>
#include <stencil/model.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
#include <utility>

namespace stencil::detail {

namespace {

// Bumped when an entry's key or value changes meaning: an older file is
// then tuned again and replaced (read_entries), a newer or unknown one
// refused with a message to delete it; neither is misread.
// 2: TemporalBlocking's tiles.
constexpr int tuning_format = 2;

constexpr std::array<std::pair<Tiles2D, char const*>, 3> tiles_names{{
    {Tiles2D::automatic, "automatic"},
    {Tiles2D::shared_memory, "shared"},
    {Tiles2D::warp_registers, "warps"},
}};

std::string value_text(TunedChoice const& c) {
  std::ostringstream out;
  out << to_string(c.policy) << " depth " << c.depth << " prefetch "
      << c.prefetch << " tile " << c.tile.x << ' ' << c.tile.y << ' '
      << c.tile.z << " tiles ";
  for (auto const& [tiles, name] : tiles_names) {
    if (tiles == c.tiles) out << name;
  }
  out << " measured " << std::setprecision(6) << c.gcells << " GCells/s";
  return out.str();
}

std::optional<TunedChoice> parse_value(std::string const& text) {
  std::istringstream in(text);
  TunedChoice c;
  std::string name, depth, prefetch, tile, tiles, tiles_name, measured, unit,
      rest;
  in >> name >> depth >> c.depth >> prefetch >> c.prefetch >> tile >>
      c.tile.x >> c.tile.y >> c.tile.z >> tiles >> tiles_name >> measured >>
      c.gcells >> unit;
  if (!in || depth != "depth" || prefetch != "prefetch" || tile != "tile" ||
      tiles != "tiles" || measured != "measured" || unit != "GCells/s" ||
      (in >> rest)) {
    return std::nullopt;
  }
  bool tiles_known = false;
  for (auto const& [kind, known_name] : tiles_names) {
    if (tiles_name == known_name) {
      c.tiles = kind;
      tiles_known = true;
    }
  }
  if (!tiles_known) return std::nullopt;
  bool known = false;
  for_each_policy([&](auto policy) {
    using Traits = policy_traits<decltype(policy)>;
    if (Traits::name == name) {
      c.policy = Traits::kind;
      known = true;
    }
  });
  if (!known) return std::nullopt;
  return c;
}

using Entries = std::map<std::string, TunedChoice>;

// The entries of a tuning cache by key; throws for a file this library did
// not write.
Entries read_entries(std::filesystem::path const& file) {
  Entries entries;
  std::ifstream in(file);
  STENCIL_EXPECT(in.good(), "Auto's tuning cache ", file,
                 " cannot be read: ", std::strerror(errno));
  bool format_seen = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string const text = trim_blanks(line);
    if (text.empty() || text.front() == '#') continue;
    std::size_t const eq = text.rfind('=');
    STENCIL_EXPECT(eq != std::string::npos, "Auto's tuning cache ", file,
                   " line ", number, ": '", text,
                   "' is not 'key = value'; delete the file to tune again");
    std::string const key = trim_blanks(text.substr(0, eq));
    std::string const value = trim_blanks(text.substr(eq + 1));
    if (key == "format") {
      // An earlier format is this library's own, from before an upgrade:
      // its plans were timed among other candidates, so all are tuned
      // again, and the next write replaces the file. A later or unknown
      // one is refused, not overwritten.
      int earlier = 0;
      std::istringstream number_text(value);
      if (number_text >> earlier && number_text.eof() && earlier >= 1 &&
          earlier < tuning_format) {
        return {};
      }
      STENCIL_EXPECT(value == std::to_string(tuning_format),
                     "Auto's tuning cache ", file, " line ", number,
                     ": format ", value, " is not this library's (",
                     tuning_format, "); delete the file to tune again");
      format_seen = true;
      continue;
    }
    STENCIL_EXPECT(format_seen, "Auto's tuning cache ", file, " line ", number,
                   ": an entry before the 'format = ", tuning_format,
                   "' line; the file was not written by this library; "
                   "delete it to tune again");
    std::optional<TunedChoice> const choice = parse_value(value);
    STENCIL_EXPECT(choice.has_value(), "Auto's tuning cache ", file, " line ",
                   number, ": '", value,
                   "' is not '<policy> depth D prefetch P tile X Y Z tiles "
                   "automatic|shared|warps measured G GCells/s'; delete the "
                   "file to tune again");
    entries[key] = *choice;
  }
  return entries;
}

// The last file read, kept while its size and modification time stay the
// same: an application that plans in a loop (iterate with
// Auto{.tune = true} every few steps) would otherwise read and parse the
// whole file every time. Returns the entries (empty for a missing file).
Entries current_entries(std::filesystem::path const& file) {
  struct Parsed {
    std::filesystem::path file;
    std::filesystem::file_time_type time;
    std::uintmax_t size;
    Entries entries;
  };
  static std::mutex mutex;
  static std::optional<Parsed> last;
  std::error_code time_error, size_error;
  auto const time = std::filesystem::last_write_time(file, time_error);
  auto const size = std::filesystem::file_size(file, size_error);
  if (time_error && !std::filesystem::exists(file)) return {};
  std::lock_guard<std::mutex> const lock(mutex);
  bool const known = !time_error && !size_error;
  if (known && last && last->file == file && last->time == time &&
      last->size == size) {
    return last->entries;
  }
  Entries entries = read_entries(file);
  if (known) last = Parsed{file, time, size, entries};
  return entries;
}

}  // namespace

bool tuning_requested(Auto const& policy) {
  char const* const env = std::getenv("STENCIL_AUTO_TUNE");
  if (env == nullptr || *env == '\0') return policy.tune;
  std::string const value = env;
  STENCIL_EXPECT(value == "0" || value == "1", "STENCIL_AUTO_TUNE is '", value,
                 "'; it must be 1 (Auto times its candidate plans), 0 or "
                 "unset (Auto{.tune} decides)");
  return value == "1" || policy.tune;
}

std::filesystem::path tuning_cache_file() {
  return model::cache_directory() / "tuning.txt";
}

std::string tuning_key(std::string const& device, std::string const& functor,
                       Plan const& described) {
  std::ostringstream key;
  key << device << " | " << described.execution_space << " | " << functor
      << " | rank " << described.rank << " | ";
  for (int d = 3 - described.rank; d < 3; ++d) {
    key << described.extents[d] << (d < 2 ? "x" : "");
  }
  key << " | halo " << described.halo << " | "
      << sides_text(described.sides, described.rank) << " | "
      << described.value_size << "-byte values";
  return key.str();
}

std::optional<TunedChoice> read_tuned_choice(std::filesystem::path const& file,
                                             std::string const& key) {
  Entries const entries = current_entries(file);
  auto const found = entries.find(key);
  if (found == entries.end()) return std::nullopt;
  return found->second;
}

void write_tuned_choice(std::filesystem::path const& file,
                        std::string const& key, TunedChoice const& choice) {
  STENCIL_EXPECT(key.find_first_of("=\n") == std::string::npos,
                 "Auto's tuning cache cannot hold the key '", key,
                 "': it contains '=' or a line break");
  Entries entries = current_entries(file);
  entries[key] = choice;
  std::ostringstream text;
  text << "# stencil: the plans Auto{.tune = true} timed fastest, one line "
          "per device, space, functor and grid. Delete this file to tune "
          "again.\n"
       << "format = " << tuning_format << '\n';
  for (auto const& [k, v] : entries) {
    text << k << " = " << value_text(v) << '\n';
  }
  write_cache_file(file, text.str(), "Auto's tuning cache");
}

}  // namespace stencil::detail
