// The evaluation engine's options that `drk eval`, `drk generate` and `drk verify-corpus` share:
// --trials, --budget-ms, --threads, --cache-dir, and --memory-mb where `memory_limit` is set.
// Each fills `options`, whose values when the options are added are the defaults the help shows.
#pragma once

#include <CLI/CLI.hpp>

#include "actors/evaluator/evaluation.h"

namespace drk::tools {

void add_engine_options(CLI::App& command, evaluator::EngineOptions& options, bool memory_limit);

}  // namespace drk::tools
