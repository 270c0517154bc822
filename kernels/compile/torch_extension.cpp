#include "kernels/compile/torch_extension.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <set>

#include "base/json_text.h"
#include "base/temporary_directory.h"
#include "kernels/compile/compiler.h"
#include "kernels/compile/compiler_log.h"
#include "kernels/compile/content_hash.h"
#include "kernels/compile/cuda_source_split.h"
#include "kernels/compile/extension_flags.h"
#include "kernels/compile/narrow_torch_headers.h"

namespace drk::compile {
namespace {

namespace fs = std::filesystem;

// torch.utils.cpp_extension.COMMON_NVCC_FLAGS (the same in torch 1.13 and 2.x).
const std::vector<std::string> kCommonNvccFlags = {
    "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr",
    // Beyond torch's flags: ptxas's report names the candidate's kernels (its own, for coverage and
    // the decoy check) with their registers and spills.
    "-Xptxas=-v"};

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& part : parts) text += part + '\0';
  return text;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::string lines(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? "\n" : "") + parts[i];
  return text;
}

// The flags that change GCC's predefined macros (optimisation, standard, -f and -m options), as a
// set: a precompiled header built with other ones is refused.
std::set<std::string> predefining_flags(const std::vector<std::string>& flags) {
  std::set<std::string> found;
  for (const std::string& flag : flags)
    for (const char* prefix : {"-O", "-std=", "-f", "-m"})
      if (flag.rfind(prefix, 0) == 0) found.insert(flag);
  return found;
}

// A compiler's first error line (its first line when none says "error"), for a one-line reason.
std::string first_error_line(const std::string& text) {
  size_t at = text.find("error");
  at = at == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return text.substr(at, text.find('\n', at) - at);
}

// `flags` with torch's standard added unless they name one (nvcc, and its host compiler after it,
// take the candidate's own).
void add_standard_unless_named(std::vector<std::string>& flags, const std::string& standard) {
  if (std::none_of(flags.begin(), flags.end(), [](const std::string& flag) { return flag.rfind("-std=", 0) == 0; }))
    flags.push_back("-std=" + standard);
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The flags that put the precompiled `header` ahead of a unit.
std::vector<std::string> include_precompiled(const std::string& header) {
  return {"-include", header, "-Winvalid-pch"};
}

// A compiler run that failed: why, with what it printed.
std::string failure_text(const CommandRun& run, std::chrono::milliseconds timeout) {
  if (run.timed_out) return "the build timed out after " + std::to_string(timeout.count()) + " ms\n" + run.output;
  if (!run.output.empty()) return run.output;
  return "the compiler failed (exit " + std::to_string(run.exit_code) + ", signal " + std::to_string(run.signal) +
         ") without a message";
}

}  // namespace

ExtensionSources extension_sources(const InlineExtension& extension) {
  std::vector<std::string> cpp;
  if (!extension.no_implicit_headers) cpp.push_back("#include <torch/extension.h>");
  append(cpp, extension.cpp_sources);
  if (!extension.functions.empty()) {
    cpp.push_back("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {");
    for (const auto& function : extension.functions) {
      const std::string bound = extension.with_pytorch_error_handling
                                    ? "torch::wrap_pybind_function(" + function.name + ")"
                                    : function.name;
      cpp.push_back("m.def(\"" + function.name + "\", " + bound + ", \"" + function.doc + "\");");
    }
    cpp.push_back("}");
  }
  ExtensionSources sources{lines(cpp), {}};
  if (!extension.cuda_sources.empty()) {
    std::vector<std::string> cuda;
    if (!extension.no_implicit_headers)
      cuda = {"#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"};
    append(cuda, extension.cuda_sources);
    sources.cuda_cu = lines(cuda);
  }
  return sources;
}

