// feedback_report(): the Feedback.summary a Generator gets for one verdict, short structured text
// at three levels of resolution, so that a policy or an LLM sees at once what to change.
//
// An honest, correct result gives one line of `level: key=value ...` groups separated by "; ":
//   status=correct; micro: regs=32 spills=0 occupancy=0.75; function: time_us=12.3 speedup=1.85
//   coverage=1.00 roofline=0.42(memory); application: task=relu reference_us=22.7 speedup=1.85
//   trials=5/5 max_abs_err=0 max_rel_err=0; warnings: [library.used]; reward=0.930
//   - micro: the candidate's kernels. CUDA: most registers per thread, spilled bytes (nvcc's
//     report), theoretical occupancy of the busiest own kernel (its launch, registers and shared
//     memory against an H100/H200-class SM); CPU: the schedule's vector_width, threads, tile and
//     unroll decisions (whatever the candidate's schedule has). Keys without a measurement say n/a.
//   - function: the candidate's call: median time, speedup over the reference, coverage (share of
//     GPU time in its own kernels; 1 on the CPU), roofline fraction (achieved / peak bytes/s or
//     FLOP/s, the larger, with which) where the device's peaks were measured.
//   - application: the task's whole computation: the reference's time, the speedup, the trials
//     passed and the error against the reference (the correctness margin); where the task has a
//     shape range, the drawn shapes handled of those tried and how many were declined
//     (range_shapes=3/4 declined=1).
// Other results: `status=rejected; failed: [CODE] evidence; [CODE] evidence; reward=0.000` (every
// failed check with its evidence), `status=incorrect; application: ... first_mismatch="..."`, or
// `status=did_not_compile; compile_log="..."`. Values never contain "; " unquoted; quoted values
// escape nothing and are cut at 400 characters. parse_feedback_report() reads a line back.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include "messages/drk.capnp.h"

namespace drk::judging {

std::string feedback_report(msg::Verdict::Reader verdict, double reward);

// Groups of a report by level ("status", "micro", "function", "application", "failed",
// "warnings", "reward", ...) -> their text after the "level: " or "level=" prefix.
std::map<std::string, std::string> parse_feedback_report(const std::string& report);

}  // namespace drk::judging
