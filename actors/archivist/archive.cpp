#include "actors/archivist/archive.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>
#include <utility>

#include "base/json_text.h"
#include "judging/shapes_tried.h"
#include "messages/enumerant_name.h"

namespace drk::archivist {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS candidates (
  id TEXT PRIMARY KEY, step INTEGER, trajectory_id TEXT, turn INTEGER, task TEXT, device TEXT,
  language TEXT, policy_version INTEGER, generator TEXT, source TEXT, schedule TEXT,
  recorded_ms INTEGER);
CREATE TABLE IF NOT EXISTS results (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(id), evaluator TEXT, compiled INTEGER,
  compile_log TEXT, compile_cached INTEGER, compile_ms REAL, sandbox TEXT, correct INTEGER,
  trials INTEGER, trials_passed INTEGER, max_abs_error REAL, max_rel_error REAL, error_text TEXT,
  candidate_median_us REAL, candidate_p10_us REAL, candidate_p90_us REAL, candidate_cv REAL,
  reference_median_us REAL, reference_p10_us REAL, reference_p90_us REAL, reference_cv REAL,
  speedup REAL, eval_ms REAL, compile_wait_ms REAL, load_ms REAL, correctness_ms REAL, timing_ms REAL,
  device TEXT, architecture TEXT, dtype TEXT, shapes_tried INTEGER, shapes_handled INTEGER,
  shapes_speedup REAL);
CREATE TABLE IF NOT EXISTS verdicts (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(id), honest INTEGER, failed_checks TEXT);
CREATE TABLE IF NOT EXISTS rewards (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(id), reward REAL);
CREATE TABLE IF NOT EXISTS policy_versions (
  version INTEGER PRIMARY KEY, step INTEGER, parameters BLOB, recorded_ms INTEGER);
CREATE TABLE IF NOT EXISTS steps (
  step INTEGER PRIMARY KEY, policy_version INTEGER, mean_reward REAL, best_speedup REAL,
  correct_fraction REAL, trajectories INTEGER, loss REAL, seconds REAL, finished INTEGER,
  clip_fraction REAL, approx_kl REAL);
CREATE TABLE IF NOT EXISTS feedback (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(id), summary TEXT);
CREATE TABLE IF NOT EXISTS step_training (
  step INTEGER PRIMARY KEY, rolled_back INTEGER, rolled_back_to INTEGER, diagnostic INTEGER,
  prs_rejected INTEGER, mrs_rejected INTEGER, mrs_vetoed INTEGER, ppo_epochs INTEGER, stage TEXT);
CREATE TABLE IF NOT EXISTS samples (
  candidate_id TEXT PRIMARY KEY, trajectory_id TEXT, turn INTEGER, step INTEGER, task TEXT,
  policy_version INTEGER, family TEXT, reward REAL, advantage REAL, return REAL, trained INTEGER,
  rejected_by TEXT, correct INTEGER, honest INTEGER, speedup REAL, coverage REAL, actions TEXT,
  logprobs TEXT, learner_logprobs TEXT, kept TEXT);
CREATE TABLE IF NOT EXISTS sample_conversations (
  candidate_id TEXT PRIMARY KEY, prompt TEXT, answer TEXT, model TEXT);
CREATE TABLE IF NOT EXISTS screened (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates(id));
CREATE TABLE IF NOT EXISTS step_screening (
  step INTEGER PRIMARY KEY, measured INTEGER, screened INTEGER);
CREATE TABLE IF NOT EXISTS remeasured (
  task TEXT PRIMARY KEY, candidate_id TEXT, evaluations INTEGER, speedup REAL, candidate_us REAL,
  reference_us REAL, speedup_low REAL, speedup_high REAL, recorded_ms INTEGER);
CREATE INDEX IF NOT EXISTS samples_by_trajectory ON samples (trajectory_id, turn);
)sql";

