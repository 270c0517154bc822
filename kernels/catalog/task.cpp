#include "kernels/catalog/task.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "kernels/catalog/dtype_variant.h"
#include "kernels/catalog/expression.h"

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (kernels/catalog/CMakeLists.txt)"
#endif

namespace drk::kernels {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFamilies =
    "elementwise | rowwise | gemm | reduction | batched_gemm | conv2d | cross_entropy | attention";

std::set<std::string> integer_inputs(const Task& task);
const std::map<std::string, std::vector<int64_t>>& any_shapes(const Task& task);

// Reads one task file; every error names the file and the line of the offending node.
class TaskReader {
 public:
  explicit TaskReader(std::string path) : path_(std::move(path)) {}

  Result<Task> read() {
    YAML::Node root;
    try {
      root = YAML::LoadFile(path_);
    } catch (const YAML::Exception& e) {
      return make_error(Errc::parse_error, path_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!root.IsMap()) return fail(root, "a task file is a YAML map (name, family, inputs, ...)");
    try {
      return read_task(root);
    } catch (const YAML::Exception& e) {
      return make_error(Errc::parse_error, path_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
  }

 private:
  Error fail(const YAML::Node& node, const std::string& what) const {
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
    return make_error(Errc::invalid_argument, path_ + ":" + std::to_string(line) + ": " + what);
  }

  Result<YAML::Node> required(const YAML::Node& map, const std::string& key) const {
    YAML::Node node = map[key];
    if (!node) return fail(map, "missing key '" + key + "' (docs/tasks.md lists the keys)");
    return node;
  }

  Result<std::string> required_text(const YAML::Node& map, const std::string& key) const {
    auto node = required(map, key);
    if (!node) return node.error();
    if (!node->IsScalar()) return fail(*node, "'" + key + "' must be a text value");
    return node->as<std::string>();
  }

  Result<Task> read_task(const YAML::Node& root) {
    Task task;
    for (auto [key, target] : {std::pair{"name", &task.name}, {"title", &task.title},
                               {"origin", &task.origin}, {"family", &task.family},
                               {"reference", &task.reference}}) {
      auto text = required_text(root, key);
      if (!text) return text.error();
      *target = *text;
    }
    std::string stem = fs::path(path_).stem().string();
    if (task.name != stem)
      return fail(root["name"], "the task is named '" + task.name + "' but its file is '" + stem +
                                    ".yaml': name the file after the task");

    auto inputs = required(root, "inputs");
    if (!inputs) return inputs.error();
    if (!inputs->IsSequence() || inputs->size() == 0)
      return fail(*inputs, "'inputs' must be a non-empty list of {name, dtype, draw}");
    for (const auto& node : *inputs) {
      auto input = read_input(node);
      if (!input) return input.error();
      task.inputs.push_back(std::move(*input));
    }

    auto outputs = required(root, "outputs");
    if (!outputs) return outputs.error();
    if (!outputs->IsSequence() || outputs->size() != 1)
      return fail(*outputs, "'outputs' must list exactly one output name (a reference yields one tensor)");
    for (const auto& node : *outputs) task.outputs.push_back(node.as<std::string>());

    std::set<std::string> names;
    for (const auto& input : task.inputs) names.insert(input.name);
    for (const auto& output : task.outputs) {
      if (!names.insert(output).second)
        return fail(*outputs, "tensor name '" + output + "' is used twice");
    }
    if (names.size() != task.inputs.size() + task.outputs.size())
      return fail(*inputs, "input names must be distinct");

    auto params = required(root, "params");
    if (!params) return params.error();
    if (!params->IsMap()) return fail(*params, "'params' must be a map");
    for (const auto& item : *params) task.params[item.first.as<std::string>()] = item.second.as<std::string>();

    auto shapes_node = required(root, "shapes");
    if (!shapes_node) return shapes_node.error();
    const YAML::Node& shapes = *shapes_node;
    if (!shapes.IsMap() || (!shapes["cpu"] && !shapes["cuda"]))
      return fail(shapes, "'shapes' maps cpu and/or cuda (the devices the task runs on) to the dims of every tensor");
    for (auto [key, target] : {std::pair{"cpu", &task.cpu_shapes}, {"cuda", &task.gpu_shapes}}) {
      if (!shapes[key]) continue;  // the task does not run on that device
      auto read = read_shapes(shapes[key], names, key);
      if (!read) return read.error();
      *target = std::move(*read);
    }
    if (auto s = check_dtypes(task, *inputs); !s) return s.error();
    if (YAML::Node second = root["second_shapes"]) {
      if (!second.IsMap()) return fail(second, "'second_shapes' maps cpu and/or cuda to shapes like 'shapes'");
      for (auto [key, target] : {std::pair{"cpu", &task.cpu_second_shapes}, {"cuda", &task.gpu_second_shapes}}) {
        if (!second[key]) continue;
        if (!shapes[key])
          return fail(second[key], "second_shapes." + std::string(key) + " is given but shapes." + key +
                                       " is not: the task does not run on " + key);
        auto read = read_shapes(second[key], names, std::string("second_shapes.") + key);
        if (!read) return read.error();
        const auto& main = key == std::string("cpu") ? task.cpu_shapes : task.gpu_shapes;
        for (const auto& [name, dims] : *read)
          if (dims.size() != main.at(name).size())
            return fail(second[key], "second_shapes." + std::string(key) + " gives '" + name + "' " +
                                         std::to_string(dims.size()) + " dims but shapes." + key + " " +
                                         std::to_string(main.at(name).size()) + ": change dims, not ranks");
        *target = std::move(*read);
      }
    }
    if (YAML::Node range = root["shape_range"]) {
      if (!range.IsMap())
        return fail(range, "'shape_range' maps cpu and/or cuda to {dims, shapes, draws} (docs/tasks.md, \"Shape ranges\")");
      for (auto [key, target] : {std::pair{"cpu", &task.cpu_shape_range}, {"cuda", &task.gpu_shape_range}}) {
        if (!range[key]) continue;
        if (!shapes[key])
          return fail(range[key], "shape_range." + std::string(key) + " is given but shapes." + key +
                                      " is not: the task does not run on " + key);
        auto read = read_shape_range(range[key], names, key, key == std::string("cpu") ? task.cpu_shapes : task.gpu_shapes);
        if (!read) return read.error();
        *target = std::move(*read);
      }
    }

    if (YAML::Node tolerances = root["tolerances"]) {
      if (!tolerances.IsMap()) return fail(tolerances, "'tolerances' maps a dtype to {atol, rtol}");
      for (const auto& item : tolerances) {
        auto dtype = parse_dtype(item.first.as<std::string>());
        if (!dtype) return fail(item.first, dtype.error().message);
        Tolerance tolerance;
        tolerance.atol = item.second["atol"].as<double>(tolerance.atol);
        tolerance.rtol = item.second["rtol"].as<double>(tolerance.rtol);
        if (tolerance.atol < 0 || tolerance.rtol < 0) return fail(item.second, "tolerances must be >= 0");
        task.tolerances[*dtype] = tolerance;
      }
    }

    if (auto s = check_class_draws(task, *inputs); !s) return s.error();

    std::vector<std::string> input_names;
    for (const auto& input : task.inputs) input_names.push_back(input.name);
    auto expression = parse_expression(task.reference, input_names);
    if (!expression) return make_error(Errc::parse_error, path_ + ":" + std::to_string(root["reference"].Mark().line + 1) +
                                                              ": the reference " + expression.error().message);
    for (bool second : {false, true}) {
      for (auto device : {DeviceKind::cpu, DeviceKind::cuda}) {
        const auto& shapes_of_device = second ? task.second_shapes(device) : task.shapes(device);
        if (shapes_of_device.empty()) continue;
        std::string which = (second ? "second_shapes." : "") + std::string(device_name(device));
        auto shape = infer_shape(*expression, shapes_of_device, integer_inputs(task));
        if (!shape)
          return fail(root["reference"], "the reference does not fit the " + which + " shapes: " + shape.error().message);
        const Shape& declared = shapes_of_device.at(task.outputs[0]);
        if (*shape != declared)
          return fail(second ? root["second_shapes"][std::string(device_name(device))]
                             : shapes[std::string(device_name(device))],
                      "the reference yields " + format_shape(*shape) + " for the " + which + " shapes but output '" +
                          task.outputs[0] + "' is declared " + format_shape(declared));
      }
    }
    // A range's output dims are declared too: the reference must yield them at both corners and
    // at every timed shape.
    for (auto device : {DeviceKind::cpu, DeviceKind::cuda}) {
      const ShapeRange* range = task.shape_range(device);
      if (!range) continue;
      const YAML::Node node = root["shape_range"][std::string(device_name(device))];
      std::vector<std::pair<std::string, ShapeMap>> checked = {{"smallest", range->smallest()},
                                                               {"largest", range->largest()}};
      for (size_t i = 0; i < range->timed.size(); ++i)
        checked.emplace_back("timed " + std::to_string(i + 1), range->at(range->timed[i]));
      for (const auto& [corner, shapes_at] : checked) {
        const std::string which = "shape_range." + std::string(device_name(device)) + "'s " + corner + " shapes";
        auto shape = infer_shape(*expression, shapes_at, integer_inputs(task));
        if (!shape) return fail(node, "the reference does not fit " + which + ": " + shape.error().message);
        const Shape& declared = shapes_at.at(task.outputs[0]);
        if (*shape != declared)
          return fail(node, "the reference yields " + format_shape(*shape) + " at " + which + " but output '" +
                                task.outputs[0] + "' is declared " + format_shape(declared) + " there");
      }
    }
    auto family = check_family(task, *params);
    if (!family) return family.error();
    return task;
  }

  Result<InputSpec> read_input(const YAML::Node& node) {
    if (!node.IsMap()) return fail(node, "an input is a map {name, dtype, draw}");
    InputSpec input;
    auto name = required_text(node, "name");
    if (!name) return name.error();
    input.name = *name;
    auto dtype_text = required_text(node, "dtype");
    if (!dtype_text) return dtype_text.error();
    auto dtype = parse_dtype(*dtype_text);
    if (!dtype) return fail(node["dtype"], dtype.error().message);
    if (*dtype != DType::float32 && *dtype != DType::float16 && *dtype != DType::int64)
      return fail(node["dtype"], "input '" + input.name +
                                     "': inputs are float32 or float16, or int64 class indices (draw kind classes); "
                                     "bfloat16 and FP8 inputs come from a float32 task's dtype variants "
                                     "(NAME@bfloat16, NAME@float8_e4m3fn)");
    input.dtype = *dtype;
    YAML::Node draw = node["draw"];
    if (input.dtype == DType::int64 && !(draw && draw["kind"] && draw["kind"].as<std::string>() == "classes"))
      return fail(node, "input '" + input.name + "': an int64 input holds class indices: draw it with "
                        "{kind: classes, of: LOGITS, dim: 1}");
    if (draw) {
      input.draw.kind = draw["kind"].as<std::string>("normal");
      input.draw.low = draw["low"].as<double>(input.draw.low);
      input.draw.high = draw["high"].as<double>(input.draw.high);
      input.draw.mean = draw["mean"].as<double>(input.draw.mean);
      input.draw.stddev = draw["stddev"].as<double>(input.draw.stddev);
      const auto& kind = input.draw.kind;
      if (kind != "normal" && kind != "uniform" && kind != "positive" && kind != "classes")
        return fail(draw, "input '" + input.name + "': draw kind '" + kind +
                              "' is unknown (normal | uniform | positive | classes)");
      if (kind == "classes") {
        if (input.dtype != DType::int64)
          return fail(draw, "input '" + input.name + "': draw kind classes gives class indices: declare dtype int64");
        if (!draw["of"] || !draw["dim"])
          return fail(draw, "input '" + input.name + "': a classes draw names the logits and their class dim: "
                            "{kind: classes, of: LOGITS, dim: 1}");
        input.draw.classes_of = draw["of"].as<std::string>();
        input.draw.classes_dim = draw["dim"].as<int64_t>();
        return input;
      }
      if (kind != "normal" && !(input.draw.low < input.draw.high))
        return fail(draw, "input '" + input.name + "': draw needs low < high");
      if (kind == "positive" && input.draw.low <= 0)
        return fail(draw, "input '" + input.name + "': a positive draw needs low > 0");
      if (kind == "normal" && input.draw.stddev <= 0)
        return fail(draw, "input '" + input.name + "': a normal draw needs stddev > 0");
    }
    return input;
  }

  Result<std::map<std::string, std::vector<int64_t>>> read_shapes(const YAML::Node& node,
                                                                   const std::set<std::string>& names,
                                                                   const std::string& device) {
    if (!node.IsMap()) return fail(node, "shapes." + device + " maps every tensor name to its dims");
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& item : node) {
      std::string name = item.first.as<std::string>();
      if (!names.count(name)) return fail(item.first, "shapes." + device + " names '" + name + "', which is no input or output");
      if (!item.second.IsSequence() || item.second.size() > 8)
        return fail(item.second, "shape of '" + name + "' must be a list of 0 to 8 dims ([] is a scalar)");
      std::vector<int64_t> dims;
      for (const auto& dim : item.second) {
        int64_t value = dim.as<int64_t>();
        if (value <= 0) return fail(dim, "shape of '" + name + "' has a dim <= 0");
        dims.push_back(value);
      }
      shapes[name] = dims;
    }
    for (const auto& name : names)
      if (!shapes.count(name)) return fail(node, "shapes." + device + " lacks '" + name + "'");
    return shapes;
  }

  // shape_range.<device>: {dims: {N: [1, 7] | {from, to, step}}, shapes: {x: [N, 4096], ...}, draws}.
  Result<ShapeRange> read_shape_range(const YAML::Node& node, const std::set<std::string>& names,
                                      const std::string& device, const std::map<std::string, std::vector<int64_t>>& main) {
    const std::string where = "shape_range." + device;
    if (!node.IsMap())
      return fail(node, where + " is a map: {dims: {N: [1, 7, 64]}, shapes: {x: [N, 4096], y: [N, 4096]}, draws: 4}");
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (key != "dims" && key != "shapes" && key != "draws" && key != "timed")
        return fail(item.first, where + "." + key + " is unknown: the keys are dims, shapes, draws and timed");
    }
    ShapeRange range;
    const YAML::Node dims = node["dims"];
    if (!dims || !dims.IsMap() || dims.size() == 0)
      return fail(dims ? dims : node, where + ".dims names each dim that varies with its values: a list [1, 7, 64] "
                                              "or a range {from: 512, to: 8192, step: 512}");
    for (const auto& item : dims) {
      const std::string name = item.first.as<std::string>();
      const std::string dim_where = where + ".dims." + name;
      DimValues values;
      if (item.second.IsSequence() && item.second.size() > 0) {
        for (const auto& value : item.second) {
          int64_t number = 0;
          if (!YAML::convert<int64_t>::decode(value, number) || number <= 0)
            return fail(value, dim_where + " lists '" + value.as<std::string>() + "': its values are dims > 0");
          values.list.push_back(number);
        }
      } else if (item.second.IsMap()) {
        for (const auto& bound : item.second) {
          const std::string key = bound.first.as<std::string>();
          if (key != "from" && key != "to" && key != "step")
            return fail(bound.first, dim_where + "." + key + " is unknown: a range has from, to and step");
        }
        if (!item.second["from"] || !item.second["to"] ||
            !YAML::convert<int64_t>::decode(item.second["from"], values.from) ||
            !YAML::convert<int64_t>::decode(item.second["to"], values.to) ||
            (item.second["step"] && !YAML::convert<int64_t>::decode(item.second["step"], values.step)) ||
            values.from <= 0 || values.to < values.from || values.step <= 0)
          return fail(item.second, dim_where + ": a range is {from: A, to: B, step: S} with 0 < A <= B and S > 0");
      } else {
        return fail(item.second, dim_where + " is a list of values [1, 7, 64] or a range {from: 512, to: 8192, step: 512}");
      }
      range.dims[name] = std::move(values);
    }
    const YAML::Node tensors = node["shapes"];
    if (!tensors || !tensors.IsMap())
      return fail(tensors ? tensors : node, where + ".shapes gives every tensor's dims as dim names or numbers, e.g. "
                                                    "{x: [N, 4096], y: [N, 4096]}");
    std::set<std::string> used;
    for (const auto& item : tensors) {
      const std::string name = item.first.as<std::string>();
      if (!names.count(name)) return fail(item.first, where + ".shapes names '" + name + "', which is no input or output");
      if (!item.second.IsSequence()) return fail(item.second, where + ".shapes." + name + " is a list of dims");
      std::vector<DimRef> refs;
      for (const auto& dim : item.second) {
        DimRef ref;
        const std::string text = dim.as<std::string>();
        if (range.dims.count(text)) {
          ref.name = text;
          used.insert(text);
        } else if (!YAML::convert<int64_t>::decode(dim, ref.value) || ref.value <= 0) {
          return fail(dim, where + ".shapes." + name + ": '" + text + "' is neither a dim of " + where +
                               ".dims nor a number > 0");
        }
        refs.push_back(std::move(ref));
      }
      if (refs.size() != main.at(name).size())
        return fail(item.second, where + ".shapes gives '" + name + "' " + std::to_string(refs.size()) +
                                     " dims but shapes." + device + " " + std::to_string(main.at(name).size()) +
                                     ": a range changes dims, not ranks");
      range.tensors[name] = std::move(refs);
    }
    for (const auto& name : names)
      if (!range.tensors.count(name)) return fail(tensors, where + ".shapes lacks '" + name + "'");
    for (const auto& [name, values] : range.dims)
      if (!used.count(name)) return fail(dims, where + ".dims." + name + " is used by no tensor of " + where + ".shapes");
    if (const YAML::Node draws = node["draws"]) {
      int64_t count = 0;
      if (!YAML::convert<int64_t>::decode(draws, count) || count < 1 || count > 64)
        return fail(draws, where + ".draws is how many shapes an evaluation tries, 1 to 64 (default " +
                               std::to_string(ShapeRange::kDefaultDraws) + ")");
      range.draws = static_cast<uint32_t>(count);
    }
    if (const YAML::Node timed = node["timed"]) {
      const std::string example = "e.g. [{" + range.dims.begin()->first + ": " +
                                  std::to_string(range.dims.begin()->second.largest()) + "}]";
      if (!timed.IsSequence() || timed.size() == 0 || timed.size() > ShapeRange::kMostTimed)
        return fail(timed, where + ".timed lists 1 to " + std::to_string(ShapeRange::kMostTimed) +
                               " shapes to time the candidate at beside the task's own, each a value of every dim, " +
                               example);
      for (const auto& entry : timed) {
        if (!entry.IsMap()) return fail(entry, where + ".timed's entries give every dim a value, " + example);
        std::map<std::string, int64_t> values;
        for (const auto& item : entry) {
          const std::string name = item.first.as<std::string>();
          const auto dim = range.dims.find(name);
          if (dim == range.dims.end())
            return fail(item.first, where + ".timed names '" + name + "', which is no dim of " + where + ".dims");
          int64_t value = 0;
          if (!YAML::convert<int64_t>::decode(item.second, value) || !dim->second.holds(value))
            return fail(item.second, where + ".timed gives " + name + " '" + item.second.as<std::string>() +
                                         "', which is not among its values in " + where + ".dims");
          values[name] = value;
        }
        for (const auto& [name, dim] : range.dims)
          if (!values.count(name)) return fail(entry, where + ".timed's entry lacks dim " + name + ", " + example);
        range.timed.push_back(std::move(values));
      }
    }
    return range;
  }

  // The floating inputs share one dtype, which the output has (the reference yields it).
  Status check_dtypes(Task& task, const YAML::Node& inputs) {
    std::optional<DType> floating;
    for (size_t i = 0; i < task.inputs.size(); ++i) {
      const DType dtype = task.inputs[i].dtype;
      if (dtype == DType::int64) continue;
      if (floating && *floating != dtype)
        return fail(inputs[i]["dtype"], "input '" + task.inputs[i].name + "' is " + std::string(dtype_name(dtype)) +
                                            " but an earlier input is " + std::string(dtype_name(*floating)) +
                                            ": the floating inputs of a task share one dtype");
      floating = dtype;
    }
    task.output_dtype = floating.value_or(DType::float32);
    return {};
  }

  // A classes draw names a float32 input of the task and one of its dims, on the task's devices.
  Status check_class_draws(const Task& task, const YAML::Node& inputs) {
    for (size_t i = 0; i < task.inputs.size(); ++i) {
      const InputSpec& input = task.inputs[i];
      if (input.draw.kind != "classes") continue;
      YAML::Node draw = inputs[i]["draw"];
      auto logits = std::find_if(task.inputs.begin(), task.inputs.end(),
                                 [&](const InputSpec& other) { return other.name == input.draw.classes_of; });
      if (logits == task.inputs.end() || logits->dtype == DType::int64)
        return fail(draw, "input '" + input.name + "': draw.of '" + input.draw.classes_of +
                              "' must name a floating input (the logits whose dim counts the classes)");
      for (auto device : {DeviceKind::cpu, DeviceKind::cuda}) {
        if (!task.runs_on(device)) continue;
        int64_t rank = static_cast<int64_t>(task.shapes(device).at(logits->name).size());
        if (input.draw.classes_dim < 0 || input.draw.classes_dim >= rank)
          return fail(draw, "input '" + input.name + "': draw.dim " + std::to_string(input.draw.classes_dim) +
                                " is not a dim of '" + logits->name + "' on " + std::string(device_name(device)));
      }
    }
    return {};
  }

  Status check_family(const Task& task, const YAML::Node& params) {
    auto need = [&](const std::string& key) -> Status {
      if (!task.params.count(key))
        return fail(params, "family '" + task.family + "' needs params." + key + " (docs/tasks.md)");
      return {};
    };
    auto need_one_of = [&](const std::string& key, std::initializer_list<std::string> options) -> Status {
      if (auto s = need(key); !s) return s;
      const std::string& value = task.params.at(key);
      if (std::find(options.begin(), options.end(), value) == options.end())
        return fail(params[key], "params." + key + " '" + value + "' is not one of the allowed values");
      return {};
    };
    if (task.family == "elementwise") {
      if (task.inputs.size() != 1) return fail(params, "an elementwise task has exactly one input");
      return need("stages");
    }
    if (task.family == "rowwise") {
      if (auto s = need_one_of("op", {"softmax", "log_softmax", "rms_norm", "layer_norm"}); !s) return s;
      if (auto s = need("reduce_begin"); !s) return s;
      if (auto s = need("reduce_end"); !s) return s;
      const std::string& op = task.params.at("op");
      if (op == "rms_norm" || op == "layer_norm")
        if (auto s = need("eps"); !s) return s;
      int64_t rank = static_cast<int64_t>(any_shapes(task).at(task.inputs[0].name).size());
      int64_t begin = std::atoll(task.params.at("reduce_begin").c_str());
      int64_t end = std::atoll(task.params.at("reduce_end").c_str());
      if (begin < 0 || end < begin || end >= rank)
        return fail(params, "params.reduce_begin/reduce_end must satisfy 0 <= begin <= end < rank of the input");
      return {};
    }
    if (task.family == "gemm" || task.family == "batched_gemm") {
      if (auto s = need_one_of("b_layout", {"kn", "nk"}); !s) return s;
      if (auto s = need_one_of("bias", {"true", "false"}); !s) return s;
      return need("epilogue");
    }
    if (task.family == "reduction") {
      if (task.inputs.size() != 1) return fail(params, "a reduction task has exactly one input");
      if (auto s = need_one_of("op", {"sum", "mean", "max"}); !s) return s;
      if (auto s = need_one_of("keepdim", {"true", "false"}); !s) return s;
      if (auto s = need("dim"); !s) return s;
      int64_t rank = static_cast<int64_t>(any_shapes(task).at(task.inputs[0].name).size());
      int64_t dim = std::atoll(task.params.at("dim").c_str());
      if (dim < 0 || dim >= rank) return fail(params, "params.dim must satisfy 0 <= dim < rank of the input");
      return {};
    }
    if (task.family == "conv2d") {
      if (auto s = need_one_of("bias", {"true", "false"}); !s) return s;
      return need("epilogue");
    }
    if (task.family == "cross_entropy" || task.family == "attention") return {};
    return fail(params, "family '" + task.family + "' is unknown (" + std::string(kFamilies) + ")");
  }

  std::string path_;
};

std::set<std::string> integer_inputs(const Task& task) {
  std::set<std::string> names;
  for (const auto& input : task.inputs)
    if (input.dtype == DType::int64 || input.dtype == DType::int32) names.insert(input.name);
  return names;
}

// The shapes of a device the task runs on (ranks are the same on every device).
const std::map<std::string, std::vector<int64_t>>& any_shapes(const Task& task) {
  return task.runs_on(DeviceKind::cpu) ? task.cpu_shapes : task.gpu_shapes;
}

double numel(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

}  // namespace

std::string_view device_name(DeviceKind device) { return device == DeviceKind::cuda ? "cuda" : "cpu"; }

Result<DeviceKind> parse_device(std::string_view text) {
  if (text == "cpu") return DeviceKind::cpu;
  if (text == "cuda") return DeviceKind::cuda;
  return make_error(Errc::invalid_argument, "device '" + std::string(text) + "' is unknown: use cpu or cuda");
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float8_e4m3fn: return "float8_e4m3fn";
    case DType::float8_e5m2: return "float8_e5m2";
  }
  return "unknown";
}

Result<DType> parse_dtype(std::string_view text) {
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::float64, DType::int32, DType::int64,
                      DType::float8_e4m3fn, DType::float8_e5m2})
    if (dtype_name(dtype) == text) return dtype;
  return make_error(Errc::invalid_argument, "dtype '" + std::string(text) +
                                                "' is unknown: use float32, float16, bfloat16, float64, int32, int64, "
                                                "float8_e4m3fn or float8_e5m2");
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::float16: return 2;
    case DType::bfloat16: return 2;
    case DType::float64: return 8;
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::float8_e4m3fn:
    case DType::float8_e5m2: return 1;
  }
  return 4;
}

