// The renderers, tested apart from the Evaluator: every option of every knob renders a source
// that compiles with the candidate ABI's flags and computes the task's formula on shapes
// chosen at run time.
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <set>

#include <capnp/message.h>

#include "kernels/catalog/task.h"
#include "kernels/schedule/problem.h"
#include "kernels/schedule/render.h"
#include "kernels/schedule/space.h"
#include "kernels/schedule/stages.h"
#include "tests/doctest_drk.h"
#include "tests/policy/kernel_harness.h"

namespace drk::schedule {
namespace {

using testing::HostTensor;
using testing::KernelHarness;

// The reference: inputs -> expected first output (double precision where it matters).
using Reference = std::function<std::vector<double>(const std::vector<HostTensor>&)>;

struct ShapeSet {
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
};

// Rewrites random inputs where a task needs more than normal floats (class indices).
using Prepare = std::function<void(std::vector<HostTensor>&, std::mt19937&)>;

struct ProblemCase {
  Problem problem;
  Reference reference;
  std::vector<ShapeSet> shapes;
  Prepare prepare = nullptr;
};

struct Rendered {
  const ProblemCase* problem_case;
  Choice choice;
};

HostTensor random_tensor(const std::vector<int64_t>& shape, std::mt19937& rng) {
  HostTensor tensor{shape, {}};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  tensor.values.resize(static_cast<size_t>(element_count(shape)));
  for (auto& value : tensor.values) value = normal(rng);
  return tensor;
}

// An int64 tensor of class indices in [0, classes).
HostTensor random_classes(const std::vector<int64_t>& shape, int64_t classes, std::mt19937& rng) {
  HostTensor tensor{shape, {}, DRK_I64, {}};
  std::uniform_int_distribution<int64_t> uniform(0, classes - 1);
  tensor.integers.resize(static_cast<size_t>(element_count(shape)));
  for (auto& value : tensor.integers) value = uniform(rng);
  return tensor;
}

Choice random_choice(Family family, std::mt19937& rng, std::vector<std::set<uint16_t>>& seen) {
  Choice choice{family, {}};
  const auto family_knobs = knobs(family, Device::cpu);
  seen.resize(family_knobs.size());
  for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
    // Prefer an option not seen yet, so that a few choices cover every option.
    std::vector<uint16_t> unseen;
    for (uint16_t option = 0; option < family_knobs[knob].options.size(); ++option) {
      if (!seen[knob].count(option)) unseen.push_back(option);
    }
    uint16_t option = 0;
    if (!unseen.empty()) {
      option = unseen[std::uniform_int_distribution<size_t>(0, unseen.size() - 1)(rng)];
    } else {
      option = static_cast<uint16_t>(std::uniform_int_distribution<size_t>(
          0, family_knobs[knob].options.size() - 1)(rng));
    }
    seen[knob].insert(option);
    choice.options.push_back(option);
  }
  return choice;
}

// Renders `per_problem` choices for every case, compiles them all and checks every shape set.
void check_family(Family family, const std::vector<ProblemCase>& cases, int per_problem) {
  std::mt19937 rng(1234 + static_cast<int>(family));
  std::vector<std::set<uint16_t>> seen;
  std::vector<Rendered> rendered;
  std::vector<std::string> sources;
  for (const auto& problem_case : cases) {
    for (int sample = 0; sample < per_problem; ++sample) {
      Choice choice = random_choice(family, rng, seen);
      auto source = render(problem_case.problem, choice);
      DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
      rendered.push_back({&problem_case, choice});
      sources.push_back(*source);
    }
  }
  const auto family_knobs = knobs(family, Device::cpu);
  for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
    DRK_INFO("knob " << family_knobs[knob].name);
    DRK_CHECK(seen[knob].size() == family_knobs[knob].options.size());
  }
  KernelHarness harness;
  auto compiled = harness.compile(sources);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().describe()));
  for (size_t index = 0; index < rendered.size(); ++index) {
    const auto& item = rendered[index];
    for (const auto& shapes : item.problem_case->shapes) {
      std::vector<HostTensor> inputs;
      for (const auto& shape : shapes.inputs) inputs.push_back(random_tensor(shape, rng));
      if (item.problem_case->prepare) item.problem_case->prepare(inputs, rng);
      std::vector<HostTensor> outputs{HostTensor{shapes.output, {}}};
      const std::vector<double> expected = item.problem_case->reference(inputs);
      for (int max_threads : {1, 4}) {
        DRK_INFO("task " << item.problem_case->problem.task << " schedule "
                         << item.choice.describe() << " max_threads " << max_threads
                         << " output elements " << expected.size());
        DRK_REQUIRE(harness.call(index, inputs, outputs, max_threads) == DRK_OK);
        double worst = 0.0;
        for (size_t element = 0; element < expected.size(); ++element) {
          const double got = outputs[0].values[element];
          const double error = std::abs(got - expected[element]) /
                               (2e-4 + 1e-4 * std::abs(expected[element]));
          worst = std::isnan(got) ? 1e30 : std::max(worst, error);
        }
        DRK_CHECK(worst <= 1.0);
      }
    }
  }
}

