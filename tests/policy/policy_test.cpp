// The policy network: valid samples, log-probabilities that agree between sampling and
// training, serialisation, learning on a bandit, and the clipped objective's arithmetic.
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <torch/torch.h>

#include "actors/learner/ppo_loss.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy.h"
#include "kernels/schedule/policy_network.h"
#include "tests/doctest_drk.h"

namespace drk::schedule {
namespace {

Problem relu_problem() {
  Problem problem;
  problem.task = "relu";
  problem.family = Family::elementwise;
  problem.params = {{"stages", "v > 0.0f ? v : 0.0f"}};
  problem.inputs = {{"x", {128, 4096}}};
  problem.outputs = {{"y", {128, 4096}}};
  return problem;
}

DRK_TEST_CASE("first turns never keep, later turns may, and choices stay in the space") {
  Policy policy(3, Device::cpu);
  std::mt19937_64 rng(11);
  const auto problem = relu_problem();
  bool kept = false;
  for (int draw = 0; draw < 200; ++draw) {
    const auto first = policy.sample(Family::elementwise, observe(problem, 1, 3, std::nullopt), std::nullopt, rng);
    DRK_REQUIRE(validate(first.choice).ok());
    for (size_t knob = 0; knob < first.decisions.size(); ++knob) {
      DRK_CHECK(first.decisions[knob] < keep_decision(Family::elementwise, Device::cpu, static_cast<int>(knob)));
      DRK_CHECK(first.logprobs[knob] <= 0.0f);
    }
    const PreviousTurn previous{first.choice, true, true, true, 1.5, 1.0};
    const auto second = policy.sample(Family::elementwise, observe(problem, 2, 3, previous), first.choice, rng);
    DRK_REQUIRE(validate(second.choice).ok());
    for (size_t knob = 0; knob < second.decisions.size(); ++knob) {
      if (second.decisions[knob] == keep_decision(Family::elementwise, Device::cpu, static_cast<int>(knob))) {
        kept = true;
        DRK_CHECK(second.choice.options[knob] == first.choice.options[knob]);
      } else {
        DRK_CHECK(second.choice.options[knob] == second.decisions[knob]);
      }
    }
  }
  DRK_CHECK(kept);
}

DRK_TEST_CASE("training log-probabilities equal the ones recorded while sampling") {
  Policy policy(4, Device::cpu);
  std::mt19937_64 rng(5);
  const auto problem = relu_problem();
  std::vector<float> observations;
  std::vector<int64_t> actions;
  std::vector<float> recorded;
  std::vector<uint8_t> later;
  std::optional<Choice> previous;
  std::optional<PreviousTurn> previous_turn;
  for (int turn = 1; turn <= 6; ++turn) {
    const auto observation = observe(problem, turn, 6, previous_turn);
    const auto sampled = policy.sample(Family::elementwise, observation, previous, rng);
    observations.insert(observations.end(), observation.begin(), observation.end());
    actions.insert(actions.end(), sampled.decisions.begin(), sampled.decisions.end());
    recorded.insert(recorded.end(), sampled.logprobs.begin(), sampled.logprobs.end());
    later.push_back(turn > 1 ? 1 : 0);
    previous = sampled.choice;
    previous_turn = PreviousTurn{sampled.choice, true, turn % 2 == 0, true, 1.2, 0.5};
  }
  const int64_t rows = 6, knob_count = 4;
  const auto computed = policy.network().log_probs(
      Family::elementwise,
      torch::from_blob(observations.data(), {rows, observation_size(Device::cpu)}, torch::kFloat32),
      torch::from_blob(actions.data(), {rows, knob_count}, torch::kInt64),
      torch::from_blob(later.data(), {rows}, torch::kUInt8).to(torch::kBool));
  const auto expected = torch::from_blob(recorded.data(), {rows, knob_count}, torch::kFloat32);
  DRK_CHECK((computed - expected).abs().max().item<double>() < 1e-5);
  const auto entropy = policy.network().entropy(
      Family::elementwise, torch::from_blob(observations.data(), {rows, observation_size(Device::cpu)}, torch::kFloat32),
      torch::from_blob(later.data(), {rows}, torch::kUInt8).to(torch::kBool));
  DRK_CHECK(entropy.isfinite().all().item<bool>());
  DRK_CHECK(entropy.min().item<double>() > 0.0);
}

DRK_TEST_CASE("parameters round-trip through bytes and the seed fixes the initial policy") {
  Policy trained(1, Device::cpu), fresh(2, Device::cpu), same_seed(1, Device::cpu);
  const auto observation = observe(relu_problem(), 1, 2, std::nullopt);
  auto draw = [&](Policy& policy) {
    std::mt19937_64 rng(9);
    return policy.sample(Family::elementwise, observation, std::nullopt, rng).logprobs;
  };
  DRK_CHECK(draw(trained) == draw(same_seed));
  DRK_CHECK(draw(trained) != draw(fresh));
  DRK_REQUIRE(fresh.load(trained.serialize()).ok());
  DRK_CHECK(draw(trained) == draw(fresh));
  const auto refused = fresh.load("not a checkpoint");
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().code == Errc::parse_error);
}

DRK_TEST_CASE("a temperature flattens the policy: far above 1 every drawable option is equally likely") {
  Policy policy(3, Device::cpu);
  std::mt19937_64 rng(5);
  const auto observation = observe(relu_problem(), 1, 2, std::nullopt);
  const auto plain = policy.sample(Family::elementwise, observation, std::nullopt, rng);
  const auto flat = policy.sample(Family::elementwise, observation, std::nullopt, rng, 1e6);
  const auto family_knobs = knobs(Family::elementwise, Device::cpu);
  bool any_sharper = false;
  for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
    // A first turn: keep is masked, so the options are the drawable ones.
    const double uniform = -std::log(static_cast<double>(family_knobs[knob].options.size()));
    DRK_CHECK(flat.logprobs[knob] == doctest::Approx(uniform).epsilon(1e-4));
    any_sharper = any_sharper || std::abs(plain.logprobs[knob] - uniform) > 1e-4;
  }
  DRK_CHECK(any_sharper);
}

