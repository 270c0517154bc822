// TorchExtensionBuilder: builds what torch's load_inline would build for one load_inline call of
// a candidate (inline_extension.h), the same sources with the same flags, but through a
// content-hash cache and with torch/extension.h precompiled (docs/kernelbench.md, "Compiling
// load_inline candidates").
//
// The sources are torch's: main.cpp is `#include <torch/extension.h>`, the cpp_sources and a
// PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) binding each function (through
// torch::wrap_pybind_function unless with_pytorch_error_handling=False), joined by newlines;
// cuda.cu is `#include <torch/types.h>`, <cuda.h>, <cuda_runtime.h> and the cuda_sources (no
// includes with no_implicit_headers=True). The flags are those of torch's ninja file for the
// torch of the facts (cpp_flags(), cuda_flags(), link_flags()): no optimisation torch does not
// ask for. What differs is how: main.cpp is compiled first with only the torch headers a module
// needs (narrow_torch_headers.h), then, if that does not compile, with torch/extension.h; each
// with `-include` of a GCC precompiled header (built once per compiler, flags and torch under
// <cache>/pch/; not with no_implicit_headers, whose main.cpp may not start with torch's include);
// main.cpp and cuda.cu compile at the same time, and the module is cached.
//
// cuda.cu is split where it can be (cuda_source_split.h): its device unit compiled by nvcc with
// the same flags, without torch; its host unit by the C++ compiler with nvcc's host flags, first
// with torch/types.h alone, then as written with a precompiled torch header (torch/extension.h
// when the unit includes it, main.cpp's own where GCC takes it with the host's flags; else
// torch/types.h).
// Where the split refuses, or its units do not compile or link, cuda.cu is compiled whole by
// nvcc, as torch does, and BuiltExtension says why.
//
// Cache: <cache>/ext/<key>/<name><EXT_SUFFIX>, where the key is the SHA-256 of the sources, the
// three flag lists (which name the extension), the compilers' identities and the facts; a hit is
// one stat. A build that fails leaves <cache>/ext/<key>.log and is answered from it. The module
// is renamed into place last (the sources and the compiler's output beside it, for people), so
// several builders may share a cache directory. main.cpp's object is also filed on its own,
// <cache>/units/<key>.o (the key: main.cpp's text, its compile command, the compilers and the
// facts), with a .json of what its compile printed and which headers it took: an extension whose
// main.cpp is another's (the same declarations, functions and name; a new kernel in cuda.cu)
// links that object instead of compiling it (BuiltExtension::main_reused). As with the module's
// key, the files of the candidate's own include paths are not part of it.
//
// Loading the module in place of load_inline's: `importlib.util.spec_from_file_location(name,
// module_path)` after `import torch`, then `module_from_spec` and `exec_module` (what
// load_inline does with the library it builds).
//
// The candidate's own flags are checked first (extension_flags.h): the build runs outside the
// sandbox.
//
// Thread-safety: build() may run on several threads (each precompiled header is built once, by
// one of them; different headers build at the same time). Errors: invalid_argument for a flag
// refused by check_extension_flags(); compile_error with the compiler's or the linker's message
// (paths shown as main.cpp, cuda.cu), "timed out" past the deadline; unsupported for CUDA
// sources when the torch has no CUDA; io_error when a compiler does not run or the cache cannot
// be written.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "kernels/compile/command_runner.h"
#include "kernels/compile/inline_extension.h"

namespace drk::compile {

struct ExtensionSources {
  std::string main_cpp;
  std::string cuda_cu;  // empty: no CUDA sources
};

// The files torch's load_inline writes for `extension`.
ExtensionSources extension_sources(const InlineExtension& extension);

struct TorchExtensionOptions {
  std::string cache_dir;          // created when missing
  std::string cxx = "c++";        // torch's default when $CXX is unset
  std::string nvcc;               // empty: <cuda_home>/bin/nvcc of the facts, as torch
  std::string cuda_architecture = "sm_90";  // the device's: compiled for it and as PTX, as torch does
  bool precompiled_header = true;
  bool split_cuda = true;  // false: cuda.cu always compiled whole by nvcc
  bool narrow_headers = true;  // false: main.cpp and the host unit compiled only as written
  std::chrono::milliseconds timeout{300000};  // per compiler run
  size_t max_log_bytes = 16 * 1024;
  FileSystem* file_system = &real_file_system();
};

struct BuiltExtension {
  std::string module_name;  // the extension's name (the module's PyInit_ symbol)
  std::string module_path;  // absolute
  std::string key;
  bool cached = false;                 // answered from the cache
  bool used_precompiled_header = false;
  bool cuda_split = false;             // cuda.cu built as a device and a host unit
  bool narrow_main = false;            // main.cpp compiled with narrow_module_headers()
  bool narrow_host = false;            // the host unit compiled with narrow_host_headers()
  bool main_reused = false;            // main.cpp's object from the unit cache, not compiled
  std::string cuda_whole_reason;       // why cuda.cu was compiled whole, when it has CUDA sources
  double build_ms = 0.0;               // wall time of this build() call
  std::string compiler_output;         // warnings, as main.cpp and cuda.cu
};

class TorchExtensionBuilder {
 public:
  // io_error when the cache directory cannot be made or the C++ compiler does not run.
  static Result<std::unique_ptr<TorchExtensionBuilder>> create(
      TorchExtensionOptions options, TorchFacts facts, std::shared_ptr<CommandRunner> runner = system_command_runner());