// Columns added to a table after it first shipped: an archive of an older run gets them when it is
// opened for writing (ALTER TABLE ADD COLUMN appends, so a row's columns keep the order above).
struct AddedColumn {
  const char* table;
  const char* column;
  const char* type;
};
constexpr AddedColumn kAddedColumns[] = {
    {"results", "compile_wait_ms", "REAL"},
    {"results", "load_ms", "REAL"},
    {"results", "correctness_ms", "REAL"},
    {"results", "timing_ms", "REAL"},
    {"results", "device", "TEXT"},
    {"results", "architecture", "TEXT"},
    {"results", "dtype", "TEXT"},
    {"results", "shapes_tried", "INTEGER"},
    {"results", "shapes_handled", "INTEGER"},
    {"results", "shapes_speedup", "REAL"},
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string schedule_text(msg::Schedule::Reader schedule) {
  std::string text = schedule.getFamily().cStr();
  for (auto decision : schedule.getDecisions()) {
    text += std::string(" ") + decision.getKnob().cStr() + "=" + decision.getValue().cStr();
  }
  return text;
}

// A list of numbers as a JSON array, how the samples table stores them (non-finite as null).
template <typename List>
std::string json_numbers(List list) {
  Json array = Json::array();
  // Unary + stores a bool as 0 or 1, as the table always has.
  for (const auto value : list) array.push_back(+value);
  return json_text(array);
}

// Text that is not an array of numbers (a damaged row) reads as no numbers; null as NaN.
std::vector<double> parse_numbers(const std::string& text) {
  const auto array = Json::parse(text, nullptr, false);
  std::vector<double> values;
  if (!array.is_array()) return values;
  for (const auto& value : array) values.push_back(value.is_number() ? value.get<double>() : std::nan(""));
  return values;
}

// The prompt of each turn of a language model's trajectory, as a JSON array of {role, content}:
// the previous turn's prompt followed by the messages the turn added (Turn.promptAdded).
std::vector<std::string> turn_prompts(capnp::List<msg::Turn>::Reader turns) {
  std::vector<std::string> prompts;
  Json conversation = Json::array();
  for (const auto turn : turns) {
    for (const auto message : turn.getPromptAdded())
      conversation.push_back({{"role", message.getRole().cStr()}, {"content", message.getContent().cStr()}});
    prompts.push_back(json_text(conversation));
  }
  return prompts;
}

// Text that is not an array of {role, content} (a damaged row) reads as no messages.
std::vector<PromptMessage> parse_prompt(const std::string& text) {
  const auto array = Json::parse(text, nullptr, false);
  std::vector<PromptMessage> messages;
  if (!array.is_array()) return messages;
  for (const auto& message : array) {
    if (!message.is_object()) continue;
    messages.push_back({message.value("role", ""), message.value("content", "")});
  }
  return messages;
}

const char* sandbox_name(msg::SandboxOutcome outcome) {
  switch (outcome) {
    case msg::SandboxOutcome::OK: return "ok";
    case msg::SandboxOutcome::CRASHED: return "crashed";
    case msg::SandboxOutcome::TIMED_OUT: return "timed_out";
    case msg::SandboxOutcome::FAILED_TO_LOAD: return "failed_to_load";
    case msg::SandboxOutcome::RETURNED_ERROR: return "returned_error";
  }
  return "unknown";
}

}  // namespace

std::string judged_on(const BestKernel& kernel) {
  if (kernel.device.empty()) return "untagged";
  return kernel.device + " " + kernel.architecture + " " + kernel.dtype;
}

Result<Archive> Archive::open(const std::string& path, bool read_only) {
  sqlite3* raw = nullptr;
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int status = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Archive archive(path, raw);
  if (status != SQLITE_OK) {
    return make_error(read_only ? Errc::not_found : Errc::io_error,
                      "cannot open the archive '" + path + "': " +
                          (raw ? sqlite3_errmsg(raw) : "out of memory") +
                          (read_only ? " (is this the run directory of a `drk run`?)" : ""));
  }
  sqlite3_busy_timeout(raw, 5000);
  if (!read_only) {
    if (auto status = archive.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !status)
      return status.error();
    if (auto status = archive.exec(kSchema); !status) return status.error();
    if (auto status = archive.add_missing_columns(); !status) return status.error();
  }
  return archive;
}

Status Archive::add_missing_columns() const {
  for (const AddedColumn& added : kAddedColumns) {
    SqliteStatement columns(db_.get(), ("SELECT 1 FROM pragma_table_info('" + std::string(added.table) +
                                  "') WHERE name = ?").c_str());
    columns.text(added.column);
    if (!columns.prepared()) return sqlite_error(std::string("cannot read the columns of ") + added.table);
    if (columns.step() == SQLITE_ROW) continue;
    const std::string alter =
        std::string("ALTER TABLE ") + added.table + " ADD COLUMN " + added.column + " " + added.type;
    if (auto status = exec(alter.c_str()); !status) return status;
  }
  return {};
}

