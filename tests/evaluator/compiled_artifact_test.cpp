// Compiled artifacts (kernels/compile/compiled_artifact.h): what a Generator ships is used only
// under the key the receiving compiler computes, with the object it was sent; anything else is
// refused with the reason, and the source compiled. A CUDA object built by nvcc here (no GPU
// needed) is adopted by a second cache with its ptxas report.
#include <capnp/message.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/compile/candidate_extensions.h"
#include "kernels/compile/compile_pool.h"
#include "kernels/compile/compiled_artifact.h"
#include "kernels/compile/content_hash.h"
#include "runtime/transport/codec.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace fs = std::filesystem;
using namespace drk::compile;
using drk::msg::ArtifactUse;
using drk::msg::CompiledArtifact;

namespace {

const char* kTinyCandidate = R"(#include "drk_kernel.h"
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) { return DRK_OK; }
)";

// The system's compiler, counting the compiles it runs (argv that names an output with -o).
class CountingRunner final : public CommandRunner {
 public:
  explicit CountingRunner(std::string target = {}) : target_(std::move(target)) {}
  drk::Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override {
    if (!target_.empty() && argv.back() == "--help=target") return CommandRun{0, 0, false, target_};
    if (std::find(argv.begin(), argv.end(), "-o") != argv.end()) ++compiles;
    return system_->run(argv, timeout);
  }
  int compiles = 0;

 private:
  std::string target_;  // a canned answer to `-march=native -Q --help=target`: another CPU
  std::shared_ptr<CommandRunner> system_ = system_command_runner();
};

std::unique_ptr<Compiler> make_compiler(CompilerOptions options, const std::string& cache,
                                        std::shared_ptr<CommandRunner> runner = system_command_runner()) {
  options.cache_dir = cache;
  auto compiler = Compiler::create(std::move(options), std::move(runner));
  DRK_REQUIRE_MESSAGE(compiler.ok(), (compiler.ok() ? "" : compiler.error().describe()));
  return std::move(*compiler);
}

// Compiles `source` with `compiler` and packs the object into `message`.
CompiledArtifact::Builder build_artifact(Compiler& compiler, const std::string& source,
                                         capnp::MallocMessageBuilder& message,
                                         std::size_t max_object_bytes = kMaxShippedObjectBytes) {
  auto compiled = compiler.compile(source);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().describe()));
  auto artifact = message.initRoot<CompiledArtifact>();
  DRK_REQUIRE(pack_artifact(compiler, *compiled, "generator.0", artifact, max_object_bytes).ok());
  return artifact;
}

std::string error_of(const drk::Status& status) { return status.ok() ? std::string() : status.error().message; }

