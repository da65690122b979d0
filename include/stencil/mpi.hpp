// SPDX-License-Identifier: Apache-2.0
// Domain decomposition over MPI (needs MPI; CMake target stencil::mpi).
#pragma once

#include <stencil/mpi/decomposition.hpp>
#include <stencil/mpi/distributed_grid.hpp>
#include <stencil/mpi/distributed_state.hpp>
#include <stencil/mpi/exchange.hpp>
#include <stencil/mpi/ghost_layout.hpp>
#include <stencil/mpi/iterate.hpp>
