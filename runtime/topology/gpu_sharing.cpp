#include "runtime/topology/gpu_sharing.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/topology/experiment_device.h"

namespace drk::runtime {

Status check_one_evaluator_per_gpu(const Topology& topology) {
  if (!experiment_on_cuda(topology.experiment)) return {};
  // (node, device) -> the Evaluators there, in topology order; no `gpu:` is the first visible one.
  std::map<std::pair<std::string, int>, std::vector<const ActorEntry*>> placed;
  std::vector<std::pair<std::string, int>> order;
  for (const ActorEntry& actor : topology.actors) {
    if (actor.role != "evaluator") continue;
    const std::pair<std::string, int> where{actor.node, actor.gpu < 0 ? 0 : actor.gpu};
    auto& there = placed[where];
    if (there.empty()) order.push_back(where);
    there.push_back(&actor);
  }
  std::string problems;
  for (const auto& where : order) {
    const auto& there = placed[where];
    if (there.size() < 2) continue;
    std::string names;
    for (size_t k = 0; k < there.size(); ++k) {
      names += (k == 0 ? "" : k + 1 == there.size() ? " and " : ", ") + there[k]->name + " (" + there[k]->where + ")";
    }
    const bool unpinned = there.front()->gpu < 0 || there.back()->gpu < 0;
    problems += (problems.empty() ? "" : "\n") + names + " would evaluate on the same GPU, " +
                (unpinned ? "the first visible one" : "GPU " + std::to_string(where.second)) + " of node " +
                where.first +
                ": their timed calls would overlap and skew both speedups, and neither would account for "
                "the other's device memory. Give each Evaluator its own GPU (`gpus: [0, 1]` on the entry, or "
                "`gpu: N` on each), or place one Evaluator there";
  }
  if (problems.empty()) return {};
  return make_error(Errc::invalid_argument, problems);
}

}  // namespace drk::runtime
