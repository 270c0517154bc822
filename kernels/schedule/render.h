// Renderers: a point of the scheduling space (Choice) for a task (Problem) becomes one complete
// source file of the candidate ABI (kernels/abi/drk_kernel.h): it includes "drk_kernel.h" and
// defines `DRK_EXPORT int drk_kernel(...)`.
//
// cpu choices render C++, compiled by the Evaluator with
//   c++ -O3 -march=native -std=c++17 -shared -fPIC -I kernels/abi
// Threads it starts (at most min(threads knob, ctx->max_threads)) are joined before it returns.
//
// cuda choices render CUDA C++ (Candidate.language cuda), compiled with
//   nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC -cudart shared -arch=sm_90 -I kernels/abi
// Tensors hold device pointers; every kernel is queued on ctx->stream, grids are sized from the
// shapes at run time (grid-stride loops, so any grid is correct) and the launch status is
// returned (DRK_E_INTERNAL when a launch failed). The library option reaches cuBLAS through
// ctx->lib->gemm_f32 only (never a handle of its own); a source that calls the library for the
// whole result compiles no kernel of its own, so that it is never taken for a decoy.
//
// Every point computes the task's formula with precise float math (no fast-math, no TF32, no
// intrinsics such as __expf); the knobs change only loop structure, vector width, threading,
// tiling, library use and, for float16 tasks (cuda gemm only), the math units: CUDA cores or
// tensor cores, both multiplying float16 values exactly and accumulating in float32. A rendered kernel reads every shape from its tensor descriptors at run
// time and returns DRK_E_BAD_ARGUMENT for wrong counts, dtypes, layouts or device and
// DRK_E_UNSUPPORTED_SHAPE for shapes that do not fit the task.
//
// Thread-safety: pure functions.
// Errors: invalid_argument for a Choice outside the family's space, of another device than the
// problem's, or with an option that does not apply to the problem's precision (space.h,
// option_applies); not_found / parse_error for
// missing or malformed family parameters, naming the task and the key.
#pragma once

#include <string>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "base/result.h"

namespace drk::schedule {

Result<std::string> render(const Problem& problem, const Choice& choice);

}  // namespace drk::schedule
