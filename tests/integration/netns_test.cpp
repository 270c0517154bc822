// A multi-node run across two network namespaces that the test creates, joined by a veth pair:
// the head in one (10.77.x.1), node `b` in the other (10.77.x.2), CURVE on. The test cuts the
// link (`ip link set down`), checks that the head loses the node within 3 s and that the work
// moves to the head's Evaluator, restores the link, and checks that the node rejoins and the
// run completes. Skips, saying why, where namespaces or `ip` are not available.
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/integration/node_processes.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RunDir;
using drk::testing::SpawnedProgram;
using namespace drk::testing::nodes;

constexpr int kRunTimeoutMs = 240'000;

// Runs a command to completion; its exit code (127 when it cannot start).
int run_command(const RunDir& dir, std::vector<std::string> argv) {
  SpawnedProgram program(std::move(argv), dir.file("command.txt"));
  if (!program.wait_for(20'000)) return -1;
  return program.exit_code();
}

// A network namespace that lives as long as its holder process (`unshare --net sleep`).
class Namespace {
 public:
  explicit Namespace(const RunDir& dir, const std::string& name)
      : holder_({"/usr/bin/unshare", "--net", "/bin/sleep", "600"}, dir.file(name + "-holder.txt")) {}
  // The argv prefix that runs a program inside it.
  std::vector<std::string> enter() const {
    return {"/usr/bin/nsenter", "-t", std::to_string(holder_.pid()), "-n"};
  }
  std::vector<std::string> enter(std::vector<std::string> argv) const {
    auto full = enter();
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
  }
  pid_t pid() const { return holder_.pid(); }
  bool alive() { return holder_.running(); }

 private:
  SpawnedProgram holder_;
};

std::string why_namespaces_are_unavailable(const RunDir& dir) {
  if (::access("/usr/sbin/ip", X_OK) != 0 && ::access("/sbin/ip", X_OK) != 0) return "no `ip` (iproute2)";
  if (::access("/usr/bin/unshare", X_OK) != 0 || ::access("/usr/bin/nsenter", X_OK) != 0) {
    return "no unshare/nsenter (util-linux)";
  }
  if (run_command(dir, {"/usr/bin/unshare", "--net", "/bin/true"}) != 0) {
    return "this process may not create network namespaces (needs CAP_SYS_ADMIN)";
  }
  return "";
}

std::string ip_binary() { return ::access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip"; }

}  // namespace

DRK_TEST_CASE("a node behind a cut link is lost, its work moves, and it rejoins (how fast: drk bench runtime)") {
  RunDir dir;
  if (const std::string why = why_namespaces_are_unavailable(dir); !why.empty()) {
    DRK_MESSAGE("SKIPPED: network namespaces are unavailable here: " << why);
    return;
  }
  Namespace head_ns(dir, "head");
  Namespace node_ns(dir, "node");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the holders have unshared
  DRK_REQUIRE(head_ns.alive());
  DRK_REQUIRE(node_ns.alive());
  const std::string ip = ip_binary();
  const std::string suffix = std::to_string(::getpid() % 100000);
  const std::string head_link = "dh" + suffix, node_link = "dn" + suffix;
  const std::string subnet = "10.77." + std::to_string(::getpid() % 250) + ".";
  DRK_REQUIRE(run_command(dir, {ip, "link", "add", head_link, "netns", std::to_string(head_ns.pid()), "type", "veth",
                                "peer", "name", node_link, "netns", std::to_string(node_ns.pid())}) == 0);
  for (auto [ns, link, address] : {std::tuple{&head_ns, head_link, subnet + "1/24"},
                                   std::tuple{&node_ns, node_link, subnet + "2/24"}}) {
    DRK_REQUIRE(run_command(dir, ns->enter({ip, "addr", "add", address, "dev", link})) == 0);
    DRK_REQUIRE(run_command(dir, ns->enter({ip, "link", "set", link, "up"})) == 0);
    DRK_REQUIRE(run_command(dir, ns->enter({ip, "link", "set", "lo", "up"})) == 0);
  }

  const Ports ports = pick_ports();
  generate_keys(dir, {"head", "b", "ops"});
  auto head_argv = head_command(dir, ports, 3, true);
  for (auto& arg : head_argv) {
    if (arg.rfind("network.listen=", 0) == 0) arg = "network.listen=tcp://" + subnet + "1:" + std::to_string(ports.head);
  }
  SpawnedProgram head(head_ns.enter(head_argv), dir.file("head.txt"));
  SpawnedProgram node(node_ns.enter(node_command(dir, ports, "b", true, subnet + "1", subnet + "2")),
                      dir.file("node.txt"));
  for (int waited = 0; evaluated_by(dir.file("run"), "evaluator.1") == 0; waited += 100) {
    DRK_REQUIRE_MESSAGE((head.running() && waited < kRunTimeoutMs), dir.read("head.txt") << dir.read("node.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto cut = std::chrono::steady_clock::now();
  DRK_REQUIRE(run_command(dir, node_ns.enter({ip, "link", "set", node_link, "down"})) == 0);
  for (int waited = 0; dir.read("head.txt").find("node b lost") == std::string::npos; waited += 20) {
    DRK_REQUIRE_MESSAGE(waited < 30'000, dir.read("head.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double detected_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  DRK_MESSAGE("node loss detected " << detected_s << " s after the link was cut (node_timeout_ms 800)");
  const auto before = evaluated_by(dir.file("run"), "evaluator.0");
  for (int waited = 0; evaluated_by(dir.file("run"), "evaluator.0") == before; waited += 100) {
    DRK_REQUIRE_MESSAGE(waited < 60'000, dir.read("head.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  DRK_REQUIRE(run_command(dir, node_ns.enter({ip, "link", "set", node_link, "up"})) == 0);
  const bool ended = head.wait_for(kRunTimeoutMs);
  const std::string output = dir.read("head.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_CHECK_MESSAGE(head.exit_code() == 0, output << "\nnode:\n" << dir.read("node.txt"));
  DRK_CHECK(output.find("node b is back") != std::string::npos);
  DRK_CHECK(node.wait_for(20'000));
}
