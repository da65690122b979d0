// SPDX-License-Identifier: Apache-2.0
// Arithmetic peaks of NVIDIA GPUs by compute capability, from the
// architecture whitepapers and the boost clock: the ceiling the roofline
// model has always used. The calibration also measures the rate a
// whole-GPU FMA loop settles at (model::Device::fp32_measured_gflops),
// which is lower by what the clock drops under that load, and which
// register-resident kernels are held to. Host code only; used by the
// calibration and by perf_tests.
#pragma once

namespace stencil::native_cuda {

/// FP64 and FP32 FMA lanes per SM.
struct FmaLanes {
  int compute_capability;  ///< major * 10 + minor
  int fp64;
  int fp32;
};

inline constexpr FmaLanes fma_lanes_table[] = {
    {60, 32, 64},                                // P100
    {61, 4, 128},   {62, 4, 128},                // consumer Pascal
    {70, 32, 64},   {72, 32, 64},                // V100, Xavier
    {75, 2, 64},                                 // Turing
    {80, 32, 64},                                // A100
    {86, 2, 128},   {87, 2, 128}, {89, 2, 128},  // consumer Ampere, Ada
    {90, 64, 128},                               // H100, H200
    {100, 64, 128},                              // B200
    {120, 2, 128},                               // consumer Blackwell
};

/// The lanes of compute capability `major.minor`; 0 lanes for one missing
/// from the table: no FP ceiling rather than a wrong one.
constexpr FmaLanes fma_lanes_per_sm(int major, int minor) {
  int const cc = major * 10 + minor;
  for (FmaLanes const& l : fma_lanes_table) {
    if (l.compute_capability == cc) return l;
  }
  return {cc, 0, 0};
}

/// GFLOP/s of `lanes` FMA lanes per SM (an FMA is two operations).
constexpr double fma_gflops(int sms, int lanes, double clock_hz) {
  return sms * lanes * 2.0 * clock_hz / 1e9;
}

}  // namespace stencil::native_cuda
