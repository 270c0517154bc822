#include "tools/drk/kernelbench_import.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <tuple>

#include "base/json_text.h"
#include "base/parallel_for.h"
#include "base/temporary_directory.h"
#include "kernels/compile/content_hash.h"
#include "tools/drk/kernelbench_names.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

// Problems described by one Python process: torch loads once per batch (2-3 s), and progress
// shows after each batch.
constexpr size_t kProblemsPerProbe = 8;
constexpr size_t kMostDefaultImportJobs = 4;

std::optional<KernelBenchFile> problem_file(const fs::path& file, int level) {
  auto problem_id = kernelbench_problem_id_of_file(file);
  if (!problem_id) return std::nullopt;
  return KernelBenchFile{level, *problem_id, file.stem().string(), fs::absolute(file).lexically_normal().string()};
}

void add_level(const fs::path& folder, int level, std::vector<KernelBenchFile>& files) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file())
      if (auto file = problem_file(entry.path(), level)) files.push_back(*file);
}

kernels::KernelBenchFailure failure_from(const Json& error) {
  return {error.value("stage", std::string("probe")), error.value("message", std::string())};
}

std::vector<kernels::KernelBenchValue> values_from(const Json& list) {
  std::vector<kernels::KernelBenchValue> values;
  if (!list.is_array()) return values;
  for (const auto& entry : list) {
    kernels::KernelBenchValue value;
    value.tensor = entry.value("kind", std::string()) == "tensor";
    if (value.tensor) {
      value.shape = entry.at("shape").get<std::vector<int64_t>>();
      value.dtype = entry.at("dtype").get<std::string>();
    } else {
      value.value = json_text(entry.at("value"));
    }
    values.push_back(std::move(value));
  }
  return values;
}

// The record of `file` from the probe's line about it.
kernels::KernelBenchProblem problem_from(const KernelBenchFile& file, const Json& line) {
  kernels::KernelBenchProblem problem;
  problem.name = kernels::kernelbench_task_name(file.level, file.stem);
  problem.level = file.level;
  problem.problem_id = file.problem_id;
  problem.source = file.path;
  problem.family = kernels::kernelbench_family(file.stem);
  problem.title = line.value("title", std::string());
  problem.torch_version = line.value("torch", std::string());
  if (line.contains("error")) {
    problem.failure = failure_from(line["error"]);
    return problem;
  }
  try {
    problem.init_inputs = json_text(line.value("init_inputs", Json::array()));
    problem.inputs = values_from(line.value("inputs", Json::array()));
    problem.outputs = values_from(line.value("outputs", Json::array()));
    problem.parameters = line.value("parameters", int64_t{0});
    if (line.contains("flops") && line["flops"].is_number()) problem.flops = line["flops"].get<double>();
    problem.min_bytes = line.value("min_bytes", 0.0);
  } catch (const Json::exception& e) {
    problem.failure = kernels::KernelBenchFailure{"probe", std::string("the probe's description is malformed: ") + e.what()};
    return problem;
  }
  if (line.contains("reference")) {
    const Json& run = line["reference"];
    kernels::KernelBenchReferenceRun reference;
    reference.device = run.value("device", std::string());
    if (run.contains("error")) {
      reference.failure = failure_from(run["error"]);
    } else {
      reference.ms = run.value("ms", 0.0);
      reference.peak_bytes = run.value("peak_bytes", int64_t{0});
    }
    problem.reference_run = reference;
  }
  return problem;
}

