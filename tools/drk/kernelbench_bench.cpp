#include "tools/drk/kernelbench_bench.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "base/file_system.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "runtime/log.h"
#include "runtime/progress_meter.h"
#include "tools/drk/commands.h"
#include "tools/drk/kernelbench_candidates.h"
#include "tools/drk/kernelbench_eval_results.h"
#include "tools/drk/kernelbench_import.h"
#include "tools/drk/kernelbench_score.h"
#include "tools/drk/parallel_evaluations.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;
using ProblemKey = std::pair<int, int>;  // level, problem id
using Problems = std::map<ProblemKey, kernels::KernelBenchProblem>;
using SampleKey = std::tuple<int, int, int>;  // level, problem id, sample id

// KernelBench's harness checks itself the same way: the reference's own Model as ModelNew.
constexpr const char* kModelAsModelNew =
    "\n\n# drk bench kernelbench --references: the problem's own Model as the candidate\nModelNew = Model\n";

// One sample to record: evaluated (`input`) or not (`not_evaluated` says why).
struct Sample {
  int level = 0;
  int problem_id = 0;
  int sample_id = 0;
  std::string task;  // kernelbench/levelL/P_Name
  std::optional<evaluator::CandidateInput> input;
  std::string not_evaluated;
};

std::string sample_label(const Sample& sample) {
  return "level " + std::to_string(sample.level) + " problem " + std::to_string(sample.problem_id) + " sample " +
         std::to_string(sample.sample_id) + " (" + sample.task.substr(sample.task.rfind('/') + 1) + ")";
}

bool wanted_level(const std::vector<int>& levels, int level) {
  return levels.empty() || std::find(levels.begin(), levels.end(), level) != levels.end();
}

// eval_results.json, one file per level when there are several; each rewritten after an entry.
class ResultFiles {
 public:
  ResultFiles(std::string out, bool per_level) : out_(std::move(out)), per_level_(per_level) {}

  Status add(const Sample& sample, Json entry) {
    scored_.push_back(scored_sample(sample.level, sample.problem_id, entry));
    entries_[sample.level][sample.problem_id].push_back(std::move(entry));
    if (out_.empty()) return {};
    return write_file_atomically(real_file_system(), path(sample.level),
                                 kernelbench_results_text(entries_[sample.level]));
  }

  std::string path(int level) const {
    if (!per_level_) return out_;
    const fs::path out(out_);
    return (out.parent_path() / (out.stem().string() + "_level" + std::to_string(level) + out.extension().string()))
        .string();
  }

  // Takes in the entries of `levels`' files written before (a file not there yet has none) and
  // returns their samples' keys. parse_error naming a file that is not KernelBench's results.
  Result<std::set<SampleKey>> resume(const std::set<int>& levels) {
    std::set<SampleKey> done;
    for (int level : levels) {
      const std::string file = path(level);
      auto text = real_file_system().read_file(file);
      if (!text) {
        if (text.error().code == Errc::not_found) continue;
        return text.error();
      }
      const Json read = Json::parse(*text, nullptr, false);
      if (!read.is_object())
        return make_error(Errc::parse_error, "'" + file + "' is not an eval_results.json to resume: move it away, "
                                             "or run without --resume to write it anew");
      for (const auto& [problem_text, entries] : read.items()) {
        int problem_id = 0;
        if (std::sscanf(problem_text.c_str(), "%d", &problem_id) != 1 || !entries.is_array())
          return make_error(Errc::parse_error, "'" + file + "' has an entry '" + problem_text +
                                                   "' that is not a problem id with a list of samples: move the file "
                                                   "away, or run without --resume");
        for (const Json& entry : entries) {
          scored_.push_back(scored_sample(level, problem_id, entry));
          entries_[level][problem_id].push_back(entry);
          done.insert({level, problem_id, entry.value("sample_id", 0)});
        }
      }
    }
    return done;
  }

  const std::string& out() const { return out_; }
  const std::vector<ScoredSample>& scored() const { return scored_; }
  const std::map<int, std::map<int, std::vector<Json>>>& entries() const { return entries_; }

 private:
  std::string out_;
  bool per_level_;
  std::vector<ScoredSample> scored_;
  std::map<int, std::map<int, std::vector<Json>>> entries_;
};

