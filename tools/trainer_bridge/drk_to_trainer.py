#!/usr/bin/env python3
"""drkernel's training samples as TRL records and verl batches.

Reads the JSON Lines of ``drk archive export RUN_DIR --format jsonl`` (one object per turn,
fields in docs/archive.md) and builds, from the turns a language model played
(``generator.backend: openai``):

(a) TRL records, ``trl_records()``: one dict per turn in TRL's conversational
    prompt-completion type::

        {"prompt": [{"role": "system", ...}, {"role": "user", ...}, ...],   # as the model was asked
         "completion": [{"role": "assistant", "content": ANSWER}],
         "reward": R, "advantage": A, "return": G, "logprobs": [...], "trajectory_id": ...,
         "turn": T, "step": S, "policy_version": V, "model": ..., "task": ...,
         "mrs_decision": ..., "prs_decision": ..., "rejected_by": ..., "screened": ...}

    The prompt is the whole conversation of that turn (earlier answers and drkernel's feedback
    included), so a trainer applies its own chat template. Columns beyond prompt and completion
    reach a TRL ``GRPOTrainer``'s reward functions as keyword arguments: ``lambda completions,
    reward, **_: reward`` gives back drkernel's reward.

(b) verl batches, ``verl_batch()``: a dict with verl's ``DataProto`` parts, one row per turn::

        {"batch": {...}, "non_tensor_batch": {...}, "meta_info": {...}}

    ``batch`` (rows right-padded with 0 to the longest answer, R tokens):
        response_mask        1 for each of the answer's tokens
        rollout_log_probs    the inference server's log-probability of each sampled token
        old_log_probs        the same (verl's bypass mode: the rollout policy is the old policy;
                             a trainer that recomputes them overwrites this)
        token_level_scores   the turn's reward on its last token, 0 elsewhere
        token_level_rewards  the same (no KL penalty applied here)
        advantages           the turn's advantage (drkernel's TRLOO) on each answer token
        returns              the turn's return on each answer token
    and, only when a tokenizer is given (Hugging Face's: ``apply_chat_template`` and ``encode``;
    it must be the served model's, whose answer tokens match the log-probabilities):
        prompts              the chat-templated prompt's token ids, left-padded (P tokens)
        responses            the answer's token ids, right-padded (R tokens)
        input_ids            prompts followed by responses
        attention_mask       1 on every prompt and answer token
        position_ids         0, 1, ... over the attended tokens
    ``non_tensor_batch`` (one entry per row): uid (rows of one task, step and turn share it: the
    group drkernel's TRLOO compares a turn within, and a GRPO group for verl), raw_prompt (the messages), response_text (the answer), trajectory_id, turn,
    step, policy_version, model, task, candidate_id, mrs_decision, prs_decision.
    ``meta_info``: source "drkernel", rows, pad_token_id.

What is built: the core is the standard library only, and ``trl_records()`` and
``verl_batch()`` always return plain Python lists and dicts (numbers as lists of floats and
ints). ``as_trl_dataset()`` and ``as_verl()`` build real objects only when their packages are
importable: ``as_trl_dataset()`` a ``datasets.Dataset`` when ``datasets`` is (TRL's trainers
take one), else the list as it is; ``as_verl()`` a ``verl.DataProto`` when ``verl``, ``torch``
and ``numpy`` are, else, with ``torch`` and ``numpy`` only, the same dict with ``batch`` as
torch tensors (float32; int64 ids and masks) and ``non_tensor_batch`` as numpy object arrays,
else the plain dict as it is. Each says which it built in its second return value.

Which turns: those of a language model (``prompt`` not null: the embedded policy's turns have
no text) whose answer is not empty (a turn the server never answered has no tokens), and, unless
``keep_rejected`` is set, not rejected by drkernel's MRS or PRS (``mrs_decision``
``outside_band`` or ``vetoed``, ``prs_decision`` ``rejected``). A null decision means the
Learner did not judge the turn (its own Learner cannot read a language model's turn and marks it
``malformed``): the trainer may apply its own rejection sampling from ``logprobs``,
``correct`` and ``coverage``.

Command line (writes the plain forms, prints a summary as one JSON line)::

    drk archive export RUN_DIR --format jsonl --out samples.jsonl
    python3 tools/trainer_bridge/drk_to_trainer.py samples.jsonl --trl trl.jsonl --verl verl.json

Example, on two turns of one trajectory:

>>> turns = [
...   {"task": "relu", "trajectory_id": "s0/relu/0", "candidate_id": "s0/relu/0/t1", "turn": 1,
...    "step": 0, "policy_version": 0, "model": "m", "prompt": [{"role": "user", "content": "Write relu."}],
...    "answer": "slow one", "logprobs": [-0.5, -0.25], "reward": 0.25, "advantage": -0.5, "return": 1.25,
...    "mrs_decision": None, "prs_decision": None, "rejected_by": "malformed", "screened": False},
...   {"task": "relu", "trajectory_id": "s0/relu/0", "candidate_id": "s0/relu/0/t2", "turn": 2,
...    "step": 0, "policy_version": 0, "model": "m", "prompt": [{"role": "user", "content": "Write relu."},
...    {"role": "assistant", "content": "slow one"}, {"role": "user", "content": "faster"}],
...    "answer": "fast now", "logprobs": [-0.125, -1.0, -0.5], "reward": 1.0, "advantage": 0.5,
...    "return": 1.0, "mrs_decision": None, "prs_decision": None, "rejected_by": "malformed",
...    "screened": False}]
>>> records = trl_records(turns)
>>> records[1]["completion"], records[1]["reward"], len(records[1]["prompt"])
([{'role': 'assistant', 'content': 'fast now'}], 1.0, 3)
>>> batch = verl_batch(turns)
>>> batch["batch"]["token_level_scores"]
[[0.0, 0.25, 0.0], [0.0, 0.0, 1.0]]
>>> batch["batch"]["response_mask"]
[[1, 1, 0], [1, 1, 1]]
>>> batch["batch"]["advantages"][0]
[-0.5, -0.5, 0.0]
>>> batch["non_tensor_batch"]["uid"]
['s0/relu/t1', 's0/relu/t2']

With a tokenizer (here a toy one: one token per word):

>>> class Words:
...     pad_token_id = 0
...     def encode(self, text, add_special_tokens=False):
...         return [len(word) for word in text.split()]
...     def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True):
...         return [100 + len(message["content"]) for message in messages]
>>> batch = verl_batch(turns[1:], tokenizer=Words())
Traceback (most recent call last):
...
ValueError: s0/relu/0/t2: the tokenizer gives 2 answer tokens, the server sampled 3 (logprobs): give the served model's tokenizer
>>> turns[1]["answer"] = "fast now !"
>>> tensors = verl_batch(turns, tokenizer=Words())["batch"]
>>> tensors["prompts"], tensors["responses"]
([[0, 0, 111], [111, 108, 106]], [[4, 3, 0], [4, 3, 1]])
>>> tensors["attention_mask"][0], tensors["position_ids"][0]
([0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 2, 2])
"""

