// A multi-node run as a real Slurm job on this machine: the test starts munged (its own key),
// slurmctld and slurmd (a slurm.conf it writes: one node, `localhost`, with 4 CPUs), writes the
// job with `drk slurm` (tests/integration/slurm.yaml: the head and nodes b and c) and submits it
// with sbatch as three tasks on that one node standing in for three nodes. Once node b's
// Evaluator has worked, it kills b's task (what Slurm does to a node it takes away), and checks
// that the head reports node b lost and that the run still completes, its work done by the
// other Evaluators. Skips, saying why, when not root or when munged, slurmctld, slurmd or
// Slurm's client tools are not installed (Debian: slurm-wlm, munge).
//
// Everything it starts ends with it: the daemons are SpawnedPrograms, and before they go the
// job is cancelled and every process that carries this test's SLURM_CONF in its environment
// (slurmstepd, the job's tasks, their `drk host` children) is killed.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/integration/node_processes.h"
#include "tests/support/process_table.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"
#include "tools/bench/free_port.h"

namespace {

using drk::testing::RunDir;
using drk::testing::SpawnedProgram;

// Every wait of the test ends by then, well within ctest's TIMEOUT (600 s), so that the test,
// not ctest's kill, ends it and its destructors stop what it started.
constexpr std::chrono::seconds kTestLimit{420};

// The full path of a program in /usr/sbin or /usr/bin (Debian's places), or "".
std::string installed(const std::string& program) {
  for (const char* dir : {"/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"}) {
    if (::access((dir + program).c_str(), X_OK) == 0) return dir + program;
  }
  return "";
}

std::string why_slurm_cannot_run() {
  if (::geteuid() != 0) return "not root (slurmctld and slurmd, started by this test, run as root)";
  for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"}) {
    if (installed(program).empty()) {
      return std::string(program) + " is not installed (Debian: apt-get install slurm-wlm munge; "
                                     "tools/scripts/install-deps.sh --tests)";
    }
  }
  return "";
}

// A program run to its end (at most 30 s): its exit code and what it printed.
struct Finished {
  int code = -1;
  std::string output;
};

