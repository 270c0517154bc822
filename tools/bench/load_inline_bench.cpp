#include "tools/bench/load_inline_bench.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/json_text.h"
#include "kernels/compile/inline_extension.h"
#include "kernels/compile/torch_extension.h"
#include "tools/bench/statistics.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using compile::InlineExtension;
using compile::TorchExtensionBuilder;

// KernelBench-shaped candidates; `{nonce}` becomes a comment that makes each variant new to a cache,
// `{bindings}` one that makes its main.cpp new (the same as `{nonce}` unless a row keeps it).
const char kCppCandidate[] = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scale_source = """
// {nonce}
torch::Tensor scale_add(torch::Tensor x, double factor) {
  auto y = torch::empty_like(x);
  auto in = x.contiguous();
  const float* source = in.data_ptr<float>();
  float* target = y.data_ptr<float>();
  for (int64_t i = 0; i < in.numel(); ++i) target[i] = source[i] * static_cast<float>(factor) + 1.0f;
  return y;
}
"""
scale = load_inline(name="scale_add_ext", cpp_sources=scale_source, functions=["scale_add"],
                    verbose=False, extra_cflags=[""], extra_ldflags=[""])

class ModelNew(nn.Module):
    def forward(self, x):
        return scale.scale_add(x, 2.0)
)";

const char kCudaCandidate[] = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
// {nonce}
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
relu_cpp_source = "// {bindings}\ntorch::Tensor relu_cuda(torch::Tensor x);"
relu = load_inline(name="relu_ext", cpp_sources=relu_cpp_source, cuda_sources=relu_source,
                   functions=["relu_cuda"], verbose=False, extra_cflags=[""], extra_ldflags=[""])

class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x)
)";

// No code and no bindings: main.cpp is torch's headers alone, what every C++ candidate's unit pays
// before its own code.
const char kHeadersOnlyCandidate[] = R"(from torch.utils.cpp_extension import load_inline

headers_only = load_inline(name="headers_only_ext", cpp_sources="// {nonce}", verbose=False)
)";

std::string with_nonces(std::string candidate, const std::string& nonce, const std::string& bindings) {
  for (const auto& [marker, value] : {std::pair<std::string, std::string>{"{nonce}", nonce}, {"{bindings}", bindings}})
    for (size_t at = candidate.find(marker); at != std::string::npos; at = candidate.find(marker, at + value.size()))
      candidate.replace(at, marker.size(), value);
  return candidate;
}