DRK_TEST_CASE("the CUDA policy samples valid CUDA choices of every family with heads of the CUDA space") {
  Policy policy(3, Device::cuda);
  DRK_CHECK(policy.device() == Device::cuda);
  std::mt19937_64 rng(17);
  for (int index = 0; index < kFamilyCount; ++index) {
    const auto family = static_cast<Family>(index);
    Problem problem = relu_problem();
    problem.family = family;
    problem.device = Device::cuda;
    const auto family_knobs = knobs(family, Device::cuda);
    for (int draw = 0; draw < 50; ++draw) {
      const auto observation = observe(problem, 1, 2, std::nullopt);
      DRK_REQUIRE(observation.size() == static_cast<size_t>(observation_size(Device::cuda)));
      const auto first = policy.sample(family, observation, std::nullopt, rng);
      DRK_REQUIRE(validate(first.choice).ok());
      DRK_CHECK(first.choice.device == Device::cuda);
      DRK_REQUIRE(first.decisions.size() == family_knobs.size());
      for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
        DRK_CHECK(first.decisions[knob] < keep_decision(family, Device::cuda, static_cast<int>(knob)));
      }
      const PreviousTurn previous{first.choice, true, true, true, 2.0, 1.0};
      const auto second = policy.sample(family, observe(problem, 2, 2, previous), first.choice, rng);
      DRK_REQUIRE(validate(second.choice).ok());
      std::vector<float> observations = observe(problem, 2, 2, previous);
      std::vector<int64_t> actions(second.decisions.begin(), second.decisions.end());
      const auto computed = policy.network().log_probs(
          family, torch::from_blob(observations.data(), {1, observation_size(Device::cuda)}, torch::kFloat32),
          torch::from_blob(actions.data(), {1, static_cast<int64_t>(actions.size())}, torch::kInt64),
          torch::ones({1}, torch::kBool));
      for (size_t knob = 0; knob < actions.size(); ++knob) {
        DRK_CHECK(std::abs(computed[0][static_cast<int64_t>(knob)].item<float>() - second.logprobs[knob]) < 1e-5);
      }
    }
  }
}

