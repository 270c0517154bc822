// experiment.learner.* (learner_settings.h): who trains, and where an external trainer reports
// its policy versions. The defaults, the values read, and the refusals, each naming its key: by
// read_settings() (what the Learner refuses at start) and by load_topology() (at the key's line,
// before anything starts).
#include "actors/learner/learner_settings.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "runtime/topology/experiment_keys.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::learner {
namespace {

constexpr const char* kLanguageModel = "generator: {backend: openai, endpoint: 'http://127.0.0.1:8000/v1', model: m}";

Result<Settings> settings_of(const std::string& experiment) { return read_settings(YAML::Load(experiment)); }

std::string refusal(const std::string& experiment) {
  auto settings = settings_of(experiment);
  return settings.ok() ? std::string("(accepted)") : settings.error().message;
}

}  // namespace

DRK_TEST_CASE("the embedded policy trains by default; an external trainer's endpoint is read from experiment.learner") {
  auto defaults = settings_of("{}");
  DRK_REQUIRE(defaults.ok());
  DRK_CHECK_FALSE(defaults->external);
  DRK_CHECK(defaults->listen == "127.0.0.1");
  DRK_CHECK(defaults->port == 8100);
  DRK_CHECK(defaults->token_file.empty());

  auto policy = settings_of("{learner: {backend: policy}}");
  DRK_REQUIRE(policy.ok());
  DRK_CHECK_FALSE(policy->external);

  auto external = settings_of(std::string("{learner: {backend: external, listen: 0.0.0.0, port: 0, token_file: "
                                          "/run/secrets/learner-token}, ") + kLanguageModel + "}");
  DRK_REQUIRE_MESSAGE(external.ok(), external.error().message);
  DRK_CHECK(external->external);
  DRK_CHECK(external->listen == "0.0.0.0");
  DRK_CHECK(external->port == 0);
  DRK_CHECK(external->token_file == "/run/secrets/learner-token");

  auto highest_port = settings_of(std::string("{learner: {backend: external, port: 65535}, ") + kLanguageModel + "}");
  DRK_REQUIRE(highest_port.ok());
  DRK_CHECK(highest_port->port == 65535);
}

DRK_TEST_CASE("an unknown learner backend, a port beyond 65535 and an external trainer without a language model are refused") {
  const std::string unknown = refusal("{learner: {backend: verl}}");
  DRK_CHECK_MESSAGE(unknown.find("experiment.learner.backend 'verl' is unknown: use policy or external") !=
                        std::string::npos,
                    unknown);
  const std::string port = refusal(std::string("{learner: {backend: external, port: 65536}, ") + kLanguageModel + "}");
  DRK_CHECK_MESSAGE(port.find("experiment.learner.port 65536 is not a port: use 1-65535, or 0 for a free one") !=
                        std::string::npos,
                    port);
  const std::string without_model = refusal("{learner: {backend: external}}");
  DRK_CHECK_MESSAGE(without_model.find("experiment.learner.backend external trains a language model outside drkernel: "
                                       "set experiment.generator.backend: openai") != std::string::npos,
                    without_model);
  const std::string embedded = refusal("{learner: {backend: external}, generator: {backend: policy}}");
  DRK_CHECK_MESSAGE(embedded.find("set experiment.generator.backend: openai") != std::string::npos, embedded);
}

DRK_TEST_CASE("experiment.learner's bad values are refused at load, at their line") {
  runtime::register_experiment_keys(learner_experiment_keys());
  runtime::register_experiment_keys({{"generator.backend", runtime::ValueKind::text, "openai"},
                                     {"generator.endpoint", runtime::ValueKind::text, "http://127.0.0.1:8000/v1"},
                                     {"generator.model", runtime::ValueKind::text, "m"}});
  runtime::register_experiment_check(learner_experiment_check);
  testing::RunDir dir;
  const std::string head = std::string("name: t\nactors: [{role: a}]\nexperiment:\n  ") + kLanguageModel + "\n";
  auto good = runtime::load_topology(dir.write("good.yaml", head + "  learner: {backend: external, port: 0}\n"));
  DRK_CHECK_MESSAGE(good.ok(), good.error().message);
  const auto refused = [&](const std::string& name, const std::string& learner) {
    auto topology = runtime::load_topology(dir.write(name, head + learner));
    return topology.ok() ? std::string("(accepted)") : topology.error().message;
  };
  const std::string backend = refused("backend.yaml", "  learner:\n    backend: verl\n");
  DRK_CHECK_MESSAGE(backend.find("backend.yaml:6: experiment.learner.backend must be one of policy, external") !=
                        std::string::npos,
                    backend);
  const std::string negative = refused("negative.yaml", "  learner:\n    backend: external\n    port: -1\n");
  DRK_CHECK_MESSAGE(negative.find("negative.yaml:7: experiment.learner.port") != std::string::npos, negative);
  const std::string beyond = refused("beyond.yaml", "  learner:\n    backend: external\n    port: 70000\n");
  DRK_CHECK_MESSAGE(beyond.find("beyond.yaml:7: experiment.learner.port 70000 is not a port") != std::string::npos,
                    beyond);
  const std::string typo = refused("typo.yaml", "  learner:\n    backend: external\n    tokenfile: /t\n");
  DRK_CHECK_MESSAGE(typo.find("typo.yaml:7: experiment.learner.tokenfile") != std::string::npos, typo);
}

DRK_TEST_CASE("experiment.init_policy must name a run directory that holds a policy checkpoint") {
  testing::RunDir dir;
  DRK_CHECK(learner_experiment_check(YAML::Load("{}")).ok());
  const auto refused = learner_experiment_check(YAML::Load("init_policy: " + dir.file("no-run")));
  DRK_REQUIRE(!refused.ok());
  DRK_CHECK_MESSAGE(refused.error().message.find("experiment.init_policy '" + dir.file("no-run") +
                                                 "' holds no policy checkpoint") != std::string::npos,
                    refused.error().message);
  dir.write("trained/policy/state.yaml", "version: 2\nstep: 3\nreports: []\n");
  const auto accepted = learner_experiment_check(YAML::Load("init_policy: " + dir.file("trained")));
  DRK_CHECK_MESSAGE(accepted.ok(), (accepted.ok() ? "" : accepted.error().message));
  auto settings = settings_of("{init_policy: runs/a, tasks_per_step: 5}");
  DRK_REQUIRE(settings.ok());
  DRK_CHECK(settings->init_policy == "runs/a");
  DRK_CHECK(settings->tasks_per_step == 5);
}

}  // namespace drk::learner