import argparse
import itertools
import json
import sys

_MRS_REJECTED = ("outside_band", "vetoed")
_PRS_REJECTED = ("rejected",)


def read_samples(path):
    """Every line of an export, in order, as dicts; ValueError names a line that is not JSON."""
    samples = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                samples.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error}): is it `drk archive export --format jsonl`?")
    return samples


def llm_turns(samples, keep_rejected=False):
    """The turns a language model answered, without those MRS or PRS rejected unless keep_rejected."""
    kept = []
    for sample in samples:
        if sample.get("prompt") is None or not sample.get("answer"):
            continue
        rejected = sample.get("mrs_decision") in _MRS_REJECTED or sample.get("prs_decision") in _PRS_REJECTED
        if rejected and not keep_rejected:
            continue
        kept.append(sample)
    return kept


_CARRIED = ("reward", "advantage", "return", "logprobs", "trajectory_id", "candidate_id", "turn", "step",
            "policy_version", "model", "task", "mrs_decision", "prs_decision", "rejected_by", "screened",
            "correct", "speedup")


def trl_records(samples, keep_rejected=False):
    """TRL's conversational prompt-completion records, one per turn, with drkernel's columns."""
    records = []
    for sample in llm_turns(samples, keep_rejected):
        record = {"prompt": sample["prompt"], "completion": [{"role": "assistant", "content": sample["answer"]}]}
        record.update({name: sample.get(name) for name in _CARRIED})
        records.append(record)
    return records


