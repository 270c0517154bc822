// What a task of a Slurm job learns from its environment: who it is among the job's tasks, the
// job's hosts, and the GPUs and CPUs Slurm gave its node. `drk slurm-task` (docs/multi-node.md)
// reads it through this seam, built from a map of variables, so that tests need no Slurm.
//
//   SLURM_JOB_ID                     the job (required: says the task runs inside Slurm)
//   SLURM_PROCID, SLURM_NTASKS       this task's rank among the step's tasks, and their number
//   SLURM_LOCALID                    its rank among the tasks on its own host
//   SLURM_JOB_NODELIST               the job's hosts in hostlist syntax (slurm_hostlist.h);
//                                    SLURM_NODELIST, its older name, when it is absent
//   SLURMD_NODENAME                  the host this task runs on
//   SLURM_CPUS_ON_NODE               CPUs Slurm gave the job on this host
//   SLURM_GPUS_ON_NODE, else CUDA_VISIBLE_DEVICES   GPUs on this host (none when both are absent)
//
// Thread-safety: value types and free functions. Errors: invalid_argument naming the variable,
// what it held, and how a task gets it right (run under srun, inside an allocation).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

using EnvironmentMap = std::map<std::string, std::string, std::less<>>;

// The environment of this process (environ), as a map.
EnvironmentMap process_environment();

struct SlurmTask {
  std::string job_id;
  int rank = 0;        // SLURM_PROCID
  int tasks = 0;       // SLURM_NTASKS
  int local_rank = 0;  // SLURM_LOCALID
  std::vector<std::string> hosts;  // SLURM_JOB_NODELIST, expanded; never empty
  std::string host;                // SLURMD_NODENAME
  int cpus = 0;                    // SLURM_CPUS_ON_NODE
  int gpus = 0;                    // SLURM_GPUS_ON_NODE, or the devices of CUDA_VISIBLE_DEVICES
};

Result<SlurmTask> read_slurm_task(const EnvironmentMap& environment);

}  // namespace drk::runtime
