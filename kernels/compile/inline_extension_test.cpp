// The load_inline calls of a candidate, read without running it: each form of constant the
// extractor folds, and a call it cannot resolve named with its line, argument and reason.
#include <cstdlib>
#include <string>

#include "base/file_system.h"
#include "base/temporary_directory.h"
#include "kernels/compile/inline_extension.h"
#include "tests/doctest_drk.h"

using namespace drk::compile;

namespace {

// The Python that runs the extractor: $DRK_PYTHON, else Debian's (no torch needed to extract).
std::string python() {
  const char* chosen = std::getenv("DRK_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
}

drk::Result<std::vector<InlineExtension>> extract(const drk::TemporaryDirectory& dir, const std::string& candidate) {
  const std::string path = dir.path() + "/candidate.py";
  DRK_REQUIRE(drk::write_file_atomically(drk::real_file_system(), path, candidate));
  return extract_load_inline(python(), path);
}

}  // namespace

DRK_TEST_CASE("load_inline's arguments are folded from literals and module-level names, never run") {
  auto dir = drk::TemporaryDirectory::create("drk-extract-test");
  DRK_REQUIRE(dir);
  // Running this candidate would raise at its first line: the extractor must not run it.
  auto extensions = extract(*dir, R"(raise SystemExit("the candidate was executed")
import torch
import torch.utils.cpp_extension as ce
from torch.utils.cpp_extension import load_inline as build
HEADER = "#include <vector>\n"
body = HEADER + """
torch::Tensor twice(torch::Tensor x) { return x * 2; }
""" "// implicit" ' concatenation'
declarations = ["torch::Tensor twice(torch::Tensor x);", f"int plain();"]
kernel = "".join(["__global__ void k() {}", "\n"])
flags = ["-O3 -DFAST=1", ""]
first = build("first", declarations, kernel, functions=["twice"], extra_cflags=flags, verbose=True)
second = ce.load_inline(name="second", cpp_sources=body, functions={"twice": "Doubles."},
                        extra_cuda_cflags=("--use_fast_math",), with_pytorch_error_handling=False)
class ModelNew:
    def __init__(self):
        self.third = torch.utils.cpp_extension.load_inline(name="third", cpp_sources=(body,),
                                                            extra_ldflags=["-lm"], with_cuda=False)
)");
  DRK_REQUIRE_MESSAGE(extensions.ok(), (extensions ? std::string() : extensions.error().message));
  DRK_REQUIRE(extensions->size() == 3);
  const InlineExtension& first = (*extensions)[0];
  DRK_CHECK(first.name == "first");
  DRK_CHECK(first.line == 12);
  DRK_CHECK(first.cpp_sources == std::vector<std::string>{"torch::Tensor twice(torch::Tensor x);", "int plain();"});
  DRK_CHECK(first.cuda_sources == std::vector<std::string>{"__global__ void k() {}\n"});
  DRK_REQUIRE(first.functions.size() == 1);
  DRK_CHECK(first.functions[0].name == "twice");
  DRK_CHECK(first.functions[0].doc == "twice");
  DRK_CHECK(first.extra_cflags == std::vector<std::string>{"-O3", "-DFAST=1"});
  DRK_CHECK(first.uses_cuda());
  DRK_CHECK(first.with_pytorch_error_handling);

  const InlineExtension& second = (*extensions)[1];
  DRK_CHECK(second.cpp_sources ==
            std::vector<std::string>{"#include <vector>\n\ntorch::Tensor twice(torch::Tensor x) { return x * 2; }\n"
                                     "// implicit concatenation"});
  DRK_CHECK(second.functions[0].doc == "Doubles.");
  DRK_CHECK(second.extra_cuda_cflags == std::vector<std::string>{"--use_fast_math"});
  DRK_CHECK_FALSE(second.with_pytorch_error_handling);
  DRK_CHECK_FALSE(second.uses_cuda());

  const InlineExtension& third = (*extensions)[2];
  DRK_CHECK(third.name == "third");
  DRK_CHECK(third.extra_ldflags == std::vector<std::string>{"-lm"});
  DRK_CHECK(third.with_cuda == std::optional<bool>(false));
}

DRK_TEST_CASE("a load_inline call that cannot be resolved statically is an error naming its line and argument") {
  auto dir = drk::TemporaryDirectory::create("drk-extract-test");
  DRK_REQUIRE(dir);
  auto extensions = extract(*dir, R"(from torch.utils.cpp_extension import load_inline
source = "int a;"
source = "int b;"
ok = load_inline(name="ok", cpp_sources="int c;")
twice_bound = load_inline(name="twice_bound", cpp_sources=source)
read = load_inline(name="read", cpp_sources=open("kernel.cpp").read())
formatted = load_inline(name="formatted", cpp_sources=f"{source}")
positional = load_inline("positional", "int d;", None, ["f"])
)");
  DRK_REQUIRE_FALSE(extensions);
  DRK_CHECK(extensions.error().code == drk::Errc::invalid_argument);
  const std::string& message = extensions.error().message;
  DRK_INFO(message);
  DRK_CHECK(message.find("candidate.py:5: argument cpp_sources: name 'source' is bound more than once") !=
            std::string::npos);
  DRK_CHECK(message.find("candidate.py:6: argument cpp_sources: a Call expression is not a constant") !=
            std::string::npos);
  DRK_CHECK(message.find("candidate.py:7: argument cpp_sources: an f-string with expressions") != std::string::npos);
  DRK_CHECK(message.find("candidate.py:8: argument 4 is positional") != std::string::npos);
  DRK_CHECK(message.find(":4:") == std::string::npos);
}

DRK_TEST_CASE("a candidate without load_inline has no extensions; one that is not Python is an error") {
  auto dir = drk::TemporaryDirectory::create("drk-extract-test");
  DRK_REQUIRE(dir);
  auto none = extract(*dir, "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n");
  DRK_REQUIRE(none);
  DRK_CHECK(none->empty());
  auto broken = extract(*dir, "def f(:\n");
  DRK_REQUIRE_FALSE(broken);
  DRK_CHECK(broken.error().message.find("is not Python") != std::string::npos);
}
