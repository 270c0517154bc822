#include "kernels/compile/candidate_extensions.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "kernels/compile/compiler_log.h"
#include "kernels/compile/inline_extension.h"
#include "kernels/compile/torch_facts_cache.h"

namespace drk::compile {
namespace {

constexpr size_t kMaxMessageBytes = 16 * 1024;

// What the candidate can fix becomes its compile failure, its file named as it knows it; the rest
// (a Python or a compiler that does not run, a cache that cannot be written) stays a fault.
Error as_candidate_error(Error error, const std::string& path, const std::string& display_name) {
  if (error.code != Errc::invalid_argument && error.code != Errc::unsupported && error.code != Errc::compile_error)
    return error;
  return Error{Errc::compile_error, compiler_log(std::move(error.message), {{path, display_name}}, kMaxMessageBytes)};
}

}  // namespace

bool is_extension_cache_path(std::string_view path) {
  constexpr std::string_view kRoot = "ext/";
  constexpr size_t kKeyDigits = 64;
  if (path.substr(0, kRoot.size()) != kRoot) return false;
  path.remove_prefix(kRoot.size());
  if (path.size() <= kKeyDigits + 1 || path[kKeyDigits] != '/') return false;
  for (char c : path.substr(0, kKeyDigits))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  const std::string_view file = path.substr(kKeyDigits + 1);
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!word(file.front()) || file.find("..") != std::string_view::npos) return false;
  return std::all_of(file.begin(), file.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
}

CandidateExtensions::CandidateExtensions(std::string python, std::string cache_dir, LoadInlineOptions options,
                                         FileSystem& file_system, std::shared_ptr<CommandRunner> runner)
    : python_(std::move(python)), cache_dir_(std::move(cache_dir)), options_(std::move(options)),
      file_system_(file_system), runner_(std::move(runner)) {}

Result<TorchExtensionBuilder*> CandidateExtensions::builder() {
  std::lock_guard lock(builder_mutex_);
  if (builder_) return builder_.get();
  auto facts = cached_torch_facts(python_, cache_dir_, file_system_, runner_);
  if (!facts) return facts.error();
  TorchExtensionOptions options;
  options.cache_dir = cache_dir_;
  options.cuda_architecture = options_.cuda_architecture;
  options.timeout = options_.timeout;
  options.file_system = &file_system_;
  auto made = TorchExtensionBuilder::create(std::move(options), std::move(*facts), runner_);
  if (!made) return made.error();
  builder_ = std::move(*made);
  return builder_.get();
}

Result<CandidateExtensions::Built> CandidateExtensions::build(const std::string& source, const std::string& path,
                                                              const std::string& display_name) {
  Built built;
  if (source.find("load_inline") == std::string::npos) return built;
  auto calls = extract_load_inline(python_, path, runner_);
  if (!calls) return as_candidate_error(calls.error(), path, display_name);
  if (calls->empty()) return built;
  auto builder = this->builder();
  if (!builder) return builder.error();
  std::map<std::string, std::pair<std::string, int>> built_names;  // name -> its module and first line
  for (const InlineExtension& call : *calls) {
    auto module = (*builder)->build(call);
    if (!module) return as_candidate_error(module.error(), path, display_name);
    const auto [first, fresh] = built_names.try_emplace(call.name, module->module_path, call.line);
    if (!fresh && first->second.first != module->module_path)
      return make_error(Errc::compile_error,
                        display_name + ":" + std::to_string(call.line) + ": load_inline(name='" + call.name +
                            "') builds another extension than the call of line " +
                            std::to_string(first->second.second) +
                            " with that name: give each extension a name of its own");
    built.modules.push_back({call.name, module->module_path});
    built.cached = built.cached && module->cached;
    built.compiler_output += module->compiler_output;
    // Why a CUDA build took nvcc's whole-file minute, where people read the build's output.
    if (!module->cached && !module->cuda_whole_reason.empty())
      built.compiler_output += "drkernel: extension '" + call.name + "': cuda.cu compiled whole by nvcc, not split (" +
                               module->cuda_whole_reason + ")\n";
  }
  return built;
}

}  // namespace drk::compile
