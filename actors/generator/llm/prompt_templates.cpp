#include "actors/generator/llm/prompt_templates.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (actors/generator/CMakeLists.txt)"
#endif

namespace drk::generator {
namespace {

struct TemplateFile {
  std::string name;
  std::string PromptTemplates::*text;
  std::vector<std::string> placeholders;
};

const std::vector<TemplateFile>& template_files() {
  static const std::vector<TemplateFile> files = {
      {"system.md", &PromptTemplates::system, {}},
      {"task_kernelbench.md", &PromptTemplates::task_kernelbench, {"task", "device", "backend", "problem_source"}},
      {"task_native.md",
       &PromptTemplates::task_native,
       {"task", "family", "device", "language", "inputs", "outputs", "reference", "shapes", "abi"}},
      {"abi.md", &PromptTemplates::abi, {}},
      {"feedback.md", &PromptTemplates::feedback, {"turn", "turns", "status", "feedback", "reward"}},
  };
  return files;
}

// The name of each {{name}} in `text`, in order.
std::vector<std::string> placeholders_in(std::string_view text) {
  std::vector<std::string> names;
  for (size_t open = text.find("{{"); open != std::string_view::npos; open = text.find("{{", open + 2)) {
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    names.emplace_back(text.substr(open + 2, close - open - 2));
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "{{" : ", {{") + name + "}}";
  return out.empty() ? "none" : out;
}

}  // namespace

std::string default_prompts_directory() { return std::string(DRK_SOURCE_DIR) + "/configs/prompts"; }

Result<PromptTemplates> load_prompt_templates(const std::string& directory) {
  PromptTemplates templates;
  for (const auto& file : template_files()) {
    const std::string path = directory + "/" + file.name;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return make_error(Errc::not_found, "prompt template " + path +
                                             " cannot be read (experiment.generator.prompts_dir must hold " +
                                             file.name + "; configs/prompts/ has the defaults to copy)");
    std::ostringstream text;
    text << in.rdbuf();
    templates.*file.text = text.str();
    for (const auto& name : placeholders_in(templates.*file.text)) {
      if (std::find(file.placeholders.begin(), file.placeholders.end(), name) == file.placeholders.end())
        return make_error(Errc::invalid_argument, "prompt template " + path + " uses {{" + name +
                                                      "}}, which it may not (it may use " +
                                                      joined(file.placeholders) + ")");
    }
  }
  return templates;
}

std::string fill(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t open = text.find("{{", at);
    const size_t close = open == std::string_view::npos ? open : text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    const auto value = values.find(std::string(text.substr(open + 2, close - open - 2)));
    out.append(text.substr(at, open - at));
    out.append(value != values.end() ? value->second : std::string(text.substr(open, close + 2 - open)));
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace drk::generator