// The last lines of what a dead probe printed, for the record.
std::string tail_of(const std::string& output) {
  constexpr size_t kKeep = 600;
  std::string tail = output.size() > kKeep ? "..." + output.substr(output.size() - kKeep) : output;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

// Probes files[begin, end) in as many processes as it takes (a new one after each that dies),
// writes each problem's record and hands it to `recorded` with its index in `files`. `lines_stem`:
// where the probes write their lines (one file per attempt); `device_lock`: the file every probe of
// the import locks around its references' runs on the device.
Status probe_batch(const std::vector<KernelBenchFile>& files, size_t begin, size_t end, const KernelBenchImport& import,
                   compile::CommandRunner& runner, FileSystem& file_system, const std::string& lines_stem,
                   const std::string& device_lock,
                   const std::function<void(size_t, kernels::KernelBenchProblem)>& recorded) {
  size_t next = begin;
  for (int attempt = 0; next < end; ++attempt) {
    const std::string lines_path = lines_stem + "-" + std::to_string(attempt) + ".jsonl";
    std::vector<std::string> argv = {import.python, kernels::kernelbench_probe_script(), "--out", lines_path,
                                     "--seed", std::to_string(import.seed), "--seconds-per-problem",
                                     std::to_string(import.per_problem.count())};
    if (import.run_device) argv.insert(argv.end(), {"--run", *import.run_device, "--device-lock", device_lock});
    for (size_t i = next; i < end; ++i) argv.push_back(files[i].path);
    // The probe keeps each problem to per_problem itself; this bound is for a probe that hangs
    // where Python's alarm cannot reach it (inside one long native call).
    const auto budget = import.per_problem * static_cast<int64_t>(end - next) + std::chrono::seconds(60);
    auto run = runner.run(argv, std::chrono::duration_cast<std::chrono::milliseconds>(budget));
    if (!run) return run.error();

    std::vector<Json> lines;
    if (auto text = file_system.read_file(lines_path)) {
      size_t start = 0;
      for (size_t line_end; (line_end = text->find('\n', start)) != std::string::npos; start = line_end + 1) {
        try {
          lines.push_back(Json::parse(text->substr(start, line_end - start)));
        } catch (const Json::exception&) {
          break;  // a line cut short by the process's death: its problem is the one it was on
        }
      }
    }
    for (size_t i = 0; i <= lines.size() && next < end; ++i, ++next) {
      const KernelBenchFile& file = files[next];
      kernels::KernelBenchProblem problem;
      if (i < lines.size()) {
        problem = problem_from(file, lines[i]);
      } else {
        // The problem the probe was on when it ended: recorded as failed, so that every attempt
        // moves on by one problem at least.
        problem = problem_from(file, Json::object());
        const std::string how = run->timed_out ? "ran past " + std::to_string(budget.count()) + " s"
                                : run->signal  ? "died of signal " + std::to_string(run->signal)
                                               : "exited with " + std::to_string(run->exit_code);
        problem.failure = kernels::KernelBenchFailure{"probe", "the probe " + how + " on this problem: " +
                                                                   tail_of(run->output)};
      }
      auto source = file_system.read_file(file.path);
      if (!source) return source.error();
      problem.source_sha256 = compile::content_hash(*source);
      const std::string folder = import.into + "/level" + std::to_string(file.level);
      if (auto made = file_system.create_directories(folder); !made) return made.error();
      if (auto written = write_file_atomically(file_system, folder + "/" + file.stem + ".yaml",
                                               kernels::kernelbench_problem_yaml(problem));
          !written)
        return written.error();
      recorded(next, std::move(problem));
    }
  }
  return {};
}

}  // namespace

