// PolicyReports: the policy versions an external trainer reports over HTTP (experiment.learner.
// backend: external; docs/llm-generator.md), between the HTTP server's threads that accept them
// and the Learner's thread that acts on them.
//
//   POST /policy  {"version": N, "model": "...", "endpoint": "http(s)://..."}  (model, endpoint
//                 optional): 200 with the state below when accepted (or when it repeats the
//                 current version as it was reported: a retried request); 400 naming the field
//                 of a bad body; 409 for a version below the current one, or the current one
//                 reported again with another model or endpoint.
//   GET /policy   200 {"version", "model", "endpoint", "steps_done", "steps", "max_staleness"};
//                 with ?steps_done=N it answers once N steps are done (their samples sent to the
//                 archive), or after 60 s, or when the Learner stops: the trainer waits without polling.
//
// Thread-safety: every member may be called from any thread. Errors: answers, never exceptions.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/http/router.h"
#include "training/served_policy.h"

namespace drk::learner {

class PolicyReports {
 public:
  PolicyReports(training::ServedPolicy current, uint32_t steps, uint32_t max_staleness);

  // The Learner's side: the reports accepted since the last call, oldest first.
  std::vector<training::ServedPolicy> take_new();
  // The steps whose samples went to the archive (GET /policy shows it).
  void set_steps_done(uint32_t steps_done);
  // Answers every waiting GET now, and later ones at once: the Learner stops.
  void close();

  // The trainer's side: answers POST /policy and GET /policy.
  runtime::http::HttpResponse report(const std::string& body);
  runtime::http::HttpResponse state(const std::string& query) const;

  // POST and GET /policy on this board.
  void add_routes(runtime::http::Router& router);

 private:
  std::string state_json_locked() const;

  mutable std::mutex mutex_;
  mutable std::condition_variable steps_changed_;
  bool closed_ = false;
  training::ServedPolicy current_;
  std::deque<training::ServedPolicy> new_;
  uint32_t steps_done_ = 0;
  const uint32_t steps_;
  const uint32_t max_staleness_;
};

}  // namespace drk::learner
