// LearnerActor: drives training steps and updates the embedded policy.
//
// Step s: for every task of experiment.tasks (names, or "all": every task of a family the embedded
// policy renders, actors/learner/task_selection.h) and every sample i below
// experiment.group_size, a RolloutRequest "s<s>/<task>/<i>" (experiment.turns turns) goes to
// the Generators round-robin. Trajectories of the step are kept once each; when all are in, an
// AdvantageRequest (experiment.estimator: trloo | grpo) goes to the Oracle. Its Advantages
// drive experiment.ppo_epochs epochs of the clipped objective (actors/learner/ppo_loss.h) with
// Adam (experiment.learning_rate) over the turns that rejection sampling keeps (MRS per
// trajectory, then PRS per turn: actors/learner/rejection_sampling.h); the epochs stop early
// when the approximate KL to the policy before the update exceeds experiment.kl_max (0: off).
// With experiment.training_stages, learning_rate, ppo_epochs and kl_max are the stage's of the
// step. Before the update the step's mean reward goes to the rollback rule
// (actors/learner/rollback_monitor.h): on a rollback the update is skipped, the parameters of the
// last stable version (RUN_DIR/policy/v<N>.pt) come back with a fresh optimizer, one line says
// so in the log, and diagnostic mode scales the learning rate by rollback.diagnostic_lr_scale
// until a step is stable. Then policy version v+1 is checkpointed
// (kernels/schedule/policy_checkpoint.h), broadcast as PolicyWeights to every Generator and
// the Archivist; every trajectory of the step goes to the Archivist with its turns' advantage,
// return, learner log-probabilities and outcome (trained, or why not: the training samples of
// docs/archive.md), then the StepReport (with rollback, diagnostic, rejection counts, epochs
// and stage). After experiment.steps steps it stops sending (the head ends the run).
//
// Faults: rollouts without a Trajectory are sent again, to the next Generator, after
// experiment.rollout_timeout_s (default 180) or when their Generator restarts; the advantage
// request after experiment.advantage_timeout_s (default 60) or an Oracle restart. On start it
// resumes from RUN_DIR/policy/ (weights, optimizer, the step in progress, which it re-issues)
// or writes version 0 there; the rollback rule's state is rebuilt from the saved reports. A catalog, task list or checkpoint that cannot be used is a fault
// (the exception names it): a Learner cannot run without them.
//
// Thread-safety: an actor; the runtime calls it on one thread.
#pragma once

#include <memory>
#include <vector>

#include "actors/learner/learner_settings.h"  // the keys and check the Learner registers
#include "runtime/actor.h"

namespace drk::learner {

std::unique_ptr<runtime::Actor> make_learner_actor(const runtime::ActorSpec& spec);

}  // namespace drk::learner
