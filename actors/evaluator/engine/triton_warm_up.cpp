#include "actors/evaluator/engine/triton_warm_up.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "actors/evaluator/engine/seed_mix.h"
#include "actors/evaluator/engine/separate_call.h"
#include "base/file_system.h"

namespace drk::evaluator {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kWarmUpSeedSalt = 0x7a17a3u;   // the warm-up call's inputs: a draw of their own
constexpr uint64_t kMaxCacheBytes = uint64_t{512} << 20;
constexpr size_t kMaxCacheFiles = 20000;

}  // namespace

Status copy_triton_cache(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  uint64_t bytes = 0;
  size_t files = 0;
  for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path target = to / fs::relative(it->path(), from);
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_directory(status)) {
      fs::create_directories(target, ec);
    } else if (fs::is_regular_file(status)) {
      bytes += it->file_size(ec);
      if (++files > kMaxCacheFiles || bytes > kMaxCacheBytes)
        return make_error(Errc::invalid_argument, "the Triton warm-up left more than " +
                                                      std::to_string(kMaxCacheFiles) + " files or " +
                                                      std::to_string(kMaxCacheBytes >> 20) + " MiB in its cache");
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
    }
    if (ec) break;
  }
  if (ec) return make_error(Errc::io_error, "cannot copy the Triton warm-up's cache " + from.string() + ": " + ec.message());
  return {};
}

Status relocate_triton_groups(const fs::path& cache_root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path group = it->path();
    if (!it->is_regular_file(ec) || !group.filename().string().starts_with("__grp__")) continue;
    auto text = real_file_system().read_file(group.string());
    if (!text) return text.error();
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("child_paths") || !json["child_paths"].is_object())
      return make_error(Errc::invalid_argument, "the Triton cache group " + group.string() + " is not Triton's JSON");
    for (auto& [name, child] : json["child_paths"].items()) {
      if (!child.is_string()) continue;
      // Triton's paths are CACHE/KEY/FILE: the same key's folder and file here.
      const fs::path old_path(child.get<std::string>());
      const fs::path moved = cache_root / old_path.parent_path().filename() / old_path.filename();
      if (fs::is_regular_file(fs::symlink_status(moved, ec))) child = moved.string();
    }
    // Read by the candidate's sandbox, whose user is not this process's.
    if (auto written = write_file_atomically(real_file_system(), group.string(), json.dump(), 0644); !written)
      return written;
  }
  if (ec) return make_error(Errc::io_error, "cannot read the Triton cache " + cache_root.string() + ": " + ec.message());
  return {};
}

std::vector<TritonKernel> triton_kernels(const fs::path& cache_root) {
  std::map<std::string, TritonKernel> by_name;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path metadata = it->path();
    if (!it->is_regular_file(ec) || metadata.extension() != ".json" ||
        metadata.filename().string().starts_with("__grp__"))
      continue;
    fs::path cubin = metadata;
    cubin.replace_extension(".cubin");
    if (!fs::is_regular_file(fs::symlink_status(cubin, ec))) continue;
    auto text = real_file_system().read_file(metadata.string());
    if (!text) continue;
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("name") || !json["name"].is_string()) continue;
    TritonKernel kernel{json["name"].get<std::string>()};
    if (kernel.name.empty() || kernel.name.starts_with("_Z")) continue;
    if (json.contains("shared") && json["shared"].is_number_unsigned()) kernel.shared_bytes = json["shared"].get<uint32_t>();
    by_name[kernel.name] = kernel;
  }
  std::vector<TritonKernel> kernels;
  for (auto& [name, kernel] : by_name) kernels.push_back(std::move(kernel));
  return kernels;
}

void record_triton_kernels(const std::vector<TritonKernel>& kernels, EvaluationRun& run) {
  if (kernels.empty()) return;
  struct Entry {
    std::string name;
    uint32_t registers, spill_store, spill_load, stack, shared, constant;
  };
  std::vector<Entry> entries;
  for (auto r : run.out.getResources().asReader())
    entries.push_back({r.getName(), r.getRegisters(), r.getSpillStoreBytes(), r.getSpillLoadBytes(),
                       r.getStackFrameBytes(), r.getSharedBytes(), r.getConstantBytes()});
  for (const TritonKernel& kernel : kernels) {
    entries.push_back({kernel.name, 0, 0, 0, 0, kernel.shared_bytes, 0});
    run.own_kernels.insert(kernel.name);
  }
  auto resources = run.out.initResources(static_cast<unsigned>(entries.size()));
  for (unsigned k = 0; k < entries.size(); ++k) {
    auto entry = resources[k];
    entry.setName(entries[k].name);
    entry.setRegisters(entries[k].registers);
    entry.setSpillStoreBytes(entries[k].spill_store);
    entry.setSpillLoadBytes(entries[k].spill_load);
    entry.setStackFrameBytes(entries[k].stack);
    entry.setSharedBytes(entries[k].shared);
    entry.setConstantBytes(entries[k].constant);
  }
}

bool uses_triton(const std::string& python_source) {
  static const std::regex imports_triton(R"((^|\n)\s*(import\s+triton\b|from\s+triton\b))");
  return std::regex_search(python_source, imports_triton);
}

Result<TemporaryDirectory> triton_warm_up(const EngineOptions& options, const compile::CompiledCandidate& compiled,
                                          EvaluationRun& run, SandboxSession& session, HostTensorStore& shared,
                                          const std::function<void(msg::LoadRequest::Builder)>& fill_load) {
  // Without a user of its own, a sandbox that may write files could write whatever the Evaluator's
  // user may.
  if (getuid() != 0 || !options.sandbox.own_user)
    return make_error(Errc::unsupported,
                      "a Triton candidate compiles its kernels in a warm-up sandbox that may write files, which runs "
                      "only under a user of its own: run the Evaluator as root (and without eval.hardware_metrics, "
                      "whose sandboxes keep the Evaluator's user)");
  auto cache = TemporaryDirectory::create("drk-triton-cache");
  if (!cache) return cache.error();
  // Readable by the candidate's sandbox, whose user is not this process's.
  fs::permissions(cache->path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
  SeparateCallSpec spec;
  spec.sandbox = options.sandbox;
  spec.sandbox.allow_compilers = true;
  spec.max_threads = options.max_threads;
  spec.input_seed = mix(run.seed, kWarmUpSeedSalt);
  spec.timeout = options.triton_warm_up_timeout;
  spec.fill_load = fill_load;
  Status copied;
  spec.after_call = [&](const std::string& directory) {
    const fs::path left = fs::path(directory) / "triton-cache";
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(left, ec))) copied = copy_triton_cache(left, cache->path());
  };
  std::string note;
  auto call = call_separately(spec, compiled, run, session, shared, note);
  if (!call) return make_error(Errc::io_error, "the Triton warm-up's sandbox: " + note);
  if (!call->ran)
    return make_error(Errc::invalid_argument,
                      "the Triton warm-up call (one call in a sandbox that may run Triton's compilers) failed: " +
                          (call->failure.empty() ? describe_exit(call->exit) : call->failure));
  if (!copied) return copied.error();
  return std::move(*cache);
}

}  // namespace drk::evaluator
