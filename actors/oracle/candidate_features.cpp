#include "actors/oracle/candidate_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "kernels/schedule/space.h"
#include "base/fnv1a.h"

namespace drk::oracle {
namespace {

constexpr size_t kDevices = 2;
constexpr std::string_view kKeepPrefix = "keep=";

schedule::Device device_at(size_t index) { return index == 0 ? schedule::Device::cpu : schedule::Device::cuda; }

// Where the option slots of (device, family) begin, after the device and family one-hots.
size_t option_slots_begin(schedule::Device device, schedule::Family family) {
  size_t at = kDevices + schedule::kFamilyCount;
  for (size_t device_index = 0; device_index < kDevices; ++device_index) {
    for (int family_index = 0; family_index < schedule::kFamilyCount; ++family_index) {
      const auto this_device = device_at(device_index);
      const auto this_family = static_cast<schedule::Family>(family_index);
      if (this_device == device && this_family == family) return at;
      for (const auto& knob : schedule::knobs(this_family, this_device)) at += knob.options.size();
    }
  }
  return at;
}

// Where the task buckets begin: after the option slots of every family of both devices.
size_t task_buckets_begin() {
  size_t at = kDevices + schedule::kFamilyCount;
  for (size_t device_index = 0; device_index < kDevices; ++device_index) {
    for (int family_index = 0; family_index < schedule::kFamilyCount; ++family_index) {
      for (const auto& knob : schedule::knobs(static_cast<schedule::Family>(family_index), device_at(device_index))) {
        at += knob.options.size();
      }
    }
  }
  return at;
}

size_t task_bucket(std::string_view task) {
  return static_cast<size_t>(fnv1a_64(task) % kTaskBuckets);
}

float log_scale(double value) { return static_cast<float>(std::log10(1.0 + std::max(0.0, value)) / 10.0); }

}  // namespace

size_t candidate_feature_size() { return task_buckets_begin() + kTaskBuckets + 2; }

Result<std::vector<float>> candidate_features(msg::Candidate::Reader candidate, const TaskScales& scales) {
  const std::string id = candidate.getId().cStr();
  const auto schedule = candidate.getSchedule();
  auto family = schedule::parse_family(schedule.getFamily().cStr());
  if (!family) {
    return make_error(Errc::invalid_argument, "candidate '" + id + "': " + family.error().message);
  }
  const size_t device_index = candidate.getDevice() == msg::Device::CUDA ? 1 : 0;
  const auto device = device_at(device_index);

  std::vector<float> features(candidate_feature_size(), 0.0f);
  features[device_index] = 1.0f;
  features[kDevices + static_cast<size_t>(*family)] = 1.0f;

  const auto family_knobs = schedule::knobs(*family, device);
  size_t knob_begin = option_slots_begin(device, *family);
  std::vector<size_t> knob_offsets;
  for (const auto& knob : family_knobs) {
    knob_offsets.push_back(knob_begin);
    knob_begin += knob.options.size();
  }
  for (const auto decision : schedule.getDecisions()) {
    const std::string_view knob_name = decision.getKnob().cStr();
    size_t knob_index = 0;
    while (knob_index < family_knobs.size() && family_knobs[knob_index].name != knob_name) ++knob_index;
    if (knob_index == family_knobs.size()) {
      return make_error(Errc::invalid_argument,
                        "candidate '" + id + "': knob '" + std::string(knob_name) + "' is not a knob of family '" +
                            std::string(schedule::family_name(*family)) + "' on " +
                            std::string(schedule::device_name(device)) + " (kernels/schedule/space.h)");
    }
    std::string_view value = decision.getValue().cStr();
    if (value.substr(0, kKeepPrefix.size()) == kKeepPrefix) value.remove_prefix(kKeepPrefix.size());
    const auto& options = family_knobs[knob_index].options;
    size_t option = 0;
    while (option < options.size() && options[option] != value) ++option;
    // Without a readable value, the index itself, when it names an option (not "keep").
    if (option == options.size() && decision.getOption() < options.size()) option = decision.getOption();
    if (option == options.size()) {
      return make_error(Errc::invalid_argument,
                        "candidate '" + id + "': knob '" + std::string(knob_name) + "' has no option '" +
                            std::string(value) + "' (index " + std::to_string(decision.getOption()) +
                            "); the Generator and the Oracle must share kernels/schedule/space.h");
    }
    features[knob_offsets[knob_index] + option] = 1.0f;
  }

  const std::string task = candidate.getTask().cStr();
  const size_t buckets = task_buckets_begin();
  features[buckets + task_bucket(task)] = 1.0f;
  if (const auto found = scales.find(task); found != scales.end()) {
    features[buckets + kTaskBuckets] = log_scale(found->second[device_index].flops);
    features[buckets + kTaskBuckets + 1] = log_scale(found->second[device_index].min_bytes);
  }
  return features;
}

}  // namespace drk::oracle
