# Every external dependency, found once. The CPU build uses Debian's packages; the GPU
# machine passes the locations of its kit and of PyTorch's CUDA LibTorch (.gpu/env.sh, staged by
# tools/scripts/gpu-stage.sh).
find_package(Threads REQUIRED)
find_package(CapnProto REQUIRED)
# CapnProtoConfig.cmake sets CAPNP_INCLUDE_DIRECTORY (/usr/include) as a plain variable, which
# hides a -DCAPNP_INCLUDE_DIRECTORY=... given on the command line (the GPU kit's, docs/pitfalls.md #3):
# honour the cached value when there is one.
if(DEFINED CACHE{CAPNP_INCLUDE_DIRECTORY})
  set(CAPNP_INCLUDE_DIRECTORY "$CACHE{CAPNP_INCLUDE_DIRECTORY}")
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
  add_compile_options("SHELL:-include ${CMAKE_CURRENT_LIST_DIR}/kj_gcc13_compat.h")
endif()
find_package(cppzmq REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(doctest REQUIRED)
# Every command line (runtime/command_line.h): Debian's libcli11-dev, header-only.
find_package(CLI11 CONFIG REQUIRED)
# The one logger (runtime/log.h): Debian's libspdlog-dev, built against the external libfmt. Only
# runtime/log.cpp includes it (LibTorch's own copy of fmt never meets it).
find_package(spdlog CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
# Every JSON the project reads or writes (base/json_text.h). Header-only; the GPU kit's unpacked
# copy keeps its config in usr/share/cmake/nlohmann_json, which CMAKE_PREFIX_PATH reaches.
find_package(nlohmann_json 3 REQUIRED)
find_package(Boost REQUIRED)
# https for the language-model Generators (runtime/http_client/): Beast's TLS stream over OpenSSL.
find_package(OpenSSL REQUIRED)
find_package(Torch REQUIRED)
# KernelBench's Python problems and candidates run in an embedded CPython whose torch is the
# LibTorch above (actors/evaluator/python/python_runtime.h): Debian's python3 with python3-torch,
# or on the GPU machine the venv whose pip torch the build uses (its python3 first on PATH).
# Where python3 on PATH has no torch (a pyenv shim), Debian's /usr/bin/python3 is the one.
if(NOT DEFINED Python3_EXECUTABLE)
  find_program(DRK_PATH_PYTHON3 python3)
  foreach(python IN ITEMS ${DRK_PATH_PYTHON3} /usr/bin/python3)
    execute_process(COMMAND ${python} -c "import torch" RESULT_VARIABLE no_torch OUTPUT_QUIET ERROR_QUIET)
    if(no_torch EQUAL 0)
      set(Python3_EXECUTABLE ${python} CACHE FILEPATH "the Python whose torch drkernel embeds")
      break()
    endif()
  endforeach()
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
# The sandbox's syscall filter (actors/evaluator/sandbox_confinement.h): libseccomp, found by
# path so that the GPU kit's unpacked copy is found through CMAKE_PREFIX_PATH.
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_LIBRARY seccomp REQUIRED)
add_library(drk_seccomp INTERFACE)
target_include_directories(drk_seccomp INTERFACE ${SECCOMP_INCLUDE_DIR})
target_link_libraries(drk_seccomp INTERFACE ${SECCOMP_LIBRARY})
# SHA-256 of the compile cache (kernels/compile/content_hash.h): libsodium, which ZeroMQ's CURVE
# already loads. Found by path like libseccomp: the GPU kit's prefix has no pkg-config set up.
find_path(SODIUM_INCLUDE_DIR sodium.h REQUIRED)
find_library(SODIUM_LIBRARY sodium REQUIRED)
add_library(drk_sodium INTERFACE)
target_include_directories(drk_sodium INTERFACE ${SODIUM_INCLUDE_DIR})
target_link_libraries(drk_sodium INTERFACE ${SODIUM_LIBRARY})

# CUDA is optional: where /usr/local/cuda exists (CI has it, without a GPU) NVRTC, CUPTI and
# the runtime are linked for real; elsewhere everything else still builds.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cupti)
  set(DRK_HAVE_CUDA ON)
  message(STATUS "drkernel: CUDA ${CUDAToolkit_VERSION} found: NVRTC and CUPTI enabled")
else()
  set(DRK_HAVE_CUDA OFF)
  message(STATUS "drkernel: no CUDA toolkit: building the CPU path only")
endif()

# LibTorch adds its own flags through TORCH_CXX_FLAGS (the ABI flag on Debian's build).
add_library(drk_torch INTERFACE)
target_link_libraries(drk_torch INTERFACE ${TORCH_LIBRARIES})
target_compile_options(drk_torch INTERFACE ${TORCH_CXX_FLAGS})
# A CUDA LibTorch (the GPU machine's): the Evaluator gives its cached device blocks back after
# each evaluation (actors/evaluator/cuda/cuda_evaluation_device.cpp); Debian's is CPU-only.
if(TARGET c10_cuda)
  target_compile_definitions(drk_torch INTERFACE DRK_TORCH_CUDA=1)
endif()
# PyTorch's pip LibTorch (the GPU machine's) exports its own, older copies of std::filesystem
# (linked in from its toolchain). A program that lists libtorch before libstdc++ binds its
# std::filesystem calls to those copies and crashes in them (seen: remove_all). Naming
# libstdc++ first, ahead of every library, keeps the standard library's own symbols first
# (by file name: Ubuntu's g++ moves a plain -lstdc++ to the end).
target_link_options(drk_torch INTERFACE "LINKER:--push-state,--no-as-needed" "-l:libstdc++.so.6" "LINKER:--pop-state")
