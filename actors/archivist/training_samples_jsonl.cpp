#include "actors/archivist/training_samples_jsonl.h"

#include "base/json_text.h"

namespace drk::archivist {

std::string training_sample_json(const TrainingSample& sample) {
  // The loss mask: all decisions of a turn share whether the turn entered the loss.
  const std::vector<int> mask(sample.actions.size(), sample.trained ? 1 : 0);
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
                    {"reward", sample.reward},
                    {"return", sample.return_value},
                    {"advantage", sample.advantage},
                    {"correct", sample.correct},
                    {"honest", sample.honest},
                    {"speedup", sample.speedup},
                    {"coverage", sample.coverage},
                    {"screened", sample.screened}});
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
