#include "kernels/compile/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/compile/content_hash.h"

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (kernels/compile/CMakeLists.txt)"
#endif

namespace drk::compile {
namespace {

namespace fs = std::filesystem;

Result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::io_error, "cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return make_error(Errc::io_error, "cannot write '" + path.string() + "': is the cache directory writable?");
  return {};
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string default_abi_include_dir() {
  if (const char* dir = std::getenv("DRK_SOURCE_DIR"); dir && *dir) return std::string(dir) + "/kernels/abi";
  return std::string(DRK_SOURCE_DIR) + "/kernels/abi";
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

CompilerOptions compiler_options_for(msg::Language language) {
  return language == msg::Language::CUDA ? nvcc_compiler_options() : CompilerOptions{};
}

Result<std::unique_ptr<Compiler>> Compiler::create(CompilerOptions options, std::shared_ptr<CommandRunner> runner) {
  std::error_code ec;
  if (options.cache_dir.empty()) return make_error(Errc::invalid_argument, "the compile cache directory is not set");
  fs::create_directories(options.cache_dir, ec);
  if (ec) return make_error(Errc::io_error, "cannot create the compile cache '" + options.cache_dir + "': " + ec.message());
  options.cache_dir = fs::absolute(options.cache_dir).string();
  auto header = read_file(fs::path(options.abi_include_dir) / "drk_kernel.h");
  if (!header)
    return make_error(Errc::not_found, "the candidate ABI header is missing at '" + options.abi_include_dir +
                                           "/drk_kernel.h': set DRK_SOURCE_DIR to the drkernel source tree");
  auto version = runner->run({options.compiler, "--version"}, std::chrono::seconds(30));
  if (!version) return version.error();
  if (!version->succeeded())
    return make_error(Errc::io_error, "the compiler '" + options.compiler + "' does not run: " + version->output);
  std::string identity = version->output;
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

std::string Compiler::command_line() const {
  std::string command = options_.compiler;
  for (const auto& flag : options_.flags) command += " " + flag;
  return command;
}

std::string Compiler::cache_key(const std::string& source) const {
  return content_hash(source + '\0' + command_line() + '\0' + identity_);
}

Status Compiler::adopt(const std::string& source, const std::string& key, std::string_view object,
                       const std::string& compiler_output) {
  if (key != cache_key(source))
    return make_error(Errc::invalid_argument, "an object built under key " + key +
                                                  " is not this compiler's object for the source (key " +
                                                  cache_key(source) + ")");
  fs::path dir(options_.cache_dir);
  fs::path library = dir / (key + ".so");
  std::error_code ec;
  if (fs::exists(library, ec)) return {};
  fs::path temporary = dir / (key + "." + std::to_string(getpid()) + "." + std::to_string(sequence_++) + ".so");
  if (auto written = write_file(temporary, object); !written) return written.error();
  if (auto written = write_file(dir / (key + ".out"), compiler_output); !written) {
    fs::remove(temporary, ec);
    return written.error();
  }
  fs::rename(temporary, library, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return make_error(Errc::io_error,
                      "cannot move the shipped object into '" + library.string() + "': " + ec.message());
  }
  return {};
}

Result<CompiledCandidate> Compiler::compile(const std::string& source) {
  auto started = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  };
  std::string key = cache_key(source);
  fs::path dir(options_.cache_dir);
  fs::path library = dir / (key + ".so");
  fs::path failure_log = dir / (key + ".log");
  fs::path output_log = dir / (key + ".out");
  const std::string& extension = options_.source_extension;

  CompiledCandidate compiled{library.string(), key, true, 0.0, {}};
  std::error_code ec;
  if (fs::exists(library, ec)) {
    if (auto output = read_file(output_log)) compiled.compiler_output = std::move(*output);
    compiled.compile_ms = elapsed_ms();
    return compiled;
  }
  if (fs::exists(failure_log, ec)) {
    auto log = read_file(failure_log);
    return make_error(Errc::compile_error, log ? *log : std::string("the candidate did not compile"));
  }

  std::string unique = key + "." + std::to_string(getpid()) + "." + std::to_string(sequence_++);
  fs::path source_path = dir / (unique + extension);
  fs::path temporary_library = dir / (unique + ".so");
  if (auto written = write_file(source_path, source); !written) return written.error();

  std::vector<std::string> argv{options_.compiler};
  argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
  argv.insert(argv.end(), {"-I" + options_.abi_include_dir, source_path.string(), "-o", temporary_library.string()});
  auto run = runner_->run(argv, options_.timeout);
  if (!run) {
    fs::remove(source_path, ec);
    return run.error();
  }
  std::string log = run->output;
  replace_all(log, source_path.string(), "candidate" + extension);
  if (log.size() > options_.max_log_bytes) log = log.substr(0, options_.max_log_bytes) + "\n[compiler output truncated]";

  if (run->timed_out) {
    fs::remove(source_path, ec);
    fs::remove(temporary_library, ec);
    return make_error(Errc::compile_error, "the compile timed out after " + std::to_string(options_.timeout.count()) +
                                               " ms\n" + log);
  }
  if (!run->succeeded()) {
    if (log.empty()) log = "the compiler failed (exit " + std::to_string(run->exit_code) + ", signal " +
                           std::to_string(run->signal) + ") without a message";
    fs::remove(temporary_library, ec);
    fs::remove(source_path, ec);
    if (run->signal == 0) (void)write_file(failure_log, log);  // a crash of the compiler may not repeat
    return make_error(Errc::compile_error, log);
  }
  // The output first: a reader that sees the library finds its report next to it.
  if (auto written = write_file(output_log, log); !written) return written.error();
  fs::rename(temporary_library, library, ec);
  if (ec) return make_error(Errc::io_error, "cannot move the compiled candidate into '" + library.string() + "': " + ec.message());
  fs::rename(source_path, dir / (key + extension), ec);
  compiled.cached = false;
  compiled.compiler_output = std::move(log);
  compiled.compile_ms = elapsed_ms();
  return compiled;
}

}  // namespace drk::compile