DRK_TEST_CASE("the CPU network's shapes follow the CPU space; checkpoints never cross devices") {
  Policy cpu(1, Device::cpu), cuda(1, Device::cuda);
  // Eight families: observation 8 (family) + 4 + 4 + 2 + 17 (batched_gemm's one-hot, the
  // widest) + 5 = 40 entries; heads named head_<family>_<knob> with options + 1 outputs.
  DRK_CHECK(observation_size(Device::cpu) == 40);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : cpu.network().named_parameters()) shapes[item.key()] = item.value().sizes().vec();
  DRK_CHECK(shapes.size() == 2 * (2 + 4 + 4 + 6 + 4 + 7 + 5 + 4 + 4));
  DRK_CHECK(shapes["input.weight"] == std::vector<int64_t>{64, 40});
  DRK_CHECK(shapes["head_elementwise_vector_width.weight"] == std::vector<int64_t>{5, 64});
  DRK_CHECK(shapes["head_gemm_threads.bias"] == std::vector<int64_t>{4});
  DRK_CHECK(shapes["head_conv2d_algorithm.bias"] == std::vector<int64_t>{4});
  DRK_CHECK(shapes["head_batched_gemm_parallel_over.weight"] == std::vector<int64_t>{3, 64});
  for (const auto& item : cuda.network().named_parameters()) {
    if (item.key().rfind("head_", 0) == 0) DRK_CHECK(item.key().rfind("head_cuda_", 0) == 0);
  }
  Policy other_cpu(2, Device::cpu);
  DRK_CHECK(other_cpu.load(cpu.serialize()).ok());
  const auto refused = cpu.load(cuda.serialize());
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().message.find("cpu policy network") != std::string::npos);
  DRK_CHECK_FALSE(cuda.load(cpu.serialize()).ok());
}

DRK_TEST_CASE("the CUDA network's shapes follow the CUDA space; a checkpoint of another space fails clearly") {
  // The cuda gemm family's one-hot is 17 wide, the widest: observation 8 + 4 + 4 + 2 + 17 + 5 =
  // 40 entries. Checkpoints written before the eight families (35 entries) do not load, with an
  // error naming the parameter and the space.
  DRK_CHECK(observation_size(Device::cuda) == 40);
  Policy cuda(1, Device::cuda);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : cuda.network().named_parameters()) shapes[item.key()] = item.value().sizes().vec();
  DRK_CHECK(shapes.size() == 2 * (2 + 5 + 4 + 7 + 4 + 6 + 6 + 4 + 4));
  DRK_CHECK(shapes["input.weight"] == std::vector<int64_t>{64, 40});
  DRK_CHECK(shapes["head_cuda_attention_algorithm.weight"] == std::vector<int64_t>{3, 64});
  DRK_CHECK(shapes["head_cuda_gemm_math.weight"] == std::vector<int64_t>{3, 64});
  DRK_CHECK(shapes["head_cuda_gemm_use_library.bias"] == std::vector<int64_t>{3});

  Policy older(2, Device::cuda);
  {
    torch::NoGradGuard no_grad;
    older.network().named_parameters()["input.weight"].set_(torch::zeros({64, 35}));
  }
  const auto before = cuda.network().named_parameters()["hidden.weight"].clone();
  const auto refused = cuda.load(older.serialize());
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_INFO(refused.error().message);
  DRK_CHECK(refused.error().code == Errc::parse_error);
  DRK_CHECK(refused.error().message.find("cuda policy network") != std::string::npos);
  DRK_CHECK(refused.error().message.find("'input.weight' is [64, 35] in the checkpoint but [64, 40]") !=
            std::string::npos);
  DRK_CHECK(refused.error().message.find("start a new run directory") != std::string::npos);
  // A refused checkpoint leaves the network as it was.
  DRK_CHECK(torch::equal(cuda.network().named_parameters()["hidden.weight"], before));
  DRK_CHECK(cuda.network().named_parameters()["input.weight"].sizes().vec() == std::vector<int64_t>{64, 40});
}

