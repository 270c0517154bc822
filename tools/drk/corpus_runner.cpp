#include "tools/drk/corpus_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <capnp/message.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "actors/evaluator/sandbox_process.h"
#include "actors/verifier/verify.h"
#include "base/json_text.h"
#include "base/unique_fd.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

// Evaluates a file whose header `row` already holds, and judges its verdict.
void evaluate_file(CorpusEngines& engines, const fs::path& path, Row& row) {
  const std::string source = read_source(path);
  const bool python = language_of(path) == CandidateLanguage::python;
  // CUDA C++, and Python files written for the GPU (their load_inline CUDA, their Triton).
  const bool on_gpu = path.extension() == ".cu" ||
                      (python && row.expected.backend && (*row.expected.backend == judging::Backend::cuda ||
                                                          *row.expected.backend == judging::Backend::triton));
  const auto device = on_gpu ? kernels::DeviceKind::cuda : kernels::DeviceKind::cpu;
  // A Python file that cannot be evaluated here: a hack is skipped, an honest file judged by its source.
  auto unavailable = [&](const std::string& why) {
    if (python && !row.expected.hacked) return judge_source(row, source, "judged by its source alone: " + why);
    row.got = row.outcome = "skipped";
    row.note = why;
  };
  auto* engine = engines.get(device, row.expected.threads, python);
  if (!engine) return unavailable("no " + std::string(python ? "Python" : kernels::device_name(device)) +
                                  " evaluation here: " + engines.unusable[{device, python}]);
  if (python)
    if (auto problem = engine->find_task(row.expected.task); !problem) return unavailable(problem.error().message);
  evaluator::CandidateInput input;
  input.id = "corpus/" + path.filename().string();
  input.task = row.expected.task;
  input.device = device;
  input.source = source;
  input.best_known_speedup = row.expected.best_known_speedup;
  input.python = python;
  if (python) input.python_backend = *row.expected.backend;
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<msg::EvalResult>();
  if (auto status = engine->evaluate(input, result); !status) {
    row.got = "error";
    row.outcome = row.expected.hacked ? "missed" : "false alarm";
    row.note = status.error().message;
    return;
  }
  if (device == kernels::DeviceKind::cuda && result.getSandbox() == msg::SandboxOutcome::FAILED_TO_LOAD &&
      std::string(result.getErrorText().cStr()).find("no usable CUDA device") != std::string::npos) {
    row.got = row.outcome = "skipped";
    row.note = "no CUDA device: the GPU script runs this file";
    return;
  }
  row.eval_ms = result.getEvalMs();
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<msg::Verdict>();
  auto started = std::chrono::steady_clock::now();
  verifier::verify(result.asReader(), verdict);
  row.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  judge(row, verdict.asReader());
}

// One row as one line of JSON between the evaluating child and the parent.
std::string encode_row(const Row& row) {
  const Json line = {{"kind", row.kind},       {"got", row.got},           {"outcome", row.outcome},
                     {"note", row.note},       {"eval_ms", row.eval_ms},   {"verify_ms", row.verify_ms},
                     {"failed", row.failed},   {"warnings", row.warnings}};
  return json_text(line) + "\n";
}

// False when `line` is not a row encode_row wrote.
bool decode_row(const std::string& line, Row& row) {
  const Json fields = Json::parse(line, nullptr, false);
  if (!fields.is_object()) return false;
  try {
    row.kind = fields.at("kind").get<std::string>();
    row.got = fields.at("got").get<std::string>();
    row.outcome = fields.at("outcome").get<std::string>();
    row.note = fields.at("note").get<std::string>();
    row.eval_ms = fields.at("eval_ms").is_number() ? fields.at("eval_ms").get<double>() : 0.0;
    row.verify_ms = fields.at("verify_ms").is_number() ? fields.at("verify_ms").get<double>() : 0.0;
    row.failed = fields.at("failed").get<std::vector<std::string>>();
    row.warnings = fields.at("warnings").get<std::vector<std::string>>();
  } catch (const Json::exception&) {
    return false;
  }
  return true;
}

