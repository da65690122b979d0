# SPDX-License-Identifier: Apache-2.0
# GoogleTest and Google Benchmark: the system packages when present (Debian's
# libgtest-dev, libbenchmark-dev), else source trees given by the user. The
# GPU machine has no network, so its sources are carried
# (scripts/bootstrap.sh --fetch-only puts them in .deps/src).
set(STENCIL_GTEST_SOURCE_DIR "" CACHE PATH
    "GoogleTest source tree to build when find_package(GTest) fails")
set(STENCIL_BENCHMARK_SOURCE_DIR "" CACHE PATH
    "Google Benchmark source tree to build when find_package(benchmark) fails")

if(STENCIL_ENABLE_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    if(NOT EXISTS "${STENCIL_GTEST_SOURCE_DIR}/CMakeLists.txt")
      message(FATAL_ERROR
        "stencil: GoogleTest not found. Install Debian's libgtest-dev "
        "(scripts/bootstrap.sh does), or pass -DSTENCIL_GTEST_SOURCE_DIR=<dir> "
        "with a googletest source tree (e.g. a copy of /usr/src/googletest), "
        "or configure with -DSTENCIL_ENABLE_TESTS=OFF.")
    endif()
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    add_subdirectory(${STENCIL_GTEST_SOURCE_DIR} ${PROJECT_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL)
    # googletest >= 1.11 defines these aliases itself.
    if(NOT TARGET GTest::gtest)
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
  endif()
endif()

if(STENCIL_ENABLE_PERF_TESTS)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    if(NOT EXISTS "${STENCIL_BENCHMARK_SOURCE_DIR}/CMakeLists.txt")
      message(FATAL_ERROR
        "stencil: Google Benchmark not found. Install Debian's libbenchmark-dev "
        "(scripts/bootstrap.sh does), or pass -DSTENCIL_BENCHMARK_SOURCE_DIR=<dir> "
        "with a benchmark source tree, or configure with "
        "-DSTENCIL_ENABLE_PERF_TESTS=OFF.")
    endif()
    set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
    set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
    add_subdirectory(${STENCIL_BENCHMARK_SOURCE_DIR} ${PROJECT_BINARY_DIR}/_deps/benchmark EXCLUDE_FROM_ALL)
  endif()
endif()