Problem make_problem(std::string task, Family family, std::map<std::string, std::string> params) {
  Problem problem;
  problem.task = std::move(task);
  problem.family = family;
  problem.params = std::move(params);
  return problem;
}

float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }

std::vector<ProblemCase> elementwise_cases() {
  auto map = [](std::function<double(float)> stages) -> Reference {
    return [stages](const std::vector<HostTensor>& inputs) {
      std::vector<double> out;
      for (float v : inputs[0].values) out.push_back(stages(v));
      return out;
    };
  };
  const std::vector<ShapeSet> shapes{{{{1000}}, {1000}}, {{{3, 257, 5}}, {3, 257, 5}}, {{{7}}, {7}}};
  return {
      {make_problem("relu", Family::elementwise, {{"stages", "v > 0.0f ? v : 0.0f"}}),
       map([](float v) { return v > 0.0f ? v : 0.0f; }), shapes},
      {make_problem("gelu_chain", Family::elementwise,
                    {{"stages", "0.5f * v * (1.0f + erff(v * 0.70710678f)) | v * 2.0f | "
                                "v > 0.5f || v < -0.5f ? v : 0.0f"}}),
       map([](float v) {
         float w = gelu(v) * 2.0f;
         return (w > 0.5f || w < -0.5f) ? w : 0.0f;
       }),
       shapes},
  };
}

// [outer, reduce, inner] view of `shape` for reduce dims [begin, end].
void split(const std::vector<int64_t>& shape, int begin, int end, int64_t& outer, int64_t& reduce,
           int64_t& inner) {
  outer = reduce = inner = 1;
  for (int dim = 0; dim < static_cast<int>(shape.size()); ++dim) {
    (dim < begin ? outer : dim <= end ? reduce : inner) *= shape[static_cast<size_t>(dim)];
  }
}