DRK_TEST_CASE("the CUDA policy offers tensor cores to 16-bit gemm tasks only and the library to float32 ones only") {
  Policy policy(5, Device::cuda);
  std::mt19937_64 rng(23);
  Problem problem = relu_problem();
  problem.family = Family::gemm;
  problem.device = Device::cuda;
  problem.params = {{"b_layout", "kn"}, {"bias", "false"}, {"epilogue", "v"}};
  problem.inputs = {{"a", {4096, 4096}}, {"b", {4096, 4096}}};
  problem.outputs = {{"y", {4096, 4096}}};
  const int math = cuda_gemm_knob::math, library = cuda_gemm_knob::use_library;
  for (auto precision : {Precision::float32, Precision::float16, Precision::bfloat16}) {
    DRK_INFO("precision " << precision_name(precision));
    problem.precision = precision;
    std::map<int, std::set<uint16_t>> seen;
    std::optional<Choice> previous;
    std::optional<PreviousTurn> previous_turn;
    for (int draw = 0; draw < 150; ++draw) {
      const int turn = draw % 3 + 1;
      if (turn == 1) {
        previous.reset();
        previous_turn.reset();
      }
      auto observation = observe(problem, turn, 3, previous_turn);
      const auto sampled = policy.sample(Family::gemm, observation, previous, rng);
      DRK_REQUIRE(validate(sampled.choice, precision).ok());
      seen[math].insert(sampled.choice.options[math]);
      seen[library].insert(sampled.choice.options[library]);
      // Training sees the same masked distribution as sampling.
      std::vector<int64_t> actions(sampled.decisions.begin(), sampled.decisions.end());
      const auto computed = policy.network().log_probs(
          Family::gemm, torch::from_blob(observation.data(), {1, observation_size(Device::cuda)}, torch::kFloat32),
          torch::from_blob(actions.data(), {1, static_cast<int64_t>(actions.size())}, torch::kInt64),
          torch::full({1}, turn > 1, torch::kBool));
      for (size_t knob = 0; knob < actions.size(); ++knob)
        DRK_CHECK(std::abs(computed[0][static_cast<int64_t>(knob)].item<float>() - sampled.logprobs[knob]) < 1e-5);
      previous = sampled.choice;
      previous_turn = PreviousTurn{sampled.choice, true, true, true, 1.0, 0.5};
    }
    // The option that does not apply has no probability at all.
    auto observation = observe(problem, 1, 3, std::nullopt);
    std::vector<int64_t> inapplicable(knobs(Family::gemm, Device::cuda).size(), 0);
    inapplicable[static_cast<size_t>(precision == Precision::float32 ? math : library)] = 1;
    const auto logprobs = policy.network().log_probs(
        Family::gemm, torch::from_blob(observation.data(), {1, observation_size(Device::cuda)}, torch::kFloat32),
        torch::from_blob(inapplicable.data(), {1, static_cast<int64_t>(inapplicable.size())}, torch::kInt64),
        torch::zeros({1}, torch::kBool));
    if (precision == Precision::float32) {
      DRK_CHECK(seen[math] == std::set<uint16_t>{0});
      DRK_CHECK(seen[library] == std::set<uint16_t>{0, 1});
      DRK_CHECK(logprobs[0][math].item<float>() < -1e8);
    } else {
      DRK_CHECK(seen[math] == std::set<uint16_t>{0, 1});
      DRK_CHECK(seen[library] == std::set<uint16_t>{0});
      DRK_CHECK(logprobs[0][library].item<float>() < -1e8);
    }
  }
}

