#include "actors/oracle/cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tests/doctest_drk.h"

using drk::oracle::CostModel;
using drk::oracle::CostModelOptions;

namespace {

constexpr size_t kWidth = 16;

// Two slots among the first eight on; the reward is 1 + 0.5 * (slot 3 is on).
std::vector<float> near(size_t first, size_t second) {
  std::vector<float> features(kWidth, 0.0f);
  features[first % 8] = 1.0f;
  features[second % 8] = 1.0f;
  return features;
}
double truth(const std::vector<float>& features) { return 1.0 + 0.5 * features[3]; }

CostModel trained(uint64_t seed, size_t steps) {
  CostModelOptions options;
  options.seed = seed;
  auto model = CostModel::create(kWidth, options);
  DRK_REQUIRE(model.ok());
  for (size_t first = 0; first < 8; ++first) {
    for (size_t second = first; second < 8; ++second) {
      DRK_REQUIRE(model->observe(near(first, second), truth(near(first, second))).ok());
    }
  }
  model->train(steps);
  return std::move(*model);
}

// Trained once for the tests that read it.
const CostModel& trained_model() {
  static const CostModel model = trained(7, 200);
  return model;
}

}  // namespace

DRK_TEST_CASE("cost model: an ensemble learns a simple function to a small error") {
  const CostModel& model = trained_model();
  DRK_CHECK(model.members() == 5);
  DRK_CHECK(model.observed() == 36);
  double worst = 0;
  for (size_t first = 0; first < 8; ++first) {
    for (size_t second = first; second < 8; ++second) {
      const auto prediction = model.predict(near(first, second));
      DRK_REQUIRE(prediction.ok());
      worst = std::max(worst, std::abs(prediction->mean - truth(near(first, second))));
    }
  }
  DRK_CHECK(worst < 0.1);
}

DRK_TEST_CASE("cost model: the members disagree more far from the data than near it") {
  const CostModel& model = trained_model();
  double near_stddev = 0;
  for (size_t first = 0; first < 8; ++first) near_stddev += model.predict(near(first, first + 1))->stddev / 8;
  std::vector<float> far(kWidth, 0.0f);
  for (size_t slot = 8; slot < kWidth; ++slot) far[slot] = 1.0f;  // never seen on
  const double far_stddev = model.predict(far)->stddev;
  DRK_MESSAGE("stddev near " << near_stddev << ", far " << far_stddev);
  DRK_CHECK(far_stddev > 3 * near_stddev);
}

DRK_TEST_CASE("cost model: deterministic given the seed, different members for another seed") {
  const auto probe = near(2, 5);
  const CostModel first = trained(11, 20), again = trained(11, 20), other = trained(12, 20);
  DRK_CHECK(first.predict(probe)->mean == again.predict(probe)->mean);
  DRK_CHECK(first.predict(probe)->stddev == again.predict(probe)->stddev);
  DRK_CHECK(first.predict(probe)->stddev != other.predict(probe)->stddev);
}

DRK_TEST_CASE("cost model: wrong inputs are errors, training with nothing observed does nothing") {
  DRK_CHECK_FALSE(CostModel::create(0, {}).ok());
  CostModelOptions one_member;
  one_member.members = 1;
  DRK_CHECK_FALSE(CostModel::create(kWidth, one_member).ok());
  auto model = CostModel::create(kWidth, {});
  DRK_REQUIRE(model.ok());
  model->train(5);
  DRK_CHECK(model->observed() == 0);
  const auto short_vector = model->observe(std::vector<float>(3, 0.0f), 1.0);
  DRK_REQUIRE_FALSE(short_vector.ok());
  DRK_CHECK(short_vector.error().code == drk::Errc::invalid_argument);
  DRK_CHECK_FALSE(model->observe(near(0, 1), std::nan("")).ok());
  DRK_CHECK_FALSE(model->predict(std::vector<float>(kWidth + 1, 0.0f)).ok());
}

DRK_TEST_CASE("cost model: the replay buffer is bounded, observed counts everything") {
  CostModelOptions small;
  small.buffer_capacity = 4;
  auto model = CostModel::create(kWidth, small);
  DRK_REQUIRE(model.ok());
  for (int index = 0; index < 10; ++index) DRK_REQUIRE(model->observe(near(0, 1), 1.0).ok());
  DRK_CHECK(model->observed() == 10);
  model->train(1);
}
