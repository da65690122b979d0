// SPDX-License-Identifier: Apache-2.0
// The benchmark suite (target stencil_suite): its stencils, and on the
// native CUDA backend the declarations of their kernels, which stencil_suite
// compiles once. Tests and perf_tests include this; the library does not.
#pragma once

#include <stencil/suite/kernels.hpp>
#include <stencil/suite/stencils.hpp>
