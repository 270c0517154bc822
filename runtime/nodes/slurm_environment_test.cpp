// A Slurm task's environment read through the seam: what srun sets gives the task, and each
// variable missing or malformed is an error naming it.
#include "runtime/nodes/slurm_environment.h"

#include <string>

#include "tests/doctest_drk.h"

using namespace drk::runtime;

namespace {

// What srun sets for task 1 of 3 on a two-host job with GPUs.
EnvironmentMap srun_environment() {
  return {{"SLURM_JOB_ID", "4242"},         {"SLURM_PROCID", "1"},         {"SLURM_NTASKS", "3"},
          {"SLURM_LOCALID", "0"},           {"SLURM_JOB_NODELIST", "gpu[01-02],cpu7"},
          {"SLURMD_NODENAME", "gpu02"},     {"SLURM_CPUS_ON_NODE", "32"},  {"SLURM_GPUS_ON_NODE", "4"},
          {"CUDA_VISIBLE_DEVICES", "0,1"}};
}

std::string error_of(const EnvironmentMap& environment) {
  auto task = read_slurm_task(environment);
  DRK_REQUIRE_FALSE(task.ok());
  return task.error().message;
}

}  // namespace

DRK_TEST_CASE("a task's rank, hosts, CPUs and GPUs come from srun's variables") {
  auto task = read_slurm_task(srun_environment());
  DRK_REQUIRE_MESSAGE(task.ok(), task.error().message);
  DRK_CHECK(task->job_id == "4242");
  DRK_CHECK(task->rank == 1);
  DRK_CHECK(task->tasks == 3);
  DRK_CHECK(task->local_rank == 0);
  DRK_CHECK(task->hosts == std::vector<std::string>{"gpu01", "gpu02", "cpu7"});
  DRK_CHECK(task->host == "gpu02");
  DRK_CHECK(task->cpus == 32);
  DRK_CHECK(task->gpus == 4);  // SLURM_GPUS_ON_NODE wins over CUDA_VISIBLE_DEVICES
}

DRK_TEST_CASE("GPUs come from CUDA_VISIBLE_DEVICES without SLURM_GPUS_ON_NODE, and none without either") {
  EnvironmentMap environment = srun_environment();
  environment.erase("SLURM_GPUS_ON_NODE");
  DRK_CHECK(read_slurm_task(environment)->gpus == 2);
  environment["CUDA_VISIBLE_DEVICES"] = "NoDevFiles";
  DRK_CHECK(read_slurm_task(environment)->gpus == 0);
  environment.erase("CUDA_VISIBLE_DEVICES");
  DRK_CHECK(read_slurm_task(environment)->gpus == 0);
}

DRK_TEST_CASE("SLURM_NODELIST stands in for SLURM_JOB_NODELIST") {
  EnvironmentMap environment = srun_environment();
  environment.erase("SLURM_JOB_NODELIST");
  environment["SLURM_NODELIST"] = "a[1-3]";
  DRK_CHECK(read_slurm_task(environment)->hosts == std::vector<std::string>{"a1", "a2", "a3"});
}

DRK_TEST_CASE("each missing variable is named, with how to run inside Slurm") {
  for (const char* variable : {"SLURM_JOB_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST",
                               "SLURMD_NODENAME", "SLURM_CPUS_ON_NODE"}) {
    DRK_CAPTURE(variable);
    EnvironmentMap environment = srun_environment();
    environment.erase(variable);
    const std::string message = error_of(environment);
    DRK_CHECK(message.find(std::string(variable) + " is not set") != std::string::npos);
    DRK_CHECK(message.find("srun") != std::string::npos);
  }
}

DRK_TEST_CASE("a malformed variable is named with what it held") {
  EnvironmentMap environment = srun_environment();
  environment["SLURM_PROCID"] = "one";
  DRK_CHECK(error_of(environment).find("SLURM_PROCID='one' is not a whole number") != std::string::npos);
  environment = srun_environment();
  environment["SLURM_PROCID"] = "3";
  DRK_CHECK(error_of(environment).find("SLURM_PROCID=3 is not below SLURM_NTASKS=3") != std::string::npos);
  environment = srun_environment();
  environment["SLURM_CPUS_ON_NODE"] = "0";
  DRK_CHECK(error_of(environment).find("SLURM_CPUS_ON_NODE='0'") != std::string::npos);
  environment = srun_environment();
  environment["SLURM_JOB_NODELIST"] = "gpu[1-";
  DRK_CHECK(error_of(environment).find("SLURM_JOB_NODELIST: the Slurm host list 'gpu[1-'") != std::string::npos);
}

DRK_TEST_CASE("this process's environment is read whole") {
  ::setenv("DRK_SLURM_ENVIRONMENT_TEST", "a=b", 1);
  const EnvironmentMap environment = process_environment();
  DRK_CHECK(environment.at("DRK_SLURM_ENVIRONMENT_TEST") == "a=b");
}
