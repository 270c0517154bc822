// Generated tasks are trainable: each renders, through the message a Generator gets, to a C++
// kernel (a random point of its family's CPU space) that compiles and agrees with the task's
// LibTorch reference within its tolerance, at its shapes, at its second shapes and (for tasks
// generated with shape ranges) at its range's smallest corner, every dim 1. This is what
// ties each pointwise operation's C stage to its reference-language twin.
#include <ATen/ATen.h>

#include <random>

#include <capnp/message.h>

#include "kernels/catalog/generated_task_writer.h"
#include "kernels/catalog/reference.h"
#include "kernels/catalog/task.h"
#include "kernels/catalog/task_generator.h"
#include "kernels/schedule/problem.h"
#include "kernels/schedule/render.h"
#include "tests/doctest_drk.h"
#include "tests/policy/kernel_harness.h"
#include "tests/support/run_dir.h"

using namespace drk;
using drk::testing::HostTensor;

namespace {

schedule::Choice random_choice(schedule::Family family, std::mt19937& rng) {
  schedule::Choice choice{family, {}};
  for (const auto& knob : schedule::knobs(family, schedule::Device::cpu))
    choice.options.push_back(static_cast<uint16_t>(rng() % knob.options.size()));
  return choice;
}

HostTensor host_of(const at::Tensor& tensor) {
  const at::Tensor dense = tensor.contiguous().to(at::kFloat);
  HostTensor host{dense.sizes().vec(), {}};
  host.values.assign(dense.data_ptr<float>(), dense.data_ptr<float>() + dense.numel());
  return host;
}

// One generated task at one set of its shapes, rendered and ready to call.
struct RenderedCase {
  kernels::Task task;  // at the shapes it is called at
  std::string what;    // "gen_004_tanh (second shapes)"
  size_t kernel = 0;   // its index in the compiled library
};

}  // namespace

DRK_TEST_CASE("every generated task renders to a kernel that matches its LibTorch reference, at every shape set it has") {
  drk::testing::RunDir dir;
  kernels::TaskGeneratorOptions options;
  options.seed = 7;
  options.count = 24;
  options.shape_ranges = true;
  auto drafts = kernels::generate_tasks(options);
  DRK_REQUIRE(drafts.ok());
  // Enough elementwise chains beside them that every pointwise operation is rendered.
  options.name_prefix = "chain";
  options.families = {"elementwise"};
  options.shape_ranges = false;
  auto chains = kernels::generate_tasks(options);
  DRK_REQUIRE(chains.ok());
  drafts->insert(drafts->end(), chains->begin(), chains->end());
  for (const auto& op : kernels::generated_pointwise_ops()) {
    bool rendered = false;
    for (const auto& draft : *drafts)
      rendered = rendered || (draft.name + "_").find("_" + op + "_") != std::string::npos;
    DRK_CHECK_MESSAGE(rendered, "no generated task uses " << op);
  }
  auto written = kernels::write_generated_tasks(*drafts, dir.path().string());
  DRK_REQUIRE(written.ok());
  std::mt19937 rng(5);
  std::vector<RenderedCase> cases;
  std::vector<std::string> sources;
  for (const auto& generated : *written) {
    DRK_REQUIRE_MESSAGE(generated.kept, generated.draft.name << ": " << generated.reason);
    auto task = kernels::load_task_file(generated.path);
    DRK_REQUIRE(task.ok());
    capnp::MallocMessageBuilder builder;
    auto message = builder.initRoot<msg::Task>();
    kernels::fill_task_message(*task, kernels::DeviceKind::cpu, message);
    auto problem = schedule::problem_from_task(message.asReader());
    DRK_REQUIRE_MESSAGE(problem.ok(), (problem.ok() ? "" : problem.error().describe()));
    const schedule::Choice choice = random_choice(problem->family, rng);
    auto source = schedule::render(*problem, choice);
    DRK_REQUIRE_MESSAGE(source.ok(), generated.draft.name << ": " << (source.ok() ? "" : source.error().describe()));
    cases.push_back({*task, task->name + " (shapes)", sources.size()});
    cases.push_back({kernels::at_second_shapes(*task, kernels::DeviceKind::cpu), task->name + " (second shapes)",
                     sources.size()});
    if (const kernels::ShapeRange* range = task->shape_range(kernels::DeviceKind::cpu))
      cases.push_back({kernels::at_shapes(*task, kernels::DeviceKind::cpu, range->smallest()),
                       task->name + " (its range's smallest shapes)", sources.size()});
    sources.push_back(*source);
  }
  drk::testing::KernelHarness harness;
  auto compiled = harness.compile(sources);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().describe()));
  for (size_t index = 0; index < cases.size(); ++index) {
    const kernels::Task& task = cases[index].task;
    DRK_INFO(cases[index].what << ": " << task.reference);
    auto inputs = kernels::draw_inputs(task, kernels::DeviceKind::cpu, 1000 + index);
    auto reference = kernels::Reference::create(task);
    DRK_REQUIRE(reference.ok());
    auto expected = reference->run(inputs);
    DRK_REQUIRE(expected.ok());
    std::vector<HostTensor> host_inputs, outputs;
    for (const auto& input : inputs) host_inputs.push_back(host_of(input));
    outputs.push_back(HostTensor{expected->sizes().vec(), {}});
    DRK_REQUIRE(harness.call(cases[index].kernel, host_inputs, outputs, 2) == DRK_OK);
    const HostTensor want = host_of(*expected);
    const kernels::Tolerance tolerance = task.output_tolerance();
    size_t wrong = 0;
    for (size_t i = 0; i < want.values.size(); ++i) {
      const double got = outputs[0].values[i], ref = want.values[i];
      if (!(std::abs(got - ref) <= tolerance.atol + tolerance.rtol * std::abs(ref))) ++wrong;
    }
    DRK_CHECK_MESSAGE(wrong == 0, wrong << " of " << want.values.size() << " elements outside the tolerance");
  }
}
