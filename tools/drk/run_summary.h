// The end-of-run summary that `drk run` prints and `drk archive summary` reprints: per task the
// best verified speedup over the LibTorch reference, the mean reward of the first and the last
// step, and where the archive is. Reads only the archive.
#pragma once

#include <chrono>
#include <string>

namespace drk::tools {

// Waits up to `wait_for_final_step` for the archive to hold the step marked finished (the
// Archivist may still be writing it), then prints. Returns 0, or 1 when the archive cannot be
// read (the message says why).
int print_run_summary(const std::string& run_dir,
                      std::chrono::milliseconds wait_for_final_step = std::chrono::milliseconds(0));

}  // namespace drk::tools
