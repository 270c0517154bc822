#include "actors/oracle/candidate_features.h"

#include <capnp/message.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/doctest_drk.h"

using drk::oracle::candidate_feature_size;
using drk::oracle::candidate_features;
using drk::oracle::TaskScales;

namespace {

using Decisions = std::vector<std::pair<std::string, std::string>>;  // knob, value

std::vector<float> features_of(const std::string& family, const Decisions& decisions, const std::string& task = "relu",
                               const TaskScales& scales = {}) {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<drk::msg::Candidate>();
  candidate.setId("s0/" + task + "/0/t1");
  candidate.setTask(task);
  candidate.setDevice(drk::msg::Device::CPU);
  auto schedule = candidate.initSchedule();
  schedule.setFamily(family);
  auto list = schedule.initDecisions(static_cast<unsigned>(decisions.size()));
  for (unsigned index = 0; index < decisions.size(); ++index) {
    list[index].setKnob(decisions[index].first);
    list[index].setValue(decisions[index].second);
    list[index].setOption(99);  // the value text is what counts
  }
  auto features = candidate_features(candidate.asReader(), scales);
  DRK_REQUIRE(features.ok());
  return *features;
}

const Decisions kElementwise = {{"fusion", "fused"}, {"vector_width", "8"}, {"chunk", "4096"}, {"threads", "2"}};

}  // namespace

DRK_TEST_CASE("candidate features: fixed length, stable, one slot per device, family and decision") {
  const auto first = features_of("elementwise", kElementwise);
  DRK_CHECK(first.size() == candidate_feature_size());
  DRK_CHECK(first == features_of("elementwise", kElementwise));
  float ones = 0;
  for (const float value : first) ones += value;
  // device + family + 4 knobs + task bucket; no size without a scale.
  DRK_CHECK(ones == doctest::Approx(7.0));
}

DRK_TEST_CASE("candidate features: distinct decisions, families and tasks give distinct vectors") {
  const auto base = features_of("elementwise", kElementwise);
  Decisions wider = kElementwise;
  wider[1].second = "16";
  DRK_CHECK(features_of("elementwise", wider) != base);
  Decisions kept = kElementwise;
  kept[1].second = "keep=8";  // the option kept is the option rendered
  DRK_CHECK(features_of("elementwise", kept) == base);
  const auto rowwise = features_of(
      "rowwise", {{"passes", "two_pass"}, {"vector_width", "8"}, {"inner_tile", "64"}, {"threads", "2"}});
  DRK_CHECK(rowwise != base);
  DRK_CHECK(rowwise.size() == base.size());
  DRK_CHECK(features_of("elementwise", kElementwise, "sigmoid") != base);
}

DRK_TEST_CASE("candidate features: the task's size enters as log scales") {
  TaskScales scales;
  scales["relu"][0] = {1e6, 8e6};
  const auto sized = features_of("elementwise", kElementwise, "relu", scales);
  const size_t size = sized.size();
  DRK_CHECK(sized[size - 2] == doctest::Approx(0.6).epsilon(0.01));
  DRK_CHECK(sized[size - 1] == doctest::Approx(0.69).epsilon(0.01));
}

DRK_TEST_CASE("candidate features: what does not fit the schedule space is an error naming it") {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<drk::msg::Candidate>();
  candidate.setId("c1");
  auto schedule = candidate.initSchedule();
  schedule.setFamily("elementwise");
  auto decisions = schedule.initDecisions(1);
  decisions[0].setKnob("warp_shuffle");
  decisions[0].setValue("yes");
  auto features = candidate_features(candidate.asReader(), {});
  DRK_REQUIRE_FALSE(features.ok());
  DRK_CHECK(features.error().code == drk::Errc::invalid_argument);
  DRK_CHECK(features.error().message.find("warp_shuffle") != std::string::npos);
  schedule.setFamily("fft");
  DRK_CHECK_FALSE(candidate_features(candidate.asReader(), {}).ok());
}
