// SPDX-License-Identifier: Apache-2.0
// Every Runge-Kutta tableau stencil::ode uses, read from Kokkos Kernels,
// against the order conditions: a method of order p must satisfy
// b . Phi(t) = 1 / gamma(t) for every rooted tree t of order <= p (Butcher),
// and an embedded method likewise with bhat. Each must also fail some tree
// of order p + 1, so that a method better than claimed, or a test that
// checks nothing, shows. Upstream 4.7.00's Verner 5(6) fails this (its
// b[0] reads 3/4 instead of 3/40); the bootstrap's patch fixes it.
#include <stencil/ode.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

/// A rooted tree: its order and its children (indices into the forest).
struct Tree {
  int order = 1;
  std::vector<int> children;
};

/// Every rooted tree of order 1..max_order, each once: a tree of order n
/// is a root over a multiset of smaller trees whose orders sum to n - 1,
/// taken in non-decreasing index order so that no multiset repeats.
std::vector<Tree> rooted_trees(int max_order) {
  std::vector<Tree> forest{Tree{}};
  for (int n = 2; n <= max_order; ++n) {
    int const known = static_cast<int>(forest.size());
    std::vector<int> picked;
    auto extend = [&](auto&& self, int first, int left) -> void {
      if (left == 0) {
        forest.push_back(Tree{n, picked});
        return;
      }
      for (int i = first; i < known; ++i) {
        if (forest[i].order > left) continue;
        picked.push_back(i);
        self(self, i, left - forest[i].order);
        picked.pop_back();
      }
    };
    extend(extend, 0, n - 1);
  }
  return forest;
}

/// Per tree: Phi_i(t) = prod over children u of sum_j a_ij Phi_j(u) (1 for
/// the single node), and gamma(t) = order(t) x prod of the children's.
struct Weights {
  std::vector<std::vector<double>> phi;
  std::vector<double> gamma;
};

Weights elementary_weights(std::vector<Tree> const& forest,
                           stencil::ode::Tableau const& t) {
  Weights w;
  int const s = t.stages;
  for (auto const& tree : forest) {
    std::vector<double> phi(s, 1.0);
    double gamma = tree.order;
    for (int child : tree.children) {
      for (int i = 0; i < s; ++i) {
        double sum = 0;
        for (int j = 0; j < s; ++j) sum += t.a_at(i, j) * w.phi[child][j];
        phi[i] *= sum;
      }
      gamma *= w.gamma[child];
    }
    w.phi.push_back(phi);
    w.gamma.push_back(gamma);
  }
  return w;
}

/// The highest order p such that `weights` meet every condition up to p.
int order_of(std::vector<Tree> const& forest, Weights const& w,
             std::vector<double> const& weights, std::string& first_failure) {
  int const max_order = forest.back().order;
  for (int p = 1; p <= max_order; ++p) {
    for (std::size_t k = 0; k < forest.size(); ++k) {
      if (forest[k].order != p) continue;
      double lhs = 0;
      for (std::size_t i = 0; i < weights.size(); ++i)
        lhs += weights[i] * w.phi[k][i];
      double const rhs = 1.0 / w.gamma[k];
      if (std::abs(lhs - rhs) > 1e-12 * (1.0 + std::abs(rhs))) {
        first_failure = "tree " + std::to_string(k) + " of order " +
                        std::to_string(p) + ": b.Phi = " + std::to_string(lhs) +
                        ", 1/gamma = " + std::to_string(rhs);
        return p - 1;
      }
    }
  }
  return max_order;
}

TEST(OdeTableaus, TheForestHasEveryRootedTreeOnce) {
  // 1, 1, 2, 4, 9, 20, 48 trees of orders 1..7 (OEIS A000081).
  auto const forest = rooted_trees(7);
  int count[8] = {};
  for (auto const& t : forest) ++count[t.order];
  int const expected[8] = {0, 1, 1, 2, 4, 9, 20, 48};
  for (int p = 1; p <= 7; ++p) EXPECT_EQ(count[p], expected[p]) << p;
}

TEST(OdeTableaus, EveryMethodHasTheOrderItClaims) {
  using stencil::ode::Method;
  auto const forest = rooted_trees(7);
  for (Method m : {Method::forward_euler, Method::rk4, Method::bogacki_shampine,
                   Method::dormand_prince, Method::verner56}) {
    auto const t = stencil::ode::tableau(m);
    std::string const name = stencil::ode::to_string(m);
    ASSERT_EQ(static_cast<int>(t.b.size()), t.stages) << name;
    ASSERT_EQ(static_cast<int>(t.a.size()), t.stages * t.stages) << name;
    // Explicit, and c the row sums of a.
    for (int i = 0; i < t.stages; ++i) {
      double row = 0;
      for (int j = 0; j < t.stages; ++j) {
        if (j >= i) EXPECT_EQ(t.a_at(i, j), 0.0) << name;
        row += t.a_at(i, j);
      }
      EXPECT_NEAR(row, t.c[i], 1e-14) << name << " row " << i;
    }
    auto const w = elementary_weights(forest, t);
    std::string failure;
    EXPECT_EQ(order_of(forest, w, t.b, failure), t.order)
        << name << " (b); first unmet condition: " << failure;
    if (t.embedded()) {
      ASSERT_EQ(static_cast<int>(t.bhat.size()), t.stages) << name;
      EXPECT_EQ(order_of(forest, w, t.bhat, failure), t.embedded_order)
          << name << " (bhat); first unmet condition: " << failure;
    }
  }
}

TEST(OdeTableaus, TheOrdersAreTheDocumentedOnes) {
  using stencil::ode::Method;
  struct Expected {
    Method m;
    int stages, order, embedded;
  };
  for (auto e : {Expected{Method::forward_euler, 1, 1, 0},
                 Expected{Method::rk4, 4, 4, 0},
                 Expected{Method::bogacki_shampine, 4, 3, 2},
                 Expected{Method::dormand_prince, 7, 5, 4},
                 Expected{Method::verner56, 8, 6, 5}}) {
    auto const t = stencil::ode::tableau(e.m);
    EXPECT_EQ(t.stages, e.stages) << stencil::ode::to_string(e.m);
    EXPECT_EQ(t.order, e.order) << stencil::ode::to_string(e.m);
    EXPECT_EQ(t.embedded_order, e.embedded) << stencil::ode::to_string(e.m);
  }
}

}  // namespace
