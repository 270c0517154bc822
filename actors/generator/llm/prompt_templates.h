// PromptTemplates: the texts a language-model Generator builds its prompts from, one file each in
// a prompts folder (configs/prompts/, or experiment.generator.prompts_dir):
//   system.md            the system message
//   task_kernelbench.md  turn 1 for a KernelBench problem (kernelbench/...): {{task}} {{device}}
//                        {{backend}} {{problem_source}}
//   task_native.md       turn 1 for a task of our catalog: {{task}} {{family}} {{device}}
//                        {{language}} {{inputs}} {{outputs}} {{reference}} {{abi}}
//   abi.md               the C ABI a native candidate compiles against (docs/candidate-abi.md)
//   feedback.md          each later turn: {{turn}} {{turns}} {{status}} {{feedback}} {{reward}}
// A placeholder is {{name}}. load_prompt_templates() refuses a missing file or a placeholder the
// file may not use, naming the file and the ones it may, so that a typo fails at start, not in a
// prompt. fill() then replaces every placeholder.
// Thread-safety: values; load reads files.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace drk::generator {

struct PromptTemplates {
  std::string system;
  std::string task_kernelbench;
  std::string task_native;
  std::string abi;
  std::string feedback;
};

// configs/prompts of the source tree.
std::string default_prompts_directory();

Result<PromptTemplates> load_prompt_templates(const std::string& directory);

// `text` with each {{name}} replaced by values.at(name); a name not in `values` stays as it is.
std::string fill(std::string_view text, const std::map<std::string, std::string>& values);

}  // namespace drk::generator