Reference rowwise_reference(const std::string& op, int begin, int end, double eps) {
  return [=](const std::vector<HostTensor>& inputs) {
    const auto& x = inputs[0];
    const int rank = static_cast<int>(x.shape.size());
    const int first = begin < 0 ? begin + rank : begin;
    const int last = end < 0 ? end + rank : end;
    int64_t outer, reduce, inner;
    split(x.shape, first, last, outer, reduce, inner);
    std::vector<double> out(x.values.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        auto at = [&](int64_t r) { return static_cast<size_t>((o * reduce + r) * inner + j); };
        double max = -INFINITY, sum = 0.0, squares = 0.0;
        for (int64_t r = 0; r < reduce; ++r) max = std::max(max, static_cast<double>(x.values[at(r)]));
        for (int64_t r = 0; r < reduce; ++r) sum += x.values[at(r)];
        const double mean = sum / reduce;
        double exp_sum = 0.0, variance = 0.0;
        for (int64_t r = 0; r < reduce; ++r) {
          const double v = x.values[at(r)];
          exp_sum += std::exp(v - max);
          squares += v * v;
          variance += (v - mean) * (v - mean);
        }
        variance /= reduce;
        for (int64_t r = 0; r < reduce; ++r) {
          const double v = x.values[at(r)];
          if (op == "softmax") out[at(r)] = std::exp(v - max) / exp_sum;
          if (op == "log_softmax") out[at(r)] = v - max - std::log(exp_sum);
          if (op == "rms_norm") out[at(r)] = v / std::sqrt(squares / reduce + eps);
          if (op == "layer_norm") {
            out[at(r)] = (v - mean) / std::sqrt(variance + eps) * inputs[1].values[static_cast<size_t>(r)] +
                         inputs[2].values[static_cast<size_t>(r)];
          }
        }
      }
    }
    return out;
  };
}

std::vector<ProblemCase> rowwise_cases() {
  auto same = [](std::vector<int64_t> shape) { return ShapeSet{{shape}, shape}; };
  std::vector<ProblemCase> cases;
  for (std::string op : {"softmax", "log_softmax", "rms_norm"}) {
    cases.push_back({make_problem(op + "_dim1", Family::rowwise,
                                  {{"op", op}, {"reduce_begin", "1"}, {"reduce_end", "1"}, {"eps", "1e-5"}}),
                     rowwise_reference(op, 1, 1, 1e-5),
                     {same({5, 67}), same({3, 19, 70}), same({2, 33, 300})}});
  }
  cases.push_back({make_problem("softmax_last", Family::rowwise,
                                {{"op", "softmax"}, {"reduce_begin", "-1"}, {"reduce_end", "-1"}}),
                   rowwise_reference("softmax", -1, -1, 0.0), {same({6, 45}), same({2, 3, 129})}});
  cases.push_back(
      {make_problem("layer_norm", Family::rowwise,
                    {{"op", "layer_norm"}, {"reduce_begin", "1"}, {"reduce_end", "2"}, {"eps", "1e-5"}}),
       rowwise_reference("layer_norm", 1, 2, 1e-5),
       {ShapeSet{{{3, 4, 13}, {4, 13}, {4, 13}}, {3, 4, 13}},
        ShapeSet{{{2, 4, 13, 21}, {4, 13}, {4, 13}}, {2, 4, 13, 21}}}});
  return cases;
}

Reference gemm_reference(bool transposed, bool bias, std::function<float(float)> epilogue) {
  return [=](const std::vector<HostTensor>& inputs) {
    const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1];
    const int64_t n = transposed ? inputs[1].shape[0] : inputs[1].shape[1];
    std::vector<double> out;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(inputs[0].values[static_cast<size_t>(i * k + p)]) *
                 inputs[1].values[static_cast<size_t>(transposed ? j * k + p : p * n + j)];
        }
        if (bias) sum += inputs[2].values[static_cast<size_t>(j)];
        out.push_back(epilogue(static_cast<float>(sum)));
      }
    }
    return out;
  };
}

std::vector<ProblemCase> gemm_cases() {
  auto shapes = [](bool transposed, bool bias) {
    std::vector<ShapeSet> sets;
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 3}, {33, 70, 65}, {1, 130, 17}}) {
      ShapeSet set{{{m, k}, transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}}, {m, n}};
      if (bias) set.inputs.push_back({n});
      sets.push_back(set);
    }
    return sets;
  };
  return {
      {make_problem("matmul", Family::gemm, {{"b_layout", "kn"}, {"bias", "false"}, {"epilogue", "v"}}),
       gemm_reference(false, false, [](float v) { return v; }), shapes(false, false)},
      {make_problem("linear_leaky", Family::gemm,
                    {{"b_layout", "nk"}, {"bias", "true"}, {"epilogue", "v * 2.0f | v > 0.0f ? v : 0.1f * v"}}),
       gemm_reference(true, true,
                      [](float v) {
                        v = v * 2.0f;
                        return v > 0.0f ? v : 0.1f * v;
                      }),
       shapes(true, true)},
      {make_problem("matmul_bias_relu", Family::gemm,
                    {{"b_layout", "kn"}, {"bias", "true"}, {"epilogue", "v > 0.0f ? v : 0.0f"}}),
       gemm_reference(false, true, [](float v) { return v > 0.0f ? v : 0.0f; }), shapes(false, true)},
  };
}