double seconds_of(const std::function<bool()>& step) {
  const auto started = std::chrono::steady_clock::now();
  if (!step()) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

struct Timings {
  double torch = -1, cold = -1, pch = -1, warm = -1;
  double wide = -1;   // pch present, every unit with torch/extension.h (the narrow headers off)
  double whole = -1;  // CUDA: pch present, cuda.cu compiled whole by nvcc (the split off)
  double same_bindings = -1;  // CUDA: pch present, a new kernel behind bindings built before
  double headers_only = -1;   // C++: pch present, a main.cpp of torch's headers and nothing else
};

// The nonce of the header-present row's sample `sample`: the candidate's main.cpp included.
std::string fresh_nonce(int sample) { return "fresh" + std::to_string(sample); }

// Writes `candidate` with `nonce` (and `bindings`, or `nonce` again) into `dir` and returns its path.
std::string write_candidate(const std::string& dir, const char* candidate, const std::string& nonce,
                            const std::string& bindings = "") {
  const std::string path = dir + "/candidate_" + nonce + ".py";
  if (auto written = write_file_atomically(real_file_system(), path,
                                           with_nonces(candidate, nonce, bindings.empty() ? nonce : bindings));
      !written)
    throw std::runtime_error(written.error().describe());
  return path;
}

// torch's load_inline: the candidate run by the Python (torch imported before the clock starts),
// building in a fresh TORCH_EXTENSIONS_DIR.
bool torch_build(const LoadInlineBenchOptions& options, const std::string& candidate, const std::string& build_dir,
                 std::ostream& out, double& seconds) {
  const std::string script = "import os, runpy, sys, time, torch, torch.utils.cpp_extension\n"
                             "os.environ['TORCH_EXTENSIONS_DIR'] = sys.argv[2]\n"
                             "started = time.perf_counter()\n"
                             "runpy.run_path(sys.argv[1])\n"
                             "print('seconds', time.perf_counter() - started)\n";
  auto run = compile::system_command_runner()->run({options.python, "-c", script, candidate, build_dir},
                                                   std::chrono::minutes(10));
  const size_t at = run ? run->output.rfind("seconds ") : std::string::npos;
  if (!run || !run->succeeded() || at == std::string::npos) {
    out << "torch's load_inline failed: " << (run ? run->output : run.error().describe()) << "\n";
    return false;
  }
  seconds = std::stod(run->output.substr(at + 8));
  return true;
}

// Ours: extraction and build of every extension of the candidate. A CUDA extension built whole
// says why in `out`.
bool our_build(const LoadInlineBenchOptions& options, TorchExtensionBuilder& builder, const std::string& candidate,
               std::ostream& out) {
  auto extensions = compile::extract_load_inline(options.python, candidate);
  if (!extensions) {
    out << extensions.error().describe() << "\n";
    return false;
  }
  for (const InlineExtension& extension : *extensions) {
    auto built = builder.build(extension);
    if (!built) {
      out << built.error().describe() << "\n";
      return false;
    }
    if (!built->cached && !built->cuda_whole_reason.empty() && !options.json)
      out << "  (" << extension.name << ": cuda.cu compiled whole: " << built->cuda_whole_reason << ")\n";
  }
  return true;
}

// Each build's time as it ends (without --json), so that a run cut short still tells what it
// measured.
void note(const LoadInlineBenchOptions& options, const std::string& kind, const std::string& build, double seconds,
          std::ostream& out) {
  if (options.json) return;
  char line[120];
  std::snprintf(line, sizeof line, "  %-5s %-34s %8.3f s\n", kind.c_str(), build.c_str(), seconds);
  out << line << std::flush;
}

std::optional<Timings> measure(const LoadInlineBenchOptions& options, const compile::TorchFacts& facts,
                               const std::string& kind, const char* candidate, std::ostream& out) {
  auto scratch = temp_dir("drk-bench-load-inline");
  Timings timings;
  if (!torch_build(options, write_candidate(scratch.path(), candidate, "torch"), scratch.path() + "/torch", out,
                   timings.torch))
    return std::nullopt;
  note(options, kind, "torch, cold", timings.torch, out);
  compile::TorchExtensionOptions build_options;
  build_options.cache_dir = scratch.path() + "/cache";
  build_options.cuda_architecture = options.cuda_architecture;
  auto builder = TorchExtensionBuilder::create(build_options, facts);
  if (!builder) {
    out << builder.error().describe() << "\n";
    return std::nullopt;
  }
  const std::string cold = write_candidate(scratch.path(), candidate, "cold");
  timings.cold = seconds_of([&] { return our_build(options, **builder, cold, out); });
  if (timings.cold < 0) return std::nullopt;
  note(options, kind, "drk, empty cache", timings.cold, out);
  std::vector<double> pch, warm;
  for (int sample = 0; sample < options.samples; ++sample) {
    const std::string fresh = write_candidate(scratch.path(), candidate, fresh_nonce(sample));
    pch.push_back(seconds_of([&] { return our_build(options, **builder, fresh, out); }));
    if (pch.back() < 0) return std::nullopt;
    note(options, kind, "drk, header present", pch.back(), out);
    warm.push_back(seconds_of([&] { return our_build(options, **builder, fresh, out); }));
    if (warm.back() < 0) return std::nullopt;
    note(options, kind, "drk, cache hit", warm.back(), out);
  }
  timings.pch = median(pch);
  timings.warm = median(warm);
  // The median of `samples` builds by `with`, of candidates `path_of(sample)` each new to its
  // cache, each noted as "drk, header present, LABEL" as it ends; -1 when one fails.
  const auto median_build = [&](TorchExtensionBuilder& with, const std::string& label,
                                const std::function<std::string(int)>& path_of) {
    std::vector<double> seconds;
    for (int sample = 0; sample < options.samples; ++sample) {
      const std::string fresh = path_of(sample);
      seconds.push_back(seconds_of([&] { return our_build(options, with, fresh, out); }));
      if (seconds.back() < 0) return -1.0;
      note(options, kind, "drk, header present, " + label, seconds.back(), out);
    }
    return median(seconds);
  };
  // A new kernel behind bindings built before (main.cpp's object reused): what most of a run's
  // later samples of one problem are, when the policy keeps its declarations and the name.
  if (kind == "cuda") {
    timings.same_bindings = median_build(**builder, "same bindings", [&](int sample) {
      return write_candidate(scratch.path(), candidate, "kernel" + std::to_string(sample), fresh_nonce(0));
    });
    if (timings.same_bindings < 0) return std::nullopt;
  }
  // GCC's work at the end of a unit that includes torch's headers (the templates their inline
  // functions use, the header functions emitted at -O0), which no precompiled header holds.
  if (kind == "cpp") {
    timings.headers_only = median_build(**builder, "headers only", [&](int sample) {
      return write_candidate(scratch.path(), kHeadersOnlyCandidate, "headers-only" + std::to_string(sample));
    });
    if (timings.headers_only < 0) return std::nullopt;
  }
  // The median build with one speed-up off, its headers built by an untimed build first: what the
  // speed-up is worth, side by side.
  const auto without = [&](const std::string& label, const std::function<void(compile::TorchExtensionOptions&)>& off) {
    compile::TorchExtensionOptions changed = build_options;
    off(changed);
    auto variant = TorchExtensionBuilder::create(changed, facts);
    if (!variant) {
      out << variant.error().describe() << "\n";
      return -1.0;
    }
    if (!our_build(options, **variant, write_candidate(scratch.path(), candidate, label + "-headers"), out)) return -1.0;
    return median_build(**variant, label, [&](int sample) {
      return write_candidate(scratch.path(), candidate, label + std::to_string(sample));
    });
  };
  timings.wide = without("extension.h", [](auto& changed) { changed.narrow_headers = false; });
  if (timings.wide < 0) return std::nullopt;
  if (kind == "cuda") {
    timings.whole = without("whole", [](auto& changed) { changed.split_cuda = false; });
    if (timings.whole < 0) return std::nullopt;
  }
  return timings;
}

void print(const std::string& kind, const Timings& timings, std::ostream& out) {
  char line[160];
  std::snprintf(line, sizeof line,
                "%-5s torch %7.2f s | drk cold %7.2f s | drk pch present %6.2f s | drk warm %6.3f s | "
                "torch / drk pch present %5.1fx\n",
                kind.c_str(), timings.torch, timings.cold, timings.pch, timings.warm, timings.torch / timings.pch);
  out << line;
  std::snprintf(line, sizeof line, "%-5s drk pch present, torch/extension.h everywhere %6.2f s: the narrow headers are %.1fx faster\n",
                kind.c_str(), timings.wide, timings.wide / timings.pch);
  out << line;
  if (timings.whole >= 0) {
    std::snprintf(line, sizeof line, "%-5s drk pch present, cuda.cu whole (nvcc) %6.2f s: the split is %.1fx faster\n",
                  kind.c_str(), timings.whole, timings.whole / timings.pch);
    out << line;
  }
  if (timings.same_bindings >= 0) {
    std::snprintf(line, sizeof line,
                  "%-5s drk pch present, a new kernel behind the same bindings %6.2f s: main.cpp's object reused, %.1fx faster\n",
                  kind.c_str(), timings.same_bindings, timings.pch / timings.same_bindings);
    out << line;
  }
  if (timings.headers_only >= 0) {
    std::snprintf(line, sizeof line,
                  "%-5s drk pch present, torch's headers and no code %6.2f s: %.0f %% of a candidate's build\n",
                  kind.c_str(), timings.headers_only, 100.0 * timings.headers_only / timings.pch);
    out << line;
  }
  out << std::flush;
}

}  // namespace

