// Death causes: the one-line reason a process ended, left for its supervisor.
//
// A process that is about to die of a fault (a handler threw, its mailbox could not be bound)
// writes the reason to RUN_DIR/causes/PROCESS.txt; the supervisor takes it (reads and removes
// it) when it reaps the process, and reports it with the exit status.
// Thread-safety: write_death_cause() may be called from any thread; the file is rewritten whole.
#pragma once

#include <string>

namespace drk::runtime {

std::string death_cause_path(const std::string& run_dir, const std::string& process);

// Best effort: a process that is dying has no one to report a failure to.
void write_death_cause(const std::string& run_dir, const std::string& process, const std::string& text);

// The recorded cause without its trailing newline, or "" when there is none; removes the file.
std::string take_death_cause(const std::string& run_dir, const std::string& process);

}  // namespace drk::runtime