Reference reduction_reference(const std::string& op, int dim) {
  return [=](const std::vector<HostTensor>& inputs) {
    const auto& x = inputs[0];
    int64_t outer, reduce, inner;
    split(x.shape, dim, dim, outer, reduce, inner);
    std::vector<double> out;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        double sum = 0.0, max = -INFINITY;
        for (int64_t r = 0; r < reduce; ++r) {
          const double v = x.values[static_cast<size_t>((o * reduce + r) * inner + j)];
          sum += v;
          max = std::max(max, v);
        }
        out.push_back(op == "max" ? max : op == "mean" ? sum / reduce : sum);
      }
    }
    return out;
  };
}

std::vector<ProblemCase> reduction_cases() {
  auto problem = [](const std::string& op, bool keepdim) {
    return make_problem(op + "_reduction", Family::reduction,
                        {{"op", op}, {"dim", "1"}, {"keepdim", keepdim ? "true" : "false"}});
  };
  // Inner extents below, across and far beyond the largest inner tile; inner == 1 (a contiguous row).
  return {
      {problem("sum", true), reduction_reference("sum", 1),
       {{{{5, 37, 19}}, {5, 1, 19}}, {{{3, 70, 300}}, {3, 1, 300}}, {{{4, 33}}, {4, 1}}}},
      {problem("mean", false), reduction_reference("mean", 1),
       {{{{2, 41, 257}}, {2, 257}}, {{{6, 9, 7, 3}}, {6, 7, 3}}}},
      {problem("max", false), reduction_reference("max", 1), {{{{3, 131, 65}}, {3, 65}}, {{{7, 5}}, {7}}}},
  };
}

// gemm_reference applied to every matrix of a batch: a [B,M,K], b [B,K,N] or [B,N,K], bias [N].
Reference batched_gemm_reference(bool transposed, bool bias, std::function<float(float)> epilogue) {
  const Reference single = gemm_reference(transposed, bias, epilogue);
  return [=](const std::vector<HostTensor>& inputs) {
    std::vector<double> out;
    const int64_t batches = inputs[0].shape[0];
    for (int64_t batch = 0; batch < batches; ++batch) {
      std::vector<HostTensor> matrices;
      for (size_t index = 0; index < 2; ++index) {
        const auto& whole = inputs[index];
        const std::vector<int64_t> shape{whole.shape[1], whole.shape[2]};
        const auto size = static_cast<int64_t>(shape[0] * shape[1]);
        matrices.push_back(HostTensor{shape, std::vector<float>(whole.values.begin() + batch * size,
                                                                whole.values.begin() + (batch + 1) * size)});
      }
      if (bias) matrices.push_back(inputs[2]);
      const auto part = single(matrices);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  };
}

std::vector<ProblemCase> batched_gemm_cases() {
  auto shapes = [](bool transposed, bool bias) {
    std::vector<ShapeSet> sets;
    for (auto [batch, m, k, n] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 5, 7, 3}, {2, 33, 70, 65},
                                  {5, 1, 17, 9}}) {
      ShapeSet set{{{batch, m, k}, transposed ? std::vector<int64_t>{batch, n, k} : std::vector<int64_t>{batch, k, n}},
                   {batch, m, n}};
      if (bias) set.inputs.push_back({n});
      sets.push_back(set);
    }
    return sets;
  };
  return {
      {make_problem("batched_matmul", Family::batched_gemm, {{"b_layout", "kn"}, {"bias", "false"}, {"epilogue", "v"}}),
       batched_gemm_reference(false, false, [](float v) { return v; }), shapes(false, false)},
      {make_problem("batched_linear_relu", Family::batched_gemm,
                    {{"b_layout", "nk"}, {"bias", "true"}, {"epilogue", "v * 2.0f | v > 0.0f ? v : 0.0f"}}),
       batched_gemm_reference(true, true, [](float v) { return std::max(v * 2.0f, 0.0f); }), shapes(true, true)},
  };
}

