// The scale simulation at its smallest: the real head (NodeRegistry) and the real Oracle against
// three simulated nodes of two Evaluators each, for a few seconds. Every candidate the feeder
// submits is dispatched and answered exactly once, and the node killed halfway is detected as
// lost, its in-flight requests dispatched again to the others. Times are printed, not asserted.
#include "tests/doctest_drk.h"
#include "tools/bench/scale_bench.h"

DRK_TEST_CASE("simulated nodes against the real head and Oracle: every candidate answered once, a killed node's work moves") {
  drk::bench::ScaleBenchOptions options;
  options.gpus_per_node = 2;
  options.time_scale = 0.05;  // median 1 s: the killed node's Evaluators are busy when it dies
  options.idle_s = 0.5;
  options.load_s = 4;
  options.saturate_s = 1;
  options.heartbeat_ms = 100;
  options.node_timeout_ms = 600;
  const drk::Json result = drk::bench::measure_scale(options, 3);
  DRK_MESSAGE(drk::json_text(result, 2));
  DRK_REQUIRE_MESSAGE(!result.contains("error"), drk::json_text(result));
  DRK_CHECK(result["submitted"].get<uint64_t>() > 0);
  DRK_CHECK(result["answered"] == result["submitted"]);
  DRK_CHECK(result["duplicate_answers"] == 0);
  DRK_CHECK(result["killed_node"] == "n1");
  DRK_CHECK(result["nodes_lost"] == 1);
  DRK_CHECK(result["loss_detected_ms"].get<double>() > 0);
  DRK_CHECK(result["load"]["redispatched"].get<double>() >= 1);
  DRK_CHECK(result["saturate"]["evaluations_per_s"].get<double>() > 0);
}