Error Archive::sqlite_error(const std::string& what) const {
  return make_error(Errc::io_error, "archive '" + path_ + "': " + what + ": " + sqlite3_errmsg(db_.get()));
}

Status Archive::exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    return make_error(Errc::io_error, "archive '" + path_ + "': " + text);
  }
  return {};
}

Status Archive::record_scored(msg::Scored::Reader scored) {
  const auto verdict = scored.getVerdict();
  const auto result = verdict.getResult();
  const auto candidate = result.getCandidate();
  const std::string id = candidate.getId().cStr();
  if (auto status = exec("BEGIN"); !status) return status;
  bool ok = true;
  {
    SqliteStatement insert(db_.get(),
                     "INSERT OR REPLACE INTO candidates VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    insert.text(id).integer(candidate.getStep()).text(candidate.getTrajectoryId().cStr())
        .integer(candidate.getTurn()).text(candidate.getTask().cStr())
        .text(candidate.getDevice() == msg::Device::CUDA ? "cuda" : "cpu")
        .text(candidate.getLanguage() == msg::Language::CUDA ? "cuda" : "cpp")
        .integer(candidate.getPolicyVersion()).text(candidate.getGenerator().cStr())
        .text(candidate.getSource().cStr()).text(schedule_text(candidate.getSchedule()))
        .integer(now_ms());
    ok = ok && insert.step() == SQLITE_DONE;
  }
  if (ok) {
    SqliteStatement insert(db_.get(),
                     "INSERT OR REPLACE INTO results VALUES "
                     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    const auto cand = result.getCandidateTiming();
    const auto ref = result.getReferenceTiming();
    const judging::ShapesTried shapes = judging::shapes_tried(result);
    insert.text(id).text(result.getEvaluator().cStr()).integer(result.getCompiled())
        .text(result.getCompileLog().cStr()).integer(result.getCompileCached())
        .real(result.getCompileMs()).text(sandbox_name(result.getSandbox()))
        .integer(result.getCorrect()).integer(result.getTrials()).integer(result.getTrialsPassed())
        .real(result.getMaxAbsError()).real(result.getMaxRelError())
        .text(result.getErrorText().cStr()).real(cand.getMedianUs()).real(cand.getP10Us())
        .real(cand.getP90Us()).real(cand.getCv()).real(ref.getMedianUs()).real(ref.getP10Us())
        .real(ref.getP90Us()).real(ref.getCv()).real(result.getSpeedup()).real(result.getEvalMs())
        .real(result.getCompileWaitMs()).real(result.getLoadMs()).real(result.getCorrectnessMs())
        .real(result.getTimingMs()).text(msg::enumerant_name(result.getDevice()))
        .text(result.getArchitecture().cStr()).text(msg::enumerant_name(result.getDtype()))
        .integer(shapes.tried).integer(shapes.handled).real(result.getShapesSpeedup());
    ok = insert.step() == SQLITE_DONE;
  }
  if (ok) {
    std::string checks;
    for (auto check : verdict.getFailedChecks()) {
      checks += (checks.empty() ? "" : ",") + std::string(check.getCode().cStr());
    }
    SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO verdicts VALUES (?,?,?)");
    insert.text(id).integer(verdict.getHonest()).text(checks);
    ok = insert.step() == SQLITE_DONE;
  }
  if (ok) {
    SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO rewards VALUES (?,?)");
    insert.text(id).real(scored.getReward());
    ok = insert.step() == SQLITE_DONE;
  }
  if (ok && scored.getScreened()) {
    // Answered by the Oracle's cost model: the verdict holds no measurement.
    SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO screened VALUES (?)");
    insert.text(id);
    ok = insert.step() == SQLITE_DONE;
  }
  if (ok) {
    SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO feedback VALUES (?,?)");
    insert.text(id).text(scored.getSummary().cStr());
    ok = insert.step() == SQLITE_DONE;
  }
  if (!ok) {
    Error error = sqlite_error("cannot record candidate '" + id + "'");
    (void)exec("ROLLBACK");
    return error;
  }
  return exec("COMMIT");
}

Status Archive::record_policy(msg::PolicyWeights::Reader weights) {
  SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO policy_versions VALUES (?,?,?,?)");
  const auto parameters = weights.getParameters();
  insert.integer(weights.getVersion()).integer(weights.getStep())
      .blob(parameters.begin(), parameters.size()).integer(now_ms());
  if (insert.step() != SQLITE_DONE) {
    return sqlite_error("cannot record policy version " + std::to_string(weights.getVersion()));
  }
  return {};
}

Status Archive::record_step(msg::StepReport::Reader report) {
  SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert.integer(report.getStep()).integer(report.getPolicyVersion()).real(report.getMeanReward())
      .real(report.getBestSpeedup()).real(report.getCorrectFraction())
      .integer(report.getTrajectories()).real(report.getLoss()).real(report.getSeconds())
      .integer(report.getFinished()).real(report.getClipFraction()).real(report.getApproxKl());
  if (insert.step() != SQLITE_DONE) {
    return sqlite_error("cannot record step " + std::to_string(report.getStep()));
  }
  SqliteStatement training(db_.get(), "INSERT OR REPLACE INTO step_training VALUES (?,?,?,?,?,?,?,?,?)");
  training.integer(report.getStep()).integer(report.getRolledBack()).integer(report.getRolledBackTo())
      .integer(report.getDiagnostic()).integer(report.getPrsRejected()).integer(report.getMrsRejected())
      .integer(report.getMrsVetoed()).integer(report.getPpoEpochs()).text(report.getStage().cStr());
  if (training.step() != SQLITE_DONE) {
    return sqlite_error("cannot record the training fields of step " + std::to_string(report.getStep()));
  }
  SqliteStatement screening(db_.get(), "INSERT OR REPLACE INTO step_screening VALUES (?,?,?)");
  screening.integer(report.getStep()).integer(report.getMeasured()).integer(report.getScreened());
  if (screening.step() != SQLITE_DONE) {
    return sqlite_error("cannot record the screening counts of step " + std::to_string(report.getStep()));
  }
  return {};
}

Status Archive::record_trajectory(msg::Trajectory::Reader trajectory) {
  if (auto status = exec("BEGIN"); !status) return status;
  const auto turns = trajectory.getTurns();
  const auto prompts = turn_prompts(turns);
  for (unsigned index = 0; index < turns.size(); ++index) {
    const auto turn = turns[index];
    bool ok = true;
    if (turn.getModel().size() != 0) {
      SqliteStatement conversation(db_.get(), "INSERT OR REPLACE INTO sample_conversations VALUES (?,?,?,?)");
      conversation.text(turn.getCandidateId().cStr()).text(prompts[index]).text(turn.getAnswer().cStr())
          .text(turn.getModel().cStr());
      ok = conversation.step() == SQLITE_DONE;
    }
    SqliteStatement insert(db_.get(),
                     "INSERT OR REPLACE INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert.text(turn.getCandidateId().cStr()).text(trajectory.getId().cStr()).integer(index + 1)
        .integer(trajectory.getStep()).text(trajectory.getTask().cStr())
        .integer(trajectory.getPolicyVersion()).text(turn.getFamily().cStr()).real(turn.getReward())
        .real(turn.getAdvantage()).real(turn.getReturn()).integer(turn.getTrained())
        .text(turn.getRejectedBy().cStr()).integer(turn.getCorrect()).integer(turn.getHonest())
        .real(turn.getSpeedup()).real(turn.getCoverage()).text(json_numbers(turn.getActions()))
        .text(json_numbers(turn.getActionLogprobs())).text(json_numbers(turn.getLearnerLogprobs()))
        .text(json_numbers(turn.getKeptDecisions()));
    if (!ok || insert.step() != SQLITE_DONE) {
      Error error = sqlite_error("cannot record the turns of trajectory '" + std::string(trajectory.getId().cStr()) + "'");
      (void)exec("ROLLBACK");
      return error;
    }
  }
  return exec("COMMIT");
}

Result<std::vector<BestKernel>> Archive::best_per_task() const {
  SqliteStatement query(db_.get(), R"sql(
    SELECT c.task, c.id, r.speedup, r.candidate_median_us, r.reference_median_us, c.policy_version,
           COALESCE(r.device, ''), COALESCE(r.architecture, ''), COALESCE(r.dtype, ''),
           COALESCE(r.shapes_speedup, 0)
    FROM candidates c JOIN results r ON r.candidate_id = c.id
    JOIN verdicts v ON v.candidate_id = c.id
    WHERE r.correct = 1 AND v.honest = 1
      AND r.speedup = (SELECT MAX(r2.speedup) FROM candidates c2
                       JOIN results r2 ON r2.candidate_id = c2.id
                       JOIN verdicts v2 ON v2.candidate_id = c2.id
                       WHERE c2.task = c.task AND r2.correct = 1 AND v2.honest = 1
                         AND r2.device IS r.device AND r2.architecture IS r.architecture
                         AND r2.dtype IS r.dtype)
    GROUP BY c.task, r.device, r.architecture, r.dtype
    ORDER BY c.task, r.device, r.architecture, r.dtype)sql");
  if (!query.prepared()) return sqlite_error("cannot query the best kernels");
  std::vector<BestKernel> rows;
  while (query.step() == SQLITE_ROW) {
    rows.push_back({query.column_text(0), query.column_text(1), query.column_real(2),
                    query.column_real(3), query.column_real(4),
                    static_cast<uint32_t>(query.column_integer(5)), query.column_text(6), query.column_text(7),
                    query.column_text(8), query.column_real(9)});
  }
  return rows;
}

Result<std::vector<StepRow>> Archive::steps() const {
  SqliteStatement joined(db_.get(),
                   "SELECT s.step, s.policy_version, s.mean_reward, s.best_speedup, s.correct_fraction, "
                   "s.trajectories, s.seconds, s.finished, t.rolled_back, t.rolled_back_to, t.diagnostic, "
                   "t.prs_rejected, t.mrs_rejected, t.mrs_vetoed, t.ppo_epochs, t.stage, "
                   "COALESCE(q.measured, 0), COALESCE(q.screened, 0) "
                   "FROM steps s LEFT JOIN step_training t ON t.step = s.step "
                   "LEFT JOIN step_screening q ON q.step = s.step ORDER BY s.step");
  // The archive of an older run has no step_training table.
  const bool has_training = joined.prepared();
  SqliteStatement plain(db_.get(),
                  "SELECT step, policy_version, mean_reward, best_speedup, correct_fraction, "
                  "trajectories, seconds, finished FROM steps ORDER BY step");
  SqliteStatement& query = has_training ? joined : plain;
  if (!query.prepared()) return sqlite_error("cannot query the steps");
  std::vector<StepRow> rows;
  while (query.step() == SQLITE_ROW) {
    StepRow row;
    row.step = static_cast<uint32_t>(query.column_integer(0));
    row.policy_version = static_cast<uint32_t>(query.column_integer(1));
    row.mean_reward = query.column_real(2);
    row.best_speedup = query.column_real(3);
    row.correct_fraction = query.column_real(4);
    row.trajectories = static_cast<uint32_t>(query.column_integer(5));
    row.seconds = query.column_real(6);
    row.finished = query.column_integer(7) != 0;
    if (has_training) {
      row.rolled_back = query.column_integer(8) != 0;
      row.rolled_back_to = static_cast<uint32_t>(query.column_integer(9));
      row.diagnostic = query.column_integer(10) != 0;
      row.prs_rejected = static_cast<uint32_t>(query.column_integer(11));
      row.mrs_rejected = static_cast<uint32_t>(query.column_integer(12));
      row.mrs_vetoed = static_cast<uint32_t>(query.column_integer(13));
      row.ppo_epochs = static_cast<uint32_t>(query.column_integer(14));
      row.stage = query.column_text(15);
      row.measured = static_cast<uint32_t>(query.column_integer(16));
      row.screened = static_cast<uint32_t>(query.column_integer(17));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<TrainingSample>> Archive::training_samples() const {
  const auto samples_query = [](const std::string& conversation_columns, const std::string& conversation_join) {
    return R"sql(
    SELECT s.candidate_id, s.trajectory_id, s.task, s.family, s.turn, s.step, s.policy_version,
      COALESCE(f.summary, ''), COALESCE(c.source, ''), COALESCE(c.schedule, ''), s.reward,
      s.advantage, s.return, s.trained, s.rejected_by, s.correct, s.honest, s.speedup, s.coverage,
      s.actions, s.logprobs, s.learner_logprobs, s.kept, sc.candidate_id IS NOT NULL, )sql" +
           conversation_columns + R"sql(
    FROM samples s LEFT JOIN candidates c ON c.id = s.candidate_id
    LEFT JOIN screened sc ON sc.candidate_id = s.candidate_id
    LEFT JOIN samples p ON p.trajectory_id = s.trajectory_id AND p.turn = s.turn - 1
    LEFT JOIN feedback f ON f.candidate_id = p.candidate_id )sql" +
           conversation_join + R"sql(
    ORDER BY s.step, s.trajectory_id, s.turn)sql";
  };
  SqliteStatement joined(db_.get(), samples_query("COALESCE(lm.prompt, ''), COALESCE(lm.answer, ''), COALESCE(lm.model, '')",
                                            "LEFT JOIN sample_conversations lm ON lm.candidate_id = s.candidate_id")
                                  .c_str());
  // The archive of a run from before sample_conversations existed (opened read-only: not migrated).
  SqliteStatement plain(db_.get(), samples_query("'', '', ''", "").c_str());
  SqliteStatement& query = joined.prepared() ? joined : plain;
  if (!query.prepared()) {
    return make_error(Errc::not_found, "archive '" + path_ +
                                           "' has no training samples (recorded by runs since the samples "
                                           "table exists; run the experiment again): " +
                                           sqlite3_errmsg(db_.get()));
  }
  std::vector<TrainingSample> samples;
  while (query.step() == SQLITE_ROW) {
    TrainingSample sample;
    sample.candidate_id = query.column_text(0);
    sample.trajectory_id = query.column_text(1);
    sample.task = query.column_text(2);
    sample.family = query.column_text(3);
    sample.turn = static_cast<uint32_t>(query.column_integer(4));
    sample.step = static_cast<uint32_t>(query.column_integer(5));
    sample.policy_version = static_cast<uint32_t>(query.column_integer(6));
    sample.feedback = query.column_text(7);
    sample.source = query.column_text(8);
    sample.schedule = query.column_text(9);
    sample.reward = query.column_real(10);
    sample.advantage = query.column_real(11);
    sample.return_value = query.column_real(12);
    sample.trained = query.column_integer(13) != 0;
    sample.rejected_by = query.column_text(14);
    sample.correct = query.column_integer(15) != 0;
    sample.honest = query.column_integer(16) != 0;
    sample.speedup = query.column_real(17);
    sample.coverage = query.column_real(18);
    for (const double value : parse_numbers(query.column_text(19))) sample.actions.push_back(static_cast<int64_t>(value));
    sample.logprobs = parse_numbers(query.column_text(20));
    sample.learner_logprobs = parse_numbers(query.column_text(21));
    for (const double value : parse_numbers(query.column_text(22))) sample.kept.push_back(value != 0.0);
    sample.screened = query.column_integer(23) != 0;
    sample.prompt = parse_prompt(query.column_text(24));
    sample.answer = query.column_text(25);
    sample.model = query.column_text(26);
    samples.push_back(std::move(sample));
  }
  return samples;
}

Result<std::vector<TaskTally>> Archive::tallies() const {
  SqliteStatement query(db_.get(), R"sql(
    SELECT c.task, COUNT(*), SUM(r.compiled), SUM(r.correct AND v.honest), SUM(NOT v.honest),
      SUM(COALESCE(r.shapes_tried, 0) > 0 OR v.failed_checks LIKE '%hardcoded_shape%'),
      SUM((COALESCE(r.shapes_tried, 0) > 0 AND r.shapes_handled < r.shapes_tried)
          OR v.failed_checks LIKE '%hardcoded_shape%')
    FROM candidates c JOIN results r ON r.candidate_id = c.id
    JOIN verdicts v ON v.candidate_id = c.id GROUP BY c.task ORDER BY c.task)sql");
  if (!query.prepared()) return sqlite_error("cannot count the candidates");
  std::vector<TaskTally> rows;
  while (query.step() == SQLITE_ROW) {
    TaskTally row;
    row.task = query.column_text(0);
    row.candidates = static_cast<uint32_t>(query.column_integer(1));
    row.compiled = static_cast<uint32_t>(query.column_integer(2));
    row.verified = static_cast<uint32_t>(query.column_integer(3));
    row.rejected = static_cast<uint32_t>(query.column_integer(4));
    row.tried_at_other_shapes = static_cast<uint32_t>(query.column_integer(5));
    row.hardcoded_shapes = static_cast<uint32_t>(query.column_integer(6));
    rows.push_back(std::move(row));
  }
  SqliteStatement references(db_.get(), R"sql(
    SELECT c.task, r.reference_median_us FROM candidates c JOIN results r ON r.candidate_id = c.id
    WHERE r.correct = 1 AND r.reference_median_us > 0 ORDER BY c.task, r.reference_median_us)sql");
  if (!references.prepared()) return sqlite_error("cannot read the reference times");
  std::map<std::string, std::vector<double>> times;
  while (references.step() == SQLITE_ROW) times[references.column_text(0)].push_back(references.column_real(1));
  for (auto& row : rows) {
    const auto& sorted = times[row.task];
    if (sorted.empty()) continue;
    const size_t middle = sorted.size() / 2;
    row.reference_median_us = sorted.size() % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }
  return rows;
}

OtherShapes other_shapes(const std::vector<TaskTally>& tallies) {
  OtherShapes total;
  for (const auto& tally : tallies) {
    total.tried += tally.tried_at_other_shapes;
    total.hardcoded += tally.hardcoded_shapes;
  }
  return total;
}

double speedup_vs_median(const TaskTally& tally, const BestKernel& kernel) {
  return kernel.candidate_us > 0 ? tally.reference_median_us / kernel.candidate_us : 0;
}

SuiteScores suite_scores(const std::vector<TaskTally>& tallies, const std::vector<BestKernel>& best,
                         bool against_median) {
  SuiteScores scores;
  double log_sum = 0;
  for (const auto& tally : tallies) {
    ++scores.tasks;
    double fastest = 0;
    for (const auto& kernel : best) {
      if (kernel.task != tally.task) continue;
      fastest = std::max(fastest, against_median ? speedup_vs_median(tally, kernel) : kernel.speedup);
    }
    if (fastest <= 0) continue;
    ++scores.verified;
    scores.fast_1_0 += fastest > 1.0;
    scores.fast_1_2 += fastest > 1.2;
    log_sum += std::log(fastest);
  }
  if (scores.verified > 0) scores.geomean_speedup = std::exp(log_sum / scores.verified);
  return scores;
}

Result<std::string> Archive::source_of(const std::string& candidate_id) const {
  SqliteStatement query(db_.get(), "SELECT source FROM candidates WHERE id = ?");
  query.text(candidate_id);
  if (query.step() != SQLITE_ROW) {
    return make_error(Errc::not_found, "candidate '" + candidate_id + "' is not in the archive '" +
                                           path_ + "'");
  }
  return query.column_text(0);
}

Status Archive::record_remeasured(const Remeasured& row) {
  SqliteStatement insert(db_.get(), "INSERT OR REPLACE INTO remeasured VALUES (?,?,?,?,?,?,?,?,?)");
  insert.text(row.task).text(row.candidate_id).integer(row.evaluations).real(row.speedup).real(row.candidate_us)
      .real(row.reference_us).real(row.speedup_low).real(row.speedup_high).integer(now_ms());
  if (insert.step() != SQLITE_DONE) return sqlite_error("cannot record the re-measurement of task '" + row.task + "'");
  return {};
}

Result<std::vector<Remeasured>> Archive::remeasured() const {
  SqliteStatement query(db_.get(),
                  "SELECT task, candidate_id, evaluations, speedup, candidate_us, reference_us, speedup_low, "
                  "speedup_high FROM remeasured ORDER BY task");
  std::vector<Remeasured> rows;
  if (!query.prepared()) return rows;  // an archive from before re-measurements
  while (query.step() == SQLITE_ROW) {
    rows.push_back({query.column_text(0), query.column_text(1), static_cast<uint32_t>(query.column_integer(2)),
                    query.column_real(3), query.column_real(4), query.column_real(5), query.column_real(6),
                    query.column_real(7)});
  }
  return rows;
}

}  // namespace drk::archivist
