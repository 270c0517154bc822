// drk verify-corpus: evaluates every candidate of a folder whose files declare the expected
// outcome (docs/verification.md, "The corpus format"), with the real EvaluationEngine and the
// Verifier, and reports what was caught, missed, and falsely alarmed. The evaluations run in a
// child process, each file under a deadline: a candidate (or a compiler) that hangs past it is
// killed with the child and recorded as a failure of its file, and a new child goes on with the
// next file.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "actors/evaluator/sandbox_process.h"
#include "actors/verifier/verify.h"
#include "kernels/catalog/task.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "base/json_text.h"
#include "base/unique_fd.h"
#include "base/json_text.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

struct Expectation {
  std::string task;
  bool hacked = false;
  std::vector<std::string> codes;  // failed checks (hacked) or warnings (honest) that must appear
  double best_known_speedup = 0;   // drk-best-known; 0: none
  int threads = 0;                 // drk-threads; 0: the command's --threads
  std::string problem;             // why the header is unusable, "" when it is fine
};

struct Row {
  std::string file;
  Expectation expected;
  std::string got;  // hacked, honest, incorrect, did not compile, error, skipped
  std::vector<std::string> failed;
  std::vector<std::string> warnings;
  std::string outcome;  // caught, missed, passed, false alarm, skipped, invalid
  std::string note;
  double eval_ms = 0;
  double verify_ms = 0;
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Reads `// drk-task:`, `// drk-expect:`, `// drk-best-known:` and `// drk-threads:` from the file's
// leading comment lines.
Expectation read_expectation(const std::string& source) {
  Expectation e;
  std::istringstream in(source);
  bool has_expectation = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("//", 0) != 0) break;
    auto value = [&](const char* key) -> std::optional<std::string> {
      auto at = line.find(key);
      if (at == std::string::npos) return std::nullopt;
      return line.substr(at + std::string(key).size());
    };
    if (auto task = value("drk-task:")) {
      auto parts = words(*task);
      if (!parts.empty()) e.task = parts[0];
    } else if (auto expect = value("drk-expect:")) {
      auto parts = words(*expect);
      if (parts.empty() || (parts[0] != "hacked" && parts[0] != "honest")) {
        e.problem = "`// drk-expect:` must start with `hacked` or `honest`";
        return e;
      }
      has_expectation = true;
      e.hacked = parts[0] == "hacked";
      e.codes.assign(parts.begin() + 1, parts.end());
    } else if (auto best = value("drk-best-known:")) {
      char* end = nullptr;
      e.best_known_speedup = std::strtod(best->c_str(), &end);
      if (end == best->c_str() || !(e.best_known_speedup > 0)) {
        e.problem = "`// drk-best-known:` needs a positive speedup, e.g. `// drk-best-known: 1.5`";
        return e;
      }
    } else if (auto threads = value("drk-threads:")) {
      e.threads = std::atoi(threads->c_str());
      if (e.threads < 1 || e.threads > 256) {
        e.problem = "`// drk-threads:` needs a thread count from 1 to 256, e.g. `// drk-threads: 1`";
        return e;
      }
    }
  }
  if (e.task.empty()) e.problem = "the header comment lacks `// drk-task: NAME`";
  else if (!has_expectation) e.problem = "the header comment lacks `// drk-expect: hacked CODE...` or `honest`";
  else if (e.hacked && e.codes.empty()) e.problem = "`// drk-expect: hacked` needs the check codes that must fail";
  return e;
}

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  for (const auto& code : want)
    if (std::find(have.begin(), have.end(), code) == have.end()) return false;
  return true;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string number(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// An engine per device and thread count (drk-threads), made when a file first needs it.
struct Engines {
  kernels::TaskCatalog catalog;
  evaluator::EngineOptions options;
  kernels::DeviceKind cuda_shapes = kernels::DeviceKind::cpu;
  using Key = std::pair<kernels::DeviceKind, int>;
  std::map<Key, std::unique_ptr<evaluator::EvaluationEngine>> made;
  std::map<kernels::DeviceKind, std::string> unusable;  // why a device's engine cannot be made

  evaluator::EvaluationEngine* get(kernels::DeviceKind device, int threads) {
    const Key key{device, threads > 0 ? threads : options.max_threads};
    if (auto it = made.find(key); it != made.end()) return it->second.get();
    if (auto it = unusable.find(device); it != unusable.end()) return nullptr;
    auto device_options = options;
    device_options.device = device;
    device_options.max_threads = key.second;
    device_options.evaluator_name = "drk verify-corpus";
    if (device == kernels::DeviceKind::cuda) device_options.shapes = cuda_shapes;
    // The corpus checks honesty: every correct file also runs the out-of-bounds check
    // (compute-sanitizer on CUDA, guard pages on the CPU).
    device_options.sanitize = true;
    auto engine = evaluator::EvaluationEngine::create(catalog, device_options);
    if (!engine) {
      unusable[device] = engine.error().message;
      return nullptr;
    }
    return (made[key] = std::move(*engine)).get();
  }
};

void judge(Row& row, msg::Verdict::Reader verdict) {
  auto result = verdict.getResult();
  for (auto check : verdict.getFailedChecks()) row.failed.emplace_back(check.getCode().cStr());
  for (auto check : verdict.getWarnings()) row.warnings.emplace_back(check.getCode().cStr());
  if (!verdict.getHonest()) row.got = "hacked";
  else if (!result.getCompiled()) row.got = "did not compile";
  else if (!result.getCorrect()) row.got = "incorrect";
  else row.got = "honest";
  if (row.got == "incorrect" || row.got == "did not compile") {
    std::string text = row.got == "incorrect" ? result.getErrorText().cStr() : result.getCompileLog().cStr();
    row.note = text.substr(0, 160);
  }
  if (row.expected.hacked) {
    bool caught = row.got == "hacked" && contains_all(row.failed, row.expected.codes);
    row.outcome = caught ? "caught" : "missed";
    if (!caught && row.got == "hacked") row.note = "rejected, but not for the declared checks";
  } else {
    bool passed = row.got == "honest" && contains_all(row.warnings, row.expected.codes);
    row.outcome = passed ? "passed" : "false alarm";
    if (!passed && row.got == "honest") row.note = "honest, but a declared warning was not reported";
  }
}

std::string read_source(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream source;
  source << in.rdbuf();
  return source.str();
}

// Reads the file's header into `row`, and gives the row its outcome when the file needs no
// evaluation (a bad header, or CUDA without a device); rows without an outcome get evaluated.
void read_header(const fs::path& path, Row& row) {
  row.expected = read_expectation(read_source(path));
  if (!row.expected.problem.empty()) {
    row.got = "error";
    row.outcome = "invalid";
    row.note = row.expected.problem;
    return;
  }
  // Without the driver no CUDA device can be used: skip before spending nvcc's time.
  if (path.extension() == ".cu" && !evaluator::nvidia_driver_present()) {
    row.got = row.outcome = "skipped";
    row.note = "no CUDA device (/dev/nvidiactl is absent): the GPU script runs this file";
    return;
  }
}

// Evaluates a file whose header `row` already holds, and judges its verdict.
void evaluate_file(Engines& engines, const fs::path& path, Row& row) {
  const std::string source = read_source(path);
  const auto device = path.extension() == ".cu" ? kernels::DeviceKind::cuda : kernels::DeviceKind::cpu;
  auto* engine = engines.get(device, row.expected.threads);
  if (!engine) {
    row.got = row.outcome = "skipped";
    row.note = "no " + std::string(kernels::device_name(device)) + " evaluation here: " + engines.unusable[device];
    return;
  }
  evaluator::CandidateInput input;
  input.id = "corpus/" + path.filename().string();
  input.task = row.expected.task;
  input.device = device;
  input.source = source;
  input.best_known_speedup = row.expected.best_known_speedup;
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
  const Json line = {{"got", row.got},         {"outcome", row.outcome},   {"note", row.note},
                              {"eval_ms", row.eval_ms}, {"verify_ms", row.verify_ms}, {"failed", row.failed},
                              {"warnings", row.warnings}};
  return json_text(line) + "\n";
}

// False when `line` is not a row encode_row wrote.
bool decode_row(const std::string& line, Row& row) {
  const Json fields = Json::parse(line, nullptr, false);
  if (!fields.is_object()) return false;
  try {
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
// Killed (its process group: compilers included; the sandbox dies with it) when a file passes its
// deadline.
class EvaluatingChild {
 public:
  static Result<EvaluatingChild> start(Engines& engines, const std::vector<fs::path>& files,
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

// Evaluates files whose rows are still unfinished, each under `deadline`, in evaluating children.
void evaluate_files(Engines& engines, const std::vector<fs::path>& files, std::vector<Row>& rows,
                    std::chrono::milliseconds deadline) {
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
      continue;
    }
    while (next < pending.size()) {
      bool timed_out = false;
      auto line = child->next_line(std::chrono::steady_clock::now() + deadline, timed_out);
      Row& row = rows[pending[next++]];
      if (line && decode_row(*line, row)) continue;
      row.got = timed_out ? "deadline" : "error";
      row.outcome = row.expected.hacked ? "missed" : "false alarm";
      row.note = timed_out ? "deadline: the evaluation took longer than " + std::to_string(deadline.count() / 1000) +
                                 " s and was killed"
                           : line ? "the evaluating process wrote an unreadable result: " + *line
                                  : "the evaluating process ended without a result";
      break;  // the child is killed; the next one starts with the next file
    }
  }
}

// --each-alone: every file evaluated again with nothing evaluated before it (a fresh evaluating
// process, so fresh engines and sandboxes); the files whose verdict (honest or rejected, correct or
// not) or outcome differs from the whole run's: a candidate that changed the verdicts of those
// after it.
std::vector<std::string> files_judged_otherwise_alone(Engines& engines, const std::vector<fs::path>& files,
                                                      const std::vector<Row>& rows, std::chrono::milliseconds deadline) {
  std::vector<std::string> differing;
  for (size_t i = 0; i < files.size(); ++i) {
    if (rows[i].outcome == "skipped" || rows[i].outcome == "invalid") continue;
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


struct Totals {
  int hacked = 0, caught = 0, honest = 0, false_alarms = 0, skipped = 0, invalid = 0;
  double honest_eval_ms = 0, honest_verify_ms = 0;
  double detection_rate() const { return hacked ? static_cast<double>(caught) / hacked : 1.0; }
  double false_positive_rate() const { return honest ? static_cast<double>(false_alarms) / honest : 0.0; }
  // Verification time (static checks and verdict) relative to the evaluation, honest files only.
  double overhead() const { return honest_eval_ms > 0 ? honest_verify_ms / honest_eval_ms : 0.0; }
  bool perfect() const { return caught == hacked && false_alarms == 0 && invalid == 0; }
};

Totals total(const std::vector<Row>& rows) {
  Totals t;
  for (const auto& row : rows) {
    if (row.outcome == "skipped") ++t.skipped;
    else if (row.outcome == "invalid") ++t.invalid;
    else if (row.expected.hacked) {
      ++t.hacked;
      if (row.outcome == "caught") ++t.caught;
    } else {
      ++t.honest;
      if (row.outcome == "false alarm") ++t.false_alarms;
      t.honest_eval_ms += row.eval_ms;
      t.honest_verify_ms += row.verify_ms;
    }
  }
  return t;
}

void print_table(const std::vector<Row>& rows, const Totals& t, bool each_alone,
                 const std::vector<std::string>& differing) {
  std::printf("%-36s %-24s %-34s %-10s %-44s %s\n", "file", "task", "expected", "got", "failed checks", "outcome");
  for (const auto& row : rows) {
    std::string expected = row.expected.problem.empty()
                               ? (row.expected.hacked ? "hacked " : "honest ") + join(row.expected.codes, ",")
                               : "?";
    std::string failed = row.failed.empty() ? "-" : join(row.failed, ",");
    std::printf("%-36s %-24s %-34s %-10s %-44s %s\n", row.file.c_str(), row.expected.task.c_str(), expected.c_str(),
                row.got.c_str(), failed.c_str(), row.outcome.c_str());
    if (!row.note.empty()) std::printf("    note: %s\n", row.note.c_str());
  }
  std::printf("\ncaught %d of %d hacked (detection %.1f %%), %d false alarm(s) among %d honest (%.1f %%), %d skipped",
              t.caught, t.hacked, 100 * t.detection_rate(), t.false_alarms, t.honest, 100 * t.false_positive_rate(),
              t.skipped);
  if (t.invalid) std::printf(", %d without a usable header", t.invalid);
  std::printf("\nverification of honest files: %.2f ms of %.0f ms evaluation (%.3f %%)\n", t.honest_verify_ms,
              t.honest_eval_ms, 100 * t.overhead());
  if (!each_alone) return;
  std::printf("each file alone: %zu file(s) judged otherwise than in the whole run\n", differing.size());
  for (const auto& line : differing) std::printf("    %s\n", line.c_str());
}

void print_json(const std::string& directory, const std::vector<Row>& rows, const Totals& t, bool each_alone,
                const std::vector<std::string>& differing) {
  Json report = {{"directory", directory},
                          {"detection_rate", t.detection_rate()},
                          {"false_positive_rate", t.false_positive_rate()},
                          {"hacked", t.hacked},
                          {"caught", t.caught},
                          {"honest", t.honest},
                          {"false_alarms", t.false_alarms},
                          {"skipped", t.skipped},
                          {"invalid", t.invalid},
                          {"verification_overhead", t.overhead()}};
  if (each_alone) report["judged_otherwise_alone"] = differing;
  Json& rows_json = report["rows"] = Json::array();
  for (const Row& row : rows) {
    rows_json.push_back({{"file", row.file},
                         {"task", row.expected.task},
                         {"expected", row.expected.problem.empty() ? (row.expected.hacked ? "hacked" : "honest") : ""},
                         {"expected_codes", row.expected.codes},
                         {"got", row.got},
                         {"failed_checks", row.failed},
                         {"warnings", row.warnings},
                         {"outcome", row.outcome},
                         {"eval_ms", row.eval_ms},
                         {"verify_ms", row.verify_ms},
                         {"note", row.note}});
  }
  std::cout << json_text(report) << "\n";
}

}  // namespace

namespace {

// What `drk verify-corpus` was asked.
struct VerifyCorpusArgs {
  std::string directory;
  bool json = false;
  bool each_alone = false;
  double deadline_s = 120;
  kernels::DeviceKind cuda_shapes = kernels::DeviceKind::cpu;
  evaluator::EngineOptions options;
};

int verify_corpus(const VerifyCorpusArgs& args) {
  const std::string& directory = args.directory;
  const bool json = args.json;
  const bool each_alone = args.each_alone;
  const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(args.deadline_s * 1000));
  const kernels::DeviceKind cuda_shapes = args.cuda_shapes;
  const evaluator::EngineOptions& options = args.options;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    log::error() << "drk verify-corpus: '" << directory
                 << "' is not a folder: pass the corpus folder, e.g. tests/hacks";
    return 1;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    auto extension = entry.path().extension();
    if (entry.is_regular_file() && (extension == ".cpp" || extension == ".cu")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    log::error() << "drk verify-corpus: no *.cpp or *.cu candidates under '" << directory << "'";
    return 1;
  }
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  if (!catalog) {
    log::error() << "drk verify-corpus: " << catalog.error().message;
    return 1;
  }
  Engines engines{std::move(*catalog), options, cuda_shapes, {}, {}};
  std::vector<Row> rows(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    rows[i].file = fs::relative(files[i], directory).string();
    read_header(files[i], rows[i]);
  }
  evaluate_files(engines, files, rows, deadline);
  Totals totals = total(rows);
  std::vector<std::string> differing;
  if (each_alone) differing = files_judged_otherwise_alone(engines, files, rows, deadline);
  if (json) print_json(directory, rows, totals, each_alone, differing);
  else print_table(rows, totals, each_alone, differing);
  return totals.perfect() && differing.empty() ? 0 : 1;
}

}  // namespace

void add_verify_corpus_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<VerifyCorpusArgs>();
  evaluator::EngineOptions& options = args->options;
  options.trials = 3;
  options.timing_budget_ms = 100;  // the corpus checks honesty, not speed
  options.max_threads = 2;
  options.min_samples = 3;
  options.max_samples = 20;
  options.target_batch_ms = 5;  // long batches: a loaded machine's wake-up latency then stays far below 3x (timer_mismatch)
  CLI::App* command = drk.add_subcommand(
      "verify-corpus",
      "the hack corpus: caught, missed, false alarms\n"
      "\n"
      "Evaluates every candidate under DIR (*.cpp for the CPU, *.cu for CUDA; sub-folders included) with\n"
      "the evaluation engine and the Verifier, compares each verdict with the outcome the file declares in\n"
      "its header comment, and prints one row per file and the totals:\n"
      "\n"
      "  // drk-task: relu\n"
      "  // drk-expect: hacked static.process        (every listed check must fail)\n"
      "  // drk-expect: honest library.used           (must pass; listed warnings must be reported)\n"
      "  // drk-best-known: 1.5                       (optional: the task's best known speedup, as the\n"
      "                                                Oracle would send it; a result over 3 times it is\n"
      "                                                timed again, with input elements swapped)\n"
      "  // drk-threads: 1                            (optional: ctx->max_threads for this file, in place\n"
      "                                                of --threads)\n"
      "\n"
      "A hacked file is caught when its verdict is rejected with every declared check among the failed\n"
      "ones; an honest file passes when its verdict is honest, it is correct, and every declared warning\n"
      "is reported. *.cu files are skipped with a note where no CUDA device can be used. Every correct\n"
      "file also runs the out_of_bounds check: one call under compute-sanitizer memcheck (*.cu) or with\n"
      "every tensor between inaccessible guard pages (CPU).");
  command->add_option("DIR", args->directory, "the corpus folder, e.g. tests/hacks")->required()->type_name("");
  command->add_flag("--json", args->json, "print one JSON object: detection_rate, false_positive_rate, rows, totals");
  add_engine_options(*command, options, /*memory_limit=*/true);
  command->add_flag("--each-alone", args->each_alone,
                    "then evaluate every file again with nothing evaluated before it, and list the\n"
                    "files judged otherwise than in the whole run (a candidate that changed the\n"
                    "verdicts of those after it); any such file makes the exit status 1");
  add_device_option(*command, "--cuda-shapes", args->cuda_shapes,
                    "the shapes *.cu files are evaluated at (default cpu, the tasks' scaled shapes: the\n"
                    "corpus checks honesty, and at KernelBench's shapes the host-side checks of one\n"
                    "evaluation take minutes, docs/gpu.md)");
  command->add_option("--deadline-s", args->deadline_s,
                      "wall time one file may take, compile and evaluation (default 120): past it\n"
                      "the evaluation is killed and the file counts as missed (hacked) or a false\n"
                      "alarm (honest), with the note \"deadline\"")
      ->type_name("S")
      ->check(runtime::at_least(1));
  command->footer(
      "Exit status: 0 when every hacked file is caught and no honest file is rejected (100 % detection,\n"
      "0 % false positives) and, with --each-alone, every file is judged alone as in the whole run; 1\n"
      "otherwise or when a file lacks its header; a usage error exits with CLI11's code (105 a refused\n"
      "value, 106 a missing argument, 109 an unknown one).");
  actions[command] = [args] { return verify_corpus(*args); };
}

}  // namespace drk::tools
