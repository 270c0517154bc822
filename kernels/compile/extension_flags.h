// Which of a candidate's own compiler and linker flags (load_inline's extra_cflags,
// extra_cuda_cflags, extra_ldflags) drkernel passes on. The candidate is untrusted and its build
// runs outside the sandbox, so a flag that would run another program (-wrapper, -B, -fplugin,
// -specs, nvcc's -ccbin), write where it likes (-o, -MF, -save-temps) or hand the linker a script
// or plugin is refused. Allowed, what KernelBench candidates use: optimisation, defines, warnings,
// standards, machine and code-generation options (-O3, -DX, -std=c++17, -march=native,
// -ffast-math, -fopenmp), include paths, libraries (-lcublas, -L, -Wl,-rpath), and nvcc's
// --use_fast_math, -lineinfo, --expt-*, -arch/-gencode, --maxrregcount, -Xptxas with ptxas's
// reporting and caching options, -Xcompiler with allowed C++ flags.
//
// Thread-safety: pure function. Errors: invalid_argument naming the flag, the argument and the
// extension.
#pragma once

#include "base/result.h"
#include "kernels/compile/inline_extension.h"

namespace drk::compile {

Status check_extension_flags(const InlineExtension& extension);

}  // namespace drk::compile
