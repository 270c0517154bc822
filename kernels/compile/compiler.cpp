#include "kernels/compile/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kernels/compile/compiler_log.h"
#include "kernels/compile/content_hash.h"

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (kernels/compile/CMakeLists.txt)"
#endif

namespace drk::compile {

namespace fs = std::filesystem;

namespace {

// Where a Python compiler's load_inline modules are built (candidate_extensions.h).
std::string extensions_dir(const CompilerOptions& options) { return options.cache_dir + "/torch-extensions"; }

}  // namespace

std::string default_abi_include_dir() {
  if (const char* dir = std::getenv("DRK_SOURCE_DIR"); dir && *dir) return std::string(dir) + "/kernels/abi";
  return std::string(DRK_SOURCE_DIR) + "/kernels/abi";
}

Result<std::string> compiler_identity(CommandRunner& runner, const std::string& compiler) {
  auto version = runner.run({compiler, "--version"}, std::chrono::seconds(30));
  if (!version) return version.error();
  if (!version->succeeded())
    return make_error(Errc::io_error, "the compiler '" + compiler + "' does not run: " + version->output);
  return version->output;
}

CompilerOptions nvcc_compiler_options(const std::string& architecture) {
  CompilerOptions options;
  std::error_code ec;
  if (const char* nvcc = std::getenv("DRK_NVCC"); nvcc && *nvcc) options.compiler = nvcc;
  else if (fs::exists("/usr/local/cuda/bin/nvcc", ec)) options.compiler = "/usr/local/cuda/bin/nvcc";
  else options.compiler = "nvcc";
  options.flags = {"-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                   "-arch=" + architecture, "-lineinfo", "--resource-usage"};
  options.source_extension = ".cu";
  return options;
}

CompilerOptions python_compiler_options() {
  CompilerOptions options;
  const char* python = std::getenv("DRK_PYTHON");
  options.compiler = python && *python ? python : DRK_PYTHON_EXECUTABLE;
  const char* source_dir = std::getenv("DRK_SOURCE_DIR");
  options.flags = {std::string(source_dir && *source_dir ? source_dir : DRK_SOURCE_DIR) +
                   "/kernels/compile/python_candidate_check.py"};
  options.source_extension = ".py";
  options.object_extension = ".py";
  options.load_inline = LoadInlineOptions{};
  return options;
}

CompilerOptions compiler_options_for(msg::Language language) {
  switch (language) {
    case msg::Language::CUDA: return nvcc_compiler_options();
    case msg::Language::PYTHON: return python_compiler_options();
    default: return CompilerOptions{};
  }
}

Result<std::unique_ptr<Compiler>> Compiler::create(CompilerOptions options, std::shared_ptr<CommandRunner> runner) {
  if (options.cache_dir.empty()) return make_error(Errc::invalid_argument, "the compile cache directory is not set");
  if (auto made = options.file_system->create_directories(options.cache_dir); !made) return made.error();
  options.cache_dir = fs::absolute(options.cache_dir).string();
  auto header = options.file_system->read_file(options.abi_include_dir + "/drk_kernel.h");
  if (!header)
    return make_error(Errc::not_found, "the candidate ABI header is missing at '" + options.abi_include_dir +
                                           "/drk_kernel.h': set DRK_SOURCE_DIR to the drkernel source tree");
  auto version = compiler_identity(*runner, options.compiler);
  if (!version) return version.error();
  std::string identity = *version;
  // -march=native means this machine's CPU: an object built for another CPU may not run here.
  if (std::find(options.flags.begin(), options.flags.end(), "-march=native") != options.flags.end()) {
    auto target = runner->run({options.compiler, "-march=native", "-Q", "--help=target"}, std::chrono::seconds(30));
    if (!target) return target.error();
    if (!target->succeeded())
      return make_error(Errc::io_error, "the compiler '" + options.compiler +
                                            "' does not say what -march=native means here: " + target->output);
    identity += target->output;
  }
  return std::unique_ptr<Compiler>(new Compiler(std::move(options), std::move(runner), identity + *header));
}

Compiler::Compiler(CompilerOptions options, std::shared_ptr<CommandRunner> runner, std::string identity)
    : options_(std::move(options)), runner_(std::move(runner)), identity_(std::move(identity)) {
  if (options_.load_inline)
    extensions_ = std::make_unique<CandidateExtensions>(options_.compiler, extensions_dir(options_),
                                                        *options_.load_inline, *options_.file_system, runner_);
}

std::string Compiler::command_line() const {
  std::string command = options_.compiler;
  for (const auto& flag : options_.flags) command += " " + flag;
  return command;
}

std::string Compiler::cache_key(const std::string& source) const {
  return content_hash(source + '\0' + command_line() + '\0' + identity_);
}

Status Compiler::adopt(const std::string& source, const std::string& key, std::string_view object,
                       const std::string& compiler_output, const std::vector<ModuleFile>& modules) {
  if (key != cache_key(source))
    return make_error(Errc::invalid_argument, "an object built under key " + key +
                                                  " is not this compiler's object for the source (key " +
                                                  cache_key(source) + ")");
  if (!modules.empty() && !extensions_)
    return make_error(Errc::invalid_argument, "load_inline modules were shipped for a compiler that builds none (`" +
                                                  command_line() + "`)");
  for (const ModuleFile& module : modules)
    if (!is_extension_cache_path(module.path))
      return make_error(Errc::invalid_argument, "a shipped module's path '" + module.path +
                                                    "' is not a place in the extension cache (ext/<key>/<file>)");
  FileSystem& files = *options_.file_system;
  // The modules before the object: a compile that finds the object adopted finds its modules too.
  for (const ModuleFile& module : modules) {
    const fs::path path = fs::path(extension_cache_dir()) / module.path;
    if (files.exists(path.string())) continue;
    if (auto made = files.create_directories(path.parent_path().string()); !made) return made;
    if (auto written = write_file_atomically(files, path.string(), module.bytes, 0755); !written) return written;
  }
  const fs::path dir(options_.cache_dir);
  const std::string library = (dir / (key + options_.object_extension)).string();
  if (files.exists(library)) return {};
  // The output first: a reader that sees the library finds its report next to it.
  if (auto written = write_file_atomically(files, (dir / (key + ".out")).string(), compiler_output); !written)
    return written;
  return write_file_atomically(files, library, object);
}

std::string Compiler::extension_cache_dir() const { return extensions_ ? extensions_dir(options_) : std::string(); }

Result<CompiledCandidate> Compiler::compile(const std::string& source) {
  const auto started = std::chrono::steady_clock::now();
  auto compiled = compile_object(source);
  if (!compiled || !extensions_) return compiled;
  auto built = extensions_->build(source, compiled->library_path, "candidate" + options_.source_extension);
  if (!built) return built.error();
  compiled->extensions = std::move(built->modules);
  compiled->cached = compiled->cached && built->cached;
  compiled->compiler_output += built->compiler_output;
  compiled->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return compiled;
}

Result<CompiledCandidate> Compiler::compile_object(const std::string& source) {
  auto started = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  };
  std::string key = cache_key(source);
  fs::path dir(options_.cache_dir);
  fs::path library = dir / (key + options_.object_extension);
  fs::path failure_log = dir / (key + ".log");
  fs::path output_log = dir / (key + ".out");
  const std::string& extension = options_.source_extension;

  CompiledCandidate compiled{library.string(), key, true, 0.0, {}, {}};
  FileSystem& files = *options_.file_system;
  if (files.exists(library.string())) {
    if (auto output = files.read_file(output_log.string())) compiled.compiler_output = std::move(*output);
    compiled.compile_ms = elapsed_ms();
    return compiled;
  }
  if (files.exists(failure_log.string())) {
    auto log = files.read_file(failure_log.string());
    return make_error(Errc::compile_error, log ? *log : std::string("the candidate did not compile"));
  }

  std::string unique = key + "." + std::to_string(getpid()) + "." + std::to_string(sequence_++);
  fs::path source_path = dir / (unique + extension);
  fs::path temporary_library = dir / (unique + options_.object_extension);
  // What this compile leaves when it fails: nothing under the key's final names.
  auto discard = [&] {
    (void)files.remove(temporary_library.string());
    (void)files.remove(source_path.string());
  };
  if (auto written = write_file_atomically(files, source_path.string(), source); !written) return written.error();

  std::vector<std::string> argv{options_.compiler};
  argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
  argv.insert(argv.end(), {"-I" + options_.abi_include_dir, source_path.string(), "-o", temporary_library.string()});
  auto run = runner_->run(argv, options_.timeout);
  if (!run) {
    discard();
    return run.error();
  }
  std::string log = compiler_log(run->output, {{source_path.string(), "candidate" + extension}}, options_.max_log_bytes);

  if (run->timed_out) {
    discard();
    return make_error(Errc::compile_error, "the compile timed out after " + std::to_string(options_.timeout.count()) +
                                               " ms\n" + log);
  }
  if (!run->succeeded()) {
    if (log.empty()) log = "the compiler failed (exit " + std::to_string(run->exit_code) + ", signal " +
                           std::to_string(run->signal) + ") without a message";
    discard();
    // A crash of the compiler may not repeat.
    if (run->signal == 0) (void)write_file_atomically(files, failure_log.string(), log);
    return make_error(Errc::compile_error, log);
  }
  // The output first: a reader that sees the library finds its report next to it.
  if (auto written = write_file_atomically(files, output_log.string(), log); !written) {
    discard();
    return written.error();
  }
  if (auto moved = files.rename(temporary_library.string(), library.string()); !moved) {
    discard();
    return moved.error();
  }
  (void)files.rename(source_path.string(), (dir / (key + extension)).string());  // for people only
  compiled.cached = false;
  compiled.compiler_output = std::move(log);
  compiled.compile_ms = elapsed_ms();
  return compiled;
}

}  // namespace drk::compile