std::string Task::devices_text() const {
  if (runs_on(DeviceKind::cpu) && runs_on(DeviceKind::cuda)) return "cpu and cuda";
  return runs_on(DeviceKind::cuda) ? "cuda" : "cpu";
}

DType Task::dtype() const {
  for (const auto& input : inputs)
    if (is_float8(input.dtype)) return input.dtype;
  return output_dtype;
}

Tolerance Task::tolerance(DType dtype) const {
  if (auto it = tolerances.find(dtype); it != tolerances.end()) return it->second;
  // KernelBench's defaults per dtype.
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float8_e4m3fn:  // never an output's (an FP8 variant's output is bfloat16)
    case DType::float8_e5m2: return Tolerance{1e-2, 1e-2};
    case DType::float64: return Tolerance{1e-7, 1e-7};
    case DType::float32:
    case DType::int32:
    case DType::int64: break;
  }
  return Tolerance{1e-4, 1e-4};
}

Result<Task> load_task_file(const std::string& path) { return TaskReader(path).read(); }

namespace {

// "a:b::c" -> {"a", "b", "c"}: the folders of a tasks_dir, as $PATH lists them.
std::vector<std::string> split_directories(const std::string& directories) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= directories.size()) {
    const size_t end = std::min(directories.find(':', start), directories.size());
    if (end > start) parts.push_back(directories.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The *.yaml files of one task folder, sorted; not_found when it is no folder or holds none.
Result<std::vector<std::string>> task_files(const std::string& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    return make_error(Errc::not_found, "task directory '" + directory +
                                           "' does not exist: set DRK_TASKS_DIR (or experiment.tasks_dir) to the "
                                           "folder of the *.yaml tasks, several separated by ':'");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory, ec))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) return make_error(Errc::not_found, "task directory '" + directory + "' holds no *.yaml task");
  return files;
}

}  // namespace

