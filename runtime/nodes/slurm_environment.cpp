#include "runtime/nodes/slurm_environment.h"

#include <charconv>

#include "runtime/nodes/slurm_hostlist.h"

extern char** environ;

namespace drk::runtime {
namespace {

constexpr const char* kRunUnderSrun =
    "drk slurm-task runs as a task of a Slurm job step: submit the script `drk slurm TOPOLOGY.yaml --out job.sbatch` "
    "writes (sbatch job.sbatch), or run it with srun inside an allocation";

Error missing(const std::string& variable) {
  return make_error(Errc::invalid_argument, variable + " is not set: " + kRunUnderSrun);
}

Result<std::string> required(const EnvironmentMap& environment, const std::string& variable) {
  const auto found = environment.find(variable);
  if (found == environment.end() || found->second.empty()) return missing(variable);
  return found->second;
}

// A whole number of at least `least`, from `variable`'s text.
Result<int> count_in(const std::string& variable, const std::string& text, int least) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least) {
    return make_error(Errc::invalid_argument, variable + "='" + text + "' is not a whole number of at least " +
                                                  std::to_string(least) + ": " + kRunUnderSrun);
  }
  return value;
}

Result<int> required_count(const EnvironmentMap& environment, const std::string& variable, int least) {
  auto text = required(environment, variable);
  if (!text) return text.error();
  return count_in(variable, *text, least);
}

// GPUs of this host: SLURM_GPUS_ON_NODE, else the devices CUDA_VISIBLE_DEVICES lists ("0,1";
// Slurm writes "NoDevFiles" when the job asked for none), else none.
Result<int> gpus_of(const EnvironmentMap& environment) {
  if (const auto gpus = environment.find("SLURM_GPUS_ON_NODE"); gpus != environment.end() && !gpus->second.empty()) {
    return count_in("SLURM_GPUS_ON_NODE", gpus->second, 0);
  }
  const auto visible = environment.find("CUDA_VISIBLE_DEVICES");
  if (visible == environment.end() || visible->second.empty() || visible->second == "NoDevFiles") return 0;
  int devices = 1;
  for (char c : visible->second) devices += c == ',' ? 1 : 0;
  return devices;
}

}  // namespace

EnvironmentMap process_environment() {
  EnvironmentMap environment;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals != std::string::npos) environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

Result<SlurmTask> read_slurm_task(const EnvironmentMap& environment) {
  SlurmTask task;
  auto job_id = required(environment, "SLURM_JOB_ID");
  if (!job_id) return job_id.error();
  task.job_id = *job_id;
  auto tasks = required_count(environment, "SLURM_NTASKS", 1);
  if (!tasks) return tasks.error();
  task.tasks = *tasks;
  auto rank = required_count(environment, "SLURM_PROCID", 0);
  if (!rank) return rank.error();
  if (*rank >= task.tasks) {
    return make_error(Errc::invalid_argument, "SLURM_PROCID=" + std::to_string(*rank) + " is not below SLURM_NTASKS=" +
                                                  std::to_string(task.tasks) + ": " + kRunUnderSrun);
  }
  task.rank = *rank;
  auto local_rank = required_count(environment, "SLURM_LOCALID", 0);
  if (!local_rank) return local_rank.error();
  task.local_rank = *local_rank;
  const bool has_job_nodelist = environment.contains("SLURM_JOB_NODELIST");
  const std::string nodelist_variable = has_job_nodelist ? "SLURM_JOB_NODELIST" : "SLURM_NODELIST";
  auto nodelist = required(environment, nodelist_variable);
  if (!nodelist) return missing("SLURM_JOB_NODELIST");
  auto hosts = expand_hostlist(*nodelist);
  if (!hosts) return make_error(hosts.error().code, nodelist_variable + ": " + hosts.error().message);
  task.hosts = std::move(*hosts);
  auto host = required(environment, "SLURMD_NODENAME");
  if (!host) return host.error();
  task.host = *host;
  auto cpus = required_count(environment, "SLURM_CPUS_ON_NODE", 1);
  if (!cpus) return cpus.error();
  task.cpus = *cpus;
  auto gpus = gpus_of(environment);
  if (!gpus) return gpus.error();
  task.gpus = *gpus;
  return task;
}

}  // namespace drk::runtime
