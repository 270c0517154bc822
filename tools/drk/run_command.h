// `drk run`, `drk host` and `drk node` (add_run_commands, declared in commands.h), and the hook
// that ends a run.
//
// The summary hook runs in `drk run` after a run finished in order (a StepReport with
// finished=true, every child process stopped); it gets the absolute run directory and returns
// the exit code of `drk run`. Set it in main() before running a command; without one the code is 0.
// Thread-safety: set before `drk run`'s action runs.
#pragma once

#include <functional>
#include <string>

namespace drk::tools {

using RunSummary = std::function<int(const std::string& run_dir)>;

void set_run_summary(RunSummary summary);

}  // namespace drk::tools