Result<Problems> imported_problems(const std::string& directory) {
  auto records = kernels::load_kernelbench_problems(directory);
  if (!records) return records.error();
  Problems problems;
  for (auto& record : *records) problems.emplace(ProblemKey{record.level, record.problem_id}, std::move(record));
  return problems;
}

// Imports the problem files of `from` that `wanted` selects into `into`, adding them to `problems`.
Status import_problems(const std::string& from, const std::string& into,
                       const std::function<bool(const KernelBenchFile&)>& wanted, Problems& problems,
                       std::ostream& out) {
  auto files = find_kernelbench_files(from);
  if (!files) return files.error();
  std::vector<KernelBenchFile> chosen;
  std::copy_if(files->begin(), files->end(), std::back_inserter(chosen), wanted);
  if (chosen.empty()) return {};
  auto runner = compile::system_command_runner();
  auto python = find_python_with_torch(std::nullopt, *runner);
  if (!python) return python.error();
  KernelBenchImport import;
  import.into = into;
  import.python = *python;
  import.jobs = default_import_jobs();
  out << "importing " << chosen.size() << " problems from " << from << " into " << into << "\n";
  auto imported = import_kernelbench(chosen, import, *runner, real_file_system(), [&](const auto& problem) {
    out << "  " << problem.name << ": " << kernels::kernelbench_status_text(problem) << "\n" << std::flush;
  });
  if (!imported) return imported.error();
  for (auto& problem : *imported)
    problems.insert_or_assign(ProblemKey{problem.level, problem.problem_id}, std::move(problem));
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

evaluator::CandidateInput candidate_input(const Sample& sample, const evaluator::EngineOptions& engine,
                                          std::string source, judging::Backend backend) {
  evaluator::CandidateInput input;
  input.python_backend = backend;
  input.id = sample.task + "/sample_" + std::to_string(sample.sample_id);
  input.task = sample.task;
  input.device = engine.device;
  input.python = true;
  input.source = std::move(source);
  return input;
}

// The samples of a run directory, each mapped to its imported problem (importing the missing ones
// from options.import_from).
Result<std::vector<Sample>> candidate_samples(const KernelBenchBenchOptions& options, const std::string& into,
                                              Problems& problems, std::ostream& out) {
  auto run = find_kernelbench_candidates(options.candidates, options.levels);
  if (!run) return run.error();
  if (!run->ignored.empty()) {
    out << "ignored " << run->ignored.size() << " .py files that fit no layout:";
    for (const auto& file : run->ignored) out << " " << file;
    out << "\n";
  }
  auto missing = [&](int level, int problem_id) { return !problems.contains({level, problem_id}); };
  std::set<ProblemKey> wanted;
  for (const auto& candidate : run->candidates)
    if (missing(candidate.level, candidate.problem_id)) wanted.insert({candidate.level, candidate.problem_id});
  if (!wanted.empty() && !options.import_from.empty()) {
    auto is_wanted = [&](const KernelBenchFile& file) { return wanted.contains({file.level, file.problem_id}); };
    auto imported = import_problems(options.import_from, into, is_wanted, problems, out);
    if (!imported) return imported.error();
  }
  std::string not_imported;
  std::vector<Sample> samples;
  for (const auto& candidate : run->candidates) {
    if (missing(candidate.level, candidate.problem_id)) {
      not_imported += "\n  level " + std::to_string(candidate.level) + " problem " +
                      std::to_string(candidate.problem_id) + " (" + candidate.path + ")";
      continue;
    }
    Sample sample{candidate.level, candidate.problem_id, candidate.sample_id,
                  problems.at({candidate.level, candidate.problem_id}).name, std::nullopt, ""};
    std::ifstream readable(candidate.path);
    if (readable)
      sample.input = candidate_input(sample, options.engine, read_text(candidate.path), options.backend);
    else
      sample.not_evaluated = "the candidate file " + candidate.path + " cannot be read";
    samples.push_back(std::move(sample));
  }
  if (!not_imported.empty()) {
    std::string fix = "import them first (drk kernelbench import KERNELBENCH_CHECKOUT --into " + into +
                      "), or name the checkout with --import-from";
    if (!options.import_from.empty()) fix = options.import_from + " does not hold them: " + fix;
    if (find_kernelbench_files(into))
      fix += " (" + into + " holds KernelBench problem files: it is a checkout, not an import folder; pass it as "
                           "--import-from)";
    return make_error(Errc::not_found, "no problem imported into " + into + " for these candidates:" + not_imported +
                                           "\n" + fix);
  }
  return samples;
}

// Every imported problem of the levels asked for, its own Model as the candidate.
Result<std::vector<Sample>> reference_samples(const KernelBenchBenchOptions& options, const std::string& into,
                                              Problems& problems, std::ostream& out) {
  if (!options.import_from.empty()) {
    auto imported = import_problems(
        options.import_from, into,
        [&](const KernelBenchFile& file) {
          return wanted_level(options.levels, file.level) && !problems.contains({file.level, file.problem_id});
        },
        problems, out);
    if (!imported) return imported.error();
  }
  std::vector<Sample> samples;
  for (const auto& [key, problem] : problems) {
    if (!wanted_level(options.levels, problem.level)) continue;
    Sample sample{problem.level, problem.problem_id, 0, problem.name, std::nullopt, ""};
    std::ifstream readable(problem.source);
    if (problem.failure)
      sample.not_evaluated = "the problem cannot run: " + problem.failure->stage + ": " + problem.failure->message;
    else if (!readable)
      sample.not_evaluated = "its source " + problem.source + " cannot be read: import it again (drk kernelbench import)";
    else
      sample.input =
          candidate_input(sample, options.engine, read_text(problem.source) + kModelAsModelNew, judging::Backend::pytorch);
    samples.push_back(std::move(sample));
  }
  if (samples.empty())
    return make_error(Errc::not_found, "no problem imported into " + into +
                                           (options.levels.empty() ? std::string() : " at the levels asked for") +
                                           ": import them first (drk kernelbench import KERNELBENCH_CHECKOUT --into " +
                                           into + "), or name the checkout with --import-from");
  return samples;
}

// A progress line per finished sample: what it came to, what is left, when the rest should end
// (from the evaluations so far, counted by the meter: samples recorded without one take no time).
class Progress {
 public:
  Progress(size_t total, size_t evaluations, std::ostream& out)
      : total_(total), out_(out), evaluations_("drk bench kernelbench", "evaluations", evaluations, nullptr) {}

  void finished(const Sample& sample, const Json& entry) {
    ++done_;
    if (sample.input) evaluations_.add_done();
    out_ << "[" << done_ << "/" << total_ << "] " << sample_label(sample) << ": " << kernelbench_entry_summary(entry);
    if (sample.input)
      out_ << " (" << runtime::duration_text(entry["metadata"]["drk"].value("eval_ms", 0.0) / 1000) << ")";
    out_ << "; " << total_ - done_ << " left";
    const auto now = evaluations_.snapshot();
    if (now.seconds_left && now.done < now.total) out_ << ", ETA " << runtime::duration_text(*now.seconds_left);
    out_ << "\n" << std::flush;
  }

 private:
  size_t total_;
  size_t done_ = 0;
  std::ostream& out_;
  runtime::ProgressMeter evaluations_;
};

// The value at fraction `q` of sorted `values` (nearest rank).
double quantile(const std::vector<double>& values, double q) {
  return values[std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5))];
}