// x [N,C,H,W] * weight [CO,C,KH,KW] (+ bias [CO]), then epilogue(v, c, inputs).
Reference conv2d_reference(bool bias, std::function<float(float, int64_t, const std::vector<HostTensor>&)> epilogue) {
  return [=](const std::vector<HostTensor>& inputs) {
    const auto& x = inputs[0].shape;
    const auto& w = inputs[1].shape;
    const int64_t oh_count = x[2] - w[2] + 1, ow_count = x[3] - w[3] + 1;
    std::vector<double> out;
    for (int64_t n = 0; n < x[0]; ++n) {
      for (int64_t c = 0; c < w[0]; ++c) {
        for (int64_t oh = 0; oh < oh_count; ++oh) {
          for (int64_t ow = 0; ow < ow_count; ++ow) {
            double sum = bias ? inputs[2].values[static_cast<size_t>(c)] : 0.0;
            for (int64_t ci = 0; ci < x[1]; ++ci) {
              for (int64_t kh = 0; kh < w[2]; ++kh) {
                for (int64_t kw = 0; kw < w[3]; ++kw) {
                  sum += static_cast<double>(
                             inputs[0].values[static_cast<size_t>(((n * x[1] + ci) * x[2] + oh + kh) * x[3] + ow + kw)]) *
                         inputs[1].values[static_cast<size_t>(((c * w[1] + ci) * w[2] + kh) * w[3] + kw)];
                }
              }
            }
            out.push_back(epilogue(static_cast<float>(sum), c, inputs));
          }
        }
      }
    }
    return out;
  };
}

std::vector<ProblemCase> conv2d_cases() {
  auto shapes = [](bool extras) {
    std::vector<ShapeSet> sets;
    for (auto [n, c, h, w, co, k] : {std::array<int64_t, 6>{1, 3, 8, 11, 5, 3}, {2, 4, 13, 21, 9, 3},
                                     {1, 2, 5, 300, 3, 2}}) {
      ShapeSet set{{{n, c, h, w}, {co, c, k, k}}, {n, co, h - k + 1, w - k + 1}};
      if (extras) {
        set.inputs.push_back({co});
        set.inputs.push_back({co, 1, 1});
      }
      sets.push_back(set);
    }
    return sets;
  };
  Problem plain = make_problem("conv2d", Family::conv2d, {{"bias", "false"}, {"epilogue", "v"}});
  Problem biased = make_problem("conv2d_relu_biasadd", Family::conv2d,
                                {{"bias", "true"}, {"epilogue", "v > 0.0f ? v : 0.0f | v + add_bias[c]"}});
  biased.inputs = {{"x", {}}, {"weight", {}}, {"bias", {}}, {"add_bias", {}}};
  return {
      {plain, conv2d_reference(false, [](float v, int64_t, const std::vector<HostTensor>&) { return v; }),
       shapes(false)},
      {biased,
       conv2d_reference(true,
                        [](float v, int64_t c, const std::vector<HostTensor>& inputs) {
                          return std::max(v, 0.0f) + inputs[3].values[static_cast<size_t>(c)];
                        }),
       shapes(true)},
  };
}