Finished run_to_end(const RunDir& dir, const std::vector<std::string>& argv) {
  SpawnedProgram program(argv, dir.file("command.txt"));
  Finished finished;
  if (program.wait_for(30'000)) finished.code = program.exit_code();
  finished.output = dir.read("command.txt");
  return finished;
}

// The environment of a process, one "NAME=VALUE" per entry (empty when it cannot be read).
std::vector<std::string> environment_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/environ");
  std::vector<std::string> entries;
  for (std::string entry; std::getline(file, entry, '\0');) entries.push_back(entry);
  return entries;
}

bool has_entry(pid_t pid, const std::string& entry) {
  for (const auto& seen : environment_of(pid)) {
    if (seen == entry) return true;
  }
  return false;
}

// The processes that carry `entry` in their environment (this one excluded).
std::vector<pid_t> processes_with(const std::string& entry) {
  std::vector<pid_t> found;
  for (pid_t pid : drk::testing::processes_where([](const std::vector<std::string>&) { return true; })) {
    if (pid != ::getpid() && has_entry(pid, entry)) found.push_back(pid);
  }
  return found;
}

std::string slurm_conf(const RunDir& dir, int controller_port, int slurmd_port) {
  const std::string d = dir.path().string();
  std::ostringstream conf;
  conf << "ClusterName=drktest\n"
       << "SlurmctldHost=localhost\n"
       << "SlurmctldPort=" << controller_port << "\n"
       << "SlurmdPort=" << slurmd_port << "\n"
       << "AuthType=auth/munge\nCredType=cred/munge\n"
       << "AuthInfo=socket=" << d << "/munge/munge.socket\n"
       << "SlurmUser=root\nSlurmdUser=root\n"
       << "StateSaveLocation=" << d << "/slurm/state\n"
       << "SlurmdSpoolDir=" << d << "/slurm/spool\n"
       << "SlurmctldPidFile=" << d << "/slurm/slurmctld.pid\n"
       << "SlurmdPidFile=" << d << "/slurm/slurmd.pid\n"
       << "SlurmctldLogFile=" << d << "/slurm/slurmctld.log\n"
       << "SlurmdLogFile=" << d << "/slurm/slurmd.log\n"
       // No cgroups: the test runs where they may not be delegated.
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nSchedulerType=sched/builtin\n"
       << "SlurmdParameters=config_overrides\nReturnToService=2\nMpiDefault=none\n"
       << "JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\n"
       << "AccountingStorageType=accounting_storage/none\n"
       << "NodeName=localhost CPUs=4 State=UNKNOWN\n"
       << "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
  return conf.str();
}

// munged, slurmctld and slurmd of this test, configured by SLURM_CONF=DIR/slurm.conf (which
// every process they start inherits). Its end cancels what runs and kills every process that
// carries that SLURM_CONF, then the daemons.
class SlurmCluster {
 public:
  explicit SlurmCluster(const RunDir& dir) : dir_(dir), conf_entry_("SLURM_CONF=" + dir.file("slurm.conf")) {
    std::filesystem::create_directories(dir.file("munge"));
    std::filesystem::create_directories(dir.file("slurm/state"));
    std::filesystem::create_directories(dir.file("slurm/spool"));
    ::chmod(dir.path().c_str(), 0755);  // munged wants its socket's directories reachable by all
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string key(1024, '\0');
      random.read(key.data(), static_cast<std::streamsize>(key.size()));
      std::ofstream(dir.file("munge/munge.key"), std::ios::binary) << key;
    }
    ::chmod(dir.file("munge/munge.key").c_str(), 0400);
    ::chmod(dir.file("munge").c_str(), 0755);
    const auto ports = drk::bench::free_tcp_ports(2);
    if (!ports) DRK_FAIL(ports.error().message);
    dir.write("slurm.conf", slurm_conf(dir, *ports, *ports + 1));
    ::setenv("SLURM_CONF", dir.file("slurm.conf").c_str(), 1);
    munged_ = std::make_unique<SpawnedProgram>(
        std::vector<std::string>{installed("munged"), "--foreground", "--force",
                                 "--socket=" + dir.file("munge/munge.socket"),
                                 "--key-file=" + dir.file("munge/munge.key"),
                                 "--log-file=" + dir.file("munge/munged.log"),
                                 "--pid-file=" + dir.file("munge/munged.pid"),
                                 "--seed-file=" + dir.file("munge/munged.seed")},
        dir.file("munged.txt"));
    for (int waited = 0; !std::filesystem::exists(dir.file("munge/munge.socket")); waited += 50) {
      DRK_REQUIRE_MESSAGE((munged_->running() && waited < 20'000), dir.read("munged.txt"));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    controller_ = std::make_unique<SpawnedProgram>(
        std::vector<std::string>{installed("slurmctld"), "-D", "-i", "-f", dir.file("slurm.conf")},
        dir.file("slurmctld.txt"));
    slurmd_ = std::make_unique<SpawnedProgram>(
        std::vector<std::string>{installed("slurmd"), "-D", "-N", "localhost", "-f", dir.file("slurm.conf")},
        dir.file("slurmd.txt"));
    const auto since = std::chrono::steady_clock::now();
    while (run_to_end(dir, {installed("sinfo"), "-h", "-o", "%t"}).output.find("idle") != 0) {
      DRK_REQUIRE_MESSAGE((controller_->running() && slurmd_->running() &&
                           std::chrono::steady_clock::now() - since < std::chrono::seconds(60)),
                          "Slurm did not come up:\n" << dir.read("slurmctld.txt") << dir.read("slurmd.txt"));
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  ~SlurmCluster() {
    // The job first (slurmd kills its steps), then whatever is left of it, then the daemons.
    if (!job_id_.empty()) {
      run_to_end(dir_, {installed("scancel"), job_id_});
      const auto since = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - since < std::chrono::seconds(15) && job_pending()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    }
    for (pid_t pid : processes_with(conf_entry_)) ::kill(pid, SIGKILL);
    slurmd_.reset();
    controller_.reset();
    munged_.reset();
    ::unsetenv("SLURM_CONF");
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  void submitted(std::string job_id) { job_id_ = std::move(job_id); }
  const std::string& conf_entry() const { return conf_entry_; }

  // True while the job is queued, running or ending (squeue's other lines, errors included, say no).
  bool job_pending() const {
    const std::string states =
        run_to_end(dir_, {installed("squeue"), "-h", "-j", job_id_, "-t", "PD,CF,R,CG,S", "-o", "%T"}).output;
    for (const char* state : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED"}) {
      if (states.find(state) != std::string::npos) return true;
    }
    return false;
  }

 private:
  const RunDir& dir_;
  std::string conf_entry_;
  std::string job_id_;
  std::unique_ptr<SpawnedProgram> munged_;
  std::unique_ptr<SpawnedProgram> controller_;
  std::unique_ptr<SpawnedProgram> slurmd_;
};

}  // namespace

DRK_TEST_CASE("a Slurm job runs the topology across its tasks; a task Slurm takes away is a lost node whose work moves") {
  if (const std::string why = why_slurm_cannot_run(); !why.empty()) {
    DRK_MESSAGE("SKIPPED: cannot start a Slurm cluster here: " << why);
    return;
  }
  RunDir dir;
  const auto started = std::chrono::steady_clock::now();
  const auto in_time = [&] { return std::chrono::steady_clock::now() - started < kTestLimit; };
  SlurmCluster cluster(dir);
  // The head's node endpoint and mailboxes from `head`; the nodes' from head + 12, each task
  // on this one host past the other's (SLURM_LOCALID).
  const auto ports = drk::bench::free_tcp_ports(48);
  if (!ports) DRK_FAIL(ports.error().message);
  const Finished written = run_to_end(
      dir, {DRK_BINARY, "slurm", std::string(DRK_SOURCE_DIR) + "/tests/integration/slurm.yaml", "--fresh", "--set",
            "run_dir=" + dir.file("run"), "--set", "experiment.steps=3", "--set",
            "network.listen=tcp://127.0.0.1:" + std::to_string(*ports), "--node-port", std::to_string(*ports + 12),
            "--out", dir.file("job.sbatch")});
  DRK_REQUIRE_MESSAGE(written.code == 0, written.output);
  // Three tasks on the one node of this cluster stand in for three nodes.
  const Finished submitted = run_to_end(dir, {installed("sbatch"), "--parsable", "--nodes=1", "--ntasks-per-node=3",
                                              "--chdir=" + dir.path().string(), "--output=" + dir.file("job.out"),
                                              dir.file("job.sbatch")});
  DRK_REQUIRE_MESSAGE(submitted.code == 0, submitted.output);
  std::string job_id = submitted.output.substr(0, submitted.output.find_first_of(";\n"));
  cluster.submitted(job_id);
  DRK_MESSAGE("job " << job_id << " submitted:\n" << dir.read("job.sbatch"));

  using drk::testing::nodes::evaluated_by;
  while (evaluated_by(dir.file("run"), "evaluator.1") == 0) {
    DRK_REQUIRE_MESSAGE((cluster.job_pending() && in_time()), dir.read("job.out"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // Node b's task (SLURM_PROCID 1) and its `drk host` children, killed as Slurm kills a task
  // on a node it takes away.
  std::vector<pid_t> task_b;
  for (pid_t pid : processes_with(cluster.conf_entry())) {
    if (has_entry(pid, "SLURM_PROCID=1") && has_entry(pid, "SLURM_JOB_ID=" + job_id)) task_b.push_back(pid);
  }
  DRK_REQUIRE(task_b.size() >= 2);  // drk slurm-task and evaluator.1's host
  for (pid_t pid : task_b) ::kill(pid, SIGKILL);
  while (dir.read("job.out").find("node b lost") == std::string::npos) {
    DRK_REQUIRE_MESSAGE(in_time(), dir.read("job.out"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Its work moves: the Evaluators left (the head's and node c's) take what b would have done.
  const auto evaluated_elsewhere = [&] {
    return evaluated_by(dir.file("run"), "evaluator.0") + evaluated_by(dir.file("run"), "evaluator.2");
  };
  const uint64_t before = evaluated_elsewhere();
  bool moved = false;
  while (!moved && cluster.job_pending() && in_time()) {
    moved = evaluated_elsewhere() > before;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  DRK_CHECK_MESSAGE(moved, dir.read("job.out"));
  while (cluster.job_pending()) {
    DRK_REQUIRE_MESSAGE(in_time(), "the job did not end in time:\n" << dir.read("job.out"));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const std::string output = dir.read("job.out");
  DRK_MESSAGE("the Slurm test took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
                                     << " s; the job's output:\n" << output);
  DRK_CHECK(output.find("every node has joined") != std::string::npos);
  DRK_CHECK(output.find("node b lost") != std::string::npos);
  DRK_CHECK(output.find("step 3/3") != std::string::npos);
  DRK_CHECK(output.find("node b is back") == std::string::npos);
  // Node c ended with the run, as nodes do when the head says it is over.
  DRK_CHECK(output.find("the run is over") != std::string::npos);
}