Result<std::vector<KernelBenchFile>> find_kernelbench_files(const std::string& path) {
  std::error_code ec;
  const fs::path root(path);
  std::vector<KernelBenchFile> files;
  if (fs::is_regular_file(root, ec)) {
    auto file = problem_file(root, kernelbench_level_of_folder(fs::absolute(root).parent_path()).value_or(0));
    if (!file)
      return make_error(Errc::invalid_argument, "'" + path + "' is not a KernelBench problem file: its name must be "
                                                "ID_Name.py (19_ReLU.py)");
    files.push_back(*file);
    return files;
  }
  if (!fs::is_directory(root, ec))
    return make_error(Errc::not_found, "'" + path + "' does not exist: give a KernelBench checkout, a levelN folder "
                                       "or one problem file");
  if (auto level = kernelbench_level_of_folder(fs::absolute(root).lexically_normal())) {
    add_level(root, *level, files);
  } else {
    // A checkout keeps its levels in KernelBench/; a folder of levels holds them itself.
    const fs::path base = fs::is_directory(root / "KernelBench", ec) ? root / "KernelBench" : root;
    for (const auto& entry : fs::directory_iterator(base, ec))
      if (auto level = kernelbench_level_of_folder(entry.path()); level && entry.is_directory())
        add_level(entry.path(), *level, files);
  }
  if (files.empty())
    return make_error(Errc::not_found, "'" + path + "' holds no KernelBench problem: expected levelN/ID_Name.py files "
                                       "(a KernelBench checkout, its KernelBench/ folder, or a levelN folder)");
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::tie(a.level, a.problem_id, a.stem) < std::tie(b.level, b.problem_id, b.stem);
  });
  return files;
}

Result<std::string> find_python_with_torch(const std::optional<std::string>& requested,
                                           compile::CommandRunner& runner) {
  std::vector<std::string> candidates;
  if (requested) {
    candidates.push_back(*requested);
  } else if (const char* env = std::getenv("DRK_PYTHON"); env && *env) {
    candidates.push_back(env);
  } else {
    candidates = {"python3", "/usr/bin/python3"};
  }
  std::string tried;
  for (const auto& python : candidates) {
    auto run = runner.run({python, "-c", "import torch"}, std::chrono::seconds(120));
    if (run && run->succeeded()) return python;
    const std::string why = run ? tail_of(run->output) : run.error().message;
    tried += "\n  " + python + ": " + (why.empty() ? "cannot import torch" : why);
  }
  return make_error(Errc::not_found, "no Python that can import torch; tried:" + tried +
                                         "\ninstall Debian's python3-torch (apt-get install python3-torch), or name "
                                         "an interpreter with --python or DRK_PYTHON");
}

size_t default_import_jobs() {
  return std::clamp<size_t>(std::thread::hardware_concurrency() / 4, 1, kMostDefaultImportJobs);
}

Result<std::vector<kernels::KernelBenchProblem>> import_kernelbench(
    const std::vector<KernelBenchFile>& files, const KernelBenchImport& import, compile::CommandRunner& runner,
    FileSystem& file_system, const std::function<void(const kernels::KernelBenchProblem&)>& progress) {
  auto scratch = TemporaryDirectory::create("drk-kernelbench");
  if (!scratch) return scratch.error();
  // Batches small enough that every job has one, at most kProblemsPerProbe each.
  const size_t jobs = std::max<size_t>(1, std::min(import.jobs, files.size()));
  const size_t per_batch = std::clamp<size_t>((files.size() + jobs - 1) / jobs, 1, kProblemsPerProbe);
  const size_t batches = (files.size() + per_batch - 1) / per_batch;
  std::vector<std::optional<kernels::KernelBenchProblem>> records(files.size());
  std::mutex mutex;
  Status failed;
  parallel_for(batches, jobs, [&](size_t batch, size_t) {
    {
      std::lock_guard lock(mutex);
      if (!failed) return;
    }
    const size_t begin = batch * per_batch, end = std::min(files.size(), begin + per_batch);
    Status probed = probe_batch(files, begin, end, import, runner, file_system,
                                scratch->path() + "/probe-" + std::to_string(batch), scratch->path() + "/device.lock",
                                [&](size_t index, kernels::KernelBenchProblem problem) {
                                  std::lock_guard lock(mutex);
                                  if (progress) progress(problem);
                                  records[index] = std::move(problem);
                                });
    if (!probed) {
      std::lock_guard lock(mutex);
      if (failed) failed = probed;
    }
  });
  if (!failed) return failed.error();
  std::vector<kernels::KernelBenchProblem> imported;
  imported.reserve(files.size());
  for (auto& record : records) imported.push_back(std::move(*record));
  return imported;
}

}  // namespace drk::tools
