// drk tasks [show NAME | audit [NAME...] | generate --out DIR]: the task catalog (kernels/tasks/*.yaml) for
// people, its audit for degenerate tasks (kernels/catalog/task_audit.h), and generated tasks
// (kernels/catalog/task_generator.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "kernels/catalog/expression.h"
#include "kernels/catalog/generated_task_writer.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/catalog/task.h"
#include "kernels/catalog/task_audit.h"
#include "kernels/catalog/task_audit_json.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"

namespace drk::tools {
namespace {

using kernels::DeviceKind;

std::string shapes_line(const kernels::Task& task, DeviceKind device) {
  const auto& shapes = task.shapes(device);
  std::string line;
  for (const auto& input : task.inputs)
    line += (line.empty() ? "" : ", ") + input.name + " " + kernels::format_shape(shapes.at(input.name));
  line += " -> ";
  for (size_t i = 0; i < task.outputs.size(); ++i)
    line += (i ? ", " : "") + task.outputs[i] + " " + kernels::format_shape(shapes.at(task.outputs[i]));
  return line;
}

std::string human(double value, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (value >= 1000.0 && p < 5) {
    value /= 1000.0;
    ++p;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.3g %s%s", value, prefixes[p], unit);
  return text;
}

std::string describe_draw(const kernels::Task& task, const kernels::InputSpec& input) {
  const kernels::Distribution& draw = input.draw;
  std::ostringstream out;
  if (draw.kind == "normal") {
    out << "normal(mean " << draw.mean << ", stddev " << draw.stddev << ")";
  } else if (draw.kind == "classes") {
    out << "classes: integers in [0, C), C = " << draw.classes_of << ".shape[" << draw.classes_dim << "] (";
    std::string counts;
    for (auto device : {DeviceKind::cpu, DeviceKind::cuda})
      if (task.runs_on(device))
        counts += (counts.empty() ? "" : ", ") + std::to_string(kernels::class_count(task, input, device)) + " on " +
                  std::string(kernels::device_name(device));
    out << counts << ")";
  } else {
    out << draw.kind << "[" << draw.low << ", " << draw.high << ")";
  }
  return out.str();
}

void show(const kernels::Task& task) {
  std::cout << task.name << ": " << task.title << "\n"
            << "  origin      " << task.origin << "\n"
            << "  family      " << task.family << "\n"
            << "  reference   " << task.reference << "\n"
            << "  inputs\n";
  for (const auto& input : task.inputs)
    std::cout << "    " << input.name << "  " << kernels::dtype_name(input.dtype) << "  drawn from "
              << describe_draw(task, input) << "\n";
  std::cout << "  outputs\n";
  for (const auto& output : task.outputs)
    std::cout << "    " << output << "  " << kernels::dtype_name(task.output_dtype) << "\n";
  std::cout << "  shapes\n";
  for (auto device : {DeviceKind::cpu, DeviceKind::cuda})
    std::cout << "    " << kernels::device_name(device) << (device == DeviceKind::cpu ? "   " : "  ")
              << (task.runs_on(device) ? shapes_line(task, device)
                                       : "none: the task runs on " + task.devices_text() + " only")
              << "\n";
  for (auto device : {DeviceKind::cpu, DeviceKind::cuda})
    if (const kernels::ShapeRange* range = task.shape_range(device))
      std::cout << "  range " << kernels::device_name(device) << (device == DeviceKind::cpu ? "   " : "  ")
                << range->describe() << " (docs/tasks.md, \"Shape ranges\")\n";
  std::cout << "  params" << (task.params.empty() ? "      none (the family's reference fixes everything)" : "") << "\n";
  for (const auto& [key, value] : task.params) std::cout << "    " << key << ": " << value << "\n";
  auto tolerance = task.output_tolerance();
  std::cout << "  tolerance   " << kernels::dtype_name(task.output_dtype) << ": atol " << tolerance.atol << ", rtol "
            << tolerance.rtol << (task.tolerances.count(task.output_dtype) ? "" : " (default)") << "\n";
  for (auto device : {DeviceKind::cpu, DeviceKind::cuda}) {
    if (!task.runs_on(device)) continue;
    double flops = kernels::estimate_flops(task, device);
    double bytes = kernels::estimate_min_bytes(task, device);
    char intensity[32];
    std::snprintf(intensity, sizeof intensity, "%.3g", bytes > 0 ? flops / bytes : 0.0);
    std::cout << "  " << kernels::device_name(device) << (device == DeviceKind::cpu ? "         " : "        ")
              << human(flops, "FLOP") << ", at least " << human(bytes, "B") << " moved, " << intensity
              << " FLOP/B\n";
  }
}

// `text` and at least two spaces, to `width` + 2 columns.
std::string pad(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() + 2 : 2, ' ');
}

void show(const kernels::KernelBenchProblem& problem) {
  std::cout << problem.name << ": " << problem.title << "\n"
            << "  source      " << problem.source << "\n"
            << "  sha256      " << problem.source_sha256 << "\n"
            << "  family      " << (problem.family.empty() ? "none of ours" : problem.family) << "\n"
            << "  status      " << kernels::kernelbench_status_text(problem) << "\n";
  if (problem.failure) return;
  std::cout << "  init        " << problem.init_inputs << "\n"
            << "  inputs      " << kernels::kernelbench_values_text(problem.inputs) << "\n"
            << "  outputs     " << kernels::kernelbench_values_text(problem.outputs) << "\n"
            << "  parameters  " << problem.parameters << "\n"
            << "  work        " << (problem.flops ? human(*problem.flops, "FLOP") : std::string("FLOPs not counted"))
            << ", at least " << human(problem.min_bytes, "B") << " moved (torch " << problem.torch_version << ")\n";
}

// The imported KernelBench problems in `directory`, after the ported tasks; none, no lines.
int list_kernelbench(const std::string& directory) {
  auto problems = kernels::load_kernelbench_problems(directory);
  if (!problems) {
    log::error() << "drk tasks: " << problems.error().message;
    return 1;
  }
  if (problems->empty()) return 0;
  // Capped: level 3 and 4 names run past 100 characters; those few overflow their column.
  constexpr size_t kWidestName = 56;
  size_t name_width = 4, family_width = 6, usable = 0;
  for (const auto& problem : *problems) {
    name_width = std::min(kWidestName, std::max(name_width, problem.name.size()));
    family_width = std::max(family_width, problem.family.size());
    usable += problem.usable() ? 1 : 0;
  }
  std::cout << "\n" << pad("NAME", name_width) << pad("FAMILY", family_width) << pad("FLOP", 10) << pad("BYTES", 10)
            << "STATUS\n";
  for (const auto& problem : *problems)
    std::cout << pad(problem.name, name_width) << pad(problem.family.empty() ? "-" : problem.family, family_width)
              << pad(problem.flops ? human(*problem.flops, "") : "-", 10)
              << pad(problem.failure ? "-" : human(problem.min_bytes, "B"), 10) << kernels::kernelbench_status_text(problem) << "\n";
  std::cout << problems->size() << " KernelBench problems imported in " << directory << " (published shapes), " << usable
            << " usable\n";
  return 0;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

int audit(const kernels::TaskCatalog& catalog, const std::vector<std::string>& names, DeviceKind device, bool json) {
  std::vector<const kernels::Task*> tasks;
  for (const auto& name : names) {
    auto task = catalog.find(name);
    if (!task) {
      log::error() << "drk tasks audit: " << task.error().message;
      return 1;
    }
    if (!(*task)->runs_on(device)) {
      log::error() << "drk tasks audit: task '" << name << "' has no " << kernels::device_name(device)
                   << " shapes: it runs on " << (*task)->devices_text() << " only (--device "
                   << (device == DeviceKind::cpu ? "cuda" : "cpu") << ")";
      return 1;
    }
    tasks.push_back(*task);
  }
  std::vector<std::string> skipped;  // with no names: tasks that do not run on `device`
  if (names.empty())
    for (const auto& task : catalog.tasks()) {
      if (task.runs_on(device)) tasks.push_back(&task);
      else skipped.push_back(task.name);
    }
  std::vector<kernels::TaskAudit> audits;
  for (const auto* task : tasks) {
    auto result = kernels::audit_task(*task, device);
    if (!result) {
      log::error() << "drk tasks audit: " << result.error().message;
      return 1;
    }
    audits.push_back(std::move(*result));
  }
  size_t degenerate = 0;
  for (const auto& a : audits) degenerate += a.degenerate() ? 1 : 0;
  if (json) {
    std::cout << kernels::task_audit_json(device, audits, skipped) << "\n";
    return degenerate ? 1 : 0;
  }
  size_t name_width = 4;
  for (const auto& a : audits) name_width = std::max(name_width, a.task.size());
  for (const auto& a : audits) {
    std::string influences;
    for (const auto& input : a.inputs)
      influences += (influences.empty() ? "" : ", ") + input.input + " moves " + number(100.0 * input.changed_fraction) + "%";
    std::cout << a.task << std::string(name_width + 2 - a.task.size(), ' ') << (a.degenerate() ? "DEGENERATE" : "ok        ")
              << "  replay passes " << number(100.0 * a.replay_pass_fraction) << "%; " << influences << "\n";
    for (const auto& finding : a.findings) std::cout << std::string(name_width + 2, ' ') << "- " << finding << "\n";
  }
  std::cout << audits.size() << " tasks audited at the " << kernels::device_name(device) << " shapes, " << degenerate
            << " degenerate\n";
  if (!skipped.empty()) {
    std::string list;
    for (const auto& name : skipped) list += (list.empty() ? "" : ", ") + name;
    std::cout << skipped.size() << " skipped (no " << kernels::device_name(device) << " shapes): " << list << "\n";
  }
  return degenerate ? 1 : 0;
}

// What `drk tasks generate` was asked.
struct GenerateTasksArgs {
  std::string out;
  kernels::TaskGeneratorOptions options;
};

int generate(const GenerateTasksArgs& args) {
  auto drafts = kernels::generate_tasks(args.options);
  if (!drafts) {
    log::error() << "drk tasks generate: " << drafts.error().message;
    return 1;
  }
  size_t name_width = 4;
  for (const auto& draft : *drafts) name_width = std::max(name_width, draft.name.size());
  size_t decided = 0;
  auto written = kernels::write_generated_tasks(*drafts, args.out, {}, [&](const kernels::WrittenTask& task) {
    ++decided;
    std::cout << "[" << decided << "/" << drafts->size() << "] " << (task.kept ? "kept    " : "dropped ")
              << pad(task.draft.name, name_width) << pad(task.draft.family, 12)
              << (task.kept ? task.draft.recipe : task.reason) << std::endl;
  });
  if (!written) {
    log::error() << "drk tasks generate: " << written.error().message;
    return 1;
  }
  const auto kept = std::count_if(written->begin(), written->end(), [](const auto& task) { return task.kept; });
  std::cout << kept << " of " << written->size() << " generated tasks kept in " << args.out
            << " (each loads, runs on cpu and cuda, and passes the audit)\n"
            << "train on them with --set experiment.tasks_dir=" << args.out
            << " (beside the ported ones: kernels/tasks:" << args.out << ")\n";
  return kept == 0 ? 1 : 0;
}

}  // namespace

namespace {

// What `drk tasks` was asked.
struct TasksArgs {
  std::string dir = kernels::TaskCatalog::default_directory();
  std::string kernelbench_dir = kernels::default_kernelbench_directory();
  std::string show_name;
  std::vector<std::string> audit_names;
  DeviceKind device = DeviceKind::cpu;
  bool json = false;
};

enum class TasksMode { list, show, audit };

int tasks(const TasksArgs& args, TasksMode mode) {
  auto catalog = kernels::TaskCatalog::load(args.dir);
  if (!catalog) {
    log::error() << "drk tasks: " << catalog.error().message;
    return 1;
  }
  if (mode == TasksMode::audit) return audit(*catalog, args.audit_names, args.device, args.json);
  if (mode == TasksMode::show && args.show_name.rfind("kernelbench/", 0) == 0) {
    auto problem = kernels::load_kernelbench_problem(args.kernelbench_dir, args.show_name);
    if (!problem) {
      log::error() << "drk tasks: " << problem.error().message;
      return 1;
    }
    show(*problem);
    return 0;
  }
  if (mode == TasksMode::show) {
    auto task = catalog->find(args.show_name);
    if (!task) {
      log::error() << "drk tasks: " << task.error().message;
      return 1;
    }
    show(**task);
    return 0;
  }
  size_t name_width = 4, family_width = 6;
  for (const auto& task : catalog->tasks()) {
    name_width = std::max(name_width, task.name.size());
    family_width = std::max(family_width, task.family.size());
  }
  constexpr size_t kAmountWidth = 10;
  std::cout << pad("NAME", name_width) << pad("FAMILY", family_width) << pad("CPU FLOP", kAmountWidth)
            << pad("CPU BYTES", kAmountWidth) << pad("CUDA FLOP", kAmountWidth) << pad("CUDA BYTES", kAmountWidth)
            << "ORIGIN\n";
  for (const auto& task : catalog->tasks()) {
    std::cout << pad(task.name, name_width) << pad(task.family, family_width);
    for (auto device : {DeviceKind::cpu, DeviceKind::cuda})
      std::cout << pad(task.runs_on(device) ? human(kernels::estimate_flops(task, device), "") : "-", kAmountWidth)
                << pad(task.runs_on(device) ? human(kernels::estimate_min_bytes(task, device), "B") : "-",
                       kAmountWidth);
    std::cout << task.origin << "\n";
  }
  std::cout << catalog->tasks().size() << " tasks; `drk tasks show NAME` shows one fully\n";
  return list_kernelbench(args.kernelbench_dir);
}

void add_dir_option(CLI::App& command, TasksArgs& args) {
  command.add_option("--dir", args.dir, "the task folder (default: $DRK_TASKS_DIR, else kernels/tasks of the source tree)")
      ->type_name("DIR");
  command.add_option("--kernelbench-dir", args.kernelbench_dir,
                     "the imported KernelBench problems (default: $DRK_KERNELBENCH_DIR, else kernelbench/ of the task folder)")
      ->type_name("DIR");
}

}  // namespace

void add_tasks_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<TasksArgs>();
  CLI::App* list = drk.add_subcommand(
      "tasks",
      "the ported KernelBench tasks and the imported problems; show one; flag degenerate ones\n"
      "\n"
      "Lists the tasks of the catalog (name, family, FLOPs and minimum bytes moved at the cpu and the\n"
      "cuda shapes, \"-\" on a device the task does not run on, origin), then the KernelBench problems\n"
      "that `drk kernelbench import` recorded (FLOPs and bytes at the published shapes, and whether\n"
      "each can run, with the reason when it cannot).");
  add_dir_option(*list, *args);
  CLI::App* show_command = list->add_subcommand(
      "show",
      "show one task fully\n"
      "\n"
      "Shows one task fully: inputs and how they are drawn, shapes on cpu and cuda, the reference\n"
      "expression, the family parameters the generator renders from, tolerances, FLOPs and the\n"
      "minimum bytes moved.");
  show_command->add_option("NAME", args->show_name, "the task")->required()->type_name("");
  add_dir_option(*show_command, *args);
  CLI::App* audit_command = list->add_subcommand(
      "audit",
      "look for degenerate tasks, whose reward a kernel could farm without computing them\n"
      "\n"
      "Evaluates each reference on fresh input draws and reports, in the task's tolerance, whether the\n"
      "output is near-constant across draws (a remembered answer passes) and, per input, how much of the\n"
      "output moves when only that input is drawn afresh (none: the input has no influence). It exits 1\n"
      "when a task is degenerate. --device cuda audits at KernelBench's shapes (gigabytes per tensor).\n"
      "Tasks without shapes for the device (float16 tasks run on cuda only) are skipped, by name.");
  audit_command->add_option("NAME", args->audit_names, "the tasks to audit (default: all)")->type_name("");
  audit_command->add_flag("--json", args->json, "one JSON object {device, degenerate, skipped: [...], tasks: [...]}");
  add_device_option(*audit_command, "--device", args->device, "the shapes to evaluate at (default cpu)");
  add_dir_option(*audit_command, *args);
  auto generate_args = std::make_shared<GenerateTasksArgs>();
  CLI::App* generate_command = list->add_subcommand(
      "generate",
      "write new tasks composed from the catalog's operations, for training beyond the ported suite\n"
      "\n"
      "Draws tasks of the families the scheduling space renders (so that the embedded policy trains on\n"
      "them): elementwise chains of 1-4 pointwise operations; a linear layer or matmul with an epilogue\n"
      "chain; softmax, log_softmax, rms_norm and layer_norm; sum, mean and max reductions; each at drawn\n"
      "cpu and cuda shapes with second shapes. Every task is written to DIR/NAME.yaml, read back as the\n"
      "catalog reads it and audited (docs/tasks.md); one that fails is removed again and listed with the\n"
      "reason. Deterministic in --seed. Nothing in DIR is overwritten. Their float16 and bfloat16\n"
      "variants (NAME@bfloat16) come with them, as for every float32 task.");
  generate_command->add_option("--out", generate_args->out, "the directory to write the tasks to")
      ->required()
      ->type_name("DIR");
  generate_command->add_option("--count", generate_args->options.count, "how many tasks to draw (default 32)")
      ->type_name("N");
  generate_command->add_option("--seed", generate_args->options.seed, "the draw's seed (default 1)")->type_name("S");
  generate_command
      ->add_option("--families", generate_args->options.families,
                   "the families to draw, in turn (default: elementwise,gemm,rowwise,reduction)")
      ->delimiter(',')
      ->type_name("LIST");
  generate_command
      ->add_option("--prefix", generate_args->options.name_prefix,
                   "the start of every task's name (default gen: gen_001_tanh_mul2)")
      ->type_name("TEXT");
  generate_command->add_flag("--shape-ranges", generate_args->options.shape_ranges,
                             "give every task a shape range per device: each dim from 1 to its size, "
                             "3 shapes drawn per evaluation (docs/tasks.md, \"Shape ranges\")");
  actions[generate_command] = [generate_args] { return generate(*generate_args); };
  actions[list] = [args] { return tasks(*args, TasksMode::list); };
  actions[show_command] = [args] { return tasks(*args, TasksMode::show); };
  actions[audit_command] = [args] { return tasks(*args, TasksMode::audit); };
}

}  // namespace drk::tools
