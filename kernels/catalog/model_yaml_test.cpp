// model_python_from_yaml: a YAML model written as a KernelBench-format Python file, and every
// mistake refused with the file, the line and the fix.
#include "kernels/catalog/model_yaml.h"

#include <string>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace {

constexpr const char* kResidual = R"(name: TinyResidual
inputs:
  x: {shape: [8, 16, 32, 32]}
  scale: {shape: [1], dtype: float32, draw: rand}
modules:
  conv: {type: Conv2d, args: [16, 16, 3], kwargs: {padding: 1, bias: false}}
  norm: {type: BatchNorm2d, args: [16], kwargs: {eps: 1.0e-5}}
graph:
  - {name: h, module: conv, inputs: [x]}
  - {name: n, module: norm, inputs: [h]}
  - {name: r, function: relu, inputs: [n]}
  - {name: s, function: add, inputs: [r, x], kwargs: {alpha: 0.5}}
  - {name: g, function: nn.functional.gelu, inputs: [s], kwargs: {approximate: "tanh"}}
  - {name: out, function: mul, inputs: [g, scale]}
output: out
)";

std::string error_of(const drk::testing::RunDir& dir, const std::string& text) {
  auto model = drk::kernels::model_python_from_yaml(dir.write("model.yaml", text));
  DRK_REQUIRE_FALSE(model.ok());
  return model.error().message;
}

}  // namespace

DRK_TEST_CASE("a YAML model becomes a KernelBench-format file: modules, torch functions, inputs drawn") {
  drk::testing::RunDir dir;
  auto model = drk::kernels::model_python_from_yaml(dir.write("tiny.yaml", kResidual));
  DRK_REQUIRE_MESSAGE(model.ok(), model.error().message);
  DRK_CHECK(model->name == "TinyResidual");
  const std::string& source = model->source;
  for (const char* line : {"        self.conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)\n",
                           "        self.norm = nn.BatchNorm2d(16, eps=1.0e-5)\n",
                           "    def forward(self, x, scale):\n",
                           "        h = self.conv(x)\n",
                           "        r = torch.relu(n)\n",
                           "        s = torch.add(r, x, alpha=0.5)\n",
                           "        g = torch.nn.functional.gelu(s, approximate='tanh')\n",
                           "        return out\n",
                           "    return [torch.randn(8, 16, 32, 32, dtype=torch.float32), torch.rand(1, dtype=torch.float32)]\n",
                           "def get_init_inputs():\n    return []\n"})
    DRK_CHECK_MESSAGE(source.find(line) != std::string::npos, line << "\nnot in\n" << source);
}

DRK_TEST_CASE("every mistake in a YAML model names its line and the fix") {
  drk::testing::RunDir dir;
  const std::string base = kResidual;
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    const auto at = text.find(from);
    DRK_REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  DRK_CHECK(error_of(dir, replaced("inputs: [n]}", "inputs: [m]}"))
                .find(":11: node 'r' reads 'm', which is not an input or a node before it") != std::string::npos);
  DRK_CHECK(error_of(dir, replaced("{name: h, module: conv", "{name: h, modul: conv"))
                .find("'modul' is not a field of a node") != std::string::npos);
  DRK_CHECK(error_of(dir, replaced("{name: n, module: norm, inputs: [h]}", "{name: n, function: relu, inputs: [h]}"))
                .find(":7: module 'norm' is not called by any node of the graph: call it or remove it") != std::string::npos);
  DRK_CHECK(error_of(dir, replaced("{name: r,", "{name: x,")).find("node 'x' is already the name of something else") !=
            std::string::npos);
  DRK_CHECK(error_of(dir, replaced("{name: r,", "{name: class,")).find("node 'class' is not a name Python can use") !=
            std::string::npos);
  DRK_CHECK(error_of(dir, replaced("dtype: float32", "dtype: float64")).find("dtype 'float64' is not float32") !=
            std::string::npos);
  DRK_CHECK(error_of(dir, replaced("shape: [8, 16, 32, 32]", "shape: [8, 0, 32, 32]"))
                .find("a size is a positive whole number") != std::string::npos);
  DRK_CHECK(error_of(dir, replaced("output: out", "output: nowhere")).find("output 'nowhere' is not an input or a node") !=
            std::string::npos);
  DRK_CHECK(error_of(dir, replaced("module: conv, inputs", "module: conv2, inputs"))
                .find("calls module 'conv2', which modules: does not declare") != std::string::npos);
  DRK_CHECK(error_of(dir, "name: [unclosed").find("model.yaml:") != std::string::npos);
  auto missing = drk::kernels::model_python_from_yaml(dir.file("nowhere.yaml"));
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().code == drk::Errc::not_found);
}

DRK_TEST_CASE("the example model in configs/models is one the writer takes") {
  auto model = drk::kernels::model_python_from_yaml(std::string(DRK_SOURCE_DIR) + "/configs/models/3_ResidualBlock.yaml");
  DRK_REQUIRE_MESSAGE(model.ok(), model.error().message);
  DRK_CHECK(model->name == "3_ResidualBlock");
  DRK_CHECK(model->source.find("        total = torch.add(n2, x)\n") != std::string::npos);
}
