// OracleActor: the hub between generation and evaluation.
//  - Candidate (from a Generator): queued for an Evaluator (EvaluationQueue: credit-based,
//    idempotent by candidate id; a repeated candidate that already completed gets its cached
//    Feedback again), dispatched to the one whose result is expected first by its measured
//    service time (service_times.h: from each dispatch to its verdict).
//  - EvaluatorReady: credits; a new incarnation re-queues what the old one held.
//  - Verdict (from the Verifier): reward (reward.h), Feedback to the candidate's Generator,
//    Scored to "archivist".
//  - AdvantageRequest (from the Learner): TRLOO or GRPO advantages (advantage.h), answered to
//    the sender.
//  - Control.peerRestarted: an Evaluator's in-flight work is re-queued; after a Verifier
//    restart all in-flight work is (its results may be lost); after an Archivist restart the
//    most recent records are sent again.
//  - Control.peerLost (an Evaluator's node is unreachable): its in-flight work is dispatched to
//    the other Evaluators; a result that arrives later from it is a duplicate and is dropped.
//  - Screening (experiment.oracle.screening, docs/cost-model.md; off by default): an arriving
//    candidate is measured or screened by the cost model (screening.h); a screened one gets
//    the predicted reward at once, Feedback and Scored marked `screened`; every measured
//    result trains the model. Each step's evaluated/screened counts are logged.
// Parameters (experiment): reward {...}, dispatch_timeout_s (default 45). With
// training_stages, a candidate's reward uses the weights of the stage of its step (a stage's
// `reward` overrides experiment.reward key by key). Coverage is CUPTI's for CUDA candidates
// and 1 on the CPU. Scored carries the Feedback summary, for the archive's training samples.
#pragma once

#include <memory>
#include <vector>

#include "runtime/actor.h"
#include "runtime/topology/experiment_keys.h"

namespace drk::oracle {

std::unique_ptr<runtime::Actor> make_oracle_actor(const runtime::ActorSpec& spec);

// The experiment keys this actor reads (runtime/topology/experiment_keys.h).
std::vector<runtime::ExperimentKey> oracle_experiment_keys();

// The settings this actor would refuse at start (runtime::ExperimentCheck): reward weights and
// screening settings out of range, bad training stages.
Status oracle_experiment_check(const YAML::Node& experiment);

}  // namespace drk::oracle
