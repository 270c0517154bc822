#include "runtime/trace/trace_recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/json_text.h"
#include "runtime/log.h"

namespace drk::runtime::trace {
namespace {

// Names of tracks and spans are the runtime's (actor names, message types, literals): quoted
// with the characters JSON must escape escaped; arguments, which may hold any bytes, go through
// json_text.
void append_quoted(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_trace_id(std::string& out, uint64_t id) {
  char text[20];
  std::snprintf(text, sizeof text, "\"%016" PRIx64 "\"", id);
  out += text;
}

void append_span(std::string& out, const Span& span, const std::string& track) {
  out += "{\"ts_ns\":";
  out += std::to_string(span.start_ns);
  out += ",\"dur_ns\":";
  out += std::to_string(span.duration_ns);
  out += ",\"track\":";
  append_quoted(out, track);
  out += ",\"name\":";
  append_quoted(out, span.name);
  out += span.handler ? ",\"kind\":\"handler\"" : ",\"kind\":\"work\"";
  if (span.trace_id != 0) {
    out += ",\"trace\":";
    append_trace_id(out, span.trace_id);
  }
  if (!span.sent_trace_ids.empty()) {
    out += ",\"sent\":[";
    for (std::size_t index = 0; index < span.sent_trace_ids.size(); ++index) {
      if (index > 0) out += ',';
      append_trace_id(out, span.sent_trace_ids[index]);
    }
    out += ']';
  }
  if (!span.args.empty()) {
    Json args = Json::object();
    for (const SpanArg& arg : span.args) args[arg.key] = arg.value;
    out += ",\"args\":";
    out += json_text(args);
  }
  out += "}\n";
}

}  // namespace

std::string trace_dir(const std::string& run_dir) { return run_dir + "/trace"; }

void TraceBuffer::record(Span span) {
  std::size_t held = 0;
  {
    std::lock_guard lock(mutex_);
    if (spans_.size() >= capacity_) {
      ++dropped_;
      return;
    }
    spans_.push_back(std::move(span));
    held = spans_.size();
  }
  if (held == std::max<std::size_t>(capacity_ / 2, 1)) {
    {
      std::lock_guard lock(signal_->mutex);
      signal_->requested = true;
    }
    signal_->wake.notify_one();
  }
}

Result<std::shared_ptr<TraceRecorder>> TraceRecorder::open(const Options& options) {
  const std::string dir = trace_dir(options.run_dir);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return make_error(Errc::io_error, "cannot create the trace directory '" + dir + "': " + error.message() +
                                          " (check that the run directory is writable, or turn traces off: "
                                          "--set supervision.trace=false)");
  }
  const std::string path = dir + "/" + options.process + "." + std::to_string(options.incarnation) + ".jsonl";
  UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!file) {
    return make_error(Errc::io_error, "cannot open the trace file '" + path + "': " + std::strerror(errno) +
                                          " (or turn traces off: --set supervision.trace=false)");
  }
  std::shared_ptr<TraceRecorder> recorder(new TraceRecorder(options, path, std::move(file)));
  Json header = Json::object();
  header["process"] = options.process;
  header["incarnation"] = options.incarnation;
  header["pid"] = static_cast<int64_t>(::getpid());
  recorder->write_all(json_text(header) + "\n");
  recorder->flusher_ = std::thread([raw = recorder.get()] { raw->run_flusher(); });
  return recorder;
}

TraceRecorder::TraceRecorder(Options options, std::string path, UniqueFd file)
    : options_(std::move(options)), path_(std::move(path)), file_(std::move(file)) {
  using namespace std::chrono;
  const auto steady_ns = duration_cast<nanoseconds>(Clock::now().time_since_epoch()).count();
  const auto unix_ns = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
  offset_ns_ = unix_ns - steady_ns;
}

TraceRecorder::~TraceRecorder() {
  {
    std::lock_guard lock(signal_->mutex);
    signal_->stopping = true;
  }
  signal_->wake.notify_all();
  if (flusher_.joinable()) flusher_.join();
  flush();
}

std::shared_ptr<TraceBuffer> TraceRecorder::buffer() {
  auto made = std::make_shared<TraceBuffer>(options_.buffer_capacity, signal_);
  std::lock_guard lock(mutex_);
  buffers_.push_back(made);
  return made;
}

uint32_t TraceRecorder::track(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (const auto found = tracks_.find(name); found != tracks_.end()) return found->second;
  const auto id = static_cast<uint32_t>(track_names_.size());
  track_names_.push_back(name);
  tracks_.emplace(name, id);
  return id;
}

void TraceRecorder::flush() {
  std::lock_guard flushing(flush_mutex_);
  std::vector<std::shared_ptr<TraceBuffer>> buffers;
  std::vector<std::string> track_names;
  {
    std::lock_guard lock(mutex_);
    buffers = buffers_;
    track_names = track_names_;
  }
  std::string text;
  uint64_t dropped = 0;
  std::vector<Span> spans;
  for (const auto& buffer : buffers) {
    spans.clear();
    {
      std::lock_guard lock(buffer->mutex_);
      spans.swap(buffer->spans_);
      dropped += std::exchange(buffer->dropped_, 0);
    }
    for (const Span& span : spans) {
      append_span(text, span, span.track < track_names.size() ? track_names[span.track] : "unknown");
    }
  }
  if (dropped > 0) text += "{\"dropped\":" + std::to_string(dropped) + "}\n";
  if (!text.empty()) write_all(text);
  buffers.clear();
  // A buffer only this recorder holds has no writer left: once empty, it goes.
  std::lock_guard lock(mutex_);
  std::erase_if(buffers_, [](const std::shared_ptr<TraceBuffer>& buffer) {
    if (buffer.use_count() != 1) return false;
    std::lock_guard held(buffer->mutex_);
    return buffer->spans_.empty() && buffer->dropped_ == 0;
  });
}

void TraceRecorder::run_flusher() {
  std::unique_lock lock(signal_->mutex);
  while (!signal_->stopping) {
    signal_->wake.wait_for(lock, options_.flush_every, [&] { return signal_->stopping || signal_->requested; });
    if (signal_->stopping) break;
    signal_->requested = false;
    lock.unlock();
    flush();
    lock.lock();
  }
}

void TraceRecorder::write_all(const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t count = ::write(file_.get(), text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) {
      if (!write_failed_) {
        write_failed_ = true;
        log::warn() << "trace: cannot write '" << path_ << "': " << std::strerror(errno)
                    << "; spans are lost from here on (free disk space, or --set supervision.trace=false)";
      }
      return;
    }
    written += static_cast<std::size_t>(count);
  }
}

}  // namespace drk::runtime::trace
