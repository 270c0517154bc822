// drk model split MODEL.py / drk model compose MODEL.py: a whole model's hot subgraphs as tasks,
// and a whole-model candidate composed from their candidates (kernels/catalog/model_graph.py,
// docs/whole-models.md). The work is torch.fx's, so it runs in a Python with torch, found as
// `drk kernelbench import` finds it. A model in YAML (kernels/catalog/model_yaml.h) is first
// written as a KernelBench-format file into the split's folder, level3/NAME.py.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/catalog/model_yaml.h"
#include "kernels/compile/command_runner.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/drk/kernelbench_import.h"

namespace drk::tools {
namespace {

struct ModelArgs {
  std::string model;
  std::optional<std::string> python;
  int seconds = 900;
  // split
  std::string out_dir;
  int top = 3;
  int repeats = 5;
  std::string device = "cpu";
  uint64_t seed = 42;
  // compose
  std::string split_dir;
  std::vector<std::string> candidates;
  std::string out_file;
};

// Runs model_graph.py with `arguments` after its subcommand and the model; prints what it printed.
int run_model_graph(const std::string& command, const ModelArgs& args, const std::vector<std::string>& arguments) {
  auto runner = compile::system_command_runner(1 << 20);
  auto python = find_python_with_torch(args.python, *runner);
  if (!python) {
    log::error() << "drk model " << command << ": " << python.error().message;
    return 1;
  }
  std::vector<std::string> argv = {*python, kernels::model_graph_script(), command, args.model};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  auto ran = runner->run(argv, std::chrono::seconds(args.seconds));
  if (!ran) {
    log::error() << "drk model " << command << ": " << ran.error().message;
    return 1;
  }
  std::cout << ran->output;
  if (ran->timed_out) {
    log::error() << "drk model " << command << ": stopped after " << args.seconds
                 << " s (--seconds); nothing was written";
    return 1;
  }
  return ran->succeeded() ? 0 : 1;
}

bool is_yaml(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  return extension == ".yaml" || extension == ".yml";
}

// A YAML model as a KernelBench-format file, and its place in a split's folder: DIR/level3/NAME.py.
struct YamlModel {
  std::string path;
  std::string source;
};

// The model of `yaml` for `drk model COMMAND`, or nothing after saying why not.
std::optional<YamlModel> yaml_model(const std::string& command, const std::string& yaml, const std::string& split_dir) {
  auto model = kernels::model_python_from_yaml(yaml);
  if (!model) {
    log::error() << "drk model " << command << ": " << model.error().message;
    return std::nullopt;
  }
  return YamlModel{(std::filesystem::path(split_dir) / "level3" / (model->name + ".py")).string(),
                   std::move(model->source)};
}

// A YAML model written into the split's folder; its path, or empty after saying why not.
std::string write_yaml_model(const std::string& yaml, const std::string& split_dir) {
  auto model = yaml_model("split", yaml, split_dir);
  if (!model) return "";
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(model->path).parent_path(), error);
  std::ofstream file(model->path);
  if (error || !(file << model->source) || !file.flush()) {
    log::error() << "drk model split: cannot write " << model->path << ": check that --out is a folder you can write";
    return "";
  }
  std::cout << "wrote " << model->path << " from " << yaml << "\n";
  return model->path;
}

// The file that `drk model split MODEL.yaml --out DIR` wrote; empty after saying why not.
std::string yaml_model_in_split(const std::string& yaml, const std::string& split_dir) {
  auto model = yaml_model("compose", yaml, split_dir);
  if (!model) return "";
  if (!std::filesystem::exists(model->path)) {
    log::error() << "drk model compose: " << model->path << " does not exist: run `drk model split " << yaml
                 << " --out " << split_dir << "` first";
    return "";
  }
  return model->path;
}

}  // namespace

