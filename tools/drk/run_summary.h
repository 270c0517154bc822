// The end-of-run summary that `drk run` prints and `drk archive summary` reprints: per task the
// best verified speedup over the LibTorch reference, the mean reward of the first and the last
// step, and where the archive is. Reads only the archive.
#pragma once

#include <string>

namespace drk::tools {

// Returns 0, or 1 when the archive cannot be read (the message says why).
int print_run_summary(const std::string& run_dir);

// What `drk run` does after a finished run: re-measures the best kernels when the run's
// `experiment.remeasure` asks for it (tools/drk/remeasure.h), then prints the summary.
int finish_run(const std::string& run_dir);

}  // namespace drk::tools
