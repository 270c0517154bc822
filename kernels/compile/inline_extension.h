// What a KernelBench candidate asks torch's load_inline to build, read without running the
// candidate, and the facts of the torch it would be built for; both from
// kernels/compile/load_inline_extract.py, run by a Python the caller names (docs/kernelbench.md,
// "Compiling load_inline candidates").
//
// extract_load_inline() parses the candidate (Python's ast, never executed) and folds each
// load_inline call's arguments to constants: literals, module-level names bound once, `+`,
// implicit concatenation, lists and tuples, `"".join([...])`, f-strings without expressions.
// torch_facts() imports torch in that Python and reads what torch's load_inline compiles and links
// with; torch_fingerprint() says, without importing it, when those facts could have changed. Each
// runs the Python through a CommandRunner (command_runner.h), one process each.
//
// Thread-safety: free functions without shared state. Errors: invalid_argument naming the
// candidate, the line and the argument when a call cannot be resolved statically (or the file is
// not Python); io_error when the Python does not run or (torch_facts) cannot import torch.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/compile/command_runner.h"

namespace drk::compile {

struct InlineFunction {
  std::string name;
  std::string doc;  // the docstring the binding carries (the name when functions was a list)
};

// One load_inline call, its arguments as torch would see them.
struct InlineExtension {
  std::string name;
  int line = 0;  // of the call in the candidate
  std::vector<std::string> cpp_sources;
  std::vector<std::string> cuda_sources;
  std::vector<InlineFunction> functions;
  // As the shell of torch's ninja command splits them: an empty flag is gone, "-O3 -g" is two.
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_cuda_cflags;
  std::vector<std::string> extra_ldflags;
  std::vector<std::string> extra_include_paths;
  std::optional<bool> with_cuda;  // absent: torch decides (CUDA when there are cuda_sources)
  bool with_pytorch_error_handling = true;
  bool no_implicit_headers = false;  // torch 2.x: no #include lines added to the sources

  bool uses_cuda() const { return with_cuda.value_or(!cuda_sources.empty()); }
};

// What torch's load_inline builds with, in the Python that reported it.
struct TorchFacts {
  std::string version;       // "1.13.0a0", "2.11.0"
  std::string cuda_version;  // empty: a torch without CUDA
  std::string cuda_home;     // where torch finds nvcc (bin/nvcc), when it has CUDA
  std::vector<std::string> include_paths;       // torch.utils.cpp_extension.include_paths() for the CPU
  std::vector<std::string> cuda_include_paths;  // those it adds with CUDA
  std::vector<std::string> library_paths;       // library_paths() for the CPU: torch's lib
  std::vector<std::string> cuda_library_paths;  // those it adds with CUDA
  std::string python_include;
  std::string extension_suffix;  // sysconfig's EXT_SUFFIX: ".cpython-311-x86_64-linux-gnu.so"
  std::string cxx_standard;      // "c++14" (torch 1.x) or "c++17" (2.x), as torch's ninja file passes it
  int cxx11_abi = 1;             // torch._C._GLIBCXX_USE_CXX11_ABI
  bool passes_cxx11_abi = true;  // whether torch passes -D_GLIBCXX_USE_CXX11_ABI (not from 2.9 on)
  std::map<std::string, std::string> pybind11_defines;  // PYBIND11_COMPILER_TYPE etc. (none from 2.9 on)
  std::string text;  // the report as read: what a cache key covers

  bool has_cuda() const { return !cuda_version.empty(); }
};

// kernels/compile/load_inline_extract.py of the source tree ($DRK_SOURCE_DIR when set).
std::string load_inline_extract_script();

// Every load_inline call of the candidate at `candidate_path`, in source order; none for a
// candidate without one. One call that cannot be resolved makes the whole an error (each such
// call named: "candidate.py:14: argument cpp_sources: name 'src' is bound more than once ...").
Result<std::vector<InlineExtension>> extract_load_inline(
    const std::string& python, const std::string& candidate_path,
    std::shared_ptr<CommandRunner> runner = system_command_runner(),
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

Result<TorchFacts> torch_facts(const std::string& python,
                               std::shared_ptr<CommandRunner> runner = system_command_runner(),
                               std::chrono::milliseconds timeout = std::chrono::seconds(120));
// The facts from the JSON text torch_facts() reads (TorchFacts::text); io_error when it is not
// that JSON.
Result<TorchFacts> torch_facts_from_json(const std::string& text);

// What torch_facts() depends on, read without importing torch (tens of milliseconds against
// seconds): the interpreter, torch's package files (sizes and times), the CUDA a build would find.
// "" when the Python has no torch.
Result<std::string> torch_fingerprint(const std::string& python,
                                      std::shared_ptr<CommandRunner> runner = system_command_runner(),
                                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace drk::compile
