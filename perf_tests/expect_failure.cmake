# SPDX-License-Identifier: Apache-2.0
# Runs PROGRAM with ARGS (separated by spaces) and passes when it exits
# non-zero and its output matches the regular expression EXPECT. CTest alone
# checks either the exit status or the output, not both.
#   cmake -DPROGRAM=... -DARGS="..." -DEXPECT="..." -P expect_failure.cmake
separate_arguments(_args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${_args}
                RESULT_VARIABLE _status
                OUTPUT_VARIABLE _out
                ERROR_VARIABLE _err)
message("exit status: ${_status}\nstdout:\n${_out}\nstderr:\n${_err}")
if(_status EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status")
endif()
if(NOT "${_out}${_err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "expected the output to match '${EXPECT}'")
endif()
