#include "kernels/compile/inline_extension.h"

#include <cstdlib>

#include "base/file_system.h"
#include "base/json_text.h"
#include "base/temporary_directory.h"

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (kernels/compile/CMakeLists.txt)"
#endif

namespace drk::compile {
namespace {

// Runs the extractor with `argument` and parses the JSON it writes.
Result<Json> run_extractor(const std::string& python, const std::string& argument, CommandRunner& runner,
                           std::chrono::milliseconds timeout) {
  auto scratch = TemporaryDirectory::create("drk-load-inline");
  if (!scratch) return scratch.error();
  const std::string out = scratch->path() + "/out.json";
  auto run = runner.run({python, load_inline_extract_script(), argument, out}, timeout);
  if (!run) return run.error();
  if (!run->succeeded())
    return make_error(Errc::io_error, "'" + python + " " + load_inline_extract_script() + " " + argument +
                                          "' failed" + (run->timed_out ? " (timed out)" : "") + ": " + run->output);
  auto text = real_file_system().read_file(out);
  if (!text) return text.error();
  Json json = Json::parse(*text, nullptr, false);
  if (json.is_discarded()) return make_error(Errc::io_error, "the load_inline extractor wrote malformed JSON: " + *text);
  return json;
}

std::vector<std::string> strings(const Json& json, const char* field) {
  return json.at(field).get<std::vector<std::string>>();
}

InlineExtension extension_from(const Json& json) {
  InlineExtension extension;
  extension.name = json.at("name").get<std::string>();
  extension.line = json.at("line").get<int>();
  extension.cpp_sources = strings(json, "cpp_sources");
  extension.cuda_sources = strings(json, "cuda_sources");
  for (const Json& function : json.at("functions"))
    extension.functions.push_back({function.at("name").get<std::string>(), function.at("doc").get<std::string>()});
  extension.extra_cflags = strings(json, "extra_cflags");
  extension.extra_cuda_cflags = strings(json, "extra_cuda_cflags");
  extension.extra_ldflags = strings(json, "extra_ldflags");
  extension.extra_include_paths = strings(json, "extra_include_paths");
  if (!json.at("with_cuda").is_null()) extension.with_cuda = json.at("with_cuda").get<bool>();
  extension.with_pytorch_error_handling = json.at("with_pytorch_error_handling").get<bool>();
  extension.no_implicit_headers = json.at("no_implicit_headers").get<bool>();
  return extension;
}

}  // namespace

std::string load_inline_extract_script() {
  if (const char* dir = std::getenv("DRK_SOURCE_DIR"); dir && *dir)
    return std::string(dir) + "/kernels/compile/load_inline_extract.py";
  return std::string(DRK_SOURCE_DIR) + "/kernels/compile/load_inline_extract.py";
}

Result<std::vector<InlineExtension>> extract_load_inline(const std::string& python, const std::string& candidate_path,
                                                         std::shared_ptr<CommandRunner> runner,
                                                         std::chrono::milliseconds timeout) {
  auto json = run_extractor(python, candidate_path, *runner, timeout);
  if (!json) return json.error();
  if (json->contains("error"))
    return make_error(Errc::invalid_argument, "the candidate is not Python: " + json->at("error").get<std::string>());
  std::vector<InlineExtension> extensions;
  std::string unresolved;
  for (const Json& call : json->at("extensions")) {
    if (call.contains("error")) {
      unresolved += "\n" + candidate_path + ":" + std::to_string(call.at("line").get<int>()) + ": " +
                    call.at("error").get<std::string>();
    } else {
      extensions.push_back(extension_from(call));
    }
  }
  if (!unresolved.empty())
    return make_error(Errc::invalid_argument,
                      "load_inline calls whose arguments are not constants (write them as literals or as "
                      "module-level names bound once):" + unresolved);
  return extensions;
}

Result<TorchFacts> torch_facts(const std::string& python, std::shared_ptr<CommandRunner> runner,
                               std::chrono::milliseconds timeout) {
  auto json = run_extractor(python, "--torch-facts", *runner, timeout);
  if (!json) return json.error();
  return torch_facts_from_json(json->dump());
}

Result<TorchFacts> torch_facts_from_json(const std::string& text) {
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return make_error(Errc::io_error, "torch's facts are not JSON: " + text);
  try {
    TorchFacts facts;
    facts.version = json.at("version").get<std::string>();
    facts.cuda_version = json.at("cuda_version").get<std::string>();
    facts.cuda_home = json.at("cuda_home").get<std::string>();
    facts.include_paths = strings(json, "include_paths");
    facts.cuda_include_paths = strings(json, "cuda_include_paths");
    facts.library_paths = strings(json, "library_paths");
    facts.cuda_library_paths = strings(json, "cuda_library_paths");
    facts.python_include = json.at("python_include").get<std::string>();
    facts.extension_suffix = json.at("extension_suffix").get<std::string>();
    facts.cxx_standard = json.at("cxx_standard").get<std::string>();
    facts.cxx11_abi = json.at("cxx11_abi").get<int>();
    facts.passes_cxx11_abi = json.at("passes_cxx11_abi").get<bool>();
    facts.pybind11_defines = json.at("pybind11_defines").get<std::map<std::string, std::string>>();
    facts.text = json.dump();
    return facts;
  } catch (const Json::exception& missing) {
    return make_error(Errc::io_error, std::string("torch's facts lack a field (") + missing.what() + "): " + text);
  }
}

Result<std::string> torch_fingerprint(const std::string& python, std::shared_ptr<CommandRunner> runner,
                                      std::chrono::milliseconds timeout) {
  auto json = run_extractor(python, "--torch-fingerprint", *runner, timeout);
  if (!json) return json.error();
  if (!json->contains("fingerprint") || !json->at("fingerprint").is_string())
    return make_error(Errc::io_error, "the load_inline extractor wrote no fingerprint: " + json->dump());
  return json->at("fingerprint").get<std::string>();
}

}  // namespace drk::compile