std::vector<ProblemCase> cross_entropy_cases() {
  Reference reference = [](const std::vector<HostTensor>& inputs) {
    const int64_t rows = inputs[0].shape[0], classes = inputs[0].shape[1];
    double total = 0.0;
    for (int64_t n = 0; n < rows; ++n) {
      const float* row = inputs[0].values.data() + n * classes;
      double max = -INFINITY, sum = 0.0;
      for (int64_t c = 0; c < classes; ++c) max = std::max(max, static_cast<double>(row[c]));
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(row[c] - max);
      total += max + std::log(sum) - row[inputs[1].integers[static_cast<size_t>(n)]];
    }
    return std::vector<double>{total / static_cast<double>(rows)};
  };
  Prepare classes = [](std::vector<HostTensor>& inputs, std::mt19937& rng) {
    inputs[1] = random_classes(inputs[1].shape, inputs[0].shape[1], rng);
  };
  return {{make_problem("cross_entropy", Family::cross_entropy, {}), reference,
           {{{{128, 100}, {128}}, {}}, {{{131, 1027}, {131}}, {}}, {{{3, 5}, {3}}, {}}}, classes}};
}

std::vector<ProblemCase> attention_cases() {
  Reference reference = [](const std::vector<HostTensor>& inputs) {
    const auto& q = inputs[0];
    const int64_t heads = q.shape[0] * q.shape[1], lq = q.shape[2], e = q.shape[3];
    const int64_t lk = inputs[1].shape[2], ev = inputs[2].shape[3];
    std::vector<double> out;
    for (int64_t head = 0; head < heads; ++head) {
      for (int64_t i = 0; i < lq; ++i) {
        std::vector<double> scores(static_cast<size_t>(lk));
        double max = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < lk; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < e; ++d) {
            dot += static_cast<double>(q.values[static_cast<size_t>((head * lq + i) * e + d)]) *
                   inputs[1].values[static_cast<size_t>((head * lk + j) * e + d)];
          }
          scores[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(e));
          max = std::max(max, scores[static_cast<size_t>(j)]);
        }
        for (auto& score : scores) sum += (score = std::exp(score - max));
        for (int64_t d = 0; d < ev; ++d) {
          double value = 0.0;
          for (int64_t j = 0; j < lk; ++j) {
            value += scores[static_cast<size_t>(j)] * inputs[2].values[static_cast<size_t>((head * lk + j) * ev + d)];
          }
          out.push_back(value / sum);
        }
      }
    }
    return out;
  };
  // Lq != Lk, an odd E, and a key count beyond the largest key tile.
  return {{make_problem("scaled_dot_product_attention", Family::attention, {}), reference,
           {{{{1, 2, 7, 13}, {1, 2, 9, 13}, {1, 2, 9, 13}}, {1, 2, 7, 13}},
            {{{2, 1, 5, 8}, {2, 1, 300, 8}, {2, 1, 300, 8}}, {2, 1, 5, 8}}}}};
}

DRK_TEST_CASE("every elementwise knob option renders a kernel that compiles and matches the reference") {
  const auto cases = elementwise_cases();
  check_family(Family::elementwise, cases, 2);
}

DRK_TEST_CASE("every rowwise knob option renders a kernel that compiles and matches the reference") {
  const auto cases = rowwise_cases();
  check_family(Family::rowwise, cases, 1);
}

DRK_TEST_CASE("every gemm knob option renders a kernel that compiles and matches the reference") {
  const auto cases = gemm_cases();
  check_family(Family::gemm, cases, 3);
}

DRK_TEST_CASE("every reduction knob option renders a kernel that compiles and matches the reference") {
  check_family(Family::reduction, reduction_cases(), 1);
}

DRK_TEST_CASE("every batched_gemm knob option renders a kernel that compiles and matches the reference") {
  check_family(Family::batched_gemm, batched_gemm_cases(), 2);
}