std::string candidate_source(const std::string& relative) {
  const char* dir = std::getenv("DRK_SOURCE_DIR");
  std::ifstream in(std::string(dir ? dir : ".") + "/tests/candidates/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

DRK_TEST_CASE("an artifact carries the object, its hash and the key the receiving compiler computes") {
  drk::testing::RunDir dir;
  auto sender = make_compiler({}, dir.file("sender"));
  auto receiver = make_compiler({}, dir.file("receiver"));
  capnp::MallocMessageBuilder message;
  auto artifact = build_artifact(*sender, kTinyCandidate, message);
  DRK_CHECK(artifact.getUse() == ArtifactUse::SHIPPED);
  DRK_CHECK(artifact.getObject().size() > 0);
  DRK_CHECK(std::string(artifact.getKey().cStr()) == receiver->cache_key(kTinyCandidate));
  DRK_CHECK(std::string(artifact.getObjectSha256().cStr()) ==
            content_hash({reinterpret_cast<const char*>(artifact.getObject().begin()), artifact.getObject().size()}));
  DRK_CHECK(std::string(artifact.getCommand().cStr()) == receiver->command_line());
  DRK_CHECK(std::string(artifact.getBuiltBy().cStr()) == "generator.0");
  DRK_CHECK(verify_artifact(*receiver, kTinyCandidate, artifact.asReader()).ok());
}

DRK_TEST_CASE("a corrupt object, another source or another compiler's key is refused, saying why") {
  drk::testing::RunDir dir;
  auto sender = make_compiler({}, dir.file("sender"));
  auto receiver = make_compiler({}, dir.file("receiver"));
  capnp::MallocMessageBuilder message;
  auto artifact = build_artifact(*sender, kTinyCandidate, message);

  auto other_source = verify_artifact(*receiver, std::string(kTinyCandidate) + "// edited\n", artifact.asReader());
  DRK_REQUIRE_FALSE(other_source.ok());
  DRK_CHECK(other_source.error().code == drk::Errc::invalid_argument);
  DRK_CHECK(error_of(other_source).find("is not this compiler's key") != std::string::npos);

  // The same compiler on a CPU that -march=native names differently computes another key.
  auto elsewhere = make_compiler({}, dir.file("elsewhere"), std::make_shared<CountingRunner>("  -march=  other\n"));
  DRK_CHECK(elsewhere->cache_key(kTinyCandidate) != receiver->cache_key(kTinyCandidate));
  const auto elsewhere_error = error_of(verify_artifact(*elsewhere, kTinyCandidate, artifact.asReader()));
  DRK_CHECK(elsewhere_error.find("is not this compiler's key") != std::string::npos);

  auto object = artifact.getObject();
  object[object.size() / 2] ^= 0x5a;
  auto corrupt = verify_artifact(*receiver, kTinyCandidate, artifact.asReader());
  DRK_CHECK(error_of(corrupt).find("SHA-256") != std::string::npos);

  // A forged key over the corrupt object changes nothing: the hash still fails.
  artifact.setKey(receiver->cache_key(kTinyCandidate));
  DRK_CHECK_FALSE(verify_artifact(*receiver, kTinyCandidate, artifact.asReader()).ok());

  artifact.initObject(0);
  DRK_CHECK(error_of(verify_artifact(*receiver, kTinyCandidate, artifact.asReader())).find("no object") !=
            std::string::npos);
}

DRK_TEST_CASE("an object over the size a Candidate may carry is withheld, and refused as such") {
  drk::testing::RunDir dir;
  auto sender = make_compiler({}, dir.file("sender"));
  capnp::MallocMessageBuilder message;
  auto artifact = build_artifact(*sender, kTinyCandidate, message, 64);
  DRK_CHECK(artifact.getUse() == ArtifactUse::WITHHELD);
  DRK_CHECK(artifact.getObject().size() == 0);
  DRK_CHECK(std::string(artifact.getNote().cStr()).find("over the") != std::string::npos);
  DRK_CHECK(std::string(artifact.getKey().cStr()) == sender->cache_key(kTinyCandidate));
  DRK_CHECK(error_of(verify_artifact(*sender, kTinyCandidate, artifact.asReader())).find("withheld") !=
            std::string::npos);
  DRK_CHECK(kMaxShippedObjectBytes == drk::runtime::DecodeLimits{}.max_frame_bytes / 4);
}

DRK_TEST_CASE("a pool that adopts a verified object answers its compile from the cache without compiling") {
  drk::testing::RunDir dir;
  auto sender = make_compiler({}, dir.file("sender"));
  capnp::MallocMessageBuilder message;
  auto artifact = build_artifact(*sender, kTinyCandidate, message);

  auto runner = std::make_shared<CountingRunner>();
  auto pool = CompilePool::create(make_compiler({}, dir.file("receiver"), runner), 1);
  DRK_REQUIRE(pool.ok());
  DRK_REQUIRE((*pool)->adopt(kTinyCandidate, artifact.asReader()).ok());
  auto compiled = (*pool)->compile(kTinyCandidate);
  DRK_REQUIRE(compiled.ok());
  DRK_CHECK(compiled->cached);
  DRK_CHECK(runner->compiles == 0);
  DRK_CHECK((*pool)->stats().adopted == 1);

  const std::string edited = std::string(kTinyCandidate) + "// edited\n";
  DRK_CHECK_FALSE((*pool)->adopt(edited, artifact.asReader()).ok());
  DRK_CHECK((*pool)->stats().refused == 1);
  auto recompiled = (*pool)->compile(edited);
  DRK_REQUIRE(recompiled.ok());
  DRK_CHECK_FALSE(recompiled->cached);
  DRK_CHECK(runner->compiles == 1);
}

DRK_TEST_CASE("a CUDA object compiled by nvcc here is adopted elsewhere with its resource report") {
  drk::testing::RunDir dir;
  auto sender = Compiler::create([&] {
    auto options = nvcc_compiler_options();
    options.cache_dir = dir.file("sender");
    return options;
  }());
  if (!sender.ok()) {
    DRK_MESSAGE("skipped: nvcc does not run here (" << sender.error().describe() << ")");
    return;
  }
  const std::string source = candidate_source("cuda/relu.cu");
  DRK_REQUIRE_FALSE(source.empty());
  capnp::MallocMessageBuilder message;
  auto artifact = build_artifact(**sender, source, message);
  DRK_CHECK(artifact.getUse() == ArtifactUse::SHIPPED);
  DRK_CHECK(std::string(artifact.getCommand().cStr()).find("-arch=sm_90") != std::string::npos);
  DRK_CHECK(std::string(artifact.getCompilerOutput().cStr()).find("registers") != std::string::npos);

  auto runner = std::make_shared<CountingRunner>();
  auto pool = CompilePool::create(make_compiler(nvcc_compiler_options(), dir.file("receiver"), runner), 1);
  DRK_REQUIRE(pool.ok());
  auto adopted = (*pool)->adopt(source, artifact.asReader());
  DRK_REQUIRE_MESSAGE(adopted.ok(), error_of(adopted));
  auto compiled = (*pool)->compile(source);
  DRK_REQUIRE(compiled.ok());
  DRK_CHECK(compiled->cached);
  DRK_CHECK(runner->compiles == 0);
  DRK_CHECK(compiled->compiler_output == std::string(artifact.getCompilerOutput().cStr()));
  DRK_CHECK(fs::file_size(compiled->library_path) == artifact.getObject().size());

  // A C++ compiler's key is not nvcc's: the same object is refused by an evaluator of CPU candidates.
  auto cpu = make_compiler({}, dir.file("cpu"));
  DRK_CHECK_FALSE(verify_artifact(*cpu, source, artifact.asReader()).ok());
}

DRK_TEST_CASE("a candidate copied for a result keeps its artifact's record but not the object") {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<drk::msg::Candidate>();
  candidate.setId("s0/relu/0/t1");
  candidate.setSource(kTinyCandidate);
  auto artifact = candidate.initCompiled();
  artifact.setKey("k");
  artifact.initObject(1024);
  artifact.initModules(1)[0].initBytes(2048);
  capnp::MallocMessageBuilder copy;
  auto stripped = without_object(candidate.asReader(), copy);
  DRK_CHECK(std::string(stripped.getId().cStr()) == "s0/relu/0/t1");
  DRK_CHECK(std::string(stripped.getSource().cStr()) == kTinyCandidate);
  DRK_CHECK(std::string(stripped.getCompiled().getKey().cStr()) == "k");
  DRK_CHECK(stripped.getCompiled().getObject().size() == 0);
  DRK_CHECK(stripped.getCompiled().getModules().size() == 0);
  DRK_CHECK(candidate.getCompiled().getObject().size() == 1024);
}

namespace {

const std::string kModuleKey(64, 'a');

// A Python candidate's compile as the sender's compiler would have made it, without building
// anything: its checked source as the object and two load_inline calls of one module, written
// into the sender's extension cache.
CompiledCandidate python_compile(const Compiler& sender, const std::string& source, const std::string& module_bytes) {
  const fs::path module = fs::path(sender.extension_cache_dir()) / "ext" / kModuleKey / "relu_ext.cpython-3-x86_64.so";
  fs::create_directories(module.parent_path());
  std::ofstream(module, std::ios::binary) << module_bytes;
  const fs::path object = fs::path(sender.options().cache_dir) / (sender.cache_key(source) + ".py");
  std::ofstream(object, std::ios::binary) << source;
  CompiledCandidate compiled;
  compiled.library_path = object.string();
  compiled.key = sender.cache_key(source);
  compiled.extensions = {{"relu_ext", module.string()}, {"relu_ext", module.string()}};
  return compiled;
}

}  // namespace

DRK_TEST_CASE("a Python candidate's load_inline modules travel with it and are filed where the receiver's keys look") {
  drk::testing::RunDir dir;
  auto sender = make_compiler(python_compiler_options(), dir.file("sender"));
  auto receiver = make_compiler(python_compiler_options(), dir.file("receiver"));
  const std::string source = "from torch.utils.cpp_extension import load_inline\nclass ModelNew: pass\n";
  const CompiledCandidate compiled = python_compile(*sender, source, "module bytes");
  capnp::MallocMessageBuilder message;
  auto artifact = message.initRoot<CompiledArtifact>();
  DRK_REQUIRE(pack_artifact(*sender, compiled, "generator.0", artifact).ok());
  DRK_REQUIRE(artifact.getModules().size() == 1);  // the two calls share their module
  const std::string path = artifact.getModules()[0].getPath().cStr();
  DRK_CHECK(path == "ext/" + kModuleKey + "/relu_ext.cpython-3-x86_64.so");
  DRK_CHECK(std::string(artifact.getModules()[0].getSha256().cStr()) == content_hash("module bytes"));

  DRK_REQUIRE_MESSAGE(verify_artifact(*receiver, source, artifact.asReader()).ok(),
                      error_of(verify_artifact(*receiver, source, artifact.asReader())));
  DRK_REQUIRE(
      receiver->adopt(source, artifact.getKey().cStr(), "object", "", shipped_modules(artifact.asReader())).ok());
  const fs::path filed = fs::path(receiver->extension_cache_dir()) / path;
  DRK_REQUIRE(fs::exists(filed));
  std::ifstream in(filed, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  DRK_CHECK(bytes.str() == "module bytes");
}

DRK_TEST_CASE("a shipped module that is corrupt, or would be filed outside the extension cache, is refused") {
  drk::testing::RunDir dir;
  auto sender = make_compiler(python_compiler_options(), dir.file("sender"));
  auto receiver = make_compiler(python_compiler_options(), dir.file("receiver"));
  const std::string source = "class ModelNew: pass\n";
  capnp::MallocMessageBuilder message;
  auto artifact = message.initRoot<CompiledArtifact>();
  DRK_REQUIRE(pack_artifact(*sender, python_compile(*sender, source, "module bytes"), "generator.0", artifact).ok());
  DRK_REQUIRE(artifact.getModules().size() == 1);
  auto module = artifact.getModules()[0];
  module.getBytes()[0] ^= 0x5a;
  DRK_CHECK(error_of(verify_artifact(*receiver, source, artifact.asReader())).find("SHA-256") != std::string::npos);
  module.getBytes()[0] ^= 0x5a;
  const std::vector<std::string> escapes = {"ext/" + kModuleKey + "/../../../../etc/cron.d/x", "/tmp/x.so",
                                            "ext/not-a-key/relu_ext.so", "ext/" + kModuleKey + "/.hidden"};
  for (const std::string& escape : escapes) {
    module.setPath(escape);
    DRK_CHECK_MESSAGE(error_of(verify_artifact(*receiver, source, artifact.asReader())).find("extension cache") !=
                          std::string::npos,
                      escape);
    DRK_CHECK_FALSE(
        receiver->adopt(source, artifact.getKey().cStr(), "object", "", shipped_modules(artifact.asReader())).ok());
  }
  // A compiler of C++ candidates builds no modules, and takes none.
  auto cpp = make_compiler({}, dir.file("cpp"));
  const std::string cpp_source = kTinyCandidate;
  DRK_CHECK(error_of(cpp->adopt(cpp_source, cpp->cache_key(cpp_source), "object", "",
                                {{"ext/" + kModuleKey + "/m.so", "bytes"}}))
                .find("builds none") != std::string::npos);
}

DRK_TEST_CASE("extension cache paths: ext/<64 hex digits>/<file>, nothing else") {
  DRK_CHECK(is_extension_cache_path("ext/" + kModuleKey + "/relu_ext.cpython-312-x86_64-linux-gnu.so"));
  DRK_CHECK_FALSE(is_extension_cache_path("ext/" + kModuleKey + "/"));
  DRK_CHECK_FALSE(is_extension_cache_path("ext/" + kModuleKey + "/a/b.so"));
  DRK_CHECK_FALSE(is_extension_cache_path("ext/" + kModuleKey + "/a..so"));
  DRK_CHECK_FALSE(is_extension_cache_path("ext/" + kModuleKey.substr(1) + "/a.so"));
  DRK_CHECK_FALSE(is_extension_cache_path("pch/" + kModuleKey + "/a.so"));
  DRK_CHECK_FALSE(is_extension_cache_path(""));
}
