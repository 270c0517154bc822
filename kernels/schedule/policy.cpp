#include "kernels/schedule/policy.h"

#include <sstream>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy_network.h"

namespace drk::schedule {

namespace {

std::string shape_text(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t dim = 0; dim < sizes.size(); ++dim) text += (dim ? ", " : "") + std::to_string(sizes[dim]);
  return text + "]";
}

}  // namespace

uint16_t keep_decision(Family family, Device device, int knob) {
  return static_cast<uint16_t>(knobs(family, device)[static_cast<size_t>(knob)].options.size());
}

Policy::Policy(uint64_t seed, Device device)
    : device_(device), network_(std::make_shared<PolicyNetworkImpl>(seed, device)) {}
Policy::~Policy() = default;
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;

Sampled Policy::sample(Family family, const std::vector<float>& observation,
                       const std::optional<Choice>& previous, std::mt19937_64& rng, double temperature) {
  torch::NoGradGuard no_grad;
  const bool later_turn = previous.has_value() && previous->family == family && previous->device == device_;
  const auto input = torch::tensor(observation, torch::kFloat32).unsqueeze(0);
  const auto later = torch::full({1}, later_turn, torch::kBool);
  const auto hidden = network_->trunk(input);
  Sampled sampled;
  sampled.choice.family = family;
  sampled.choice.device = device_;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int knob_count = static_cast<int>(knobs(family, device_).size());
  for (int knob = 0; knob < knob_count; ++knob) {
    const auto log_softmax =
        torch::log_softmax(network_->knob_logits(family, knob, input, hidden, later) / temperature, 1).squeeze(0);
    const auto values = log_softmax.accessor<float, 1>();
    const int64_t options = values.size(0);
    const int64_t drawable = later_turn ? options : options - 1;
    // Inverse CDF; the last drawable option that is not masked out takes what rounding leaves over.
    const double target = uniform(rng);
    double cumulative = 0.0;
    int64_t decision = -1;
    int64_t last_possible = 0;
    for (int64_t option = 0; option < drawable; ++option) {
      const double probability = std::exp(static_cast<double>(values[option]));
      if (probability > 0.0) last_possible = option;
      cumulative += probability;
      if (target < cumulative) {
        decision = option;
        break;
      }
    }
    if (decision < 0) decision = last_possible;
    const uint16_t keep = keep_decision(family, device_, knob);
    sampled.decisions.push_back(static_cast<uint16_t>(decision));
    sampled.logprobs.push_back(values[decision]);
    sampled.choice.options.push_back(decision == keep ? previous->at(knob)
                                                      : static_cast<uint16_t>(decision));
  }
  return sampled;
}

std::string Policy::serialize() const {
  torch::serialize::OutputArchive archive;
  network_->save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

Status Policy::load(std::string_view bytes) {
  // Into a network of its own first: a checkpoint that does not fit leaves this one untouched.
  PolicyNetworkImpl staged(0, device_);
  const std::string refusal = "policy parameters (" + std::to_string(bytes.size()) + " bytes) do not load into the " +
                              std::string(device_name(device_)) + " policy network: ";
  try {
    std::istringstream stream{std::string(bytes)};
    torch::serialize::InputArchive archive;
    archive.load_from(stream);
    staged.load(archive);
  } catch (const c10::Error& error) {
    return make_error(Errc::parse_error,
                      refusal + error.what_without_backtrace() +
                          " (a checkpoint from another scheduling space or device? start a new run directory)");
  }
  // Loading replaces each tensor whole, shape included: a parameter of another shape is a
  // checkpoint of another space (a knob or an option more or less).
  const auto loaded = staged.named_parameters();
  auto current = network_->named_parameters();
  for (const auto& item : current) {
    const auto found = loaded.find(item.key());
    if (found != nullptr && found->sizes() == item.value().sizes()) continue;
    return make_error(Errc::parse_error,
                      refusal + "parameter '" + item.key() + "' is " +
                          (found == nullptr ? std::string("missing") : shape_text(found->sizes())) +
                          " in the checkpoint but " + shape_text(item.value().sizes()) +
                          " here: the checkpoint was written for another version of the " +
                          std::string(device_name(device_)) +
                          " scheduling space (docs/scheduling-space.md); start a new run directory");
  }
  torch::NoGradGuard no_grad;
  for (auto& item : current) item.value().copy_(*loaded.find(item.key()));
  return {};
}

}  // namespace drk::schedule
