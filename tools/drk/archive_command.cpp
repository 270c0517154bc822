#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "actors/archivist/archive.h"
#include "actors/archivist/training_samples_jsonl.h"
#include "tools/drk/commands.h"
#include "tools/drk/remeasure.h"
#include "tools/drk/run_summary.h"

namespace drk::tools {
namespace {

constexpr const char* kUsage = R"(usage: drk archive COMMAND RUN_DIR [ARGS]

Reads the archive of a run (RUN_DIR/archive.sqlite).

commands:
  summary RUN_DIR       the end-of-run summary: best verified speedup per task, rewards
  best RUN_DIR          the best verified kernel per task, with its source
  show RUN_DIR ID       the source of one candidate (ids as printed by `best`)
  steps RUN_DIR         one line per training step: reward, rejection sampling, KL epochs,
                        stage; ROLLBACK and DIAGNOSTIC where the Learner rolled back
  remeasure RUN_DIR [--times N]
                        evaluates each task's best verified kernel N more times (default 3)
                        with the run's evaluation settings and records the medians, which
                        `summary` then shows: a best-of-run speedup picks the luckiest
                        measurement
  export RUN_DIR --format jsonl [--out FILE]
                        the turn-level training samples, one JSON object per line, to
                        stdout or FILE (fields: docs/archive.md)
)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "drk archive: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

Result<archivist::Archive> open_archive(const std::string& run_dir) {
  return archivist::Archive::open(archivist::Archive::default_path(run_dir), /*read_only=*/true);
}

}  // namespace

int cmd_archive(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s", kUsage);
    return args.empty() ? 2 : 0;
  }
  const std::string& command = args[0];
  if (args.size() < 2) return usage_error("'" + command + "' needs RUN_DIR");
  const std::string& run_dir = args[1];
  if (command == "summary") return print_run_summary(run_dir);
  if (command == "remeasure") {
    uint32_t times = 3;
    for (size_t i = 2; i < args.size(); ++i) {
      if (args[i] == "--times" && i + 1 < args.size()) {
        char* end = nullptr;
        const unsigned long value = std::strtoul(args[i + 1].c_str(), &end, 10);
        if (end == args[i + 1].c_str() || *end != '\0' || value < 1 || value > 1000)
          return usage_error("--times needs a whole number from 1 to 1000, got '" + args[i + 1] + "'");
        times = static_cast<uint32_t>(value);
        ++i;
      } else {
        return usage_error("unexpected argument '" + args[i] + "' for remeasure");
      }
    }
    if (auto status = remeasure_best_kernels(run_dir, times, std::cout); !status) {
      std::fprintf(stderr, "drk archive remeasure: %s\n", status.error().message.c_str());
      return 1;
    }
    return print_run_summary(run_dir);
  }
  auto archive = open_archive(run_dir);
  if (!archive) {
    std::fprintf(stderr, "drk archive: %s\n", archive.error().message.c_str());
    return 1;
  }
  if (command == "best") {
    auto best = archive->best_per_task();
    if (!best) {
      std::fprintf(stderr, "drk archive: %s\n", best.error().message.c_str());
      return 1;
    }
    for (const auto& row : *best) {
      std::printf("== %s: %.2fx (%.1f us vs reference %.1f us), policy v%u, candidate %s\n",
                  row.task.c_str(), row.speedup, row.candidate_us, row.reference_us,
                  row.policy_version, row.candidate_id.c_str());
      auto source = archive->source_of(row.candidate_id);
      if (source) std::printf("%s\n", source->c_str());
    }
    return 0;
  }
  if (command == "steps") {
    auto steps = archive->steps();
    if (!steps) {
      std::fprintf(stderr, "drk archive: %s\n", steps.error().message.c_str());
      return 1;
    }
    for (const auto& row : *steps) {
      std::printf("step %u  policy v%u  mean reward %.3f  correct %.0f%%  best %.2fx  epochs %u  "
                  "rejected prs %u mrs %u (veto %u)%s%s%s%s%s\n",
                  row.step + 1, row.policy_version, row.mean_reward, 100.0 * row.correct_fraction,
                  row.best_speedup, row.ppo_epochs, row.prs_rejected, row.mrs_rejected, row.mrs_vetoed,
                  row.screened == 0 ? ""
                                    : ("  measured " + std::to_string(row.measured) + " screened " +
                                       std::to_string(row.screened)).c_str(),
                  row.stage.empty() ? "" : ("  stage " + row.stage).c_str(),
                  row.rolled_back ? ("  ROLLBACK to v" + std::to_string(row.rolled_back_to)).c_str() : "",
                  row.diagnostic ? "  DIAGNOSTIC" : "", row.finished ? "  (last)" : "");
    }
    return 0;
  }
  if (command == "export") {
    std::string format, out_path;
    for (size_t index = 2; index < args.size(); ++index) {
      if (args[index] == "--format" && index + 1 < args.size()) format = args[++index];
      else if (args[index] == "--out" && index + 1 < args.size()) out_path = args[++index];
      else return usage_error("unknown argument '" + args[index] + "' to export");
    }
    if (format != "jsonl") return usage_error("export needs `--format jsonl` (the one format there is)");
    std::ofstream file;
    if (!out_path.empty()) {
      file.open(out_path, std::ios::trunc);
      if (!file) {
        std::fprintf(stderr, "drk archive: cannot write '%s'\n", out_path.c_str());
        return 1;
      }
    }
    auto written = archivist::write_training_samples_jsonl(*archive, out_path.empty() ? std::cout : file);
    if (!written) {
      std::fprintf(stderr, "drk archive: %s\n", written.error().message.c_str());
      return 1;
    }
    if (!out_path.empty()) std::fprintf(stderr, "drk archive: %zu samples written to %s\n", *written, out_path.c_str());
    return 0;
  }
  if (command == "show") {
    if (args.size() < 3) return usage_error("'show' needs RUN_DIR and a candidate ID");
    auto source = archive->source_of(args[2]);
    if (!source) {
      std::fprintf(stderr, "drk archive: %s\n", source.error().message.c_str());
      return 1;
    }
    std::printf("%s", source->c_str());
    return 0;
  }
  return usage_error("unknown command '" + command + "'");
}

}  // namespace drk::tools
