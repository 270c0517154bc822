// parallel_for: `count` items of work spread over `threads` threads (the calling one among
// them), each thread taking the next item not yet taken, so that a slow item holds up only its
// own thread. Returns when every item is done.
//
// Thread-safety: `work` runs on several threads at once and synchronises what it shares; `worker`
// (0 to threads - 1) names the thread, for per-thread state. Errors: none of its own; `work`
// reports its failures through what it shares, and an item that should not start (a failure
// elsewhere) returns at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace drk {

inline void parallel_for(std::size_t count, std::size_t threads,
                         const std::function<void(std::size_t index, std::size_t worker)>& work) {
  if (count == 0) return;
  std::atomic<std::size_t> next{0};
  const auto run = [&](std::size_t worker) {
    for (std::size_t index; (index = next.fetch_add(1)) < count;) work(index, worker);
  };
  std::vector<std::jthread> helpers;
  for (std::size_t worker = 1; worker < std::clamp<std::size_t>(threads, 1, count); ++worker)
    helpers.emplace_back(run, worker);
  run(0);
}

}  // namespace drk
