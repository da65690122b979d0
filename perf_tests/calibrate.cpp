// SPDX-License-Identifier: Apache-2.0
// stencil_calibrate: shows, refreshes or clears the calibration that
// stencil::model keeps per GPU (see model::cuda_device). Plans calibrate on
// first use by themselves; this is for looking at the figures, for
// recalibrating after a driver, clock or hardware change, and for clearing.
//
//   stencil_calibrate            the cached figures (calibrating if none)
//   stencil_calibrate --force    calibrate now and replace the cache
//   stencil_calibrate --clear    delete this GPU's cache file
//   stencil_calibrate --path     print the cache file's path
//
// The cache directory is $STENCIL_CACHE_DIR, else $XDG_CACHE_HOME/stencil,
// else $HOME/.cache/stencil.
#include <stencil/error.hpp>
#include <stencil/model.hpp>

#include <Kokkos_Core.hpp>

#include <filesystem>
#include <iostream>
#include <string>

namespace {

constexpr char const* program = "stencil_calibrate";

int usage(std::ostream& out, int status) {
  out << "usage: " << program << " [--force | --clear | --path]\n"
      << "  (no option)  print this GPU's figures for stencil::model, "
         "calibrating and caching them if there are none\n"
      << "  --force      calibrate now and replace the cached figures\n"
      << "  --clear      delete this GPU's cache file\n"
      << "  --path       print the cache file's path\n"
      << "cache directory: $STENCIL_CACHE_DIR, else "
         "$XDG_CACHE_HOME/stencil, else $HOME/.cache/stencil\n";
  return status;
}

}  // namespace

int main(int argc, char* argv[]) {
  std::string mode;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "-h" || a == "--help") return usage(std::cout, 0);
    if (a.rfind("--kokkos", 0) == 0) continue;
    if ((a == "--force" || a == "--clear" || a == "--path") && mode.empty()) {
      mode = a;
      continue;
    }
    std::cerr << program << ": error: unexpected argument '" << a << "'"
              << (mode.empty() ? "" : " (one option at most)") << "\n";
    return usage(std::cerr, 2);
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    std::filesystem::path const file = stencil::model::cuda_device_cache_file();
    if (mode == "--path") {
      std::cout << file.string() << "\n";
    } else if (mode == "--clear") {
      std::cout << (std::filesystem::remove(file) ? "removed " : "no file ")
                << file.string() << "\n";
    } else {
      stencil::model::Device const& d =
          mode == "--force" ? stencil::model::recalibrate_cuda_device()
                            : stencil::model::cuda_device();
      std::cout << "device:           " << d.name << " (" << d.key << ")\n"
                << "SMs:              " << d.compute_units << "\n"
                << "copy:             " << d.copy_gbs << " GB/s\n"
                << "shared memory:    " << d.shared_tbs << " TB/s\n"
                << "FP64 / FP32 peak: " << d.fp64_gflops << " / "
                << d.fp32_gflops << " GFLOP/s\n"
                << "FMA measured:     " << d.fp64_measured_gflops << " / "
                << d.fp32_measured_gflops << " GFLOP/s (FP64 / FP32)\n"
                << "L2 reads:         " << d.l2_gbs << " GB/s\n"
                << "neighbour flags:  " << d.neighbour_flag_us << " us\n"
                << "issue:            " << d.issue_gips
                << " G thread instructions/s\n"
                << "barrier:          " << d.barrier_us << " us\n"
                << "exchange:         " << d.exchange_us << " us\n"
                << "source:           " << d.source << "\n";
    }
  } catch (std::exception const& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
