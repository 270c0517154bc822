#include "actors/generator/llm/prompt_builder.h"

#include <filesystem>
#include <fstream>

#include <capnp/message.h>

#include "actors/generator/llm/task_brief.h"
#include "base/temporary_directory.h"
#include "kernels/catalog/task.h"
#include "tests/doctest_drk.h"

using namespace drk::generator;

DRK_TEST_CASE("the default templates load and turn 1 of a KernelBench problem quotes its source and backend") {
  auto templates = load_prompt_templates(default_prompts_directory());
  DRK_REQUIRE_MESSAGE(templates.ok(), templates.error().describe());
  TaskBrief task;
  task.name = "kernelbench/level1/19_ReLU";
  task.device = "cuda";
  task.kernelbench = true;
  task.backend = "triton";
  task.problem_source = "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  const Conversation conversation = opening_conversation(*templates, task);
  DRK_REQUIRE(conversation.size() == 2);
  DRK_CHECK(conversation[0].role == "system");
  DRK_CHECK(conversation[1].role == "user");
  DRK_CHECK(conversation[1].content.find("return torch.relu(x)") != std::string::npos);
  DRK_CHECK(conversation[1].content.find("Backend: triton") != std::string::npos);
  DRK_CHECK(conversation[1].content.find("ModelNew") != std::string::npos);
  DRK_CHECK(conversation[1].content.find("{{") == std::string::npos);
}

DRK_TEST_CASE("turn 1 of a task of ours states its tensors, reference and the C ABI") {
  auto templates = load_prompt_templates(default_prompts_directory());
  DRK_REQUIRE(templates.ok());
  TaskBrief task{"relu", "cpu", false, "", "", "elementwise", "C++", "x: float32[4096]", "y: float32[4096]",
                 "y = max(x, 0)"};
  const std::string text = opening_conversation(*templates, task)[1].content;
  DRK_CHECK(text.find("x: float32[4096]") != std::string::npos);
  DRK_CHECK(text.find("y = max(x, 0)") != std::string::npos);
  DRK_CHECK(text.find("drk_kernel(const drk_context* ctx") != std::string::npos);
  DRK_CHECK(text.find("{{") == std::string::npos);
}

DRK_TEST_CASE("turn 1 says which shapes the kernel is called at: the task's shape range where it has one") {
  auto templates = load_prompt_templates(default_prompts_directory());
  DRK_REQUIRE(templates.ok());
  auto catalog = drk::kernels::TaskCatalog::load(drk::kernels::TaskCatalog::default_directory());
  DRK_REQUIRE(catalog.ok());
  auto turn_one = [&](const std::string& name) {
    capnp::MallocMessageBuilder message;
    auto task = message.initRoot<drk::msg::Task>();
    drk::kernels::fill_task_message(**catalog->find(name), drk::kernels::DeviceKind::cpu, task);
    auto brief = task_brief(task.asReader(), "cuda");
    DRK_REQUIRE(brief.ok());
    return opening_conversation(*templates, *brief)[1].content;
  };
  const std::string relu = turn_one("relu");  // relu declares a range on the CPU
  DRK_CHECK(relu.find("drawn from a range (C in {1, 3, 64, 1000, 4096, 4097}, R 1..512 by 1; x [R, C], y [R, C]") !=
            std::string::npos);
  DRK_CHECK(relu.find("DRK_E_UNSUPPORTED_SHAPE") != std::string::npos);
  DRK_CHECK(relu.find("timed at") == std::string::npos);
  const std::string softmax = turn_one("softmax");
  DRK_CHECK(softmax.find("Shapes: these, and one more trial at slightly larger shapes") != std::string::npos);
  DRK_CHECK(softmax.find("drawn from a range") == std::string::npos);
  // rms_norm's range is timed at two more shapes: the prompt names them and what the reward weighs.
  const std::string rms_norm = turn_one("rms_norm");
  DRK_CHECK_MESSAGE(rms_norm.find("timed at B=16 C=256 S=7, B=1 C=16 S=33") != std::string::npos, rms_norm);
  DRK_CHECK(rms_norm.find("the speedup rewarded is the geometric mean over these shapes and those") !=
            std::string::npos);
  // An FP8 variant's tensors say how to read their bytes, and that the scale follows.
  const std::string fp8 = turn_one("relu@float8_e5m2");
  DRK_CHECK(fp8.find("x: float8e5m2[") != std::string::npos);
  DRK_CHECK(fp8.find("OCP FP8 e5m2: sign, 5 exponent bits with bias 15") != std::string::npos);
  DRK_CHECK(fp8.find("x_scale: float32[1]") != std::string::npos);
  DRK_CHECK(fp8.find("y: bfloat16[") != std::string::npos);
}

DRK_TEST_CASE("a later turn carries the feedback, one group a line") {
  auto templates = load_prompt_templates(default_prompts_directory());
  DRK_REQUIRE(templates.ok());
  const ChatMessage message = feedback_message(
      *templates, {2, 3, "did_not_compile", "status=did_not_compile; compile_log=\"a; b\"; reward=0.000", 0.0});
  DRK_CHECK(message.role == "user");
  DRK_CHECK(message.content.find("- status=did_not_compile\n- compile_log=\"a; b\"\n- reward=0.000") !=
            std::string::npos);
  DRK_CHECK(message.content.find("turn 2 of 3") != std::string::npos);
}

DRK_TEST_CASE("a template with a placeholder it may not use is refused, naming the file and the allowed ones") {
  auto created = drk::TemporaryDirectory::create("drk-prompts");
  DRK_REQUIRE(created.ok());
  const drk::TemporaryDirectory& directory = *created;
  for (const auto& entry : std::filesystem::directory_iterator(default_prompts_directory()))
    std::filesystem::copy(entry.path(), directory.path() + "/" + entry.path().filename().string());
  std::ofstream(directory.path() + "/feedback.md") << "Turn {{turn}}: {{speedup}}\n";
  auto templates = load_prompt_templates(directory.path());
  DRK_REQUIRE_FALSE(templates.ok());
  DRK_CHECK(templates.error().message.find("feedback.md uses {{speedup}}") != std::string::npos);
  DRK_CHECK(templates.error().message.find("{{feedback}}") != std::string::npos);
}
