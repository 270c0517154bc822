#include "actors/archivist/training_samples_jsonl.h"

#include "base/json_text.h"

namespace drk::archivist {
namespace {

// The Learner's rejection sampling judges MRS per trajectory, then PRS per turn, and marks a turn
// with the first rejection (actors/learner/step_batch.h): a turn rejected before them, or one
// its Learner could not read (a language model's, "malformed"), was judged by neither.
struct RejectionDecisions {
  Json mrs, prs;  // "kept", "outside_band", "vetoed" / "kept", "rejected"; null: not judged
};

RejectionDecisions rejection_decisions(const TrainingSample& sample) {
  if (sample.trained) return {"kept", "kept"};
  if (sample.rejected_by == "mrs_band") return {"outside_band", nullptr};
  if (sample.rejected_by == "mrs_veto") return {"vetoed", nullptr};
  if (sample.rejected_by == "prs") return {"kept", "rejected"};
  return {nullptr, nullptr};
}

// A language model's prompt as {role, content} messages; null for the embedded policy's turns.
Json prompt_json(const TrainingSample& sample) {
  if (sample.model.empty()) return nullptr;
  Json messages = Json::array();
  for (const auto& message : sample.prompt) messages.push_back({{"role", message.role}, {"content", message.content}});
  return messages;
}

// Text of a language model's turn; null for the embedded policy's.
Json model_text(const TrainingSample& sample, const std::string& text) {
  return sample.model.empty() ? Json(nullptr) : Json(text);
}

}  // namespace

std::string training_sample_json(const TrainingSample& sample) {
  // The loss mask: all decisions of a turn share whether the turn entered the loss.
  const std::vector<int> mask(sample.actions.size(), sample.trained ? 1 : 0);
  const auto decisions = rejection_decisions(sample);
  return json_text({{"task", sample.task},
                    {"trajectory_id", sample.trajectory_id},
                    {"candidate_id", sample.candidate_id},
                    {"turn", sample.turn},
                    {"step", sample.step},
                    {"policy_version", sample.policy_version},
                    {"family", sample.family},
                    {"feedback", sample.feedback},
                    {"candidate", sample.source},
                    {"schedule", sample.schedule},
                    {"actions", sample.actions},
                    {"logprobs", sample.logprobs},
                    {"learner_logprobs", sample.learner_logprobs},
                    {"kept", sample.kept},
                    {"mask", mask},
                    {"trained", sample.trained},
                    {"rejected_by", sample.rejected_by},
                    {"mrs_decision", decisions.mrs},
                    {"prs_decision", decisions.prs},
                    {"reward", sample.reward},
                    {"return", sample.return_value},
                    {"advantage", sample.advantage},
                    {"correct", sample.correct},
                    {"honest", sample.honest},
                    {"speedup", sample.speedup},
                    {"coverage", sample.coverage},
                    {"screened", sample.screened},
                    {"model", model_text(sample, sample.model)},
                    {"prompt", prompt_json(sample)},
                    {"answer", model_text(sample, sample.answer)}});
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
