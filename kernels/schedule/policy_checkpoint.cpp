#include "kernels/schedule/policy_checkpoint.h"

#include <yaml-cpp/yaml.h>

namespace drk::schedule {
namespace {

std::string policy_file(const std::string& run_dir, uint32_t version) {
  return policy_directory(run_dir) + "/v" + std::to_string(version) + ".pt";
}

std::string optimizer_file(const std::string& run_dir, uint32_t version) {
  return policy_directory(run_dir) + "/adam-v" + std::to_string(version) + ".pt";
}

}  // namespace

std::string policy_directory(const std::string& run_dir) { return run_dir + "/policy"; }

Result<std::optional<CheckpointState>> read_checkpoint_state(const std::string& run_dir, FileSystem& files) {
  const std::string path = policy_directory(run_dir) + "/state.yaml";
  if (!files.exists(path)) return std::optional<CheckpointState>{};
  auto text = files.read_file(path);
  if (!text) return text.error();
  try {
    const YAML::Node node = YAML::Load(*text);
    CheckpointState state;
    state.version = node["version"].as<uint32_t>();
    state.step = node["step"].as<uint32_t>();
    for (const auto& item : node["reports"]) {
      StepSummary report;
      report.step = item["step"].as<uint32_t>();
      report.policy_version = item["policy_version"].as<uint32_t>();
      report.mean_reward = item["mean_reward"].as<double>();
      report.best_speedup = item["best_speedup"].as<double>();
      report.correct_fraction = item["correct_fraction"].as<double>();
      report.trajectories = item["trajectories"].as<uint32_t>();
      report.loss = item["loss"].as<double>();
      report.seconds = item["seconds"].as<double>();
      report.clip_fraction = item["clip_fraction"].as<double>();
      report.approx_kl = item["approx_kl"].as<double>();
      report.rolled_back = item["rolled_back"].as<bool>(false);
      report.rolled_back_to = item["rolled_back_to"].as<uint32_t>(0);
      report.diagnostic = item["diagnostic"].as<bool>(false);
      report.prs_rejected = item["prs_rejected"].as<uint32_t>(0);
      report.mrs_rejected = item["mrs_rejected"].as<uint32_t>(0);
      report.mrs_vetoed = item["mrs_vetoed"].as<uint32_t>(0);
      report.stale_rejected = item["stale_rejected"].as<uint32_t>(0);
      report.ppo_epochs = item["ppo_epochs"].as<uint32_t>(0);
      report.stage = item["stage"].as<std::string>("");
      report.measured = item["measured"].as<uint32_t>(0);
      report.screened = item["screened"].as<uint32_t>(0);
      state.reports.push_back(report);
    }
    return std::optional<CheckpointState>{state};
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error, "'" + path + "' is malformed: " + error.what() +
                                             " (remove the run directory's policy/ to start over)");
  }
}

Result<std::string> read_policy_version(const std::string& run_dir, uint32_t version, FileSystem& files) {
  return files.read_file(policy_file(run_dir, version));
}

Result<std::optional<std::string>> read_optimizer_state(const std::string& run_dir, uint32_t version,
                                                        FileSystem& files) {
  const std::string path = optimizer_file(run_dir, version);
  if (!files.exists(path)) return std::optional<std::string>{};
  auto bytes = files.read_file(path);
  if (!bytes) return bytes.error();
  return std::optional<std::string>{std::move(*bytes)};
}

Status write_checkpoint(const std::string& run_dir, const CheckpointState& state,
                        const std::string& policy_bytes, const std::string& optimizer_bytes, FileSystem& files) {
  if (auto status = files.create_directories(policy_directory(run_dir)); !status) return status;
  if (auto status = write_file_atomically(files, policy_file(run_dir, state.version), policy_bytes); !status) {
    return status;
  }
  if (auto status = write_file_atomically(files, optimizer_file(run_dir, state.version), optimizer_bytes);
      !status) {
    return status;
  }
  if (auto status = write_file_atomically(files, policy_directory(run_dir) + "/latest.pt", policy_bytes);
      !status) {
    return status;
  }
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "version" << YAML::Value << state.version << YAML::Key
       << "step" << YAML::Value << state.step << YAML::Key << "reports" << YAML::Value
       << YAML::BeginSeq;
  for (const auto& report : state.reports) {
    yaml << YAML::Flow << YAML::BeginMap << YAML::Key << "step" << YAML::Value << report.step
         << YAML::Key << "policy_version" << YAML::Value << report.policy_version << YAML::Key
         << "mean_reward" << YAML::Value << report.mean_reward << YAML::Key << "best_speedup"
         << YAML::Value << report.best_speedup << YAML::Key << "correct_fraction" << YAML::Value
         << report.correct_fraction << YAML::Key << "trajectories" << YAML::Value
         << report.trajectories << YAML::Key << "loss" << YAML::Value << report.loss << YAML::Key
         << "seconds" << YAML::Value << report.seconds << YAML::Key << "clip_fraction"
         << YAML::Value << report.clip_fraction << YAML::Key << "approx_kl" << YAML::Value
         << report.approx_kl << YAML::Key << "rolled_back" << YAML::Value << report.rolled_back
         << YAML::Key << "rolled_back_to" << YAML::Value << report.rolled_back_to << YAML::Key
         << "diagnostic" << YAML::Value << report.diagnostic << YAML::Key << "prs_rejected"
         << YAML::Value << report.prs_rejected << YAML::Key << "mrs_rejected" << YAML::Value
         << report.mrs_rejected << YAML::Key << "mrs_vetoed" << YAML::Value << report.mrs_vetoed
         << YAML::Key << "stale_rejected" << YAML::Value << report.stale_rejected
         << YAML::Key << "ppo_epochs" << YAML::Value << report.ppo_epochs << YAML::Key << "stage"
         << YAML::Value << report.stage << YAML::Key << "measured" << YAML::Value << report.measured
         << YAML::Key << "screened" << YAML::Value << report.screened << YAML::EndMap;
  }
  yaml << YAML::EndSeq << YAML::EndMap;
  if (auto status = write_file_atomically(files, policy_directory(run_dir) + "/state.yaml",
                                          std::string(yaml.c_str()) + "\n");
      !status) {
    return status;
  }
  if (state.version >= 2) (void)files.remove(optimizer_file(run_dir, state.version - 2));
  return {};
}

}  // namespace drk::schedule