DRK_TEST_CASE("every conv2d knob option renders a kernel that compiles and matches the reference") {
  check_family(Family::conv2d, conv2d_cases(), 2);
}

DRK_TEST_CASE("every cross_entropy knob option renders a kernel that compiles and matches the reference") {
  check_family(Family::cross_entropy, cross_entropy_cases(), 3);
}

DRK_TEST_CASE("every attention knob option renders a kernel that compiles and matches the reference") {
  check_family(Family::attention, attention_cases(), 3);
}

DRK_TEST_CASE("rendered kernels refuse wrong counts and shapes with the ABI's status codes") {
  const auto elementwise = elementwise_cases();
  const auto gemm = gemm_cases();
  auto relu = render(elementwise[0].problem, Choice{Family::elementwise, {1, 1, 0, 1}});
  auto linear = render(gemm[1].problem, Choice{Family::gemm, {0, 1, 1, 0, 0, 1}});
  auto loss = render(cross_entropy_cases()[0].problem, Choice{Family::cross_entropy, {1, 1, 1, 1}});
  auto conv = render(conv2d_cases()[1].problem, Choice{Family::conv2d, {0, 1, 1, 0, 1}});
  DRK_REQUIRE(relu.ok());
  DRK_REQUIRE(linear.ok());
  DRK_REQUIRE(loss.ok());
  DRK_REQUIRE(conv.ok());
  KernelHarness harness;
  DRK_REQUIRE(harness.compile({*relu, *linear, *loss, *conv}).ok());
  std::mt19937 rng(7);
  std::vector<HostTensor> outputs{HostTensor{{4}, {}}};
  DRK_CHECK(harness.call(0, {random_tensor({5}, rng)}, outputs) == DRK_E_UNSUPPORTED_SHAPE);
  DRK_CHECK(harness.call(0, {random_tensor({4}, rng), random_tensor({4}, rng)}, outputs) ==
            DRK_E_BAD_ARGUMENT);
  std::vector<HostTensor> gemm_out{HostTensor{{2, 3}, {}}};
  DRK_CHECK(harness.call(1, {random_tensor({2, 5}, rng), random_tensor({3, 4}, rng), random_tensor({3}, rng)},
                         gemm_out) == DRK_E_UNSUPPORTED_SHAPE);
  DRK_CHECK(harness.call(1, {random_tensor({2, 5}, rng), random_tensor({3, 5}, rng), random_tensor({3}, rng)},
                         gemm_out) == DRK_OK);
  // A class index outside [0, C) is refused on the CPU; float targets are the wrong dtype.
  std::vector<HostTensor> scalar{HostTensor{{}, {}}};
  HostTensor targets = random_classes({4}, 6, rng);
  DRK_CHECK(harness.call(2, {random_tensor({4, 6}, rng), targets}, scalar) == DRK_OK);
  targets.integers[2] = 6;
  DRK_CHECK(harness.call(2, {random_tensor({4, 6}, rng), targets}, scalar) == DRK_E_BAD_ARGUMENT);
  DRK_CHECK(harness.call(2, {random_tensor({4, 6}, rng), random_tensor({4}, rng)}, scalar) == DRK_E_BAD_ARGUMENT);
  // conv2d: weight channels that are not x's, a kernel larger than the image, a short add_bias.
  std::vector<HostTensor> conv_out{HostTensor{{1, 3, 4, 4}, {}}};
  auto conv_inputs = [&](int64_t weight_channels, int64_t kernel, int64_t extra) {
    return std::vector<HostTensor>{random_tensor({1, 2, 6, 6}, rng), random_tensor({3, weight_channels, kernel, kernel}, rng),
                                   random_tensor({3}, rng), random_tensor({extra, 1, 1}, rng)};
  };
  DRK_CHECK(harness.call(3, conv_inputs(2, 3, 3), conv_out) == DRK_OK);
  DRK_CHECK(harness.call(3, conv_inputs(3, 3, 3), conv_out) == DRK_E_UNSUPPORTED_SHAPE);
  DRK_CHECK(harness.call(3, conv_inputs(2, 7, 3), conv_out) == DRK_E_UNSUPPORTED_SHAPE);
  DRK_CHECK(harness.call(3, conv_inputs(2, 3, 2), conv_out) == DRK_E_UNSUPPORTED_SHAPE);
}