DRK_TEST_CASE("clipped updates on a bandit raise the probability of the rewarded option") {
  Policy policy(7, Device::cpu);
  torch::optim::Adam optimizer(policy.network().parameters(), torch::optim::AdamOptions(0.05));
  std::mt19937_64 rng(21);
  const auto observation = observe(relu_problem(), 1, 1, std::nullopt);
  constexpr int kRewarded = 2;  // vector_width = 8
  auto probability = [&] {
    torch::NoGradGuard no_grad;
    auto input = torch::tensor(observation).unsqueeze(0);
    auto actions = torch::full({1, 4}, kRewarded, torch::kInt64);
    auto logp = policy.network().log_probs(Family::elementwise, input, actions, torch::zeros({1}, torch::kBool));
    return std::exp(logp[0][1].item<double>());
  };
  const double before = probability();
  for (int iteration = 0; iteration < 15; ++iteration) {
    constexpr int kGroup = 16;
    std::vector<int64_t> actions;
    std::vector<float> old_logp, rewards;
    for (int sample = 0; sample < kGroup; ++sample) {
      const auto sampled = policy.sample(Family::elementwise, observation, std::nullopt, rng);
      actions.insert(actions.end(), sampled.decisions.begin(), sampled.decisions.end());
      old_logp.insert(old_logp.end(), sampled.logprobs.begin(), sampled.logprobs.end());
      rewards.push_back(sampled.decisions[1] == kRewarded ? 1.0f : 0.0f);
    }
    float mean = 0.0f;
    for (float reward : rewards) mean += reward / kGroup;
    for (auto& reward : rewards) reward -= mean;
    const auto inputs = torch::tensor(observation).unsqueeze(0).repeat({kGroup, 1});
    const auto action_tensor = torch::from_blob(actions.data(), {kGroup, 4}, torch::kInt64);
    const auto old_tensor = torch::from_blob(old_logp.data(), {kGroup, 4}, torch::kFloat32);
    const auto advantages = torch::from_blob(rewards.data(), {kGroup}, torch::kFloat32);
    for (int epoch = 0; epoch < 4; ++epoch) {
      optimizer.zero_grad();
      const auto new_logp = policy.network().log_probs(Family::elementwise, inputs, action_tensor,
                                                       torch::zeros({kGroup}, torch::kBool));
      const auto terms = learner::ppo_terms(new_logp, old_tensor, advantages, {});
      (terms.loss_sum / static_cast<double>(terms.count)).backward();
      optimizer.step();
    }
  }
  const double after = probability();
  DRK_INFO("before " << before << " after " << after);
  DRK_CHECK(before < 0.4);
  DRK_CHECK(after > 0.7);
}

DRK_TEST_CASE("the clipped objective matches hand-computed values, dual clip included") {
  // Advantages +1, +1, -1, -1, -1 with ratios 1.5, 0.5, 0.5, 5.0, 1.0.
  const auto ratios = torch::tensor({1.5, 0.5, 0.5, 5.0, 1.0}, torch::kFloat64).unsqueeze(1);
  const auto old_logp = torch::full({5, 1}, -1.0, torch::kFloat64);
  const auto new_logp = old_logp + ratios.log();
  const auto advantages = torch::tensor({1.0, 1.0, -1.0, -1.0, -1.0}, torch::kFloat64);
  const auto terms = learner::ppo_terms(new_logp, old_logp, advantages, {});
  // -1.28 (clipped high) - 0.5 (below the low clip, positive A: unclipped) + 0.8 (clipped
  // low) + 3.0 (dual clip of 5.0) + 1.0
  DRK_CHECK(std::abs(terms.loss_sum.item<double>() - 3.02) < 1e-9);
  DRK_CHECK(terms.clipped == 2.0);
  DRK_CHECK(terms.count == 5);
  const double kl = -(std::log(1.5) + 2 * std::log(0.5) + std::log(5.0));
  DRK_CHECK(std::abs(terms.approx_kl_sum - kl) < 1e-9);
}

}  // namespace
}  // namespace drk::schedule