Result<std::unique_ptr<TorchExtensionBuilder>> TorchExtensionBuilder::create(TorchExtensionOptions options,
                                                                             TorchFacts facts,
                                                                             std::shared_ptr<CommandRunner> runner) {
  if (options.cache_dir.empty()) return make_error(Errc::invalid_argument, "the extension cache directory is not set");
  for (const char* part : {"ext", "pch", "units"})
    if (auto made = options.file_system->create_directories(options.cache_dir + "/" + part); !made) return made.error();
  options.cache_dir = fs::absolute(options.cache_dir).string();
  auto identity = compiler_identity(*runner, options.cxx);
  if (!identity) return identity.error();
  std::unique_ptr<TorchExtensionBuilder> builder(
      new TorchExtensionBuilder(std::move(options), std::move(facts), runner, *identity));
  // Without nvcc only CPU extensions build; a CUDA build then says nvcc does not run.
  if (builder->facts_.has_cuda()) {
    if (auto nvcc = compiler_identity(*runner, builder->nvcc())) builder->identity_ += *nvcc;
  }
  return builder;
}

std::string TorchExtensionBuilder::nvcc() const {
  return options_.nvcc.empty() ? facts_.cuda_home + "/bin/nvcc" : options_.nvcc;
}

std::vector<std::string> TorchExtensionBuilder::common_flags(const InlineExtension& extension) const {
  std::vector<std::string> flags = {"-DTORCH_EXTENSION_NAME=" + extension.name, "-DTORCH_API_INCLUDE_EXTENSION_H"};
  for (const auto& [name, value] : facts_.pybind11_defines) flags.push_back("-D" + name + "=\"" + value + "\"");
  for (const auto& path : extension.extra_include_paths) flags.push_back("-I" + fs::absolute(path).string());
  std::vector<std::string> system = facts_.include_paths;
  if (extension.uses_cuda()) append(system, facts_.cuda_include_paths);
  system.push_back(facts_.python_include);
  for (const auto& path : system) append(flags, {"-isystem", path});
  if (facts_.passes_cxx11_abi) flags.push_back("-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(facts_.cxx11_abi));
  return flags;
}

std::vector<std::string> TorchExtensionBuilder::cpp_flags(const InlineExtension& extension) const {
  std::vector<std::string> flags = common_flags(extension);
  append(flags, {"-fPIC", "-std=" + facts_.cxx_standard});
  append(flags, extension.extra_cflags);
  return flags;
}

std::vector<std::string> TorchExtensionBuilder::cuda_flags(const InlineExtension& extension) const {
  if (!extension.uses_cuda()) return {};
  std::vector<std::string> flags = common_flags(extension);
  append(flags, kCommonNvccFlags);
  // torch's default arch list: the visible device's architecture, with PTX for it (+PTX).
  std::string number = options_.cuda_architecture;
  if (number.rfind("sm_", 0) == 0) number = number.substr(3);
  append(flags, {"-gencode=arch=compute_" + number + ",code=compute_" + number,
                 "-gencode=arch=compute_" + number + ",code=sm_" + number});
  append(flags, {"--compiler-options", "-fPIC"});
  append(flags, extension.extra_cuda_cflags);
  add_standard_unless_named(flags, facts_.cxx_standard);
  return flags;
}

std::vector<std::string> TorchExtensionBuilder::link_flags(const InlineExtension& extension) const {
  const bool cuda = extension.uses_cuda();
  std::vector<std::string> flags = {"-shared"};
  append(flags, extension.extra_ldflags);
  for (const auto& path : facts_.library_paths) flags.push_back("-L" + path);
  flags.push_back("-lc10");
  if (cuda) flags.push_back("-lc10_cuda");
  flags.push_back("-ltorch_cpu");
  if (cuda) flags.push_back("-ltorch_cuda");
  append(flags, {"-ltorch", "-ltorch_python"});
  if (cuda) {
    for (const auto& path : facts_.cuda_library_paths) flags.push_back("-L" + path);
    flags.push_back("-lcudart");
  }
  return flags;
}

Result<std::string> TorchExtensionBuilder::precompiled_header(const InlineExtension& extension) {
  return precompiled({"torch/extension.h"}, cpp_flags(extension));
}

std::vector<std::string> TorchExtensionBuilder::cuda_host_flags(const InlineExtension& extension) const {
  std::vector<std::string> flags = common_flags(extension);
  // nvcc's host preprocessing searches its libcu++ (cuda/std/...) too.
  const std::string libcuxx = facts_.cuda_home + "/include/cccl";
  if (options_.file_system->exists(libcuxx)) append(flags, {"-isystem", libcuxx});
  flags.push_back("-fPIC");
  append(flags, host_compiler_flags(kCommonNvccFlags));
  append(flags, host_compiler_flags(extension.extra_cuda_cflags));
  add_standard_unless_named(flags, facts_.cxx_standard);
  return flags;
}

Result<std::string> TorchExtensionBuilder::precompiled(const std::vector<std::string>& headers,
                                                       std::vector<std::string> flags) {
  std::string included, lines;
  for (const auto& header : headers) {
    included += (included.empty() ? "" : ", ") + header;
    lines += "#include <" + header + ">\n";
  }
  // The extension's name is the one flag that differs between extensions; torch's headers do not
  // use it, so one header serves them all (-Winvalid-pch would say otherwise).
  flags.erase(flags.begin());
  const std::string key = content_hash(lines + '\0' + joined(flags) + identity_ + facts_.text);
  FileSystem& files = *options_.file_system;
  const fs::path dir = fs::path(options_.cache_dir) / "pch" / key;
  const std::string header = (dir / "torch_header.h").string();
  const std::string compiled = header + ".gch";
  if (files.exists(compiled)) return header;

  // One build of each header at a time; other headers build beside it.
  std::mutex* building = nullptr;
  {
    std::lock_guard lock(header_mutex_);
    building = &building_headers_[key];
  }
  std::lock_guard build_lock(*building);
  {
    std::lock_guard lock(header_mutex_);
    if (failed_headers_.count(key))
      return make_error(Errc::compile_error, included + " did not compile with these flags before");
  }
  if (files.exists(compiled)) return header;
  if (auto made = files.create_directories(dir.string()); !made) return made.error();
  if (auto written = write_file_atomically(files, header, lines); !written)
    return written.error();
  auto scratch = TemporaryDirectory::create("building", dir);
  if (!scratch) return scratch.error();
  const std::string built = scratch->path() + "/torch_header.h.gch";
  std::vector<std::string> argv = {options_.cxx};
  append(argv, flags);
  append(argv, {"-x", "c++-header", header, "-o", built});
  auto run = runner_->run(argv, options_.timeout);
  if (!run) return run.error();
  if (!run->succeeded()) {
    std::lock_guard lock(header_mutex_);
    failed_headers_.insert(key);
    return make_error(Errc::compile_error,
                      included + " does not compile: " + compiler_log(failure_text(*run, options_.timeout), {},
                                                                      options_.max_log_bytes));
  }
  if (auto moved = files.rename(built, compiled); !moved) return moved.error();
  return header;
}

std::optional<std::vector<std::string>> TorchExtensionBuilder::narrow_include(const std::vector<std::string>& headers,
                                                                              const std::vector<std::string>& flags) {
  if (!options_.narrow_headers) return std::nullopt;
  if (!options_.precompiled_header) {
    std::vector<std::string> include;
    for (const auto& header : headers) append(include, {"-include", header});
    return include;
  }
  auto header = precompiled(headers, flags);
  if (!header) return std::nullopt;
  return include_precompiled(*header);
}

Result<bool> TorchExtensionBuilder::compile_narrow_first(
    const std::vector<std::string>& compile, const std::string& text, const std::string& source,
    const std::string& narrow_source, const std::string& object,
    const std::optional<std::vector<std::string>>& narrow, const std::function<std::vector<std::string>()>& whole,
    std::string_view hopeless, BuildOutput& into) {
  const auto run = [&](const std::string& file, const std::vector<std::string>& include, BuildOutput& output) {
    std::vector<std::string> argv = compile;
    append(argv, include);
    append(argv, {"-c", file, "-o", object});
    return record(output, runner_->run(argv, options_.timeout));
  };
  if (narrow) {
    const std::string narrowed = without_whole_api_includes(text);
    // Nothing to leave out: the narrow attempt is the build.
    if (narrowed == text) {
      if (auto ran = run(source, *narrow, into); !ran) return ran.error();
      return true;
    }
    if (auto written = write_file_atomically(*options_.file_system, narrow_source, narrowed); !written)
      return written.error();
    BuildOutput attempt;
    if (auto ran = run(narrow_source, *narrow, attempt); !ran) return ran.error();
    if (attempt.failure.empty() || (!hopeless.empty() && attempt.failure.find(hopeless) != std::string::npos)) {
      into.absorb(attempt);
      return attempt.failure.empty();
    }
  }
  if (auto ran = run(source, whole(), into); !ran) return ran.error();
  return false;
}

Status TorchExtensionBuilder::compile_host_unit(const InlineExtension& extension, const std::string& text,
                                                const std::string& source, const std::string& object,
                                                BuiltExtension& built, BuildOutput& into) {
  if (auto written = write_file_atomically(*options_.file_system, source, text); !written) return written.error();
  const std::vector<std::string> host_flags = cuda_host_flags(extension);
  std::vector<std::string> compile = {options_.cxx};
  append(compile, host_flags);
  // As written: main.cpp's precompiled torch/extension.h serves the host unit where GCC takes it
  // with the host's flags (nvcc's __CUDA_NO_HALF* defines are not read by torch's headers under
  // g++): one header built per machine, not two. Flags GCC refuses it for (-O3 defines
  // __OPTIMIZE__) get a header of their own from the next build on.
  const std::string host_flags_key = content_hash(joined(host_flags));
  bool shares_main_header = false;
  const auto whole = [&]() -> std::vector<std::string> {
    if (!options_.precompiled_header) return {};
    const bool whole_api = text.find("<torch/extension.h>") != std::string::npos;
    if (whole_api && !extension.no_implicit_headers &&
        predefining_flags(cpp_flags(extension)) == predefining_flags(host_flags)) {
      std::lock_guard lock(refused_mutex_);
      shares_main_header = !refused_main_header_.count(host_flags_key);
    }
    auto header = shares_main_header ? precompiled_header(extension)
                                     : precompiled({whole_api ? "torch/extension.h" : "torch/types.h"}, host_flags);
    if (!header) return {};
    return include_precompiled(*header);
  };
  BuildOutput output;
  auto narrow = compile_narrow_first(compile, text, source, source + ".narrow.cpp", object,
                                     narrow_include(narrow_host_headers(), host_flags), whole, kHiddenDeviceCode,
                                     output);
  if (!narrow) return narrow.error();
  built.narrow_host = *narrow;
  if (shares_main_header && (output.output + output.failure).find(".gch: not used because") != std::string::npos) {
    std::lock_guard lock(refused_mutex_);
    refused_main_header_.insert(host_flags_key);
  }
  into.absorb(output);
  return {};
}

Status TorchExtensionBuilder::compile_main(const InlineExtension& extension, const std::string& text,
                                           const std::string& source, const std::string& object,
                                           BuiltExtension& built, BuildOutput& into) {
  const std::vector<std::string> flags = cpp_flags(extension);
  std::vector<std::string> compile = {options_.cxx};
  append(compile, flags);
  // no_implicit_headers: main.cpp may not start with torch's include, so nothing goes ahead of it.
  const bool header_ahead = options_.precompiled_header && !extension.no_implicit_headers;
  const auto whole = [&]() -> std::vector<std::string> {
    // A header that does not build leaves main.cpp to include torch/extension.h itself, as torch does.
    if (!header_ahead) return {};
    auto header = precompiled_header(extension);
    if (!header) return {};
    built.used_precompiled_header = true;
    return include_precompiled(*header);
  };
  // The object is what the text, the command and the headers make it, whichever extension asks:
  // a new kernel in cuda.cu behind the same bindings under the same name reuses main.cpp's.
  const std::string unit_key =
      content_hash(std::string("main.cpp") + '\0' + text + '\0' + joined(compile) + '\0' + identity_ + facts_.text +
                   (options_.narrow_headers ? "+narrow" : "") + (options_.precompiled_header ? "+pch" : ""));
  if (reuse_main_object(unit_key, object, built, into)) return {};
  BuildOutput unit;
  auto narrow = compile_narrow_first(
      compile, text, source, source + ".narrow.cpp", object,
      extension.no_implicit_headers ? std::nullopt : narrow_include(narrow_module_headers(), flags), whole, {}, unit);
  if (!narrow) return narrow.error();
  built.narrow_main = *narrow;
  if (*narrow && options_.precompiled_header) built.used_precompiled_header = true;
  // Filed as shown: the paths of this build's scratch directory are not the next one's.
  if (unit.failure.empty())
    file_main_object(unit_key, object, built,
                     compiler_log(unit.output, {{source + ".narrow.cpp", "main.cpp"}, {source, "main.cpp"}},
                                  options_.max_log_bytes));
  into.absorb(unit);
  return {};
}

bool TorchExtensionBuilder::reuse_main_object(const std::string& key, const std::string& object, BuiltExtension& built,
                                              BuildOutput& into) {
  FileSystem& files = *options_.file_system;
  const std::string filed = options_.cache_dir + "/units/" + key;
  auto facts = files.read_file(filed + ".json");
  if (!facts) return false;
  const Json json = Json::parse(*facts, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.value("output", Json()).is_string()) return false;
  if (!files.link(filed + ".o", object)) return false;
  const auto said = [&](const char* name) { return json.contains(name) && json.at(name) == true; };
  built.main_reused = true;
  built.narrow_main = said("narrow");
  built.used_precompiled_header = said("precompiled_header");
  into.output += json.at("output").get<std::string>();
  return true;
}

void TorchExtensionBuilder::file_main_object(const std::string& key, const std::string& object,
                                             const BuiltExtension& built, const std::string& output) {
  FileSystem& files = *options_.file_system;
  const std::string filed = options_.cache_dir + "/units/" + key;
  const Json facts = {{"narrow", built.narrow_main},
                      {"precompiled_header", built.used_precompiled_header},
                      {"output", output}};
  // The description first, the object's name last (a description without its object is a miss:
  // the link fails): a filed object is whole and described. Another
  // build filing the same object first is no error (link refuses a name that exists).
  if (!write_file_atomically(files, filed + ".json", facts.dump())) return;
  (void)files.link(object, filed + ".o");
}

Status TorchExtensionBuilder::record(BuildOutput& into, const Result<CommandRun>& run) const {
  if (!run) return run.error();
  if (run->succeeded()) {
    into.output += run->output;
  } else {
    into.failure += failure_text(*run, options_.timeout);
    into.repeatable = into.repeatable && !run->timed_out && run->signal == 0;
  }
  return {};
}

Result<std::vector<std::string>> TorchExtensionBuilder::compile_cuda_whole(const InlineExtension& extension,
                                                                           const std::string& work,
                                                                           BuildOutput& into) {
  const std::string object = work + "/cuda.cuda.o";
  std::vector<std::string> argv = {nvcc()};
  append(argv, cuda_flags(extension));
  append(argv, {"-c", work + "/cuda.cu", "-o", object});
  if (auto recorded = record(into, runner_->run(argv, options_.timeout)); !recorded) return recorded.error();
  return std::vector<std::string>{object};
}

Result<std::vector<std::string>> TorchExtensionBuilder::compile_cuda(const InlineExtension& extension,
                                                                     const std::string& cuda_cu,
                                                                     const std::string& work, BuiltExtension& built,
                                                                     BuildOutput& into) {
  if (!options_.split_cuda) {
    built.cuda_whole_reason = "the split is off";
    return compile_cuda_whole(extension, work, into);
  }
  auto split = split_cuda_source(cuda_cu);
  if (!split) {
    built.cuda_whole_reason = split.error().message;
    return compile_cuda_whole(extension, work, into);
  }
  FileSystem& files = *options_.file_system;
  const std::string device_source = work + "/cuda_device.cu", host_source = work + "/cuda_host.cpp";
  const std::string device_object = work + "/cuda_device.o", host_object = work + "/cuda_host.o";
  std::vector<std::string> device_argv = {nvcc()};
  append(device_argv, cuda_flags(extension));
  if (!split->template_kernels.empty()) append(device_argv, {"-static-global-template-stub=false"});
  append(device_argv, {"-c", device_source, "-o", device_object});
  const auto compile_host = [&](BuildOutput& into) {
    return compile_host_unit(extension, split->host, host_source, host_object, built, into);
  };
  BuildOutput split_output;
  if (split->template_kernels.empty()) {
    if (auto written = write_file_atomically(files, device_source, split->device); !written) return written.error();
    auto device_run =
        std::async(std::launch::async, [this, device_argv] { return runner_->run(device_argv, options_.timeout); });
    const Status host_recorded = compile_host(split_output);
    const Status device_recorded = record(split_output, device_run.get());
    if (!host_recorded) return host_recorded.error();
    if (!device_recorded) return device_recorded.error();
  } else {
    // The host unit first: its object's undefined symbols name the kernel templates' instances.
    if (auto compiled = compile_host(split_output); !compiled) return compiled.error();
    if (split_output.failure.empty()) {
      auto symbols = runner_->run({"nm", "-u", "-C", host_object}, options_.timeout);
      if (!symbols || !symbols->succeeded()) {
        built.cuda_whole_reason = "nm did not list the host unit's symbols: " +
                                  (symbols ? first_error_line(symbols->output) : symbols.error().message);
        return compile_cuda_whole(extension, work, into);
      }
      auto instances = explicit_instantiations(symbols->output, split->template_kernels);
      if (!instances) {
        built.cuda_whole_reason = instances.error().message;
        return compile_cuda_whole(extension, work, into);
      }
      const std::string device = instances->includes + split->device + instances->instantiations;
      if (auto written = write_file_atomically(files, device_source, device); !written) return written.error();
      if (auto recorded = record(split_output, runner_->run(device_argv, options_.timeout)); !recorded)
        return recorded.error();
    }
  }
  if (split_output.failure.empty()) {
    into.absorb(split_output);
    built.cuda_split = true;
    return std::vector<std::string>{host_object, device_object};
  }
  // torch's build decides whether a candidate compiles: the whole file, as torch compiles it.
  built.cuda_whole_reason = "its split did not compile: " + first_error_line(split_output.failure);
  return compile_cuda_whole(extension, work, into);
}

Result<BuiltExtension> TorchExtensionBuilder::build(const InlineExtension& extension) {
  const auto started = std::chrono::steady_clock::now();
  const bool cuda = extension.uses_cuda();
  if (cuda && !facts_.has_cuda())
    return make_error(Errc::unsupported, "extension '" + extension.name + "' (line " + std::to_string(extension.line) +
                                             ") needs CUDA, and torch " + facts_.version + " has none");
  if (auto checked = check_extension_flags(extension); !checked) return checked.error();
  const ExtensionSources sources = extension_sources(extension);
  const std::vector<std::string> cpp = cpp_flags(extension);
  const std::vector<std::string> cuda_compile = cuda_flags(extension);
  const std::vector<std::string> link = link_flags(extension);
  const std::string key = content_hash(sources.main_cpp + '\0' + sources.cuda_cu + '\0' + joined(cpp) + '\0' +
                                       joined(cuda_compile) + '\0' + joined(link) + '\0' + identity_ + facts_.text);
  FileSystem& files = *options_.file_system;
  const fs::path root = fs::path(options_.cache_dir) / "ext";
  const fs::path dir = root / key;
  const std::string module_file = extension.name + facts_.extension_suffix;
  BuiltExtension built;
  built.module_name = extension.name;
  built.module_path = (dir / module_file).string();
  built.key = key;
  built.cached = true;
  if (files.exists(built.module_path)) {
    built.build_ms = milliseconds_since(started);
    return built;
  }
  const std::string failure_log = (root / (key + ".log")).string();
  if (files.exists(failure_log)) {
    auto log = files.read_file(failure_log);
    return make_error(Errc::compile_error, log ? *log : std::string("the extension did not build"));
  }

  auto scratch = TemporaryDirectory::create(key.substr(0, 16), root);
  if (!scratch) return scratch.error();
  const fs::path work(scratch->path());
  const std::string main_cpp = (work / "main.cpp").string();
  const std::string cuda_cu = (work / "cuda.cu").string();
  if (auto written = write_file_atomically(files, main_cpp, sources.main_cpp); !written) return written.error();
  if (cuda)
    if (auto written = write_file_atomically(files, cuda_cu, sources.cuda_cu); !written) return written.error();

  const std::string main_object = (work / "main.o").string();
  BuildOutput output;
  // Each side writes its own fields of `built`.
  auto main_compiled = std::async(std::launch::async, [&] {
    return compile_main(extension, sources.main_cpp, main_cpp, main_object, built, output);
  });
  BuildOutput cuda_output;
  Result<std::vector<std::string>> cuda_objects = std::vector<std::string>{};
  if (!sources.cuda_cu.empty()) cuda_objects = compile_cuda(extension, sources.cuda_cu, work.string(), built, cuda_output);
  if (const Status compiled = main_compiled.get(); !compiled) return compiled.error();
  if (!cuda_objects) return cuda_objects.error();
  output.absorb(cuda_output);

  const std::string module_built = (work / module_file).string();
  const auto link_module = [&](const std::vector<std::string>& objects, BuildOutput& into) -> Status {
    std::vector<std::string> argv = {options_.cxx, main_object};
    append(argv, objects);
    append(argv, link);
    append(argv, {"-o", module_built});
    return record(into, runner_->run(argv, options_.timeout));
  };
  if (output.failure.empty()) {
    BuildOutput linked;
    if (auto ran = link_module(*cuda_objects, linked); !ran) return ran.error();
    if (!linked.failure.empty() && built.cuda_split) {
      built.cuda_split = false;
      built.cuda_whole_reason = "its split did not link: " + first_error_line(linked.failure);
      linked = BuildOutput{};
      auto whole = compile_cuda_whole(extension, work.string(), linked);
      if (!whole) return whole.error();
      if (linked.failure.empty())
        if (auto ran = link_module(*whole, linked); !ran) return ran.error();
    }
    output.absorb(linked);
  }

  const std::vector<std::pair<std::string, std::string>> renames = {
      {main_cpp + ".narrow.cpp", "main.cpp"}, {main_cpp, "main.cpp"}, {cuda_cu, "cuda.cu"}, {scratch->path() + "/", ""}};
  if (!output.failure.empty()) {
    const std::string message = "extension '" + extension.name + "' (line " + std::to_string(extension.line) +
                                ") does not build:\n" + compiler_log(output.failure, renames, options_.max_log_bytes);
    if (output.repeatable) (void)write_file_atomically(files, failure_log, message);
    return make_error(Errc::compile_error, message);
  }

  built.compiler_output = compiler_log(output.output, renames, options_.max_log_bytes);
  if (auto made = files.create_directory(dir.string(), 0777); !made) return made.error();
  // The sources and the output first, for people; the module last: its name says the entry is whole.
  (void)files.rename(main_cpp, (dir / "main.cpp").string());
  if (cuda) (void)files.rename(cuda_cu, (dir / "cuda.cu").string());
  if (auto written = write_file_atomically(files, (dir / "build.log").string(), built.compiler_output); !written)
    return written.error();
  if (auto moved = files.rename(module_built, built.module_path); !moved) return moved.error();
  built.cached = false;
  built.build_ms = milliseconds_since(started);
  return built;
}

}  // namespace drk::compile
