// SPDX-License-Identifier: Apache-2.0
// The one header users include.
#pragma once

#include <stencil/backend.hpp>
#include <stencil/config.hpp>
#include <stencil/divisor.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/declare.hpp>
#include <stencil/fields/iterate.hpp>
#include <stencil/fields/reduce.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/grid.hpp>
#include <stencil/hooks.hpp>
#include <stencil/iterate.hpp>
#include <stencil/linear.hpp>
#include <stencil/model.hpp>
#include <stencil/plan.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>
