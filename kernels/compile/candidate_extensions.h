// CandidateExtensions: the second half of a KernelBench-format Python candidate's compile (the
// first is python_candidate_check.py, compiler.h). Every load_inline call of the checked file is
// read without running it (extract_load_inline, inline_extension.h) and built here, outside the
// sandbox, by a TorchExtensionBuilder (torch_extension.h: the precompiled header, the
// content-hash cache), so that the sandbox loads the built modules in place of load_inline's and
// runs no compiler (docs/kernelbench.md, "Evaluating KernelBench-format candidates").
//
// The outcome lists the modules, one per load_inline call in source order: the call's `name` and
// the module's absolute path (<cache_dir>/ext/<key>/<name><EXT_SUFFIX>). Calls with the same name
// and the same arguments share a module; the same name with other arguments is refused, since the
// sandbox finds a call's module by its name.
//
// A file whose text does not mention load_inline has no call (no process runs). The torch's facts
// are read once, at the first file that has a call (torch_facts(): one import of torch).
//
// Thread-safety: build() may run on several threads. Errors: compile_error for what the candidate
// can fix, its file named as `display_name`: a call whose arguments are not constants (the line and
// the argument), a refused flag (by name), CUDA sources for a torch without CUDA, a name given to
// two different extensions, a build that fails (the compiler's message, as main.cpp and cuda.cu);
// io_error when the Python, its torch or the C++ compiler does not run, or the cache cannot be
// written.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "kernels/compile/command_runner.h"
#include "kernels/compile/torch_extension.h"

namespace drk::compile {

// One load_inline call's module, built.
struct PrebuiltExtension {
  std::string name;         // the call's `name`: the module's
  std::string module_path;  // absolute
};

// Whether `path` has the shape of a module's place under the extension cache,
// ext/<64 hex digits>/<name><suffix> (a name of letters, digits and underscores, a suffix of
// those, dots and dashes): what a module shipped from another node may be filed under, never a
// path that leaves the cache.
bool is_extension_cache_path(std::string_view path);

struct LoadInlineOptions {
  std::string cuda_architecture = "sm_90";  // the device's, for cuda_sources
  // Per compiler run, not compile_timeout: the precompiled header alone takes a minute or more on
  // a loaded 2-core machine.
  std::chrono::milliseconds timeout{300000};
};

class CandidateExtensions {
 public:
  struct Built {
    std::vector<PrebuiltExtension> modules;  // in source order
    bool cached = true;                      // every module answered from the cache
    std::string compiler_output;             // warnings; why a CUDA extension was not split
  };

  // `python` runs the extractor and reports torch's facts; modules are cached under `cache_dir`.
  CandidateExtensions(std::string python, std::string cache_dir, LoadInlineOptions options, FileSystem& file_system,
                      std::shared_ptr<CommandRunner> runner);

  // The modules of the candidate `source`, read from its copy at `path`.
  Result<Built> build(const std::string& source, const std::string& path, const std::string& display_name);

 private:
  // Made at the first call (torch's facts), kept when made.
  Result<TorchExtensionBuilder*> builder();

  std::string python_;
  std::string cache_dir_;
  LoadInlineOptions options_;
  FileSystem& file_system_;
  std::shared_ptr<CommandRunner> runner_;
  std::mutex builder_mutex_;
  std::unique_ptr<TorchExtensionBuilder> builder_;
};

}  // namespace drk::compile
