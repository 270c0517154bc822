#include <cstdio>
#include <string>

#include "actors/archivist/archive.h"
#include "tools/drk/commands.h"
#include "tools/drk/run_summary.h"

namespace drk::tools {
namespace {

constexpr const char* kUsage = R"(usage: drk archive COMMAND RUN_DIR [ARGS]

Reads the archive of a run (RUN_DIR/archive.sqlite).

commands:
  summary RUN_DIR       the end-of-run summary: best verified speedup per task, rewards
  best RUN_DIR          the best verified kernel per task, with its source
  show RUN_DIR ID       the source of one candidate (ids as printed by `best`)
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
