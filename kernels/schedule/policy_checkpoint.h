// The policy's checkpoints in a run directory, written by the Learner and read by Generators:
//
//   RUN_DIR/policy/v<N>.pt        parameters of policy version N (Policy::serialize bytes,
//                                 the same bytes PolicyWeights.parameters carries); every
//                                 version is kept, so that the Learner can roll back to any
//   RUN_DIR/policy/adam-v<N>.pt   the Learner's optimizer state after producing version N
//   RUN_DIR/policy/latest.pt      a copy of the newest v<N>.pt, for people and tools
//   RUN_DIR/policy/state.yaml     written last: version, step (the next step to run: the one in
//                                 progress after a restart), reports (one per finished step, so
//                                 that they can be sent again after any restart)
//
// Every file is written to a temporary name, flushed and renamed into place (write_file_atomically
// of base/file_system.h, the seam through which every file here is read and written), so a
// reader sees either the old or the new file, and state.yaml never names a version whose files
// are missing: a write that fails (a full disk, EIO, a failed rename) leaves the previous
// checkpoint whole.
//
// Thread-safety: functions touch only the files named; one writer per run directory.
// Errors: io_error naming the file for the operating system's refusals; parse_error for a
// malformed state.yaml.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "base/result.h"

namespace drk::schedule {

// What one finished training step did (the fields of a StepReport).
struct StepSummary {
  uint32_t step = 0;
  uint32_t policy_version = 0;
  double mean_reward = 0, best_speedup = 0, correct_fraction = 0;
  uint32_t trajectories = 0;
  double loss = 0, seconds = 0, clip_fraction = 0, approx_kl = 0;
  // Rollback, rejection sampling and the trust region (absent from older state.yaml files:
  // the defaults below).
  bool rolled_back = false;
  uint32_t rolled_back_to = 0;
  bool diagnostic = false;
  uint32_t prs_rejected = 0, mrs_rejected = 0, mrs_vetoed = 0, stale_rejected = 0;
  uint32_t ppo_epochs = 0;
  std::string stage;
  // Oracle screening: turns measured, and turns answered by the cost model.
  uint32_t measured = 0, screened = 0;
};

struct CheckpointState {
  uint32_t version = 0;
  uint32_t step = 0;  // the next step to run
  std::vector<StepSummary> reports;
};

std::string policy_directory(const std::string& run_dir);

// none when the run directory holds no checkpoint yet.
Result<std::optional<CheckpointState>> read_checkpoint_state(const std::string& run_dir,
                                                             FileSystem& files = real_file_system());
Result<std::string> read_policy_version(const std::string& run_dir, uint32_t version,
                                        FileSystem& files = real_file_system());
// The optimizer state of `version`, or none when the file is absent.
Result<std::optional<std::string>> read_optimizer_state(const std::string& run_dir, uint32_t version,
                                                        FileSystem& files = real_file_system());

// Writes v<N>.pt, adam-v<N>.pt, latest.pt, then state.yaml; removes optimizer states older than
// the previous version.
Status write_checkpoint(const std::string& run_dir, const CheckpointState& state,
                        const std::string& policy_bytes, const std::string& optimizer_bytes,
                        FileSystem& files = real_file_system());

}  // namespace drk::schedule