DRK_TEST_CASE("every catalog task renders, as its message describes it, to a kernel that runs") {
  auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
  DRK_REQUIRE_MESSAGE(catalog.ok(), (catalog.ok() ? "" : catalog.error().describe()));
  std::vector<std::string> sources;
  std::vector<std::unique_ptr<capnp::MallocMessageBuilder>> messages;
  std::vector<Problem> problems;
  std::mt19937 rng(99);
  std::vector<std::vector<std::set<uint16_t>>> seen(kFamilyCount);
  for (const auto& task : catalog->tasks()) {
    if (!parse_family(task.family)) continue;
    // A cuda-only task (matmul_fp16, float16) is never given to the CPU space.
    if (!task.runs_on(kernels::DeviceKind::cpu)) continue;
    messages.push_back(std::make_unique<capnp::MallocMessageBuilder>());
    auto message = messages.back()->initRoot<msg::Task>();
    kernels::fill_task_message(task, kernels::DeviceKind::cpu, message);
    auto problem = problem_from_task(message.asReader());
    DRK_REQUIRE_MESSAGE(problem.ok(), (problem.ok() ? "" : problem.error().describe()));
    auto source = render(*problem, random_choice(problem->family, rng, seen[static_cast<int>(problem->family)]));
    DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
    sources.push_back(*source);
    problems.push_back(*problem);
  }
  KernelHarness harness;
  auto compiled = harness.compile(sources);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().describe()));
  for (size_t index = 0; index < problems.size(); ++index) {
    std::vector<HostTensor> inputs, outputs;
    for (const auto& input : problems[index].inputs) {
      // Class indices (cross_entropy's targets) address the last dim of the first input.
      inputs.push_back(input.class_indices
                           ? random_classes(input.shape, problems[index].inputs[0].shape.back(), rng)
                           : random_tensor(input.shape, rng));
    }
    for (const auto& output : problems[index].outputs) outputs.push_back(HostTensor{output.shape, {}});
    DRK_INFO("task " << problems[index].task);
    DRK_CHECK(harness.call(index, inputs, outputs) == DRK_OK);
    bool finite = true;
    for (float value : outputs[0].values) finite = finite && std::isfinite(value);
    DRK_CHECK(finite);
  }
}

DRK_TEST_CASE("a choice of another family or outside the space does not render") {
  const auto cases = elementwise_cases();
  DRK_CHECK_FALSE(render(cases[0].problem, Choice{Family::gemm, {0, 0, 0, 0, 0, 0}}).ok());
  DRK_CHECK_FALSE(render(cases[0].problem, Choice{Family::elementwise, {0, 9, 0, 0}}).ok());
  DRK_CHECK_FALSE(render(cases[0].problem, Choice{Family::elementwise, {0, 0}}).ok());
}

DRK_TEST_CASE("stage lists split on single pipes and refuse statements") {
  auto stages = parse_stages(" v * 2.0f | v > 0.0f || v < -1.0f ? v : 0.0f | v ");
  DRK_REQUIRE(stages.ok());
  DRK_REQUIRE(stages->size() == 2);
  DRK_CHECK((*stages)[1] == "v > 0.0f || v < -1.0f ? v : 0.0f");
  DRK_CHECK(parse_stages("v").ok());
  DRK_CHECK(parse_stages("v")->empty());
  DRK_CHECK_FALSE(parse_stages("v; system(0)").ok());
  DRK_CHECK_FALSE(parse_stages("v | | v").ok());
}

}  // namespace
}  // namespace drk::schedule
