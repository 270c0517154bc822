// Whole models on the CPU: `drk model split` writes a small CNN's hot subgraphs as KernelBench
// problems, `drk kernelbench import` records them with the model, a candidate of the
// convolution's subgraph is evaluated at the function level, and `drk model compose` puts it
// back into the model, evaluated at the application level: correct when the subgraph's
// candidate is, incorrect when it is not, and refused with the reason when its weights do not
// fit the subgraph's. The same path for a model given in YAML, and for one that unpacks a
// tensor's size (traced at its inputs' shapes).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/verdict_json.h"
#include "tests/support/run_dir.h"

using drk::testing::Ran;
using drk::testing::RunDir;

namespace {

Ran run_drk(const RunDir& dir, const std::vector<std::string>& arguments) {
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

// A convolution that dominates the model's time, then a pool, a flatten and a linear layer.
constexpr const char* kTinyNet = R"(import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, channels, kernel_size=3, padding=1), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2))
        self.classifier = nn.Linear(channels * 16 * 16, classes)

    def forward(self, x):
        x = torch.flatten(self.features(x), 1)
        return F.gelu(self.classifier(x))


def get_inputs():
    return [torch.randn(8, 3, 32, 32)]


def get_init_inputs():
    return [64, 10]
)";

// A candidate of the convolution's subgraph, its convolution named `name`; `scale` 1 is honest.
std::string conv_relu_candidate(const std::string& name, const std::string& scale) {
  return R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.)" + name + R"( = nn.Conv2d(3, 64, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.)" + name + R"((x)) * )" + scale + R"(
)";
}

nlohmann::json evaluate(const RunDir& dir, const std::string& task, const std::string& candidate) {
  Ran ran = run_drk(dir, {"eval", "--task", task, "--candidate", candidate, "--kernelbench-dir", dir.file("records"),
                          "--trials", "2", "--budget-ms", "200", "--json"});
  return drk::testing::verdict_json(ran);
}

// The number of the written subgraph of `split_dir`'s split.json whose first operation is `op`.
int written_subgraph(const RunDir& dir, const std::string& split_dir, const std::string& op) {
  const auto summary = nlohmann::json::parse(dir.read(split_dir + "/split.json"), nullptr, false);
  DRK_REQUIRE(summary.is_object());
  for (const auto& subgraph : summary["subgraphs"])
    if (subgraph.contains("problem") && subgraph["ops"][0] == op) return subgraph["subgraph"].get<int>();
  DRK_FAIL("no written subgraph starts with " << op << ": " << summary.dump(2));
  return 0;
}

}  // namespace

