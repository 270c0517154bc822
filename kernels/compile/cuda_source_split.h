// The cuda.cu of a load_inline extension as two translation units, so that torch's headers are
// parsed by g++ with a precompiled header and never by nvcc's front ends (cudafe++ and cicc parse
// all of them, one after the other, for a minute a candidate on the H200 host; docs/kernelbench.md,
// "Compiling load_inline candidates"):
//
//   device  for nvcc, without torch: the source's other #include lines, every other directive,
//           the types and constants, the kernels, the __device__ functions and variables;
//   host    for g++: the same directives with torch's #include lines, the types and constants, the
//           host functions, each kernel declared as nvcc's host stub of it (a function of the
//           kernel's name and parameters), and each launch `k<<<grid, block, shared, stream>>>(a)`
//           written as cudafe++ writes it:
//           `(__cudaPushCallConfiguration(grid, block, shared, stream) ? (void)0 : k(a))`.
//
// Linked together, the host unit's launch calls the stub in nvcc's object, which launches the
// kernel registered with the fatbinary beside it: the kernel is the same code nvcc makes of the
// whole file, the host code the same functions compiled by the same compiler.
//
// The split is a lexer's, not a compiler's (base/cxx_source.h). What it cannot keep whole it
// refuses, with the reason, and the caller builds the file as torch does: a kernel with internal
// linkage (static or in an unnamed namespace: the host unit could not call its stub), a launch
// from device code, a __managed__ variable (or one declared with others, or constexpr) named in
// host code, a device lambda in host code, a launch whose callee or arguments it cannot read. A
// kernel template is declared on the host side; its instances are those the host unit's object
// asks for (explicit_instantiations()). A __device__ or __constant__ variable is reached from host
// code (cudaMemcpyToSymbol) through nvcc's host-side shadow of it, whose address the device unit
// exports (`extern "C" void* __drk_shadow_N()`) and the host unit binds a reference of the
// declared type to.
// Whatever it does split that then does not compile is also built as torch does: torch's build
// decides whether a candidate compiles, never the split.
//
// Every item keeps its line: `#line N "cuda.cu"` before each, so that a compiler's message names
// the candidate's line.
//
// Thread-safety: pure function. Errors: unsupported, with the reason.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::compile {

// What the host unit's compiler errors name when device code that a macro hid from the split
// reached it (its preamble makes __global__, __constant__, __shared__ and __managed__ such names):
// no header makes that unit compile.
inline constexpr std::string_view kHiddenDeviceCode = "_outside_the_device_unit__";

struct CudaSourceSplit {
  std::string device;                // for nvcc
  std::string host;                  // for g++, after torch's precompiled header
  std::vector<std::string> kernels;  // the kernels' names, in source order
  // The kernel templates, qualified by their namespaces (ops::scale_kernel): the device unit
  // holds an instance only when explicit_instantiations() adds it.
  std::vector<std::string> template_kernels;
  int launches = 0;  // launches rewritten in the host unit
};

Result<CudaSourceSplit> split_cuda_source(std::string_view source);

// A kernel template's instances are named only by the host unit: its object's undefined
// symbols, as `nm -u -C` lists them ("U void ops::scale_kernel<float>(float const*, float*, int)"),
// are what the device unit must instantiate: the explicit instantiation of each instance of one of
// `template_kernels` (`template __global__ void ops::scale_kernel<float>(float const*, float*,
// int);`), one a line, for the end of the device unit, and the headers of torch's 16-bit types
// that they name (c10::Half, c10::BFloat16: <c10/util/Half.h>, <c10/util/BFloat16.h>), for its
// start. nvcc then compiles it with `-static-global-template-stub=false`, so that the host unit's
// call finds the stub. unsupported when an instance names another type the device unit cannot
// see (torch's others, a lambda, an unnamed namespace's): the extension is then compiled whole.
struct KernelInstances {
  std::string includes;
  std::string instantiations;
};

Result<KernelInstances> explicit_instantiations(std::string_view undefined_symbols,
                                                const std::vector<std::string>& template_kernels);

// nvcc's flags of an extension (extra_cuda_cflags) that its host compiler receives: optimisation,
// defines, include paths, the standard, -g, -w, and what -Xcompiler/--compiler-options pass on.
std::vector<std::string> host_compiler_flags(const std::vector<std::string>& nvcc_flags);

}  // namespace drk::compile