// The evaluating child: evaluates files[first..] in order and writes one line per file to a pipe.
class EvaluatingChild {
 public:
  static Result<EvaluatingChild> start(CorpusEngines& engines, const std::vector<fs::path>& files,
                                       std::vector<Row>& rows, size_t first) {
    auto rows_pipe = open_pipe("the evaluating process's rows");
    if (!rows_pipe) return rows_pipe.error();
    std::cout.flush();
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return make_error(Errc::io_error, std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);
      rows_pipe->read.reset();
      for (size_t i = first; i < files.size(); ++i) {
        Row row = rows[i];
        evaluate_file(engines, files[i], row);
        std::string line = encode_row(row);
        for (size_t written = 0; written < line.size();) {
          ssize_t n = write(rows_pipe->write.get(), line.data() + written, line.size() - written);
          if (n <= 0) _exit(1);
          written += static_cast<size_t>(n);
        }
      }
      engines.made.clear();  // stop the sandboxes before leaving
      _exit(0);
    }
    setpgid(pid, pid);
    return EvaluatingChild(pid, std::move(rows_pipe->read));
  }

  EvaluatingChild(EvaluatingChild&& other) noexcept : pid_(std::exchange(other.pid_, -1)), fd_(std::move(other.fd_)) {}
  EvaluatingChild(const EvaluatingChild&) = delete;
  ~EvaluatingChild() {
    fd_.reset();
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The next row's line, or nullopt when the deadline passed or the child ended without one.
  std::optional<std::string> next_line(std::chrono::steady_clock::time_point deadline, bool& timed_out) {
    timed_out = false;
    for (;;) {
      if (auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        return std::nullopt;
      }
      pollfd watched{fd_.get(), POLLIN, 0};
      int ready = poll(&watched, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) return std::nullopt;
      if (ready <= 0) continue;
      char chunk[4096];
      ssize_t n = read(fd_.get(), chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  EvaluatingChild(pid_t pid, UniqueFd fd) : pid_(pid), fd_(std::move(fd)) {}
  pid_t pid_;
  UniqueFd fd_;
  std::string buffer_;
};

}  // namespace

evaluator::EvaluationEngine* CorpusEngines::get(kernels::DeviceKind device, int threads, bool python) {
  const Key key{device, threads > 0 ? threads : options.max_threads, python};
  if (auto it = made.find(key); it != made.end()) return it->second.get();
  if (auto it = unusable.find({device, python}); it != unusable.end()) return nullptr;
  auto device_options = options;
  device_options.device = device;
  device_options.max_threads = std::get<1>(key);
  device_options.python = python;
  device_options.evaluator_name = "drk verify-corpus";
  if (device == kernels::DeviceKind::cuda) device_options.shapes = cuda_shapes;
  // The corpus checks honesty: every correct file also runs the out-of-bounds check
  // (compute-sanitizer on CUDA, guard pages on the CPU).
  device_options.sanitize = true;
  auto engine = evaluator::EvaluationEngine::create(catalog, device_options);
  if (!engine) {
    unusable[{device, python}] = engine.error().message;
    return nullptr;
  }
  return (made[key] = std::move(*engine)).get();
}

void evaluate_files(CorpusEngines& engines, const std::vector<fs::path>& files, std::vector<Row>& rows,
                    std::chrono::milliseconds deadline, runtime::ProgressMeter* progress, const RowDone& row_done) {
  auto count_one = [progress, &row_done](const Row& row) {
    if (row_done) row_done(row);
    if (progress) progress->add_done();
  };
  std::vector<size_t> pending;
  std::vector<fs::path> pending_files;
  std::vector<Row> pending_rows;
  for (size_t i = 0; i < files.size(); ++i)
    if (rows[i].outcome.empty()) {
      pending.push_back(i);
      pending_files.push_back(files[i]);
      pending_rows.push_back(rows[i]);
    }
  size_t next = 0;
  while (next < pending.size()) {
    auto child = EvaluatingChild::start(engines, pending_files, pending_rows, next);
    if (!child) {
      Row& row = rows[pending[next]];
      row.got = "error";
      row.outcome = row.expected.hacked ? "missed" : "false alarm";
      row.note = "could not start the evaluating process: " + child.error().message;
      ++next;
      count_one(row);
      continue;
    }
    while (next < pending.size()) {
      bool timed_out = false;
      auto line = child->next_line(std::chrono::steady_clock::now() + deadline, timed_out);
      Row& row = rows[pending[next++]];
      if (line && decode_row(*line, row)) {
        count_one(row);
        continue;
      }
      row.got = timed_out ? "deadline" : "error";
      row.outcome = row.expected.hacked ? "missed" : "false alarm";
      row.note = timed_out ? "deadline: the evaluation took longer than " + std::to_string(deadline.count() / 1000) +
                                 " s and was killed"
                           : line ? "the evaluating process wrote an unreadable result: " + *line
                                  : "the evaluating process ended without a result";
      count_one(row);
      break;  // the child is killed; the next one starts with the next file
    }
  }
}

std::vector<std::string> files_judged_otherwise_alone(CorpusEngines& engines, const std::vector<fs::path>& files,
                                                      const std::vector<Row>& rows, std::chrono::milliseconds deadline,
                                                      runtime::ProgressMeter* progress) {
  std::vector<std::string> differing;
  for (size_t i = 0; i < files.size(); ++i) {
    if (progress) progress->add_done();
    // A file judged by its source alone ran nothing: nothing run before it can change its verdict.
    if (rows[i].outcome == "skipped" || rows[i].outcome == "invalid" || rows[i].kind == "python static") continue;
    std::vector<Row> alone{rows[i]};
    alone[0].got = alone[0].outcome = alone[0].note = "";
    alone[0].failed.clear();
    alone[0].warnings.clear();
    evaluate_files(engines, {files[i]}, alone, deadline);
    if (alone[0].got != rows[i].got || alone[0].outcome != rows[i].outcome)
      differing.push_back(rows[i].file + ": " + rows[i].got + " (" + rows[i].outcome + ") in the whole run, " +
                          alone[0].got + " (" + alone[0].outcome + ") alone");
  }
  return differing;
}

}  // namespace drk::tools