int run_load_inline_bench(const LoadInlineBenchOptions& options, std::ostream& out) {
  auto facts = compile::torch_facts(options.python);
  if (!facts) {
    out << "drk bench load-inline: " << facts.error().describe() << "\n";
    return 1;
  }
  if (!options.json)
    out << "load_inline builds, torch " << facts->version << (facts->has_cuda() ? " (CUDA " + facts->cuda_version + ")" : "")
        << ", " << options.python << "; drk pch present and warm: median of " << options.samples << "\n"
        << std::flush;
  Json report = {{"torch", facts->version}, {"samples", options.samples}};
  std::vector<std::string> asked = options.kinds;
  if (asked.empty()) asked = facts->has_cuda() ? std::vector<std::string>{"cpp", "cuda"} : std::vector<std::string>{"cpp"};
  for (const std::string& kind : asked) {
    if (kind == "cuda" && !facts->has_cuda()) {
      out << "drk bench load-inline: --kind cuda needs a torch with CUDA; " << options.python << "'s torch "
          << facts->version << " has none (name another with --python)\n";
      return 1;
    }
    const char* candidate = kind == "cuda" ? kCudaCandidate : kCppCandidate;
    auto timings = measure(options, *facts, kind, candidate, out);
    if (!timings) return 1;
    if (!options.json) print(kind, *timings, out);
    report[kind] = {{"torch_cold_s", timings->torch},
                    {"drk_cold_s", timings->cold},
                    {"drk_pch_present_s", timings->pch},
                    {"drk_warm_s", timings->warm}};
    report[kind]["drk_pch_present_extension_h_s"] = timings->wide;
    if (timings->whole >= 0) report[kind]["drk_pch_present_whole_cuda_s"] = timings->whole;
    if (timings->same_bindings >= 0) report[kind]["drk_pch_present_same_bindings_s"] = timings->same_bindings;
    if (timings->headers_only >= 0) report[kind]["drk_pch_present_headers_only_s"] = timings->headers_only;
  }
  if (options.json) out << json_text(report) << "\n";
  return 0;
}

}  // namespace drk::bench
