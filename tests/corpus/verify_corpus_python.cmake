# The test verify_corpus_python: imports the KernelBench-format problems of kernelbench/ (this
# test's own small files in KernelBench's format, named as the corpus's headers name them), then
# runs `drk verify-corpus` on the Python corpus against them; fails on a miss, a false alarm or an
# unusable header (the command's exit status), and prints the report either way.
# -D DRK=... CORPUS=... PROBLEMS=... WORK=...
file(REMOVE_RECURSE "${WORK}/records")
execute_process(COMMAND "${DRK}" kernelbench import "${PROBLEMS}" --into "${WORK}/records"
                RESULT_VARIABLE imported OUTPUT_VARIABLE import_output ERROR_VARIABLE import_output)
if(NOT imported EQUAL 0)
  message(FATAL_ERROR "drk kernelbench import failed (${imported}):\n${import_output}")
endif()
execute_process(COMMAND "${DRK}" verify-corpus "${CORPUS}" --kernelbench-dir "${WORK}/records" --trials 3
                        --budget-ms 60 --threads 2 --memory-mb 2048 --deadline-s 120 --cache-dir "${WORK}/compile-cache"
                RESULT_VARIABLE verified)
if(NOT verified EQUAL 0)
  message(FATAL_ERROR "drk verify-corpus on the Python corpus: a miss, a false alarm or a bad header (exit ${verified})")
endif()
