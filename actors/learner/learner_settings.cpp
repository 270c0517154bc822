#include "actors/learner/learner_settings.h"

#include <algorithm>

#include "kernels/schedule/policy_checkpoint.h"

namespace drk::learner {
namespace {

template <typename T>
T setting(const YAML::Node& experiment, const char* key, T fallback) {
  return experiment[key] ? experiment[key].as<T>() : fallback;
}

// experiment.GROUP.KEY, or `fallback` when absent.
template <typename T>
T group_setting(const YAML::Node& experiment, const char* group, const char* key, T fallback) {
  const YAML::Node node = experiment[group];
  return node && node.IsMap() && node[key] ? node[key].as<T>() : fallback;
}

StageSettings read_stage(const training::TrainingStage& stage) {
  StageSettings settings;
  settings.name = stage.name;
  settings.learning_rate = setting<double>(stage.experiment, "learning_rate", 1e-3);
  settings.ppo_epochs = std::max<uint32_t>(setting<uint32_t>(stage.experiment, "ppo_epochs", 4), 1);
  settings.kl_max = setting<double>(stage.experiment, "kl_max", 0.0);
  return settings;
}

}  // namespace

Result<Settings> read_settings(const YAML::Node& experiment) {
  Settings settings;
  settings.seed = setting<uint64_t>(experiment, "seed", 1);
  settings.steps = setting<uint32_t>(experiment, "steps", 1);
  settings.group_size = setting<uint32_t>(experiment, "group_size", 4);
  if (settings.group_size < 2) return make_error(Errc::invalid_argument, "experiment.group_size must be at least 2");
  settings.turns = std::max<uint32_t>(setting<uint32_t>(experiment, "turns", 1), 1);
  auto device = kernels::parse_device(setting<std::string>(experiment, "device", "cpu"));
  if (!device) return make_error(Errc::invalid_argument, "experiment.device: " + device.error().message);
  settings.device = *device;
  const auto estimator = setting<std::string>(experiment, "estimator", "trloo");
  if (estimator != "trloo" && estimator != "grpo") {
    return make_error(Errc::invalid_argument, "experiment.estimator '" + estimator + "' is unknown: use trloo or grpo");
  }
  settings.estimator = estimator == "grpo" ? msg::AdvantageEstimator::GRPO : msg::AdvantageEstimator::TRLOO;
  auto stages = training::read_training_stages(experiment);
  if (!stages) return stages.error();
  settings.stages = std::move(*stages);
  for (const auto& stage : settings.stages) settings.stage_settings.push_back(read_stage(stage));

  settings.ppo.clip_low = group_setting<double>(experiment, "ppo", "clip_low", settings.ppo.clip_low);
  settings.ppo.clip_high = group_setting<double>(experiment, "ppo", "clip_high", settings.ppo.clip_high);
  settings.ppo.dual_clip = group_setting<double>(experiment, "ppo", "dual_clip", settings.ppo.dual_clip);
  settings.prs.enabled = group_setting<bool>(experiment, "prs", "enabled", true);
  settings.prs.coverage_min = group_setting<double>(experiment, "prs", "coverage_min", 0.3);
  settings.prs.ramp = group_setting<double>(experiment, "prs", "ramp", 0.1);
  settings.mrs.enabled = group_setting<bool>(experiment, "mrs", "enabled", true);
  settings.mrs.veto = group_setting<double>(experiment, "mrs", "veto", 1e-4);
  if (experiment["mrs"] && experiment["mrs"]["band"]) {
    const auto band = experiment["mrs"]["band"].as<std::vector<double>>();
    if (band.size() != 2 || band[0] > band[1] || band[0] <= 0.0) {
      return make_error(Errc::invalid_argument,
                        "experiment.mrs.band must be two ratios [low, high], 0 < low <= high, e.g. `band: [0.999, 1.001]`");
    }
    settings.mrs.band_low = band[0];
    settings.mrs.band_high = band[1];
  }
  settings.rollback.enabled = group_setting<bool>(experiment, "rollback", "enabled", true);
  settings.rollback.drop = group_setting<double>(experiment, "rollback", "drop", 0.15);
  settings.rollback.patience = group_setting<uint32_t>(experiment, "rollback", "patience", 3);
  settings.rollback.window = group_setting<uint32_t>(experiment, "rollback", "window", 5);
  settings.diagnostic_learning_rate_scale =
      group_setting<double>(experiment, "rollback", "diagnostic_lr_scale", 0.5);
  settings.max_staleness = setting<uint32_t>(experiment, "max_staleness", 1);
  const auto backend = group_setting<std::string>(experiment, "learner", "backend", "policy");
  if (backend != "policy" && backend != "external") {
    return make_error(Errc::invalid_argument,
                      "experiment.learner.backend '" + backend + "' is unknown: use policy or external");
  }
  settings.external = backend == "external";
  settings.listen = group_setting<std::string>(experiment, "learner", "listen", settings.listen);
  const auto port = group_setting<uint32_t>(experiment, "learner", "port", settings.port);
  if (port > 65535)
    return make_error(Errc::invalid_argument, "experiment.learner.port " + std::to_string(port) +
                                                  " is not a port: use 1-65535, or 0 for a free one");
  settings.port = static_cast<uint16_t>(port);
  settings.token_file = group_setting<std::string>(experiment, "learner", "token_file", "");
  const YAML::Node generator = experiment["generator"];
  const bool llm_generator = generator && generator.IsMap() && generator["backend"] &&
                             generator["backend"].as<std::string>() != "policy";
  settings.embedded_generator = !llm_generator;
  if (settings.external && !llm_generator) {
    return make_error(Errc::invalid_argument,
                      "experiment.learner.backend external trains a language model outside drkernel: set "
                      "experiment.generator.backend: openai (the embedded policy is trained by learner.backend: policy)");
  }
  settings.rollout_timeout_ms =
      static_cast<int64_t>(1000.0 * setting<double>(experiment, "rollout_timeout_s", 180.0));
  settings.advantage_timeout_ms =
      static_cast<int64_t>(1000.0 * setting<double>(experiment, "advantage_timeout_s", 60.0));
  settings.tasks_dir = setting<std::string>(experiment, "tasks_dir", kernels::TaskCatalog::default_directory());
  settings.init_policy = setting<std::string>(experiment, "init_policy", "");
  settings.tasks_per_step = setting<uint32_t>(experiment, "tasks_per_step", 0);
  const YAML::Node tasks = experiment["tasks"];
  if (tasks && tasks.IsSequence()) {
    settings.tasks = tasks.as<std::vector<std::string>>();
  } else if (tasks && tasks.as<std::string>() != "all") {
    settings.tasks = {tasks.as<std::string>()};
  }
  return settings;
}

Status learner_experiment_check(const YAML::Node& experiment) {
  auto settings = read_settings(experiment);
  if (!settings) return settings.error();
  if (!settings->init_policy.empty()) {
    auto state = schedule::read_checkpoint_state(settings->init_policy);
    if (!state) return make_error(Errc::invalid_argument, "experiment.init_policy: " + state.error().message);
    if (!state->has_value())
      return make_error(Errc::invalid_argument,
                        "experiment.init_policy '" + settings->init_policy +
                            "' holds no policy checkpoint (policy/state.yaml): give the run_dir of a `drk run` "
                            "that trained the embedded policy");
  }
  return {};
}

std::vector<runtime::ExperimentKey> learner_experiment_keys() {
  return {{"seed", runtime::ValueKind::integer, "1"},
          {"steps", runtime::ValueKind::integer, "8"},
          {"group_size", runtime::ValueKind::integer, "4", {}, 2,
           "TRLOO and GRPO judge a sample against the others of its group: alone, whatever was sampled "
           "would be reinforced"},
          {"turns", runtime::ValueKind::integer, "2", {}, 1},
          {"device", runtime::ValueKind::text, "cpu", {"cpu", "cuda"}},
          {"estimator", runtime::ValueKind::text, "trloo", {"trloo", "grpo"}},
          {"ppo.clip_low", runtime::ValueKind::number, "0.2", {}, 0},
          {"ppo.clip_high", runtime::ValueKind::number, "0.28", {}, 0},
          {"ppo.dual_clip", runtime::ValueKind::number, "3.0", {}, 1,
           "the dual clip bounds the loss of a negative advantage at dual_clip times it"},
          {"learning_rate", runtime::ValueKind::number, "0.05"},
          {"ppo_epochs", runtime::ValueKind::integer, "4"},
          {"tasks", runtime::ValueKind::text_or_list, "[relu, softmax]"},
          {"tasks_dir", runtime::ValueKind::text, "kernels/tasks"},
          {"init_policy", runtime::ValueKind::text, "runs/pretrained"},
          {"tasks_per_step", runtime::ValueKind::integer, "8", {}, 0},
          {"rollout_timeout_s", runtime::ValueKind::number, "180"},
          {"advantage_timeout_s", runtime::ValueKind::number, "60"},
          {"kl_max", runtime::ValueKind::number, "0.05"},
          {"prs.enabled", runtime::ValueKind::flag, "true"},
          {"prs.coverage_min", runtime::ValueKind::number, "0.3"},
          {"prs.ramp", runtime::ValueKind::number, "0.1"},
          {"mrs.enabled", runtime::ValueKind::flag, "true"},
          {"mrs.band", runtime::ValueKind::text_or_list, "[0.999, 1.001]"},
          {"mrs.veto", runtime::ValueKind::number, "1e-4"},
          {"rollback.enabled", runtime::ValueKind::flag, "true"},
          {"rollback.drop", runtime::ValueKind::number, "0.15"},
          {"rollback.patience", runtime::ValueKind::integer, "3"},
          {"rollback.window", runtime::ValueKind::integer, "5"},
          {"rollback.diagnostic_lr_scale", runtime::ValueKind::number, "0.5"},
          {"max_staleness", runtime::ValueKind::integer, "1"},
          {"learner.backend", runtime::ValueKind::text, "external", {"policy", "external"}},
          {"learner.listen", runtime::ValueKind::text, "127.0.0.1"},
          {"learner.port", runtime::ValueKind::integer, "8100", {}, 0},
          {"learner.token_file", runtime::ValueKind::text, "/run/secrets/learner-token"},
          {"training_stages", runtime::ValueKind::list_of_maps, "[{name: warmup, steps: 2}, {name: main}]"},
          {"training_stages[].name", runtime::ValueKind::text, "warmup"},
          {"training_stages[].steps", runtime::ValueKind::integer, "2"},
          {"training_stages[].learning_rate", runtime::ValueKind::number, "0.1"},
          {"training_stages[].ppo_epochs", runtime::ValueKind::integer, "2"},
          {"training_stages[].kl_max", runtime::ValueKind::number, "0.05"}};
}

}  // namespace drk::learner
