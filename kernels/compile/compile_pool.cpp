#include "kernels/compile/compile_pool.h"

#include "kernels/compile/compiled_artifact.h"

namespace drk::compile {

Result<std::unique_ptr<CompilePool>> CompilePool::create(std::unique_ptr<Compiler> compiler, size_t workers) {
  if (!compiler) return make_error(Errc::invalid_argument, "the compile pool needs a compiler");
  if (workers == 0)
    return make_error(Errc::invalid_argument, "the compile pool needs at least one worker (eval.compile_workers >= 1)");
  return std::unique_ptr<CompilePool>(new CompilePool(std::move(compiler), workers));
}

CompilePool::CompilePool(std::unique_ptr<Compiler> compiler, size_t workers) : compiler_(std::move(compiler)) {
  threads_.reserve(workers);
  for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  std::deque<Job> abandoned;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abandoned.swap(queue_);
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
  for (auto& job : abandoned)
    job.promise.set_value(make_error(Errc::busy, "the compile pool stopped before compiling this candidate"));
}

std::shared_future<CompilePool::Outcome> CompilePool::submit(const std::string& source) {
  std::string key = compiler_->cache_key(source);
  std::shared_future<Outcome> future;
  {
    std::lock_guard lock(mutex_);
    ++stats_.submitted;
    if (auto found = in_flight_.find(key); found != in_flight_.end()) {
      ++stats_.deduplicated;
      return found->second;
    }
    Job job{key, source, {}};
    future = job.promise.get_future().share();
    in_flight_.emplace(key, future);
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return future;
}

CompilePool::Outcome CompilePool::compile(const std::string& source) { return submit(source).get(); }

Status CompilePool::adopt(const std::string& source, msg::CompiledArtifact::Reader artifact) {
  auto verified = verify_artifact(*compiler_, source, artifact);
  if (verified) {
    const auto object = artifact.getObject();
    verified = compiler_->adopt(source, artifact.getKey().cStr(),
                                {reinterpret_cast<const char*>(object.begin()), object.size()},
                                artifact.getCompilerOutput().cStr(), shipped_modules(artifact));
  }
  std::lock_guard lock(mutex_);
  ++(verified ? stats_.adopted : stats_.refused);
  return verified;
}

CompilePoolStats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CompilePool::work() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
      stats_.peak_running = std::max(stats_.peak_running, running_);
    }
    Outcome outcome = compiler_->compile(job.source);
    {
      // Forgotten before the promise is kept: a submit that sees the key gets this future, one
      // that does not compiles again and finds the object in the cache.
      std::lock_guard lock(mutex_);
      --running_;
      ++stats_.compiled;
      in_flight_.erase(job.key);
    }
    job.promise.set_value(std::move(outcome));
  }
}

}  // namespace drk::compile
