# SPDX-License-Identifier: Apache-2.0
# stencil_add_suite_kernels(target): adds to `target` one generated
# translation unit per entry of STENCIL_NATIVE_CUDA_SUITE (in
# backends/native_cuda/suite_kernels.hpp, the one list), each instantiating
# that stencil's native kernels in float and double. One unit per stencil so
# that a parallel build shares the work.
function(stencil_add_suite_kernels target)
  set(_header ${PROJECT_SOURCE_DIR}/backends/native_cuda/suite_kernels.hpp)
  set(_template ${PROJECT_SOURCE_DIR}/backends/native_cuda/suite_kernels.cpp.in)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${_header} ${_template})
  set(_entry_regex "  F\\(([123]), ([A-Za-z0-9_<>]+)\\)")
  file(READ ${_header} _text)
  string(REGEX MATCHALL "${_entry_regex}" _entries "${_text}")
  list(LENGTH _entries _count)
  if(_count EQUAL 0)
    message(FATAL_ERROR
      "stencil: no entries F(rank, name) found in ${_header}; "
      "each entry of STENCIL_NATIVE_CUDA_SUITE is F(rank, name) on a line of its own")
  endif()
  foreach(_entry IN LISTS _entries)
    string(REGEX REPLACE "${_entry_regex}" "\\1" STENCIL_SUITE_RANK "${_entry}")
    string(REGEX REPLACE "${_entry_regex}" "\\2" STENCIL_SUITE_NAME "${_entry}")
    string(REPLACE "<" "_" _file "${STENCIL_SUITE_NAME}")
    string(REPLACE ">" "" _file "${_file}")
    set(_unit ${PROJECT_BINARY_DIR}/suite_kernels/${_file}.cpp)
    configure_file(${_template} ${_unit} @ONLY)
    target_sources(${target} PRIVATE ${_unit})
  endforeach()
  message(STATUS "stencil: native kernels of ${_count} suite stencils compiled into the library")
endfunction()