// --references: the references that do not run here with their reasons, then the speedups'
// median and spread.
void print_reference_check(const ResultFiles& results, const Problems& problems, std::ostream& out) {
  std::vector<double> speedups;
  std::string failing;
  size_t count = 0;
  for (const auto& [level, by_problem] : results.entries())
    for (const auto& [problem_id, entries] : by_problem)
      for (const auto& entry : entries) {
        ++count;
        if (entry.value("correctness", false))
          speedups.push_back(entry["metadata"]["drk"].value("speedup", 0.0));
        else
          failing += "  " + problems.at({level, problem_id}).name + ": " + kernelbench_entry_summary(entry) + "\n";
      }
  out << "\nreferences that do not run correctly here: " << count - speedups.size() << " of " << count << "\n" << failing;
  if (speedups.empty()) {
    out << "no reference ran correctly: no speedups to show\n";
    return;
  }
  std::sort(speedups.begin(), speedups.end());
  out << "speedup of each reference over itself (" << speedups.size()
      << " problems; near 1.0 when the harness times both sides alike): median " << fixed(quantile(speedups, 0.5), 3)
      << ", p10 " << fixed(quantile(speedups, 0.1), 3) << ", p90 " << fixed(quantile(speedups, 0.9), 3) << ", min "
      << fixed(speedups.front(), 3) << ", max " << fixed(speedups.back(), 3) << "\n";
}