Result<TaskCatalog> TaskCatalog::load(const std::string& directories) {
  const std::vector<std::string> folders = split_directories(directories);
  if (folders.empty())
    return make_error(Errc::not_found, "no task directory is named ('" + directories +
                                           "'): set DRK_TASKS_DIR or experiment.tasks_dir");
  TaskCatalog catalog;
  std::map<std::string, std::string> file_of;  // task name -> the file that declared it
  for (const auto& directory : folders) {
    auto files = task_files(directory);
    if (!files) return files.error();
    for (const auto& file : *files) {
      auto task = load_task_file(file);
      if (!task) return task.error();
      if (auto [earlier, fresh] = file_of.emplace(task->name, file); !fresh)
        return make_error(Errc::invalid_argument, file + ": task '" + task->name + "' is already declared by " +
                                                      earlier->second + ": give one of them another name");
      catalog.tasks_.push_back(std::move(*task));
    }
  }
  std::sort(catalog.tasks_.begin(), catalog.tasks_.end(),
            [](const Task& a, const Task& b) { return a.name < b.name; });
  for (const Task& task : catalog.tasks_) {
    if (task.output_dtype != DType::float32) continue;
    for (DType dtype : kVariantDtypes) catalog.variants_.push_back(dtype_variant(task, dtype).value());
  }
  return catalog;
}

