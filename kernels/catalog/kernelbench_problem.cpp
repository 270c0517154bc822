#include "kernels/catalog/kernelbench_problem.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "base/file_system.h"
#include "kernels/catalog/expression.h"
#include "kernels/catalog/task.h"

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (kernels/catalog/CMakeLists.txt)"
#endif

namespace drk::kernels {
namespace {

namespace fs = std::filesystem;

// FP8 tensors reach candidates as bytes with a scale beside them (kernels/abi/drk_kernel.h), which a
// KernelBench problem's own Model does not take.
constexpr const char* kFloat8Refusal =
    "a KernelBench problem's tensors are float32, float16 or bfloat16 here; FP8 is evaluated as a catalog "
    "task's variant (drk eval --task NAME@float8_e4m3fn, docs/tasks.md)";

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

void emit_failure(YAML::Emitter& out, const char* key, const KernelBenchFailure& failure) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "stage" << YAML::Value << failure.stage;
  out << YAML::Key << "message" << YAML::Value << YAML::DoubleQuoted << failure.message;
  out << YAML::EndMap;
}

void emit_values(YAML::Emitter& out, const char* key, const std::vector<KernelBenchValue>& values) {
  out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
  for (const auto& value : values) {
    out << YAML::Flow << YAML::BeginMap;
    if (value.tensor) {
      out << YAML::Key << "shape" << YAML::Value << YAML::Flow << value.shape;
      out << YAML::Key << "dtype" << YAML::Value << value.dtype;
    } else {
      out << YAML::Key << "value" << YAML::Value << YAML::DoubleQuoted << value.value;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// A field of a record; a missing or mistyped one is a parse_error that names the file and field.
template <typename T>
Result<T> field(const YAML::Node& node, const char* key, const std::string& file) {
  try {
    if (!node[key]) return make_error(Errc::parse_error, "'" + file + "': the field `" + key + "` is missing");
    return node[key].as<T>();
  } catch (const YAML::Exception& e) {
    return make_error(Errc::parse_error,
                      "'" + file + "': the field `" + key + "` has the wrong form (" + e.msg + ")");
  }
}

std::optional<KernelBenchFailure> read_failure(const YAML::Node& node) {
  if (!node || !node.IsMap()) return std::nullopt;
  return KernelBenchFailure{node["stage"].as<std::string>(""), node["message"].as<std::string>("")};
}

std::vector<KernelBenchValue> read_values(const YAML::Node& list) {
  std::vector<KernelBenchValue> values;
  if (!list || !list.IsSequence()) return values;
  for (const auto& entry : list) {
    KernelBenchValue value;
    value.tensor = !entry["value"];
    if (value.tensor) {
      value.shape = entry["shape"].as<std::vector<int64_t>>();
      value.dtype = entry["dtype"].as<std::string>();
    } else {
      value.value = entry["value"].as<std::string>();
    }
    values.push_back(std::move(value));
  }
  return values;
}

}  // namespace

std::string kernelbench_task_name(int level, const std::string& stem) {
  return "kernelbench/level" + std::to_string(level) + "/" + stem;
}

std::string kernelbench_family(const std::string& stem) {
  const std::string name = lowercase(stem.substr(stem.find('_') == std::string::npos ? 0 : stem.find('_') + 1));
  const std::string first = name.substr(0, name.find('_'));
  if (contains(name, "attention")) return "attention";
  if (contains(name, "crossentropy")) return "cross_entropy";
  if (contains(name, "batched_matrix_multiplication") || first == "bmm") return "batched_gemm";
  if (first == "gemm" || first == "matmul" || contains(name, "matrix_multiplication") ||
      contains(name, "matrix_vector"))
    return "gemm";
  if (contains(name, "matrix_scalar")) return "elementwise";
  if (first == "conv2d" || name.rfind("conv_standard_2d", 0) == 0) return "conv2d";
  static constexpr std::array kRowwise = {"softmax", "logsoftmax", "layernorm", "rmsnorm", "l1norm", "l2norm"};
  for (const char* op : kRowwise)
    if (first == op) return "rowwise";
  if (contains(name, "_reduction") || first == "argmax" || first == "argmin") return "reduction";
  static constexpr std::array kElementwise = {"relu", "leakyrelu", "sigmoid", "tanh", "gelu", "selu",
                                              "elu", "hardtanh", "hardsigmoid", "softplus", "softsign", "swish"};
  for (const char* op : kElementwise)
    if (first == op) return "elementwise";
  return "";
}

std::string kernelbench_values_text(const std::vector<KernelBenchValue>& values) {
  std::string text;
  for (const auto& value : values)
    text += (text.empty() ? "" : ", ") + (value.tensor ? format_shape(value.shape) + " " + value.dtype : value.value);
  return text;
}

std::string kernelbench_status_text(const KernelBenchProblem& problem) {
  if (problem.failure) return "cannot run: " + problem.failure->stage + ": " + problem.failure->message;
  const auto& run = problem.reference_run;
  if (run && run->failure)
    return "reference fails on " + run->device + ": " + run->failure->stage + ": " + run->failure->message;
  if (!run) return "ok";
  char text[96];
  if (run->peak_bytes > 0)
    std::snprintf(text, sizeof text, "%.3f ms, peak %.2f GB", run->ms, static_cast<double>(run->peak_bytes) / 1e9);
  else
    std::snprintf(text, sizeof text, "%.3f ms", run->ms);
  return "ok, reference " + std::string(text) + " on " + run->device;
}

std::string kernelbench_problem_yaml(const KernelBenchProblem& problem) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << problem.name;
  out << YAML::Key << "level" << YAML::Value << problem.level;
  out << YAML::Key << "problem_id" << YAML::Value << problem.problem_id;
  out << YAML::Key << "title" << YAML::Value << YAML::DoubleQuoted << problem.title;
  out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << problem.source;
  out << YAML::Key << "source_sha256" << YAML::Value << problem.source_sha256;
  if (!problem.family.empty()) out << YAML::Key << "family" << YAML::Value << problem.family;
  out << YAML::Key << "torch" << YAML::Value << problem.torch_version;
  if (problem.failure) {
    emit_failure(out, "failure", *problem.failure);
  } else {
    out << YAML::Key << "init_inputs" << YAML::Value << YAML::DoubleQuoted << problem.init_inputs;
    emit_values(out, "inputs", problem.inputs);
    emit_values(out, "outputs", problem.outputs);
    out << YAML::Key << "parameters" << YAML::Value << problem.parameters;
    if (problem.flops) out << YAML::Key << "flops" << YAML::Value << *problem.flops;
    out << YAML::Key << "min_bytes" << YAML::Value << problem.min_bytes;
  }
  if (const auto& run = problem.reference_run) {
    out << YAML::Key << "reference_run" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "device" << YAML::Value << run->device;
    if (run->failure) {
      emit_failure(out, "failure", *run->failure);
    } else {
      out << YAML::Key << "ms" << YAML::Value << run->ms;
      out << YAML::Key << "peak_bytes" << YAML::Value << run->peak_bytes;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Result<KernelBenchProblem> parse_kernelbench_problem(const std::string& yaml_text, const std::string& file) {
  YAML::Node node;
  try {
    node = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return make_error(Errc::parse_error, "'" + file + "' is not YAML: " + e.msg +
                                             " (re-import it: drk kernelbench import PATH)");
  }
  if (!node.IsMap()) return make_error(Errc::parse_error, "'" + file + "' is not a KernelBench problem record");
  KernelBenchProblem problem;
  auto name = field<std::string>(node, "name", file);
  if (!name) return name.error();
  problem.name = *name;
  auto level = field<int>(node, "level", file);
  if (!level) return level.error();
  problem.level = *level;
  auto sha = field<std::string>(node, "source_sha256", file);
  if (!sha) return sha.error();
  problem.source_sha256 = *sha;
  auto source = field<std::string>(node, "source", file);
  if (!source) return source.error();
  problem.source = *source;
  try {
    problem.problem_id = node["problem_id"].as<int>(0);
    problem.title = node["title"].as<std::string>("");
    problem.family = node["family"].as<std::string>("");
    problem.torch_version = node["torch"].as<std::string>("");
    problem.failure = read_failure(node["failure"]);
    problem.init_inputs = node["init_inputs"].as<std::string>("[]");
    problem.inputs = read_values(node["inputs"]);
    problem.outputs = read_values(node["outputs"]);
    problem.parameters = node["parameters"].as<int64_t>(0);
    if (node["flops"]) problem.flops = node["flops"].as<double>();
    problem.min_bytes = node["min_bytes"].as<double>(0);
    if (const YAML::Node run = node["reference_run"]) {
      KernelBenchReferenceRun reference;
      reference.device = run["device"].as<std::string>("");
      reference.ms = run["ms"].as<double>(0);
      reference.peak_bytes = run["peak_bytes"].as<int64_t>(0);
      reference.failure = read_failure(run["failure"]);
      problem.reference_run = reference;
    }
  } catch (const YAML::Exception& e) {
    return make_error(Errc::parse_error, "'" + file + "': a field has the wrong form (" + e.msg +
                                             "; re-import it: drk kernelbench import PATH)");
  }
  return problem;
}

std::string kernelbench_probe_script() { return std::string(DRK_SOURCE_DIR) + "/kernels/catalog/kernelbench_probe.py"; }

std::string model_graph_script() { return std::string(DRK_SOURCE_DIR) + "/kernels/catalog/model_graph.py"; }

std::string default_kernelbench_directory() {
  if (const char* dir = std::getenv("DRK_KERNELBENCH_DIR"); dir && *dir) return dir;
  return TaskCatalog::default_directory() + "/kernelbench";
}

Result<Task> kernelbench_task(const KernelBenchProblem& problem) {
  auto refuse = [&](const std::string& why) {
    return make_error(Errc::invalid_argument, "KernelBench problem " + problem.name + " cannot be evaluated: " + why);
  };
  if (problem.failure) return refuse(problem.failure->stage + ": " + problem.failure->message);
  if (problem.outputs.size() != 1 || !problem.outputs[0].tensor)
    return refuse("its forward returns " + kernelbench_values_text(problem.outputs) + ", not one tensor");
  Task task;
  task.name = problem.name;
  task.title = problem.title;
  task.origin = "KernelBench level " + std::to_string(problem.level) + ", problem " +
                std::to_string(problem.problem_id) + " (" + problem.source + ")";
  task.family = problem.family;
  for (const auto& value : problem.inputs) {
    if (!value.tensor) continue;
    auto dtype = parse_dtype(value.dtype);
    if (!dtype) return refuse("input " + std::to_string(task.inputs.size() + 1) + ": " + dtype.error().message);
    if (is_float8(*dtype)) return refuse("input " + std::to_string(task.inputs.size() + 1) + " is " + value.dtype + ": " + kFloat8Refusal);
    InputSpec input;
    input.name = "input" + std::to_string(task.inputs.size() + 1);
    input.dtype = *dtype;
    task.cpu_shapes[input.name] = value.shape;
    task.inputs.push_back(std::move(input));
  }
  auto output_dtype = parse_dtype(problem.outputs[0].dtype);
  if (!output_dtype) return refuse("its output: " + output_dtype.error().message);
  if (is_float8(*output_dtype)) return refuse("its output is " + problem.outputs[0].dtype + ": " + kFloat8Refusal);
  task.output_dtype = *output_dtype;
  task.outputs = {"output"};
  task.cpu_shapes["output"] = problem.outputs[0].shape;
  task.gpu_shapes = task.cpu_shapes;
  return task;
}

Result<KernelBenchProblem> load_kernelbench_problem(const std::string& directory, const std::string& name) {
  constexpr std::string_view kPrefix = "kernelbench/";
  const std::string file = directory + "/" + name.substr(name.rfind(kPrefix, 0) == 0 ? kPrefix.size() : 0) + ".yaml";
  auto text = real_file_system().read_file(file);
  if (!text && text.error().code == Errc::not_found)
    return make_error(Errc::not_found, "no KernelBench problem '" + name + "' is imported in " + directory +
                                           ": import it with drk kernelbench import PATH");
  if (!text) return text.error();
  return parse_kernelbench_problem(*text, file);
}

Result<std::vector<KernelBenchProblem>> load_kernelbench_problems(const std::string& directory) {
  std::vector<KernelBenchProblem> problems;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return problems;
  std::vector<std::string> files;
  for (const auto& level : fs::directory_iterator(directory, ec)) {
    if (!level.is_directory() || level.path().filename().string().rfind("level", 0) != 0) continue;
    for (const auto& entry : fs::directory_iterator(level.path(), ec))
      if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  if (ec) return make_error(Errc::io_error, "cannot list '" + directory + "': " + ec.message());
  for (const auto& file : files) {
    auto text = real_file_system().read_file(file);
    if (!text) return text.error();
    auto problem = parse_kernelbench_problem(*text, file);
    if (!problem) return problem.error();
    problems.push_back(std::move(*problem));
  }
  std::sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) {
    return std::tie(a.level, a.problem_id, a.name) < std::tie(b.level, b.problem_id, b.name);
  });
  return problems;
}

}  // namespace drk::kernels
