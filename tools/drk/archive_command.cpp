// drk archive: reads the archive of a run (RUN_DIR/archive.sqlite).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "actors/archivist/archive.h"
#include "actors/archivist/training_samples_jsonl.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/drk/remeasure.h"
#include "tools/drk/run_summary.h"

namespace drk::tools {
namespace {

Result<archivist::Archive> open_archive(const std::string& run_dir) {
  return archivist::Archive::open(archivist::Archive::default_path(run_dir), /*read_only=*/true);
}

// What `drk archive` was asked.
struct ArchiveArgs {
  std::string run_dir;
  std::string candidate_id;  // show
  uint32_t times = 3;        // remeasure
  std::string format;        // export: jsonl, the one there is
  std::string out_path;      // export
};

enum class ArchiveCommand { summary, best, show, steps, remeasure, jsonl_export };

int archive_command(const ArchiveArgs& args, ArchiveCommand command) {
  const std::string& run_dir = args.run_dir;
  if (command == ArchiveCommand::summary) return print_run_summary(run_dir);
  if (command == ArchiveCommand::remeasure) {
    if (auto status = remeasure_best_kernels(run_dir, args.times, std::cout); !status) {
      log::error() << "drk archive remeasure: " << status.error().message;
      return 1;
    }
    return print_run_summary(run_dir);
  }
  auto archive = open_archive(run_dir);
  if (!archive) {
    log::error() << "drk archive: " << archive.error().message;
    return 1;
  }
  if (command == ArchiveCommand::best) {
    auto best = archive->best_per_task();
    if (!best) {
      log::error() << "drk archive: " << best.error().message;
      return 1;
    }
    for (const auto& row : *best) {
      std::printf("== %s [%s]: %.2fx (%.1f us vs reference %.1f us)%s, policy v%u, candidate %s\n",
                  row.task.c_str(), archivist::judged_on(row).c_str(), row.speedup, row.candidate_us,
                  row.reference_us,
                  row.shapes_speedup > 0 ? (", " + fixed(row.shapes_speedup, 2) + "x over its timed shapes").c_str() : "",
                  row.policy_version, row.candidate_id.c_str());
      auto source = archive->source_of(row.candidate_id);
      if (source) std::printf("%s\n", source->c_str());
    }
    return 0;
  }
  if (command == ArchiveCommand::steps) {
    auto steps = archive->steps();
    if (!steps) {
      log::error() << "drk archive: " << steps.error().message;
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
  if (command == ArchiveCommand::jsonl_export) {
    const std::string& out_path = args.out_path;
    std::ofstream file;
    if (!out_path.empty()) {
      file.open(out_path, std::ios::trunc);
      if (!file) {
        log::error() << "drk archive: cannot write '" << out_path << "'";
        return 1;
      }
    }
    auto written = archivist::write_training_samples_jsonl(*archive, out_path.empty() ? std::cout : file);
    if (!written) {
      log::error() << "drk archive: " << written.error().message;
      return 1;
    }
    if (!out_path.empty()) log::info() << "drk archive: " << *written << " samples written to " << out_path;
    return 0;
  }
  auto source = archive->source_of(args.candidate_id);
  if (!source) {
    log::error() << "drk archive: " << source.error().message;
    return 1;
  }
  std::printf("%s", source->c_str());
  return 0;
}

}  // namespace

void add_archive_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<ArchiveArgs>();
  CLI::App* archive = drk.add_subcommand("archive", "read a run's archive (RUN_DIR/archive.sqlite)");
  auto add = [&](const char* name, const char* description, ArchiveCommand command) {
    CLI::App* sub = archive->add_subcommand(name, description);
    sub->add_option("RUN_DIR", args->run_dir, "the run directory")->required()->type_name("");
    actions[sub] = [args, command] { return archive_command(*args, command); };
    return sub;
  };
  add("summary", "the end-of-run summary: best verified speedup per task, rewards", ArchiveCommand::summary);
  add("best", "the best verified kernel per task, with its source", ArchiveCommand::best);
  add("show", "the source of one candidate (ids as printed by `best`)", ArchiveCommand::show)
      ->add_option("ID", args->candidate_id, "the candidate")
      ->required()
      ->type_name("");
  add("steps",
      "one line per training step: reward, rejection sampling, KL epochs, stage; ROLLBACK and\n"
      "DIAGNOSTIC where the Learner rolled back",
      ArchiveCommand::steps);
  add("remeasure",
      "evaluates each task's best verified kernel N more times with the run's evaluation settings\n"
      "\n"
      "Evaluates each task's best verified kernel N more times (default 3) with the run's evaluation\n"
      "settings and records the medians, which `summary` then shows: a best-of-run speedup picks the\n"
      "luckiest measurement.",
      ArchiveCommand::remeasure)
      ->add_option("--times", args->times, "evaluations per kernel, 1 to 1000 (default 3)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000).description(""));
  CLI::App* jsonl_export = add("export",
                               "the turn-level training samples, one JSON object per line, to stdout or FILE\n"
                               "\n"
                               "The turn-level training samples, one JSON object per line, to stdout or FILE\n"
                               "(fields: docs/archive.md).",
                               ArchiveCommand::jsonl_export);
  jsonl_export->add_option("--format", args->format, "jsonl, the one format there is")
      ->required()
      ->type_name("jsonl")
      ->check(CLI::IsMember({"jsonl"}));
  jsonl_export->add_option("--out", args->out_path, "write to FILE instead of stdout")->type_name("FILE");
}

}  // namespace drk::tools
