// The supervision keys of a topology: child types per actor entry, drain, heartbeats and hung
// handlers; wrong values are reported with their line and the expected form.
#include <string>

#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::RunDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DRK_TEST_CASE("supervision keys and child types are read, with their defaults") {
  RunDir dir;
  auto defaults = load_topology(dir.write("d.yaml", "name: d\nactors: [{role: learner}]\n"));
  DRK_REQUIRE_MESSAGE(defaults.ok(), defaults.error().message);
  DRK_CHECK(defaults->supervision.drain_ms == 2000);
  DRK_CHECK(defaults->supervision.heartbeat_ms == 1000);
  DRK_CHECK(defaults->supervision.missed_heartbeats == 5);
  DRK_CHECK(defaults->supervision.hung_handler_s == 30);
  DRK_CHECK_FALSE(defaults->supervision.kill_hung);
  DRK_CHECK(defaults->find("learner")->restart == ChildRestart::permanent);

  auto given = load_topology(dir.write("g.yaml",
                                       "name: g\n"
                                       "supervision: {drain_ms: 500, heartbeat_ms: 100, missed_heartbeats: 3,\n"
                                       "              hung_handler_s: 2.5, kill_hung: true}\n"
                                       "actors:\n"
                                       "  - {role: evaluator, count: 2, restart: transient}\n"
                                       "  - {role: verifier, process: checks, restart: temporary}\n"
                                       "  - {role: oracle, process: checks, restart: temporary}\n"
                                       "  - {role: learner, restart: permanent}\n"));
  DRK_REQUIRE_MESSAGE(given.ok(), given.error().message);
  DRK_CHECK(given->supervision.drain_ms == 500);
  DRK_CHECK(given->supervision.heartbeat_ms == 100);
  DRK_CHECK(given->supervision.missed_heartbeats == 3);
  DRK_CHECK(given->supervision.hung_handler_s == 2.5);
  DRK_CHECK(given->supervision.kill_hung);
  DRK_CHECK(given->find("evaluator.1")->restart == ChildRestart::transient);
  DRK_CHECK(given->find("oracle")->restart == ChildRestart::temporary);
  DRK_CHECK(given->find("learner")->restart == ChildRestart::permanent);
}

DRK_TEST_CASE("wrong supervision values and mixed child types in one process are reported with their line") {
  RunDir dir;
  auto wrong = load_topology(dir.write("w.yaml",
                                       "name: w\n"                                    // 1
                                       "supervision:\n"                               // 2
                                       "  heartbeat_ms: 0\n"                          // 3
                                       "  missed_heartbeats: many\n"                  // 4
                                       "  hung_handler_s: -1\n"                       // 5
                                       "  kill_hung: yes please\n"                    // 6
                                       "  drain_ms: -5\n"                             // 7
                                       "actors:\n"                                    // 8
                                       "  - {role: verifier, process: checks}\n"      // 9
                                       "  - {role: oracle, process: checks,\n"        // 10
                                       "     restart: temporary}\n"                   // 11
                                       "  - {role: learner, restart: sometimes}\n"    // 12
                                       "  - {role: archivist, process: head, restart: transient}\n"));  // 13
  DRK_REQUIRE_FALSE(wrong.ok());
  const std::string& message = wrong.error().message;
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:3: supervision.heartbeat_ms must be a positive integer"), message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:4: supervision.missed_heartbeats must be a positive integer"),
                    message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:5: supervision.hung_handler_s must be a positive number"), message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:6: supervision.kill_hung must be true or false"), message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:7: supervision.drain_ms must be a non-negative integer"), message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:10: actors[1]: process 'checks' would have actors 'verifier' "
                                      "(restart: permanent, "),
                    message);
  DRK_CHECK_MESSAGE(contains(message, "and 'oracle' (restart: temporary); a process is restarted as a whole"),
                    message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:12: actors[2].restart must be permanent, transient or temporary"),
                    message);
  DRK_CHECK_MESSAGE(contains(message, "w.yaml:13: actors[3]: actors in process head live as long as `drk run`"),
                    message);
}

}  // namespace
}  // namespace drk::runtime
