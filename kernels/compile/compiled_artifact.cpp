#include "kernels/compile/compiled_artifact.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "kernels/compile/candidate_extensions.h"
#include "kernels/compile/content_hash.h"

namespace drk::compile {
namespace {

namespace fs = std::filesystem;

std::string_view bytes_of(capnp::Data::Reader data) {
  return {reinterpret_cast<const char*>(data.begin()), data.size()};
}

std::string mebibytes(std::size_t bytes) {
  std::ostringstream text;
  text.precision(3);
  text << static_cast<double>(bytes) / (1u << 20) << " MiB";
  return text.str();
}

Result<std::string> read_object(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return make_error(Errc::io_error, "cannot read the compiled object '" + path + "'");
  std::ostringstream object;
  object << in.rdbuf();
  return object.str();
}

capnp::Data::Reader data_of(const std::string& bytes) {
  return {reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()};
}

}  // namespace

Status pack_artifact(const Compiler& compiler, const CompiledCandidate& compiled, std::string_view built_by,
                     msg::CompiledArtifact::Builder out, std::size_t max_object_bytes) {
  auto bytes = read_object(compiled.library_path);
  if (!bytes) return bytes.error();
  // The load_inline modules, each once (calls of one name and arguments share a module), by their
  // place under the extension cache.
  std::vector<std::pair<std::string, std::string>> modules;
  std::size_t total = bytes->size();
  const fs::path extension_dir = compiler.extension_cache_dir();
  for (const PrebuiltExtension& extension : compiled.extensions) {
    const std::string path = fs::path(extension.module_path).lexically_relative(extension_dir).string();
    if (std::any_of(modules.begin(), modules.end(), [&](const auto& module) { return module.first == path; }))
      continue;
    auto module = read_object(extension.module_path);
    if (!module) return module.error();
    total += module->size();
    modules.emplace_back(path, std::move(*module));
  }
  out.setKey(compiled.key);
  out.setCommand(compiler.command_line());
  out.setCompilerOutput(compiled.compiler_output);
  out.setCompileMs(compiled.compile_ms);
  out.setBuiltBy(std::string(built_by));
  if (total > max_object_bytes) {
    out.setUse(msg::ArtifactUse::WITHHELD);
    out.setNote(std::string(modules.empty() ? "the object" : "the object and its load_inline modules") + " (" +
                mebibytes(total) + ") is over the " + mebibytes(max_object_bytes) +
                " a Candidate may carry: the evaluator compiles the source");
    return {};
  }
  out.setObject(data_of(*bytes));
  out.setObjectSha256(content_hash(*bytes));
  auto shipped = out.initModules(static_cast<unsigned>(modules.size()));
  for (unsigned i = 0; i < modules.size(); ++i) {
    shipped[i].setPath(modules[i].first);
    shipped[i].setBytes(data_of(modules[i].second));
    shipped[i].setSha256(content_hash(modules[i].second));
  }
  out.setUse(msg::ArtifactUse::SHIPPED);
  return {};
}

Status verify_artifact(const Compiler& compiler, const std::string& source, msg::CompiledArtifact::Reader artifact) {
  if (artifact.getUse() == msg::ArtifactUse::WITHHELD)
    return make_error(Errc::invalid_argument, "withheld by " + std::string(artifact.getBuiltBy().cStr()) + ": " +
                                                  artifact.getNote().cStr());
  if (artifact.getObject().size() == 0)
    return make_error(Errc::invalid_argument, "the artifact carries no object");
  const std::string key = compiler.cache_key(source);
  if (key != artifact.getKey().cStr())
    return make_error(Errc::invalid_argument,
                      "its key " + std::string(artifact.getKey().cStr()) + " is not this compiler's key " + key +
                          " for the source (built by `" + artifact.getCommand().cStr() +
                          "` of another version, target or ABI header, or for another source; here: `" +
                          compiler.command_line() + "`)");
  if (content_hash(bytes_of(artifact.getObject())) != artifact.getObjectSha256().cStr())
    return make_error(Errc::invalid_argument, "its object's SHA-256 is not the one sent: the object is corrupt");
  for (const auto module : artifact.getModules()) {
    const std::string path = module.getPath();
    if (!is_extension_cache_path(path))
      return make_error(Errc::invalid_argument,
                        "its load_inline module's path '" + path + "' is not a place in the extension cache");
    if (content_hash(bytes_of(module.getBytes())) != module.getSha256().cStr())
      return make_error(Errc::invalid_argument,
                        "its load_inline module " + path + " has another SHA-256 than the one sent: it is corrupt");
  }
  return {};
}

std::vector<Compiler::ModuleFile> shipped_modules(msg::CompiledArtifact::Reader artifact) {
  std::vector<Compiler::ModuleFile> modules;
  for (const auto module : artifact.getModules()) modules.push_back({module.getPath(), bytes_of(module.getBytes())});
  return modules;
}

msg::Candidate::Builder without_object(msg::Candidate::Reader candidate, capnp::MallocMessageBuilder& message) {
  message.setRoot(candidate);
  auto copy = message.getRoot<msg::Candidate>();
  if (copy.hasCompiled()) {
    copy.getCompiled().disownObject();
    copy.getCompiled().disownModules();
  }
  return copy;
}

}  // namespace drk::compile
