// SPDX-License-Identifier: Apache-2.0
// The native backend's side of stencil::model: it measures the GPU (the
// figures a datasheet gets wrong) and says how a plan looks to the model.
#pragma once

#include <stencil/model.hpp>
#include <stencil/plan_type.hpp>

#include <string>

namespace stencil::native_cuda {

/// Measures the GPU Kokkos::Cuda runs on, without looking at or writing
/// the cache: the bandwidth of a copy of 16-byte items through two 1 GiB
/// arrays, the bandwidth of conflict-free 4-byte shared-memory loads on
/// every SM and of reads that hit in L2, one device-wide barrier, one round
/// of DeviceTiling's exchange and one of neighbour flags, and the FMA rate
/// of a whole-GPU FMA loop; the FP peaks also from the clock and the
/// architecture's lanes.
/// Every timing is the median of several after a warm-up.
model::Device calibrate();

/// The UUID of the GPU Kokkos::Cuda runs on ("GPU-xxxxxxxx-..."), as
/// nvidia-smi prints it: what the calibration and Auto's tuning cache key
/// their entries by.
std::string gpu_uuid();

/// Plan `p` as the model sees it: policy, depth, the tile a block computes
/// (halo included) and the output rows a thread computes in the native
/// temporal kernels.
model::Config model_config(Plan const& p);

}  // namespace stencil::native_cuda
