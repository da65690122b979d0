// SPDX-License-Identifier: Apache-2.0
#include <stencil/plan.hpp>

#include <ostream>

namespace stencil {

std::string to_string(Backend backend) {
  switch (backend) {
    case Backend::portable:
      return "portable";
    case Backend::native_cuda:
      return "native_cuda";
  }
  return "unknown";
}

std::string to_string(PolicyKind policy) {
  std::string name = "unknown";
  detail::for_each_policy([&](auto p) {
    using Traits = policy_traits<decltype(p)>;
    if (Traits::kind == policy) name = Traits::name;
  });
  return name;
}

std::string to_string(Boundary boundary) {
  return detail::boundary_name(boundary);
}

std::string to_string(Shape shape) {
  return shape == Shape::star ? "star" : "box";
}

std::ostream& operator<<(std::ostream& out, Plan const& p) {
  out << "stencil::Plan{space: " << p.execution_space
      << ", backend: " << to_string(p.backend);
  if (p.space_backend != p.backend) {
    out << " (this space's backend is " << to_string(p.space_backend)
        << ", which does not implement this policy)";
  }
  out << ", policy: " << to_string(p.policy);
  if (p.chosen_by_auto) out << " (chosen by Auto: " << p.reason << ")";
  if (!p.tuning.empty()) out << " (tuning: " << p.tuning << ")";
  out << ", grid: rank " << p.rank << ", ";
  for (int d = 3 - p.rank; d < 3; ++d) {
    out << p.extents[d] << (d < 2 ? "x" : "");
  }
  std::string const boundary = detail::sides_text(p.sides, p.rank);
  // A boundary that differs per side names its axes, with commas of its own.
  bool const per_side = boundary.find(':') != std::string::npos;
  out << ", halo " << p.halo << ", "
      << (per_side ? "boundaries (" + boundary + ")" : boundary)
      << ", value size " << p.value_size
      << " B; stencil: " << to_string(p.shape) << ", radius " << p.radius;
  if (!p.fields.empty()) out << ", fields " << p.fields;
  if (p.policy == PolicyKind::register_resident) {
    auto const& n = p.native_cuda;
    out << "; every step of a call in one cooperative launch, the domain in "
           "registers: "
        << n.cells_per_thread << " cells per thread, " << p.blocks
        << " blocks owning up to " << p.tile.x
        << " cells each, warps' overlap refreshed through shared memory "
           "every "
        << n.block_halo << " steps, blocks' overlap through L2 every "
        << n.grid_halo << " steps behind neighbour flags, threads "
        << p.team_size << ", registers " << p.registers << ", local memory "
        << p.local_memory_bytes << " B/thread, shared " << p.scratch_bytes
        << " B/block, blocks/SM " << p.blocks_per_sm;
  } else {
    out << "; depth " << p.depth;
  }
  if (p.policy == PolicyKind::spatial_blocking) {
    out << ", tile x=" << p.tile.x;
    if (p.rank >= 2) out << " y=" << p.tile.y;
    if (p.rank == 3) out << " z=" << p.tile.z;
    out << ", team size " << p.team_size << ", scratch " << p.scratch_bytes
        << " B/team";
  }
  // The native multi-field kernel, whichever policy runs it.
  bool const native_fields = !p.fields.empty() &&
                             p.backend == Backend::native_cuda &&
                             p.policy != PolicyKind::register_resident;
  bool const streams_fields = native_fields &&
                              p.policy == PolicyKind::temporal_blocking &&
                              p.native_cuda.rows_per_thread > 0;
  if (streams_fields) {
    Tile const& l = p.native_cuda.loaded_tile;
    if (p.rank == 3) {
      out << ", tiles of " << l.x << " x " << l.y << " columns (" << p.tile.x
          << " x " << p.tile.y << " valid) streamed down in bands of "
          << p.tile.z << " planes, tile by tile";
    } else {
      out << ", strips of " << l.x << " columns (" << p.tile.x
          << " valid) streamed down in shares of " << p.tile.y << " rows";
    }
    char const* const slices = p.rank == 3 ? "planes" : "rows";
    out << ", " << p.native_cuda.rows_per_thread << " " << slices
        << " per level and iteration, a ring of " << slices
        << " per level of each written field and one per coefficient in "
           "shared memory"
        << ", the written fields' levels written to a second set of "
           "buffers (kept with the state) that trade places with the state's"
        << ", threads " << p.team_size << ", registers " << p.registers
        << ", local memory " << p.local_memory_bytes << " B/thread"
        << ", shared " << p.scratch_bytes << " B/block, blocks " << p.blocks
        << ", blocks/SM " << p.blocks_per_sm;
  } else if (native_fields) {
    Tile const& l = p.native_cuda.loaded_tile;
    out << ", overlapped tile " << l.x;
    if (p.rank >= 2) out << "x" << l.y;
    if (p.rank == 3) out << "x" << l.z;
    out << " loaded per block (every level of every field in shared memory), "
        << p.tile.x;
    if (p.rank >= 2) out << "x" << p.tile.y;
    if (p.rank == 3) out << "x" << p.tile.z;
    out << " valid";
    if (p.policy == PolicyKind::temporal_blocking) {
      out << ", the written fields' levels written to a second set of "
             "buffers (kept with the state) that trade places with the state's";
    }
    out << ", threads " << p.team_size << ", registers " << p.registers
        << ", local memory " << p.local_memory_bytes << " B/thread"
        << ", shared " << p.scratch_bytes << " B/block, blocks " << p.blocks
        << ", blocks/SM " << p.blocks_per_sm;
  } else if (p.policy == PolicyKind::temporal_blocking && p.rank == 3) {
    int const computed = p.tile.x + 2 * p.depth * p.radius;
    out << ", SM tiling: tile " << computed << "x" << computed << " per block, "
        << p.tile.x << "x" << p.tile.y << " valid, z segments of " << p.tile.z
        << " planes";
  } else if (p.policy == PolicyKind::temporal_blocking) {
    out << ", tile " << p.tile.x << " valid columns (computed "
        << p.tile.x + 2 * p.depth * p.radius << ")";
    if (p.rank == 2) out << " x " << p.tile.y << " rows";
  }
  // The temporal kernels load the input an iteration ahead even without
  // cp.async (or, rank 3 in double, copy each plane into its ring slot as
  // its iteration starts); the sweep loads it when it needs it.
  auto print_prefetch = [&](char const* plain) {
    out << ", prefetch ";
    if (p.prefetch > 0 && p.native_cuda.bulk_copy) {
      out << p.prefetch << " (cp.async.bulk, one per line, on mbarriers)";
    } else if (p.prefetch > 0) {
      out << p.prefetch << " (cp.async)";
    } else {
      out << "off (" << plain << ")";
    }
  };
  char const* const temporal_plain =
      p.native_cuda.warp_tiles ? "plain loads, 2 x radius iterations ahead"
      : p.native_cuda.input_to_ring
          ? "each input plane copied with cp.async into its ring slot as "
            "its iteration starts"
          : "plain loads, an iteration ahead";
  if (p.policy == PolicyKind::temporal_blocking && !native_fields) {
    print_prefetch(p.rank == 1 ? "the tile loaded once per launch"
                               : temporal_plain);
    out << ", threads " << p.team_size;
    if (p.rank == 2) {
      out << " (" << p.native_cuda.columns_per_thread
          << (p.native_cuda.columns_per_thread == 1 ? " column"
                                                    : " adjacent columns")
          << " x " << p.native_cuda.rows_per_thread << " rows each)";
      if (p.native_cuda.plane_sums)
        out << ", rows summed in registers (linear box)";
      if (p.native_cuda.warp_tiles)
        out << ", warp tiles (in registers, neighbours by warp shuffles)";
    }
    out << ", registers " << p.registers << ", local memory "
        << p.local_memory_bytes << " B/thread"
        << ", shared " << p.scratch_bytes << " B/block, blocks " << p.blocks
        << ", blocks/SM " << p.blocks_per_sm;
  }
  if (p.policy == PolicyKind::device_tiling) {
    out << ", tile " << p.tile.x << "x" << p.tile.y << " per block, "
        << p.native_cuda.z_segments << " z segment"
        << (p.native_cuda.z_segments == 1 ? "" : "s") << " of " << p.tile.z
        << " planes, regions " << p.native_cuda.regions << " of " << p.blocks
        << " blocks, exchange " << p.native_cuda.exchange;
    if (p.native_cuda.plane_sums)
      out << ", planes summed in registers (linear box)";
    if (p.native_cuda.inside_kernel)
      out << ", kernel for tiles inside the grid";
    if (p.native_cuda.l2_window_bytes > 0) {
      out << " (L2 window: " << p.native_cuda.l2_window_bytes
          << " B of it kept as persisting lines)";
    }
    print_prefetch(temporal_plain);
    out << ", threads " << p.team_size << ", registers " << p.registers
        << ", local memory " << p.local_memory_bytes << " B/thread"
        << ", shared " << p.scratch_bytes << " B/block, blocks/SM "
        << p.blocks_per_sm;
  }
  if (native_fields) {
    // said above
  } else if (p.policy == PolicyKind::streaming_sweep && p.rank == 3 &&
             p.prefetch == 0) {
    out << ", block of " << p.tile.x << "x" << p.tile.y << "x" << p.tile.z
        << " cells (x, y, z), no shared tile";
    print_prefetch("every tap loaded directly, through L1");
  } else if (p.policy == PolicyKind::streaming_sweep) {
    out << ", tile " << p.tile.x;
    if (p.rank == 3) out << "x" << p.tile.y;
    out << " streamed along " << (p.rank == 3 ? "z" : "y") << ", " << p.tile.z
        << " " << (p.rank == 3 ? "planes" : "lines") << " per block";
    print_prefetch("plain loads");
  }
  if (p.policy == PolicyKind::streaming_sweep && !native_fields) {
    out << ", threads " << p.team_size << ", registers " << p.registers
        << ", local memory " << p.local_memory_bytes << " B/thread"
        << ", shared " << p.scratch_bytes << " B/block, blocks " << p.blocks
        << ", blocks/SM " << p.blocks_per_sm;
  }
  if (!p.device.empty()) out << ", device " << p.device;
  if (p.prediction) {
    out << "; model: " << p.prediction->gcells << " GCells/s, bound by "
        << model::to_string(p.prediction->limit);
  }
  if (!p.model_note.empty()) {
    out << (p.prediction ? " (" : "; model: ") << p.model_note
        << (p.prediction ? ")" : "");
  }
  return out << '}';
}

}  // namespace stencil
