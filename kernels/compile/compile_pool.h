// CompilePool: compiles candidate sources on a bounded pool of worker threads, so that an
// Evaluator can compile the next candidates while it checks and times the current one (and a
// Generator that compiles ahead can compile several candidates while it generates).
//
// submit(source) queues the compile and returns a shared future of its outcome at once; at most
// `workers` compiles run at the same time, the rest wait in submission order. A source whose
// compile is queued or running (same Compiler::cache_key: same source, compiler, flags and
// ABI) is not compiled twice: the second submit gets the first one's future. Finished compiles
// are forgotten here; the Compiler's content-hash cache on disk (shared by every pool and
// process that uses the same directory) answers them from then on.
//
// adopt() files an object compiled elsewhere (compiled_artifact.h) into the cache once it is
// verified, so that the next submit of its source is a cache hit instead of a compile.
//
// Thread-safety: submit(), compile(), adopt() and stats() may be called from any thread. The destructor
// lets running compiles finish and answers the queued ones with Errc::busy ("the compile pool
// stopped"); it must not run while another thread is inside submit().
// Errors: the outcome is the Compiler's: compile_error for a candidate that does not compile
// (the compiler's message), io_error when the compiler cannot run or the cache cannot be written.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernels/compile/compiler.h"
#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::compile {

struct CompilePoolStats {
  uint64_t submitted = 0;     // submit() calls
  uint64_t deduplicated = 0;  // of them, answered by a compile already queued or running
  uint64_t compiled = 0;      // compiles the workers finished (cache hits included)
  size_t peak_running = 0;    // the most compiles that ever ran at once
  uint64_t adopted = 0;       // shipped objects filed into the cache (their compiles skipped)
  uint64_t refused = 0;       // shipped objects refused by verify_artifact (compiled instead)
};

class CompilePool {
 public:
  using Outcome = Result<CompiledCandidate>;

  // invalid_argument when workers is 0 or compiler is null.
  static Result<std::unique_ptr<CompilePool>> create(std::unique_ptr<Compiler> compiler, size_t workers);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  std::shared_future<Outcome> submit(const std::string& source);
  // submit(source).get(): blocks until the compile (or the one it joined) is done.
  Outcome compile(const std::string& source);
  // verify_artifact(), then Compiler::adopt(). Errors: verify_artifact's invalid_argument (the
  // artifact is refused: compile the source as usual); io_error when the cache cannot be written.
  Status adopt(const std::string& source, msg::CompiledArtifact::Reader artifact);

  size_t workers() const { return threads_.size(); }
  CompilePoolStats stats() const;
  const Compiler& compiler() const { return *compiler_; }

 private:
  struct Job {
    std::string key;
    std::string source;
    std::promise<Outcome> promise;
  };

  CompilePool(std::unique_ptr<Compiler> compiler, size_t workers);
  void work();

  std::unique_ptr<Compiler> compiler_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::map<std::string, std::shared_future<Outcome>> in_flight_;  // by cache key, queued or running
  bool stopping_ = false;
  size_t running_ = 0;
  CompilePoolStats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace drk::compile
