// Renderers: a point of the scheduling space (Choice) for a task (Problem) becomes one complete
// C++ source file of the candidate ABI (kernels/abi/drk_kernel.h): it includes "drk_kernel.h",
// defines `DRK_EXPORT int drk_kernel(...)`, and compiles with
//   c++ -O3 -march=native -std=c++17 -shared -fPIC -I kernels/abi
// Every point computes the task's formula with precise float math (no fast-math); the knobs
// change only loop structure, vector width, threading and library use. A rendered kernel reads
// every shape from its tensor descriptors at run time and returns DRK_E_BAD_ARGUMENT for wrong
// counts, dtypes or layouts and DRK_E_UNSUPPORTED_SHAPE for shapes that do not fit the task.
// Threads it starts (at most min(threads knob, ctx->max_threads)) are joined before it returns.
//
// Thread-safety: pure functions.
// Errors: invalid_argument for a Choice outside the family's space; not_found / parse_error for
// missing or malformed family parameters, naming the task and the key.
#pragma once

#include <string>

#include "kernels/schedule/problem.h"
#include "kernels/schedule/space.h"
#include "runtime/result.h"

namespace drk::schedule {

Result<std::string> render(const Problem& problem, const Choice& choice);

}  // namespace drk::schedule