def _padded(rows, value, left=False):
    width = max((len(row) for row in rows), default=0)
    return [([value] * (width - len(row)) + row) if left else (row + [value] * (width - len(row))) for row in rows]


def _per_token(count, value):
    return [float(value)] * count


def _last_token(count, value):
    return [0.0] * (count - 1) + [float(value)] if count else []


def verl_batch(samples, tokenizer=None, keep_rejected=False):
    """verl's DataProto parts as plain lists and dicts (module docstring); ValueError names a turn
    whose tokens cannot be placed."""
    turns = llm_turns(samples, keep_rejected)
    token_counts = []
    prompt_ids, response_ids = [], []
    for sample in turns:
        sampled = len(sample.get("logprobs") or [])
        if tokenizer is not None:
            answer = tokenizer.encode(sample["answer"], add_special_tokens=False)
            if sampled and len(answer) != sampled:
                raise ValueError(f"{sample['candidate_id']}: the tokenizer gives {len(answer)} answer tokens, the "
                                 f"server sampled {sampled} (logprobs): give the served model's tokenizer")
            response_ids.append(list(answer))
            prompt_ids.append(list(tokenizer.apply_chat_template(sample["prompt"], add_generation_prompt=True,
                                                                 tokenize=True)))
            sampled = len(answer)
        if sampled == 0:
            raise ValueError(f"{sample['candidate_id']}: no answer tokens to place the reward on: export a run with "
                             "generator.logprobs: true, or give the served model's tokenizer")
        token_counts.append(sampled)

    def rows(make):
        return _padded([make(count, sample) for count, sample in zip(token_counts, turns)], 0.0)

    logprobs = rows(lambda count, sample: [float(value) for value in sample["logprobs"]] if sample.get("logprobs")
                    else [0.0] * count)
    scores = rows(lambda count, sample: _last_token(count, sample["reward"]))
    batch = {
        "response_mask": _padded([[1] * count for count in token_counts], 0),
        "rollout_log_probs": logprobs,
        "old_log_probs": [list(row) for row in logprobs],
        "token_level_scores": scores,
        "token_level_rewards": [list(row) for row in scores],
        "advantages": rows(lambda count, sample: _per_token(count, sample["advantage"])),
        "returns": rows(lambda count, sample: _per_token(count, sample["return"])),
    }
    pad = getattr(tokenizer, "pad_token_id", None) or 0
    if tokenizer is not None:
        prompts = _padded(prompt_ids, pad, left=True)
        responses = _padded(response_ids, pad)
        prompt_mask = _padded([[1] * len(ids) for ids in prompt_ids], 0, left=True)
        attention = [head + tail for head, tail in zip(prompt_mask, batch["response_mask"])]
        batch.update({
            "prompts": prompts,
            "responses": responses,
            "input_ids": [head + tail for head, tail in zip(prompts, responses)],
            "attention_mask": attention,
            # verl's: the attended tokens counted from 0, padding at the position of its neighbour.
            "position_ids": [[max(position - 1, 0) for position in itertools.accumulate(mask)] for mask in attention],
        })
    non_tensor_batch = {
        "uid": [f"s{sample['step']}/{sample['task']}/t{sample['turn']}" for sample in turns],
        "raw_prompt": [sample["prompt"] for sample in turns],
        "response_text": [sample["answer"] for sample in turns],
    }
    for name in ("trajectory_id", "turn", "step", "policy_version", "model", "task", "candidate_id", "mrs_decision",
                 "prs_decision"):
        non_tensor_batch[name] = [sample.get(name) for sample in turns]
    return {"batch": batch, "non_tensor_batch": non_tensor_batch,
            "meta_info": {"source": "drkernel", "rows": len(turns), "pad_token_id": pad}}


