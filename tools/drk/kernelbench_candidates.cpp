#include "tools/drk/kernelbench_candidates.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <system_error>
#include <tuple>

#include "tools/drk/kernelbench_names.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

using SampleKey = std::tuple<int, int, int>;  // level, problem, sample

std::vector<fs::path> python_files(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Collects candidates and refuses a second file for a sample already found.
class Collector {
 public:
  explicit Collector(std::string run_dir) : run_dir_(std::move(run_dir)) {}

  Status add(int level, int problem, int sample, const fs::path& path) {
    auto [at, inserted] = found_.emplace(SampleKey{level, problem, sample}, path.string());
    if (!inserted)
      return make_error(Errc::invalid_argument, "run directory '" + run_dir_ + "': " + at->second + " and " +
                                                    path.string() + " are both sample " + std::to_string(sample) +
                                                    " of level " + std::to_string(level) + " problem " +
                                                    std::to_string(problem) + "; keep one layout:\n" +
                                                    kernelbench_run_layouts());
    return {};
  }

  // Files of a problem tree or a flat level: each problem's files are its samples in name order.
  Status add_numbered(int level, const std::vector<fs::path>& files, std::vector<std::string>& ignored) {
    std::map<int, int> next_sample;
    for (const auto& file : files) {
      auto problem = kernelbench_problem_id_of_file(file);
      if (!problem) {
        ignored.push_back(file.string());
        continue;
      }
      if (auto added = add(level, *problem, next_sample[*problem]++, file); !added) return added;
    }
    return {};
  }

  std::vector<KernelBenchCandidate> candidates(const std::vector<int>& levels) const {
    std::vector<KernelBenchCandidate> kept;
    for (const auto& [key, path] : found_) {
      const auto [level, problem, sample] = key;
      if (levels.empty() || std::find(levels.begin(), levels.end(), level) != levels.end())
        kept.push_back({level, problem, sample, path});
    }
    return kept;
  }

 private:
  std::string run_dir_;
  std::map<SampleKey, std::string> found_;
};

}  // namespace

std::string kernelbench_run_layouts() {
  return "  RUN_DIR/level_<L>_problem_<P>_sample_<S>_kernel.py  (KernelBench's generations)\n"
         "  RUN_DIR/level<L>/<P>_<name>.py                      (a problem tree: level1/19_ReLU.py)\n"
         "  RUN_DIR/<P>_<name>.py                               (one level: RUN_DIR named level<L>, or --level L)\n"
         "  (several files of one problem in the last two are its samples 0, 1, ... by name)";
}

Result<KernelBenchRun> find_kernelbench_candidates(const std::string& run_dir, const std::vector<int>& levels) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    return make_error(Errc::not_found, "run directory '" + run_dir +
                                           "' is not a directory: give the folder of the candidates, in one of "
                                           "these layouts:\n" + kernelbench_run_layouts());
  static const std::regex kKernelBench("level_([0-9]+)_problem_([0-9]+)_sample_([0-9]+)_kernel\\.py");
  KernelBenchRun run;
  Collector collector(run_dir);
  std::vector<fs::path> flat;
  for (const auto& file : python_files(run_dir)) {
    std::smatch match;
    const std::string name = file.filename().string();
    if (std::regex_match(name, match, kKernelBench)) {
      if (auto added = collector.add(std::stoi(match[1]), std::stoi(match[2]), std::stoi(match[3]), file); !added)
        return added.error();
    } else {
      flat.push_back(file);
    }
  }
  std::vector<fs::path> level_folders;
  for (const auto& entry : fs::directory_iterator(run_dir, ec))
    if (entry.is_directory() && kernelbench_level_of_folder(entry.path())) level_folders.push_back(entry.path());
  std::sort(level_folders.begin(), level_folders.end());
  for (const auto& folder : level_folders) {
    const int level = *kernelbench_level_of_folder(folder);
    if (auto added = collector.add_numbered(level, python_files(folder), run.ignored); !added) return added.error();
  }

  const bool flat_candidates = std::any_of(
      flat.begin(), flat.end(), [](const fs::path& file) { return kernelbench_problem_id_of_file(file).has_value(); });
  if (flat_candidates) {
    fs::path folder = fs::absolute(run_dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();  // "runs/level1/"
    std::optional<int> level = kernelbench_level_of_folder(folder);
    if (!level && levels.size() == 1) level = levels.front();
    if (!level)
      return make_error(Errc::invalid_argument,
                        "run directory '" + run_dir + "' holds <P>_<name>.py candidates but their level is unknown: "
                        "name it with one --level L, or use one of these layouts:\n" + kernelbench_run_layouts());
    if (auto added = collector.add_numbered(*level, flat, run.ignored); !added) return added.error();
  } else {
    for (const auto& file : flat) run.ignored.push_back(file.string());
  }

  run.candidates = collector.candidates(levels);
  if (run.candidates.empty())
    return make_error(Errc::not_found, "run directory '" + run_dir + "' holds no candidate" +
                                           (levels.empty() ? std::string() : " of the levels asked for") +
                                           "; the layouts accepted:\n" + kernelbench_run_layouts());
  return run;
}

}  // namespace drk::tools
