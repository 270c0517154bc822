// The training samples of an archive as JSON Lines (`drk archive export --format jsonl`): one
// JSON object per turn, the fields and their meaning in docs/archive.md: a language model's turn
// with the whole prompt it was asked with, its answer and model; every turn with its reward,
// advantage, return and the Learner's MRS and PRS decisions. Python RL trainers read it with
// `json.loads` per line (tools/trainer_bridge/drk_to_trainer.py builds TRL records and verl
// batches from it).
//
// Thread-safety: pure functions; the stream is the caller's.
// Errors: write_training_samples_jsonl passes on the archive's error (an archive without
// samples is not_found) and returns io_error when the stream fails.
#pragma once

#include <ostream>
#include <string>

#include "actors/archivist/archive.h"

namespace drk::archivist {

// One sample as one line of JSON (no newline). Always valid JSON: bytes of a candidate or a
// feedback that are not UTF-8 become U+FFFD (base/json_text.h), numbers that are not finite null.
std::string training_sample_json(const TrainingSample& sample);

// Writes every sample, one per line; returns how many.
Result<size_t> write_training_samples_jsonl(const Archive& archive, std::ostream& out);

}  // namespace drk::archivist
