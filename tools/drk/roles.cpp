#include "actors/archivist/archivist_actor.h"
#include "actors/evaluator/evaluator_actor.h"
#include "actors/generator/generator_actor.h"
#include "actors/learner/learner_actor.h"
#include "actors/oracle/oracle_actor.h"
#include "actors/verifier/verifier_actor.h"
#include "runtime/actor.h"
#include "runtime/progress_observer.h"
#include "runtime/topology/experiment_keys.h"
#include "tools/drk/commands.h"
#include "training/domain_messages.h"
#include "training/step_progress.h"
#include "training/training_stages.h"

namespace drk::tools {

void register_roles() {
  training::register_domain_messages();
  runtime::register_progress_observer(training::make_step_progress);
  runtime::register_role("generator", generator::make_generator_actor);
  runtime::register_role("evaluator", evaluator::make_evaluator_actor);
  runtime::register_role("verifier", verifier::make_verifier_actor);
  runtime::register_role("oracle", oracle::make_oracle_actor);
  runtime::register_role("learner", learner::make_learner_actor);
  runtime::register_role("archivist", archivist::make_archivist_actor);
  runtime::register_required_peer("learner", "generator", "it sends its rollouts to the Generators");
  runtime::register_required_peer("learner", "oracle", "the Oracle computes its advantages");
  for (const auto& keys : {generator::generator_experiment_keys(), evaluator::evaluator_experiment_keys(),
                           oracle::oracle_experiment_keys(), learner::learner_experiment_keys()}) {
    runtime::register_experiment_keys(keys);
  }
  // `drk run`'s dashboard when --dashboard does not give one (tools/drk/run_command.cpp).
  runtime::register_experiment_keys({{"dashboard", runtime::ValueKind::text, "127.0.0.1:8080"}});
  runtime::register_experiment_check(generator::generator_experiment_check);
  runtime::register_experiment_check(evaluator::evaluator_experiment_check);
  runtime::register_experiment_check(learner::learner_experiment_check);
  runtime::register_experiment_check(oracle::oracle_experiment_check);
  runtime::register_experiment_views(training::training_stage_views);
}

}  // namespace drk::tools
