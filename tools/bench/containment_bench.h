// The sandbox-limits benchmark (`drk bench containment`): what a hostile candidate costs the
// evaluations beside it. An honest candidate (relu) is evaluated again and again on one engine,
// alone and then while another engine, on another thread, evaluates each hostile candidate of
// tests/hacks that attacks the machine rather than its own score: a fork bomb, a memory bomb, a
// spinning child and a spinning thread (both meant to slow the CPU reference). For each it prints
// the hostile evaluation's outcome (how it was contained and reported), how long it took, and the
// honest candidate's median time and speedup beside it over those alone: ratios measured side by
// side in one run (docs/benchmarks.md).
//
// Thread-safety: two threads, one engine each. Errors: the exit code (0; 1 when an engine cannot
// be made or the honest candidate is not correct), with the reason logged (runtime/log.h).
#pragma once

#include <cstdint>
#include <ostream>

namespace drk::bench {

struct ContainmentBenchOptions {
  uint32_t honest_evaluations = 5;        // alone, and at least this many beside each hostile one
  uint64_t memory_bytes = uint64_t{1} << 30;  // each sandbox's host memory budget (--memory-mb)
};

int run_containment_bench(const ContainmentBenchOptions& options, std::ostream& out);

}  // namespace drk::bench