std::string TaskCatalog::default_directory() {
  if (const char* dir = std::getenv("DRK_TASKS_DIR"); dir && *dir) return dir;
  return std::string(DRK_SOURCE_DIR) + "/kernels/tasks";
}

Result<const Task*> TaskCatalog::find(std::string_view name) const {
  for (const auto& task : tasks_)
    if (task.name == name) return &task;
  for (const auto& variant : variants_)
    if (variant.name == name) return &variant;
  if (const auto [base, dtype] = split_variant_name(name); !dtype.empty()) {
    for (const auto& task : tasks_) {
      if (task.name != base) continue;
      std::string known;
      for (const auto& variant : variants_)
        if (split_variant_name(variant.name).first == base) known += (known.empty() ? "" : ", ") + variant.name;
      return make_error(Errc::not_found,
                        "task '" + std::string(name) + "' is unknown: " +
                            (known.empty() ? task.name + " is " + std::string(dtype_name(task.output_dtype)) +
                                                 " and has no dtype variants"
                                           : "the dtype variants of " + task.name + " are " + known));
    }
  }
  std::string known;
  for (const auto& task : tasks_) known += (known.empty() ? "" : ", ") + task.name;
  return make_error(Errc::not_found, "task '" + std::string(name) + "' is unknown: the " +
                                         std::to_string(tasks_.size()) + " tasks are " + known);
}

