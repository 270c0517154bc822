// LearnerActor: drives training steps and updates the embedded policy.
//
// Step s: for every task of experiment.tasks (names, or "all": every task of a family the embedded
// policy renders, actors/learner/task_selection.h) and every sample i below
// experiment.group_size, a RolloutRequest "s<s>/<task>/<i>" (experiment.turns turns) goes to
// the Generators round-robin. Trajectories of the step are kept once each; when all are in, an
// AdvantageRequest (experiment.estimator: trloo | grpo) goes to the Oracle. Its Advantages
// drive experiment.ppo_epochs epochs of the clipped objective (actors/learner/ppo_loss.h) with
// Adam (experiment.learning_rate) over every turn; then policy version v+1 is checkpointed
// (kernels/schedule/policy_checkpoint.h), broadcast as PolicyWeights to every Generator and
// the Archivist, and a StepReport goes to the head and the Archivist. After
// experiment.steps steps it stops sending (the head ends the run).
//
// Faults: rollouts without a Trajectory are sent again, to the next Generator, after
// experiment.rollout_timeout_s (default 180) or when their Generator restarts; the advantage
// request after experiment.advantage_timeout_s (default 60) or an Oracle restart. On start it
// resumes from RUN_DIR/policy/ (weights, optimizer, the step in progress, which it re-issues)
// or writes version 0 there. A catalog, task list or checkpoint that cannot be used is a fault
// (the exception names it): a Learner cannot run without them.
//
// Thread-safety: an actor; the runtime calls it on one thread.
#pragma once

#include <memory>
#include <vector>

#include "runtime/actor.h"
#include "runtime/experiment_keys.h"

namespace drk::learner {

std::unique_ptr<runtime::Actor> make_learner_actor(const runtime::ActorSpec& spec);

// The experiment keys this actor reads (runtime/experiment_keys.h).
std::vector<runtime::ExperimentKey> learner_experiment_keys();

}  // namespace drk::learner
