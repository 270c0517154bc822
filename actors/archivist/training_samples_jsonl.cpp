#include "actors/archivist/training_samples_jsonl.h"

#include <cmath>
#include <cstdio>

namespace drk::archivist {
namespace {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

template <typename Values, typename Format>
std::string json_array(const Values& values, Format format) {
  std::string text = "[";
  for (size_t index = 0; index < values.size(); ++index) {
    text += (index == 0 ? "" : ",") + format(values[index]);
  }
  return text + "]";
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\r': quoted += "\\r"; break;
      case '\t': quoted += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          quoted += escaped;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

std::string training_sample_json(const TrainingSample& sample) {
  const auto boolean = [](bool value) { return std::string(value ? "true" : "false"); };
  const auto integer = [](int64_t value) { return std::to_string(value); };
  const auto mask_value = sample.trained ? "1" : "0";
  std::string mask = "[";
  for (size_t index = 0; index < sample.actions.size(); ++index) mask += (index == 0 ? "" : ",") + std::string(mask_value);
  mask += "]";
  std::string line = "{";
  line += "\"task\":" + json_string(sample.task);
  line += ",\"trajectory_id\":" + json_string(sample.trajectory_id);
  line += ",\"candidate_id\":" + json_string(sample.candidate_id);
  line += ",\"turn\":" + std::to_string(sample.turn);
  line += ",\"step\":" + std::to_string(sample.step);
  line += ",\"policy_version\":" + std::to_string(sample.policy_version);
  line += ",\"family\":" + json_string(sample.family);
  line += ",\"feedback\":" + json_string(sample.feedback);
  line += ",\"candidate\":" + json_string(sample.source);
  line += ",\"schedule\":" + json_string(sample.schedule);
  line += ",\"actions\":" + json_array(sample.actions, integer);
  line += ",\"logprobs\":" + json_array(sample.logprobs, json_number);
  line += ",\"learner_logprobs\":" + json_array(sample.learner_logprobs, json_number);
  line += ",\"kept\":" + json_array(sample.kept, boolean);
  line += ",\"mask\":" + mask;
  line += ",\"trained\":" + boolean(sample.trained);
  line += ",\"rejected_by\":" + json_string(sample.rejected_by);
  line += ",\"reward\":" + json_number(sample.reward);
  line += ",\"return\":" + json_number(sample.return_value);
  line += ",\"advantage\":" + json_number(sample.advantage);
  line += ",\"correct\":" + boolean(sample.correct);
  line += ",\"honest\":" + boolean(sample.honest);
  line += ",\"speedup\":" + json_number(sample.speedup);
  line += ",\"coverage\":" + json_number(sample.coverage);
  line += ",\"screened\":" + boolean(sample.screened);
  return line + "}";
}

Result<size_t> write_training_samples_jsonl(const Archive& archive, std::ostream& out) {
  auto samples = archive.training_samples();
  if (!samples) return samples.error();
  for (const auto& sample : *samples) out << training_sample_json(sample) << '\n';
  out.flush();
  if (!out) return make_error(Errc::io_error, "writing the training samples failed (disk full?)");
  return samples->size();
}

}  // namespace drk::archivist