def as_trl_dataset(records):
    """(datasets.Dataset, "datasets.Dataset") when `datasets` is importable, else (records, "list")."""
    try:
        import datasets
    except ImportError:
        return records, "list"
    return datasets.Dataset.from_list(records), "datasets.Dataset"


_INTEGER_FIELDS = ("response_mask", "prompts", "responses", "input_ids", "attention_mask", "position_ids")


def as_verl(parts):
    """(verl.DataProto, "DataProto") when verl, torch and numpy are importable; else (the dict with
    torch tensors and numpy object arrays, "torch") with torch and numpy; else (parts, "lists")."""
    try:
        import numpy
        import torch
    except ImportError:
        return parts, "lists"
    rows = parts["meta_info"]["rows"]
    tensors = {}
    for name, values in parts["batch"].items():
        dtype = torch.int64 if name in _INTEGER_FIELDS else torch.float32
        tensors[name] = torch.tensor(values, dtype=dtype).reshape(rows, -1) if rows else torch.zeros(0, 0, dtype=dtype)
    non_tensors = {}
    for name, values in parts["non_tensor_batch"].items():
        array = numpy.empty(len(values), dtype=object)
        array[:] = values
        non_tensors[name] = array
    try:
        from verl import DataProto
    except ImportError:
        return {"batch": tensors, "non_tensor_batch": non_tensors, "meta_info": dict(parts["meta_info"])}, "torch"
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info=dict(parts["meta_info"])), "DataProto"


def main(argv=None):
    parser = argparse.ArgumentParser(description="drkernel's JSONL training samples as TRL records and a verl batch")
    parser.add_argument("samples", help="the output of `drk archive export RUN_DIR --format jsonl`")
    parser.add_argument("--trl", help="write the TRL records here, one JSON object a line")
    parser.add_argument("--verl", help="write the verl batch here, as one JSON object")
    parser.add_argument("--keep-rejected", action="store_true", help="keep the turns drkernel's MRS or PRS rejected")
    parser.add_argument("--objects", action="store_true",
                        help="also build the real objects (datasets.Dataset, verl.DataProto or torch tensors) "
                             "where the packages are importable, and say which")
    options = parser.parse_args(argv)
    try:
        samples = read_samples(options.samples)
        records = trl_records(samples, options.keep_rejected)
        parts = verl_batch(samples, keep_rejected=options.keep_rejected)
    except (OSError, ValueError) as error:
        print(f"drk_to_trainer: {error}", file=sys.stderr)
        return 1
    if options.trl:
        with open(options.trl, "w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    if options.verl:
        with open(options.verl, "w", encoding="utf-8") as out:
            json.dump(parts, out, ensure_ascii=False)
    summary = {"samples": len(samples), "trl_records": len(records), "verl_rows": parts["meta_info"]["rows"],
               "response_tokens": len(parts["batch"]["response_mask"][0]) if records else 0}
    if options.objects:
        _, summary["trl_object"] = as_trl_dataset(records)
        built, summary["verl_object"] = as_verl(parts)
        if summary["verl_object"] != "lists":
            batch = built.batch if summary["verl_object"] == "DataProto" else built["batch"]
            summary["verl_shapes"] = {name: list(tensor.shape) for name, tensor in batch.items()}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
