// Compiler: turns a candidate source into a shared object, cached by content: C++ candidates
// with the host compiler, CUDA C++ candidates with nvcc (nvcc_compiler_options()).
//
//   c++ -O3 -march=native -std=c++17 -shared -fPIC -I<kernels/abi> candidate.cpp -o <key>.so
//   nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC -cudart shared -arch=sm_90 -lineinfo
//        --resource-usage -I<kernels/abi> candidate.cu -o <key>.so
//
// The cache key is the SHA-256 of the source, the command (compiler and flags), the compiler's
// identity (its `--version` text, and with -march=native the target it resolves to on this
// machine: `-Q --help=target`) and the ABI header, so a change of any of them recompiles, and an
// object built on another machine (kernels/compile/compiled_artifact.h) has this machine's key only
// when it was built for the same target. A cache directory holds <key>.so (and <key>.cpp, for
// people); a source that failed to compile leaves <key>.log so that the same failure is answered
// from the cache; a source that compiled leaves the compiler's output in <key>.out (nvcc's
// resource report is read from it on a hit). Every file is written to a temporary name and renamed
// (write_file_atomically of base/file_system.h, the seam the cache is read and written through),
// so several Evaluators (and Generators that compile ahead) may share one cache directory, and a
// write that fails (a full disk, EIO, a failed rename) leaves no part of a file under a final
// name and every entry cached before whole.
//
// With CompilerOptions::load_inline (Python candidates), compile() then builds the object's
// load_inline extensions (candidate_extensions.h: a cache of their own, which answers every compile
// of the same candidate, hit or not) and lists them in CompiledCandidate::extensions.
//
// Thread-safety: compile() and adopt() may run on several threads (distinct temporary names per
// call). Errors: compile_error carries the compiler's message (paths shown as candidate.cpp) and
// "timed out" for a compile past its deadline; io_error when the compiler cannot run or the
// cache directory cannot be written.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/compile/candidate_extensions.h"
#include "kernels/compile/command_runner.h"
#include "messages/drk.capnp.h"
#include "base/file_system.h"
#include "base/result.h"

namespace drk::compile {

// The compiler's `--version` text: what a cache key names a compiler by. io_error when it does not
// run.
Result<std::string> compiler_identity(CommandRunner& runner, const std::string& compiler);

// kernels/abi of the source tree ($DRK_SOURCE_DIR/kernels/abi when that is set).
std::string default_abi_include_dir();

struct CompilerOptions {
  std::string cache_dir;                  // created when missing
  std::string abi_include_dir = default_abi_include_dir();
  std::string compiler = "c++";
  std::vector<std::string> flags = {"-O3", "-march=native", "-std=c++17", "-shared", "-fPIC"};
  std::chrono::milliseconds timeout{60000};
  size_t max_log_bytes = 16 * 1024;
  std::string source_extension = ".cpp";  // nvcc picks the language from it
  std::string object_extension = ".so";   // what the cache keeps under <key>
  // The seam through which the cache is read and written (base/file_system.h).
  FileSystem* file_system = &real_file_system();
  // Set (Python candidates): compile() also builds the object's load_inline extensions, with the
  // compiler as their Python, into <cache_dir>/torch-extensions (candidate_extensions.h).
  std::optional<LoadInlineOptions> load_inline;
};

// nvcc (from $DRK_NVCC, else /usr/local/cuda/bin/nvcc when it exists, else PATH) building a
// shared object for `architecture` (sm_90: the H200), with line info and the resource report.
// -cudart shared: the candidate uses the sandbox's CUDA runtime, not a private static copy.
CompilerOptions nvcc_compiler_options(const std::string& architecture = "sm_90");

// KernelBench-format Python candidates: the "compiler" is python_candidate_check.py, run by
// $DRK_PYTHON (else the Python drkernel was built with): a parse without running anything, and a
// ModelNew must be defined. The object (<key>.py) is the checked source, which drk-sandbox --python
// runs; its load_inline extensions are built too (load_inline: candidate_extensions.h).
CompilerOptions python_compiler_options();

// The options candidates of `language` are compiled with, by the Evaluator and by a Generator
// that compiles ahead (the same options give the same cache keys): the defaults above for C++,
// nvcc_compiler_options() for CUDA. cache_dir is left for the caller to set.
CompilerOptions compiler_options_for(msg::Language language);

struct CompiledCandidate {
  std::string library_path;  // absolute path of the shared object
  std::string key;           // the content hash
  bool cached = false;       // answered from the cache
  double compile_ms = 0.0;   // wall time of this compile() call
  std::string compiler_output;  // what the compiler printed (warnings, nvcc's resource report)
  // With load_inline: the modules the sandbox loads in place of the candidate's load_inline calls,
  // one per call in source order (cached counts them too: false when one was built).
  std::vector<PrebuiltExtension> extensions;
};

class Compiler {
 public:
  // io_error when the cache directory cannot be made or the compiler does not run.
  static Result<std::unique_ptr<Compiler>> create(CompilerOptions options,
                                                   std::shared_ptr<CommandRunner> runner = system_command_runner());

  Result<CompiledCandidate> compile(const std::string& source);

  // The content hash compile() files `source` under: equal keys, equal objects (CompilePool
  // deduplicates in-flight compiles by it).
  std::string cache_key(const std::string& source) const;

  // A load_inline module built elsewhere with its candidate: its place under the extension cache
  // (is_extension_cache_path: ext/<key>/<name><EXT_SUFFIX>) and its bytes.
  struct ModuleFile {
    std::string path;
    std::string_view bytes;
  };

  // Files `object`, built elsewhere from `source` by a compiler whose cache_key(source) was
  // `key`, as compile() would have: the output in <key>.out, the object renamed into <key>.so
  // (no <key>.cpp: nothing was compiled here); and `modules` into the extension cache, where
  // compile() finds a module only under the key it computes itself for a load_inline call.
  // The caller has checked that `key` is this compiler's cache_key(source) (compiled_artifact.h);
  // adopt() refuses any other key, modules for a compiler that builds none, and a module path of
  // another shape, with invalid_argument. What is already cached is kept as it is. Errors:
  // io_error when the cache cannot be written.
  Status adopt(const std::string& source, const std::string& key, std::string_view object,
               const std::string& compiler_output, const std::vector<ModuleFile>& modules = {});

  // Where compile() builds load_inline modules (<cache_dir>/torch-extensions); "" for a compiler
  // of C++ or CUDA candidates.
  std::string extension_cache_dir() const;

  // The compiler and its flags, as one line ("c++ -O3 ...").
  std::string command_line() const;
  const CompilerOptions& options() const { return options_; }

 private:
  Compiler(CompilerOptions options, std::shared_ptr<CommandRunner> runner, std::string identity);

  // The object alone (compile() without the extensions).
  Result<CompiledCandidate> compile_object(const std::string& source);

  CompilerOptions options_;
  std::shared_ptr<CommandRunner> runner_;
  std::string identity_;  // compiler --version text, the native target when asked for, the ABI header
  std::atomic<uint64_t> sequence_{0};
  std::unique_ptr<CandidateExtensions> extensions_;  // with load_inline
};

}  // namespace drk::compile
