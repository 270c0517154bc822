// `drk tasks audit --json`: the fields a reader of the audit looks for, and names from task files
// (any text) that come back as they were.
#include "kernels/catalog/task_audit_json.h"

#include <nlohmann/json.hpp>

#include "tests/doctest_drk.h"

using namespace drk::kernels;

namespace {

TaskAudit degenerate_audit(const std::string& name) {
  TaskAudit audit;
  audit.task = name;
  audit.output_elements = 512;
  audit.output_scale = 2.5;
  audit.replay_pass_fraction = 0.25;
  audit.inputs = {InputInfluence{"x", 0.75, 1.5}, InputInfluence{"z", 0.0, 0.0}};
  audit.findings = {"input 'z' has no influence"};
  return audit;
}

}  // namespace

DRK_TEST_CASE("the audit's JSON counts degenerate tasks and gives each task's measures") {
  TaskAudit fine;
  fine.task = "relu";
  const auto parsed = nlohmann::json::parse(
      task_audit_json(DeviceKind::cuda, {degenerate_audit("sum"), fine}, {"softmax_f16"}));
  DRK_CHECK(parsed.at("device") == "cuda");
  DRK_CHECK(parsed.at("degenerate") == 1);
  DRK_CHECK(parsed.at("skipped") == nlohmann::json::array({"softmax_f16"}));
  DRK_REQUIRE(parsed.at("tasks").size() == 2);
  const auto& sum = parsed.at("tasks")[0];
  DRK_CHECK(sum.at("task") == "sum");
  DRK_CHECK(sum.at("degenerate") == true);
  DRK_CHECK(sum.at("output_elements") == 512);
  DRK_CHECK(sum.at("output_scale") == 2.5);
  DRK_CHECK(sum.at("replay_pass_fraction") == 0.25);
  DRK_CHECK(sum.at("inputs")[0].at("name") == "x");
  DRK_CHECK(sum.at("inputs")[0].at("changed_fraction") == 0.75);
  DRK_CHECK(sum.at("inputs")[0].at("max_change") == 1.5);
  DRK_CHECK(sum.at("findings")[0] == "input 'z' has no influence");
  DRK_CHECK(parsed.at("tasks")[1].at("degenerate") == false);
}

DRK_TEST_CASE("task and input names with quotes, backslashes and control characters come back as they were") {
  const std::string name = "a\"b\\c\x01\td";
  TaskAudit audit = degenerate_audit(name);
  audit.inputs[1].input = "z\"\\\n";
  const std::string text = task_audit_json(DeviceKind::cpu, {audit}, {name});
  DRK_REQUIRE(nlohmann::json::accept(text));
  const auto parsed = nlohmann::json::parse(text);
  DRK_CHECK(parsed.at("tasks")[0].at("task") == name);
  DRK_CHECK(parsed.at("tasks")[0].at("inputs")[1].at("name") == "z\"\\\n");
  DRK_CHECK(parsed.at("skipped")[0] == name);
}
