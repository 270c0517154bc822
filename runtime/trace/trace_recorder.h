// TraceRecorder: a process's spans (trace_span.h), kept in memory and appended to its trace file,
// RUN_DIR/trace/PROCESS.INCARNATION.jsonl, by a flusher thread once every `flush_every` (a
// second) and when the recorder is destroyed (a host's drain ends with it). A process that
// crashes loses at most its last second of spans; a restarted one (a new incarnation) writes a
// file of its own beside its predecessor's. `drk trace` reads them all (trace_events.h).
//
// The file: a first line naming the process ({"process", "incarnation", "pid"}), then one JSON
// object per span: {"ts_ns" (Unix nanoseconds), "dur_ns", "track", "name", "kind"
// ("handler" or "work"), "trace" and "sent" (trace ids, 16 hex digits; present when not 0 /
// not empty), "args" (an object of strings; present when not empty)}, and {"dropped": N} after
// a flush that found spans dropped (a buffer full between two flushes).
//
// Recording is cheap: each writer (an actor's thread) has a TraceBuffer of its own, whose mutex
// only the flusher contends for, once a flush; formatting and writing happen on the flusher's
// thread. A buffer holds at most `buffer_capacity` spans (half of it wakes the flusher at once);
// past it spans are dropped and counted.
// Times: steady-clock readings made Unix nanoseconds by one offset, taken when the recorder
// opens (unix_ns()).
//
// Thread-safety: TraceBuffer::record() from its one writer thread; everything else from any
// thread. Errors: open() fails (io_error) when the directory or file cannot be made; a write that
// fails later is logged once (runtime/log.h) and its spans are lost, the process goes on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "runtime/trace/trace_span.h"

namespace drk::runtime::trace {

// RUN_DIR/trace
std::string trace_dir(const std::string& run_dir);

// What wakes a recorder's flusher: its period, its end, or a buffer half full.
struct FlushSignal {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool requested = false;
};

class TraceBuffer {
 public:
  TraceBuffer(std::size_t capacity, std::shared_ptr<FlushSignal> signal)
      : capacity_(capacity), signal_(std::move(signal)) {}
  // Keeps `span` for the next flush, or counts it dropped when the buffer is full; a buffer
  // half full asks for a flush at once.
  void record(Span span);

 private:
  friend class TraceRecorder;
  std::mutex mutex_;
  std::vector<Span> spans_;
  uint64_t dropped_ = 0;
  const std::size_t capacity_;
  const std::shared_ptr<FlushSignal> signal_;
};

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    std::string run_dir;  // the file goes to RUN_DIR/trace/
    std::string process;
    uint64_t incarnation = 0;
    std::chrono::milliseconds flush_every{1000};
    std::size_t buffer_capacity = std::size_t{1} << 18;
  };

  static Result<std::shared_ptr<TraceRecorder>> open(const Options& options);
  // Stops the flusher and writes what the buffers hold.
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // A buffer for one writer thread; the recorder flushes it until, once flushed, only the
  // recorder holds it.
  std::shared_ptr<TraceBuffer> buffer();
  // The id of the track called `name` (made on first use).
  uint32_t track(const std::string& name);
  int64_t unix_ns(Clock::time_point when) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count() + offset_ns_;
  }
  // Writes what every buffer holds now (the flusher calls it every `flush_every`).
  void flush();
  const std::string& path() const { return path_; }

 private:
  TraceRecorder(Options options, std::string path, UniqueFd file);
  void run_flusher();
  void write_all(const std::string& text);

  const Options options_;
  const std::string path_;
  UniqueFd file_;
  int64_t offset_ns_ = 0;
  std::mutex flush_mutex_;  // one flush at a time: the file's order
  std::mutex mutex_;        // buffers_, tracks_
  std::vector<std::shared_ptr<TraceBuffer>> buffers_;
  std::map<std::string, uint32_t, std::less<>> tracks_;
  std::vector<std::string> track_names_;  // by id
  bool write_failed_ = false;  // logged once
  const std::shared_ptr<FlushSignal> signal_ = std::make_shared<FlushSignal>();
  std::thread flusher_;
};

}  // namespace drk::runtime::trace