Task at_shapes(const Task& task, DeviceKind device, const std::map<std::string, std::vector<int64_t>>& shapes) {
  Task copy = task;
  (device == DeviceKind::cuda ? copy.gpu_shapes : copy.cpu_shapes) = shapes;
  return copy;
}

Task at_second_shapes(const Task& task, DeviceKind device) { return at_shapes(task, device, task.second_shapes(device)); }

std::string input_shapes_text(const Task& task, DeviceKind device) {
  std::string text;
  for (const auto& input : task.inputs)
    text += (text.empty() ? "" : ", ") + input.name + " " + format_shape(task.shapes(device).at(input.name));
  return text;
}

void fill_task_message(const Task& task, DeviceKind device, msg::Task::Builder out) {
  const auto& shapes = task.shapes(device);
  out.setName(task.name);
  out.setFamily(task.family);
  out.setDevice(device == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  auto fill_spec = [&](msg::TensorSpec::Builder spec, const std::string& name, DType dtype) {
    spec.setName(name);
    spec.setDtype(static_cast<msg::DType>(static_cast<uint16_t>(dtype)));
    const auto& dims = shapes.at(name);
    auto shape = spec.initShape(static_cast<unsigned>(dims.size()));
    for (size_t i = 0; i < dims.size(); ++i) shape.set(static_cast<unsigned>(i), dims[i]);
  };
  auto inputs = out.initInputs(static_cast<unsigned>(task.inputs.size()));
  for (size_t i = 0; i < task.inputs.size(); ++i)
    fill_spec(inputs[static_cast<unsigned>(i)], task.inputs[i].name, task.inputs[i].dtype);
  auto outputs = out.initOutputs(static_cast<unsigned>(task.outputs.size()));
  for (size_t i = 0; i < task.outputs.size(); ++i)
    fill_spec(outputs[static_cast<unsigned>(i)], task.outputs[i], task.output_dtype);
  out.setReference(task.reference);
  auto params = out.initParams(static_cast<unsigned>(task.params.size()));
  unsigned index = 0;
  for (const auto& [key, value] : task.params) {
    params[index].setKey(key);
    params[index].setValue(value);
    ++index;
  }
  out.setFlops(estimate_flops(task, device));
  out.setMinBytes(estimate_min_bytes(task, device));
  if (const ShapeRange* range = task.shape_range(device)) out.setShapeRange(range->describe());
}

double estimate_flops(const Task& task, DeviceKind device) {
  if (!task.runs_on(device)) return 0.0;
  std::vector<std::string> names;
  for (const auto& input : task.inputs) names.push_back(input.name);
  auto expression = parse_expression(task.reference, names);
  if (!expression) return 0.0;
  auto flops = kernels::estimate_flops(*expression, task.shapes(device), integer_inputs(task));
  return flops ? *flops : 0.0;
}

int64_t class_count(const Task& task, const InputSpec& input, DeviceKind device) {
  if (input.draw.kind != "classes") return 0;
  const auto& logits = task.shapes(device).at(input.draw.classes_of);
  return logits.at(static_cast<size_t>(input.draw.classes_dim));
}

double estimate_min_bytes(const Task& task, DeviceKind device) {
  if (!task.runs_on(device)) return 0.0;
  const auto& shapes = task.shapes(device);
  double bytes = 0;
  for (const auto& input : task.inputs) bytes += numel(shapes.at(input.name)) * static_cast<double>(dtype_size(input.dtype));
  for (const auto& output : task.outputs)
    bytes += numel(shapes.at(output)) * static_cast<double>(dtype_size(task.output_dtype));
  return bytes;
}

}  // namespace drk::kernels
