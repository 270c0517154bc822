// The evaluation engine's options that `drk eval`, `drk generate`, `drk verify-corpus`, `drk serve`
// and `drk bench kernelbench|gateway` share:
// --trials, --budget-ms, --threads, --launch-latency, --cache-dir (default: default_compile_cache_dir()), and
// --memory-mb where `memory_limit` is set. Each fills `options`, whose values when the options are
// added are the defaults the help shows.
// add_device_option: an option `name` that takes cpu or cuda (kernels::parse_device) into `into`.
#pragma once

#include <CLI/CLI.hpp>

#include "actors/evaluator/evaluation.h"
#include "kernels/catalog/task.h"
#include "runtime/command_line.h"

namespace drk::tools {

void add_engine_options(CLI::App& command, evaluator::EngineOptions& options, bool memory_limit);

template <typename Device>  // kernels::DeviceKind, or std::optional of one
CLI::Option* add_device_option(CLI::App& command, const std::string& name, Device& into,
                               const std::string& description) {
  return runtime::add_parsed_option(command, name, into, kernels::parse_device, description)->type_name("cpu|cuda");
}

}  // namespace drk::tools
