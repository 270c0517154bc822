#include "kernels/compile/compiled_artifact.h"

#include <fstream>
#include <sstream>

#include "kernels/compile/content_hash.h"

namespace drk::compile {
namespace {

std::string_view bytes_of(capnp::Data::Reader data) {
  return {reinterpret_cast<const char*>(data.begin()), data.size()};
}

std::string mebibytes(std::size_t bytes) {
  std::ostringstream text;
  text.precision(3);
  text << static_cast<double>(bytes) / (1u << 20) << " MiB";
  return text.str();
}

}  // namespace

Status pack_artifact(const Compiler& compiler, const CompiledCandidate& compiled, std::string_view built_by,
                     msg::CompiledArtifact::Builder out, std::size_t max_object_bytes) {
  std::ifstream in(compiled.library_path, std::ios::binary);
  if (!in.is_open())
    return make_error(Errc::io_error, "cannot read the compiled object '" + compiled.library_path + "'");
  std::ostringstream object;
  object << in.rdbuf();
  const std::string bytes = object.str();
  out.setKey(compiled.key);
  out.setCommand(compiler.command_line());
  out.setCompilerOutput(compiled.compiler_output);
  out.setCompileMs(compiled.compile_ms);
  out.setBuiltBy(std::string(built_by));
  if (bytes.size() > max_object_bytes) {
    out.setUse(msg::ArtifactUse::WITHHELD);
    out.setNote("the object (" + mebibytes(bytes.size()) + ") is over the " + mebibytes(max_object_bytes) +
                " a Candidate may carry: the evaluator compiles the source");
    return {};
  }
  out.setObject(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()));
  out.setObjectSha256(content_hash(bytes));
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
  return {};
}

msg::Candidate::Builder without_object(msg::Candidate::Reader candidate, capnp::MallocMessageBuilder& message) {
  message.setRoot(candidate);
  auto copy = message.getRoot<msg::Candidate>();
  if (copy.hasCompiled()) copy.getCompiled().disownObject();
  return copy;
}

}  // namespace drk::compile
