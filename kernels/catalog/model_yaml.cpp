#include "kernels/catalog/model_yaml.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace drk::kernels {
namespace {

const std::set<std::string> kPythonKeywords = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
// Names the written file uses itself.
const std::set<std::string> kFileNames = {"self", "torch", "nn", "Model", "get_inputs", "get_init_inputs"};

class ModelReader {
 public:
  explicit ModelReader(std::string path) : path_(std::move(path)) {}

  Result<ModelPython> read() {
    YAML::Node document;
    try {
      document = YAML::LoadFile(path_);
    } catch (const YAML::BadFile&) {
      return make_error(Errc::not_found, "model file '" + path_ + "' cannot be read: check the path");
    } catch (const YAML::Exception& e) {
      return make_error(Errc::parse_error, path_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!document.IsMap()) return fail(document, "the model is a mapping with name, inputs, modules, graph and output");
    if (auto s = only_fields(document, {"name", "inputs", "modules", "graph", "output"}, "the model"); !s) return s.error();
    ModelPython model;
    const YAML::Node name = document["name"];
    if (!name || !name.IsScalar() || !std::regex_match(name.Scalar(), std::regex("[A-Za-z0-9_]+")))
      return fail(name ? name : document, "name: give the model a name of letters, digits and '_' (its file's name)");
    model.name = name.Scalar();

    std::ostringstream init, forward, draws;
    if (auto s = read_inputs(document["inputs"], document, forward, draws); !s) return s.error();
    if (auto s = read_modules(document["modules"], init); !s) return s.error();
    if (auto s = read_graph(document["graph"], document, forward); !s) return s.error();
    const YAML::Node output = document["output"];
    if (!output || !output.IsScalar()) return fail(document, "output: name the value forward returns");
    if (!values_.contains(output.Scalar()))
      return fail(output, "output '" + output.Scalar() + "' is not an input or a node of the graph");
    for (const auto& [module, line] : module_lines_)
      if (!called_.contains(module))
        return make_error(Errc::invalid_argument, path_ + ":" + std::to_string(line) + ": module '" + module +
                                                      "' is not called by any node of the graph: call it or remove it");

    std::ostringstream text;
    text << "# KernelBench-format model written by drk from " << path_
         << " (docs/whole-models.md, \"Models in YAML\").\n"
            "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n"
         << init.str() << "\n    def forward(self" << forward.str() << "        return " << output.Scalar()
         << "\n\n\ndef get_inputs():\n    return [" << draws.str() << "]\n\n\ndef get_init_inputs():\n    return []\n";
    model.source = text.str();
    return model;
  }

 private:
  Error fail(const YAML::Node& node, const std::string& what) const {
    return make_error(Errc::invalid_argument, path_ + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
  }

  Result<void> only_fields(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& whose) const {
    for (const auto& field : map) {
      const std::string key = field.first.Scalar();
      if (!allowed.contains(key)) {
        std::string list;
        for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
        return fail(field.first, "'" + key + "' is not a field of " + whose + " (its fields: " + list + ")");
      }
    }
    return {};
  }

  // A new name of the model's: a Python identifier, not a keyword, not one the file uses, not used before.
  Result<std::string> new_name(const YAML::Node& node, const std::string& what) {
    if (!node || !node.IsScalar()) return fail(node, what + ": give it a name");
    const std::string name = node.Scalar();
    if (!std::regex_match(name, std::regex("[A-Za-z_][A-Za-z0-9_]*")) || kPythonKeywords.contains(name) ||
        kFileNames.contains(name))
      return fail(node, what + " '" + name + "' is not a name Python can use here: letters, digits and '_', "
                                               "not starting with a digit, not a keyword, not self, torch, nn or Model");
    if (!names_.insert(name).second) return fail(node, what + " '" + name + "' is already the name of something else");
    return name;
  }

  // A YAML value as a Python literal: numbers, booleans and null as they are, text quoted, lists and mappings nested.
  Result<std::string> literal(const YAML::Node& node) const {
    if (node.IsSequence()) {
      std::string text = "[";
      for (size_t i = 0; i < node.size(); ++i) {
        auto item = literal(node[i]);
        if (!item) return item.error();
        text += (i ? ", " : "") + *item;
      }
      return text + "]";
    }
    if (node.IsMap()) {
      std::string text = "{";
      for (const auto& field : node) {
        auto value = literal(field.second);
        if (!value) return value.error();
        text += (text.size() > 1 ? ", " : "") + quoted(field.first.Scalar()) + ": " + *value;
      }
      return text + "}";
    }
    if (node.IsNull()) return std::string("None");
    const std::string scalar = node.Scalar();
    if (node.Tag() == "!") return quoted(scalar);  // quoted in the YAML: text
    if (scalar == "true" || scalar == "True") return std::string("True");
    if (scalar == "false" || scalar == "False") return std::string("False");
    if (std::regex_match(scalar, std::regex("[-+]?[0-9]+")) ||
        std::regex_match(scalar, std::regex("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?")))
      return scalar;
    return quoted(scalar);
  }

  static std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
      if (c == '\\' || c == '\'') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out + "'";
  }

  // `args` then `kwargs` of `node` as Python call arguments, after `first` (already written ones).
  Result<std::string> call_arguments(const YAML::Node& node, std::string first) const {
    if (const YAML::Node args = node["args"]) {
      if (!args.IsSequence()) return fail(args, "args: a list of values");
      for (const auto& arg : args) {
        auto value = literal(arg);
        if (!value) return value.error();
        first += (first.empty() ? "" : ", ") + *value;
      }
    }
    if (const YAML::Node kwargs = node["kwargs"]) {
      if (!kwargs.IsMap()) return fail(kwargs, "kwargs: a mapping of argument names to values");
      for (const auto& field : kwargs) {
        const std::string key = field.first.Scalar();
        if (!std::regex_match(key, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
          return fail(field.first, "kwargs: '" + key + "' is not an argument name");
        auto value = literal(field.second);
        if (!value) return value.error();
        first += (first.empty() ? "" : ", ") + key + "=" + *value;
      }
    }
    return first;
  }

  Result<void> read_inputs(const YAML::Node& inputs, const YAML::Node& document, std::ostringstream& forward,
                           std::ostringstream& draws) {
    if (!inputs || !inputs.IsMap() || inputs.size() == 0)
      return fail(inputs ? inputs : document, "inputs: a mapping of forward's arguments to {shape: [...]}");
    bool first = true;
    for (const auto& field : inputs) {
      auto name = new_name(field.first, "input");
      if (!name) return name.error();
      const YAML::Node input = field.second;
      if (!input.IsMap()) return fail(input, "input '" + *name + "': {shape: [...], dtype: ..., draw: ...}");
      if (auto s = only_fields(input, {"shape", "dtype", "draw"}, "input '" + *name + "'"); !s) return s.error();
      const YAML::Node shape = input["shape"];
      if (!shape || !shape.IsSequence() || shape.size() == 0)
        return fail(input, "input '" + *name + "': shape: a list of sizes, e.g. [8, 3, 32, 32]");
      std::string sizes;
      for (const auto& size : shape) {
        if (!size.IsScalar() || !std::regex_match(size.Scalar(), std::regex("[1-9][0-9]*")))
          return fail(size, "input '" + *name + "': a size is a positive whole number");
        sizes += (sizes.empty() ? "" : ", ") + size.Scalar();
      }
      const std::string dtype = input["dtype"] ? input["dtype"].Scalar() : "float32";
      if (dtype != "float32" && dtype != "float16" && dtype != "bfloat16")
        return fail(input["dtype"], "input '" + *name + "': dtype '" + dtype + "' is not float32, float16 or bfloat16");
      const std::string draw = input["draw"] ? input["draw"].Scalar() : "randn";
      if (draw != "randn" && draw != "rand")
        return fail(input["draw"], "input '" + *name + "': draw '" + draw + "' is not randn or rand");
      forward << ", " << *name;
      draws << (first ? "" : ", ") << "torch." << draw << "(" << sizes << ", dtype=torch." << dtype << ")";
      first = false;
      values_.insert(*name);
    }
    forward << "):\n";
    return {};
  }

  Result<void> read_modules(const YAML::Node& modules, std::ostringstream& init) {
    if (!modules) return {};
    if (!modules.IsMap()) return fail(modules, "modules: a mapping of names to {type: Conv2d, args: [...], kwargs: {...}}");
    for (const auto& field : modules) {
      auto name = new_name(field.first, "module");
      if (!name) return name.error();
      const YAML::Node module = field.second;
      if (!module.IsMap()) return fail(module, "module '" + *name + "': {type: ..., args: [...], kwargs: {...}}");
      if (auto s = only_fields(module, {"type", "args", "kwargs"}, "module '" + *name + "'"); !s) return s.error();
      const YAML::Node type = module["type"];
      if (!type || !type.IsScalar() || !std::regex_match(type.Scalar(), std::regex("[A-Za-z_][A-Za-z0-9_]*")))
        return fail(module, "module '" + *name + "': type: a torch.nn module's class name, e.g. Conv2d");
      auto arguments = call_arguments(module, "");
      if (!arguments) return arguments.error();
      init << "        self." << *name << " = nn." << type.Scalar() << "(" << *arguments << ")\n";
      module_lines_[*name] = module.Mark().line + 1;
    }
    return {};
  }

  Result<void> read_graph(const YAML::Node& graph, const YAML::Node& document, std::ostringstream& forward) {
    if (!graph || !graph.IsSequence() || graph.size() == 0)
      return fail(graph ? graph : document, "graph: a list of nodes, each {name, module or function, inputs}");
    for (const auto& node : graph) {
      if (!node.IsMap()) return fail(node, "a node is {name: ..., module: ... or function: ..., inputs: [...]}");
      if (auto s = only_fields(node, {"name", "module", "function", "inputs", "args", "kwargs"}, "a node"); !s)
        return s.error();
      auto name = new_name(node["name"], "node");
      if (!name) return name.error();
      const YAML::Node inputs = node["inputs"];
      if (!inputs || !inputs.IsSequence() || inputs.size() == 0)
        return fail(node, "node '" + *name + "': inputs: the values it takes, e.g. [x]");
      std::string reads;
      for (const auto& input : inputs) {
        if (!input.IsScalar() || !values_.contains(input.Scalar()))
          return fail(input, "node '" + *name + "' reads '" + (input.IsScalar() ? input.Scalar() : std::string("?")) +
                                 "', which is not an input or a node before it");
        reads += (reads.empty() ? "" : ", ") + input.Scalar();
      }
      const YAML::Node module = node["module"];
      const YAML::Node function = node["function"];
      std::string callee;
      if (module && function) return fail(node, "node '" + *name + "': a module or a function, not both");
      if (module) {
        if (!module.IsScalar() || !module_lines_.contains(module.Scalar()))
          return fail(module, "node '" + *name + "' calls module '" + (module.IsScalar() ? module.Scalar() : "?") +
                                  "', which modules: does not declare");
        if (node["args"] || node["kwargs"])
          return fail(node, "node '" + *name + "': a module's arguments go in its modules: entry");
        callee = "self." + module.Scalar();
        called_.insert(module.Scalar());
      } else if (function) {
        if (!function.IsScalar() ||
            !std::regex_match(function.Scalar(), std::regex("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*")))
          return fail(node, "node '" + *name + "': function: a torch function's name, e.g. relu or nn.functional.gelu");
        callee = "torch." + function.Scalar();
      } else {
        return fail(node, "node '" + *name + "': module: (one of modules:) or function: (a torch function) says what it calls");
      }
      auto arguments = call_arguments(node, reads);
      if (!arguments) return arguments.error();
      forward << "        " << *name << " = " << callee << "(" << *arguments << ")\n";
      values_.insert(*name);
    }
    return {};
  }

  std::string path_;
  std::set<std::string> names_;             // every name declared: inputs, modules, nodes
  std::set<std::string> values_;            // inputs and nodes declared so far
  std::map<std::string, int> module_lines_; // module -> its line
  std::set<std::string> called_;            // modules some node calls
};

}  // namespace

Result<ModelPython> model_python_from_yaml(const std::string& path) { return ModelReader(path).read(); }

}  // namespace drk::kernels