int fail(const std::string& message) {
  log::error() << "drk bench kernelbench: " << message;
  return 1;
}

}  // namespace

int run_kernelbench_bench(const KernelBenchBenchOptions& options, std::ostream& out) {
  if (options.candidates.empty() == !options.references)
    return fail("give either --candidates RUN_DIR (a run's candidates) or --references (each problem's own Model)");
  const std::string into =
      options.kernelbench_dir.empty() ? kernels::default_kernelbench_directory() : options.kernelbench_dir;
  auto problems = imported_problems(into);
  if (!problems) return fail(problems.error().message);
  auto samples = options.references ? reference_samples(options, into, *problems, out)
                                    : candidate_samples(options, into, *problems, out);
  if (!samples) return fail(samples.error().message);

  std::set<int> levels;
  for (const auto& sample : *samples) levels.insert(sample.level);
  std::string results_path = options.out;
  if (results_path.empty() && !options.references)
    results_path = (fs::path(options.candidates) / "eval_results.json").string();
  ResultFiles results(results_path, levels.size() > 1);
  // A folder that cannot hold the results fails now, before hours of evaluations.
  if (!results_path.empty())
    if (auto made = real_file_system().create_directories(fs::absolute(results_path).parent_path().string()); !made)
      return fail(made.error().message);
  if (options.resume) {
    if (results_path.empty()) return fail("--resume needs --out FILE with --references: the results to resume");
    auto done = results.resume(levels);
    if (!done) return fail(done.error().message);
    const size_t before = samples->size();
    std::erase_if(*samples, [&](const Sample& sample) {
      return done->contains({sample.level, sample.problem_id, sample.sample_id});
    });
    out << "resuming: " << before - samples->size() << " of " << before << " samples already in "
        << results.path(*levels.begin()) << (levels.size() > 1 ? " (and the other levels' files)" : "") << "\n";
  }
  Status written;
  auto record = [&](const Sample& sample, Json entry) {
    if (auto status = results.add(sample, std::move(entry)); !status && written) written = status;
  };

  std::vector<evaluator::CandidateInput> inputs;
  std::vector<const Sample*> evaluated;
  for (const auto& sample : *samples)
    if (sample.input) {
      inputs.push_back(*sample.input);
      evaluated.push_back(&sample);
    }
  out << (options.references ? "evaluating the references of " : "evaluating ") << samples->size()
      << (options.references ? " problems" : " candidates") << " on " << kernels::device_name(options.engine.device)
      << " with " << std::min(options.jobs, std::max<size_t>(1, inputs.size())) << " job(s)"
      << (results.out().empty() ? std::string() : "; results in " + results.path(*levels.begin()) +
                                                      (levels.size() > 1 ? " (one file per level)" : ""))
      << "\n";
  Progress progress(samples->size(), inputs.size(), out);
  for (const auto& sample : *samples) {
    if (sample.input) continue;
    Json entry = kernelbench_unevaluated_entry(sample.sample_id, sample.task, sample.not_evaluated);
    progress.finished(sample, entry);
    record(sample, std::move(entry));
  }
  evaluator::EngineOptions engine = options.engine;
  engine.python = true;
  engine.kernelbench_dir = into;
  engine.evaluator_name = "drk bench kernelbench";
  auto judged = [&](size_t index, const Result<msg::Verdict::Reader>& verdict) {
    const Sample& sample = *evaluated[index];
    Json entry = verdict ? kernelbench_result_entry(sample.sample_id, sample.task, *verdict, options.references)
                         : kernelbench_unevaluated_entry(sample.sample_id, sample.task, verdict.error().message);
    progress.finished(sample, entry);
    record(sample, std::move(entry));
  };
  if (auto ran = evaluate_in_parallel(engine, options.jobs, inputs, judged); !ran) return fail(ran.error().message);

  std::map<int, std::set<int>> level_problems;
  for (const auto& [key, problem] : *problems)
    if (levels.contains(key.first)) level_problems[key.first].insert(key.second);
  out << "\nKernelBench's scores (sample 0 of each problem; fast_p: correct and speedup > p, over the level's "
         "problems):\n"
      << score_table(score_levels(results.scored(), level_problems));
  if (options.references) print_reference_check(results, *problems, out);
  if (!written) return fail(written.error().message);
  for (int level : levels)
    if (!results.out().empty()) out << "eval_results.json: " << results.path(level) << "\n";
  return 0;
}

}  // namespace drk::tools