void add_model_commands(CLI::App& drk, Actions& actions) {
  CLI::App* model = drk.add_subcommand("model", "whole models: their hot subgraphs as tasks, and the model composed back");
  auto args = std::make_shared<ModelArgs>();
  CLI::App* split = model->add_subcommand(
      "split",
      "write a whole model's hot subgraphs as KernelBench-format problems\n"
      "\n"
      "Builds MODEL.py's Model as KernelBench does, traces it with torch.fx, times each node of the\n"
      "graph (--repeats runs), groups each operation with the elementwise ones that follow it, and\n"
      "writes the --top subgraphs that take the most time and can stand alone as problems at the shapes\n"
      "they meet in the model: DIR/level2/MODEL_sgN.py (import them with `drk kernelbench import DIR`),\n"
      "and DIR/split.json with every subgraph's time and share. A model in YAML (.yaml) is first written\n"
      "as DIR/level3/NAME.py. docs/whole-models.md explains it.");
  split->add_option("MODEL", args->model,
                    "a KernelBench-format model file (Model, get_inputs, get_init_inputs), or a model in YAML "
                    "(docs/whole-models.md)")
      ->required()
      ->type_name("");
  split->add_option("--out", args->out_dir, "the folder to write")->required()->type_name("DIR");
  split->add_option("--top", args->top, "subgraphs to write (default 3)")->check(CLI::PositiveNumber)->type_name("K");
  split->add_option("--repeats", args->repeats, "timed runs of the model (default 5)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  split->add_option("--device", args->device, "where the model runs to be timed (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->type_name("cpu|cuda");
  split->add_option("--seed", args->seed, "the seed before the model and before its inputs (default 42)")
      ->type_name("N");
  CLI::App* compose = model->add_subcommand(
      "compose",
      "write a whole-model candidate from candidates of its subgraphs\n"
      "\n"
      "A ModelNew that builds MODEL.py's Model, keeps its modules and calls each subgraph's candidate\n"
      "(a ModelNew for DIR/level2/MODEL_sgN.py) in the subgraph's place, with the model's own weights\n"
      "loaded into it. Evaluate it with `drk eval --task kernelbench/levelN/MODEL --candidate FILE`:\n"
      "its speedup is the application-level one.");
  compose->add_option("MODEL", args->model, "the model file that was split (.py, or .yaml)")->required()->type_name("");
  compose->add_option("--split", args->split_dir, "the folder of `drk model split`")->required()->type_name("DIR");
  compose->add_option("--candidate", args->candidates, "subgraph N's candidate (repeat for several)")
      ->required()
      ->type_name("N=FILE.py");
  compose->add_option("--out", args->out_file, "the whole-model candidate to write")->required()->type_name("FILE.py");
  for (CLI::App* command : {split, compose}) {
    command->add_option("--python", args->python, "the Python interpreter with torch")->type_name("EXE");
    command->add_option("--seconds", args->seconds, "the time it may take (default 900)")
        ->check(CLI::PositiveNumber)
        ->type_name("S");
  }
  actions[split] = [args] {
    if (is_yaml(args->model)) {
      const std::string written = write_yaml_model(args->model, args->out_dir);
      if (written.empty()) return 1;
      args->model = written;
    }
    return run_model_graph("split", *args,
                           {"--out", args->out_dir, "--top", std::to_string(args->top), "--repeats",
                            std::to_string(args->repeats), "--device", args->device, "--seed", std::to_string(args->seed)});
  };
  actions[compose] = [args] {
    if (is_yaml(args->model)) {
      const std::string written = yaml_model_in_split(args->model, args->split_dir);
      if (written.empty()) return 1;
      args->model = written;
    }
    std::vector<std::string> arguments = {"--split", args->split_dir, "--out", args->out_file};
    for (const auto& candidate : args->candidates) {
      arguments.push_back("--candidate");
      arguments.push_back(candidate);
    }
    return run_model_graph("compose", *args, arguments);
  };
}

}  // namespace drk::tools