DRK_TEST_CASE("a model's hot subgraph becomes a task, and its candidate composed back is evaluated on the whole model") {
  RunDir dir;
  const std::string model = dir.write("KernelBench/level3/1_TinyNet.py", kTinyNet);
  Ran split = run_drk(dir, {"model", "split", model, "--out", dir.file("split"), "--top", "2", "--repeats", "2"});
  DRK_REQUIRE_MESSAGE(split.exit_code == 0, split.output);
  DRK_CHECK_MESSAGE(split.output.find("Conv2d + ReLU  level2/1_TinyNet_sg") != std::string::npos, split.output);
  std::ifstream summary_file(dir.file("split/split.json"));
  const auto summary = nlohmann::json::parse(summary_file, nullptr, false);
  DRK_REQUIRE(summary.is_object());
  // The convolution's subgraph: its problem and the name its convolution has there.
  std::string problem, conv_name;
  int number = 0;
  double shares = 0;
  for (const auto& subgraph : summary["subgraphs"]) {
    shares += subgraph.value("share", 0.0);
    if (subgraph["ops"] == nlohmann::json({"Conv2d", "ReLU"})) {
      problem = subgraph.value("problem", "");
      number = subgraph.value("subgraph", 0);
      conv_name = subgraph["nodes"][0].get<std::string>();
      DRK_CHECK(subgraph["inputs"] == nlohmann::json({"x"}));
      DRK_CHECK(subgraph["modules"][conv_name] == "features.0");
    }
  }
  DRK_CHECK(shares == doctest::Approx(1.0));
  DRK_REQUIRE_MESSAGE(!problem.empty(), summary.dump(2));
  std::ifstream problem_file(dir.file("split/" + problem));
  std::stringstream problem_text;
  problem_text << problem_file.rdbuf();
  DRK_CHECK(problem_text.str().find("nn.Conv2d(3, 64, kernel_size=(3, 3)") != std::string::npos);
  DRK_CHECK(problem_text.str().find("torch.randn([8, 3, 32, 32], dtype=torch.float32)") != std::string::npos);

  for (const std::string& folder : {"split", "KernelBench"}) {
    Ran imported = run_drk(dir, {"kernelbench", "import", dir.file(folder), "--into", dir.file("records")});
    DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  }
  const std::string subgraph_task = "kernelbench/level2/1_TinyNet_sg" + std::to_string(number);
  const std::string honest = dir.write("conv_relu_new.py", conv_relu_candidate(conv_name, "1.0"));

  // Function level: the subgraph's task.
  auto function_level = evaluate(dir, subgraph_task, honest);
  DRK_CHECK_MESSAGE(function_level["result"].value("correct", false), function_level.dump());
  DRK_CHECK(function_level["result"].value("speedup", 0.0) > 0.0);

  // Application level: the model with the subgraph's candidate in place.
  const std::string candidate_flag = std::to_string(number) + "=" + honest;
  Ran composed = run_drk(dir, {"model", "compose", model, "--split", dir.file("split"), "--candidate", candidate_flag,
                               "--out", dir.file("tinynet_new.py")});
  DRK_REQUIRE_MESSAGE(composed.exit_code == 0, composed.output);
  auto application_level = evaluate(dir, "kernelbench/level3/1_TinyNet", dir.file("tinynet_new.py"));
  DRK_CHECK_MESSAGE(application_level["result"].value("correct", false), application_level.dump());
  DRK_CHECK(application_level["result"].value("speedup", 0.0) > 0.0);
  DRK_CHECK(application_level.value("honest", false));

  // A subgraph candidate 1 % off makes the whole model wrong.
  const std::string off = dir.write("conv_relu_off.py", conv_relu_candidate(conv_name, "1.01"));
  DRK_REQUIRE(run_drk(dir, {"model", "compose", model, "--split", dir.file("split"), "--candidate",
                            std::to_string(number) + "=" + off, "--out", dir.file("tinynet_off.py")})
                  .exit_code == 0);
  auto wrong = evaluate(dir, "kernelbench/level3/1_TinyNet", dir.file("tinynet_off.py"));
  DRK_CHECK_FALSE(wrong["result"].value("correct", true));

  // Weights under other names than the subgraph's cannot take the model's: the error says which.
  const std::string renamed = dir.write("conv_relu_renamed.py", conv_relu_candidate("conv", "1.0"));
  DRK_REQUIRE(run_drk(dir, {"model", "compose", model, "--split", dir.file("split"), "--candidate",
                            std::to_string(number) + "=" + renamed, "--out", dir.file("tinynet_renamed.py")})
                  .exit_code == 0);
  auto misnamed = evaluate(dir, "kernelbench/level3/1_TinyNet", dir.file("tinynet_renamed.py"));
  DRK_CHECK_FALSE(misnamed["result"].value("correct", true));
  const std::string why = misnamed["result"].value("errorText", "") + misnamed["result"].value("compileLog", "");
  DRK_CHECK_MESSAGE(why.find("Missing key(s) in state_dict: \"conv.weight\"") != std::string::npos, misnamed.dump());

  // A subgraph that was not written, and a split folder that is not one, are refused with the fix.
  Ran unknown = run_drk(dir, {"model", "compose", model, "--split", dir.file("split"), "--candidate", "7=" + honest,
                              "--out", dir.file("never.py")});
  DRK_CHECK(unknown.exit_code != 0);
  DRK_CHECK_MESSAGE(unknown.output.find("subgraph 7 is not one that was written") != std::string::npos, unknown.output);
  Ran no_split = run_drk(dir, {"model", "compose", model, "--split", dir.file("nowhere"), "--candidate",
                               candidate_flag, "--out", dir.file("never.py")});
  DRK_CHECK(no_split.exit_code != 0);
  DRK_CHECK_MESSAGE(no_split.output.find("run `drk model split") != std::string::npos, no_split.output);
}