  Result<BuiltExtension> build(const InlineExtension& extension);

  // torch's flags for compiling main.cpp (before `-c main.cpp -o main.o`), cuda.cu (nvcc), and
  // linking the objects (after them): empty cuda_flags() for an extension without CUDA.
  std::vector<std::string> cpp_flags(const InlineExtension& extension) const;
  std::vector<std::string> cuda_flags(const InlineExtension& extension) const;
  std::vector<std::string> link_flags(const InlineExtension& extension) const;
  // The C++ compiler's flags for the host unit of a split cuda.cu: those nvcc's host compiler
  // receives.
  std::vector<std::string> cuda_host_flags(const InlineExtension& extension) const;

  // The header to `-include` for compiling `extension`'s main.cpp, its .gch beside it, built
  // when missing; compile_error when torch/extension.h does not compile with its flags.
  Result<std::string> precompiled_header(const InlineExtension& extension);

  const TorchFacts& facts() const { return facts_; }

 private:
  TorchExtensionBuilder(TorchExtensionOptions options, TorchFacts facts, std::shared_ptr<CommandRunner> runner,
                        std::string identity)
      : options_(std::move(options)), facts_(std::move(facts)), runner_(std::move(runner)),
        identity_(std::move(identity)) {}

  // What the compilers of one build printed, and why it failed if it did.
  struct BuildOutput {
    std::string output;
    std::string failure;
    bool repeatable = true;  // a crash or a timeout may not happen again: not cached

    void absorb(const BuildOutput& other) {
      output += other.output;
      failure += other.failure;
      repeatable = repeatable && other.repeatable;
    }
  };

  std::vector<std::string> common_flags(const InlineExtension& extension) const;
  std::string nvcc() const;
  // A header including `headers` precompiled with `flags`, its .gch beside it; built when missing.
  Result<std::string> precompiled(const std::vector<std::string>& headers, std::vector<std::string> flags);
  // The flags that put `headers` ahead of a unit compiled with `flags` (precompiled where the
  // options say so); nullopt when the narrow attempt is off or its header does not build.
  std::optional<std::vector<std::string>> narrow_include(const std::vector<std::string>& headers,
                                                         const std::vector<std::string>& flags);
  // Compiles `source` (holding `text`) into `object` with `compile` (the compiler and its flags):
  // narrowed first (without_whole_api_includes(), written to `narrow_source`, `narrow` ahead of
  // it) unless `narrow` is nullopt, then, if that did not compile, as written with whole() ahead.
  // A narrow failure whose output holds `hopeless` (when not empty) is the unit's: no header makes
  // it compile. Only the attempt that compiled, or the last one, adds its output to `into`. True
  // when the narrow attempt compiled.
  Result<bool> compile_narrow_first(const std::vector<std::string>& compile, const std::string& text,
                                    const std::string& source, const std::string& narrow_source,
                                    const std::string& object, const std::optional<std::vector<std::string>>& narrow,
                                    const std::function<std::vector<std::string>()>& whole, std::string_view hopeless,
                                    BuildOutput& into);
  // main.cpp (`text`, written at `source`) into `object`; sets built.narrow_main and
  // built.used_precompiled_header.
  Status compile_main(const InlineExtension& extension, const std::string& text, const std::string& source,
                      const std::string& object, BuiltExtension& built, BuildOutput& into);
  // main.cpp's object filed under `key` in <cache>/units/, linked as `object` with what its compile
  // set and printed; false when none is filed (or it cannot be read or linked): compile it.
  bool reuse_main_object(const std::string& key, const std::string& object, BuiltExtension& built, BuildOutput& into);
  // Files `object` under `key` with what its compile set and printed. A failure to file is no
  // error: the next build compiles it again.
  void file_main_object(const std::string& key, const std::string& object, const BuiltExtension& built,
                        const std::string& output);
  // The split's host unit (`text`, written here at `source`) into `object`; sets built.narrow_host.
  Status compile_host_unit(const InlineExtension& extension, const std::string& text, const std::string& source,
                           const std::string& object, BuiltExtension& built, BuildOutput& into);
  // Adds a compiler run to `into`; an error when it did not run at all.
  Status record(BuildOutput& into, const Result<CommandRun>& run) const;
  // The objects of cuda.cu (written in `work`): the split's two where they compile, else nvcc's.
  Result<std::vector<std::string>> compile_cuda(const InlineExtension& extension, const std::string& cuda_cu,
                                                const std::string& work, BuiltExtension& built, BuildOutput& into);
  Result<std::vector<std::string>> compile_cuda_whole(const InlineExtension& extension, const std::string& work,
                                                      BuildOutput& into);

  TorchExtensionOptions options_;
  TorchFacts facts_;
  std::shared_ptr<CommandRunner> runner_;
  std::string identity_;  // the compilers' --version texts
  std::mutex header_mutex_;  // guards the two below
  std::set<std::string> failed_headers_;  // precompiled headers that did not build, by key
  std::map<std::string, std::mutex> building_headers_;  // held while a header builds, by key
  std::mutex refused_mutex_;
  std::set<std::string> refused_main_header_;  // host unit flag sets GCC refused main.cpp's header for
};

}  // namespace drk::compile