DRK_TEST_CASE("a model in YAML is written as a KernelBench problem, split, imported and composed like one") {
  RunDir dir;
  const std::string yaml = dir.write("tiny_residual.yaml", R"(name: 2_TinyResidual
inputs:
  x: {shape: [4, 16, 24, 24]}
modules:
  conv: {type: Conv2d, args: [16, 16, 3], kwargs: {padding: 1}}
  norm: {type: BatchNorm2d, args: [16]}
graph:
  - {name: h, module: conv, inputs: [x]}
  - {name: n, module: norm, inputs: [h]}
  - {name: r, function: relu, inputs: [n]}
  - {name: out, function: add, inputs: [r, x]}
output: out
)");
  Ran split = run_drk(dir, {"model", "split", yaml, "--out", dir.file("split"), "--top", "2", "--repeats", "1"});
  DRK_REQUIRE_MESSAGE(split.exit_code == 0, split.output);
  DRK_CHECK_MESSAGE(split.output.find("wrote " + dir.file("split/level3/2_TinyResidual.py")) != std::string::npos,
                    split.output);
  const int conv_subgraph = written_subgraph(dir, "split", "Conv2d");

  // One import gives the model's task and its subgraphs'.
  Ran imported = run_drk(dir, {"kernelbench", "import", dir.file("split"), "--into", dir.file("records")});
  DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  DRK_CHECK_MESSAGE(imported.output.find("3 usable") != std::string::npos, imported.output);

  // compose takes the YAML too, and finds the file split wrote.
  const std::string candidate = dir.write("conv_new.py", R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        return self.conv(x)
)");
  Ran composed = run_drk(dir, {"model", "compose", yaml, "--split", dir.file("split"), "--candidate",
                               std::to_string(conv_subgraph) + "=" + candidate, "--out", dir.file("residual_new.py")});
  DRK_REQUIRE_MESSAGE(composed.exit_code == 0, composed.output);
  auto application_level = evaluate(dir, "kernelbench/level3/2_TinyResidual", dir.file("residual_new.py"));
  DRK_CHECK_MESSAGE(application_level["result"].value("correct", false), application_level.dump());

  // A mistake in the YAML is refused with its line, and nothing is written.
  const std::string typo = dir.write("typo.yaml", R"(name: 3_Typo
inputs:
  x: {shape: [4, 16]}
graph:
  - {name: y, function: relu, inputs: [z]}
output: y
)");
  Ran refused = run_drk(dir, {"model", "split", typo, "--out", dir.file("typo-split")});
  DRK_CHECK(refused.exit_code != 0);
  DRK_CHECK_MESSAGE(refused.output.find("typo.yaml:5: node 'y' reads 'z', which is not an input or a node before it") !=
                        std::string::npos,
                    refused.output);
  DRK_CHECK_FALSE(std::filesystem::exists(dir.file("typo-split")));
  Ran not_split = run_drk(dir, {"model", "compose", typo, "--split", dir.file("split"), "--candidate", "1=" + candidate,
                                "--out", dir.file("never.py")});
  DRK_CHECK(not_split.exit_code != 0);
}

DRK_TEST_CASE("a model that unpacks a tensor's size is traced at its inputs' shapes, split and composed") {
  RunDir dir;
  // Plain symbolic tracing refuses `b, c, h, w = x.size()`; the shapes are the problem's own.
  const std::string model = dir.write("KernelBench/level3/4_SizeUnpacked.py", R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, kernel_size=3, padding=1)
        self.head = nn.Linear(channels * 16 * 16, classes)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        b, c, h, w = x.size()
        return self.head(x.reshape(b, c * h * w))


def get_inputs():
    return [torch.randn(4, 3, 16, 16)]


def get_init_inputs():
    return [64, 10]
)");
  Ran split = run_drk(dir, {"model", "split", model, "--out", dir.file("split"), "--top", "3", "--repeats", "1"});
  DRK_REQUIRE_MESSAGE(split.exit_code == 0, split.output);
  const int conv_subgraph = written_subgraph(dir, "split", "Conv2d");
  for (const std::string& folder : {"split", "KernelBench"}) {
    Ran imported = run_drk(dir, {"kernelbench", "import", dir.file(folder), "--into", dir.file("records")});
    DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  }
  const std::string candidate = dir.write("conv_relu_new.py", conv_relu_candidate("conv", "1.0"));
  Ran composed = run_drk(dir, {"model", "compose", model, "--split", dir.file("split"), "--candidate",
                               std::to_string(conv_subgraph) + "=" + candidate, "--out", dir.file("sized_new.py")});
  DRK_REQUIRE_MESSAGE(composed.exit_code == 0, composed.output);
  auto application_level = evaluate(dir, "kernelbench/level3/4_SizeUnpacked", dir.file("sized_new.py"));
  DRK_CHECK_MESSAGE(application_level["result"].value("correct", false), application_level.dump());
}
