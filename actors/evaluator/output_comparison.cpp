#include "actors/evaluator/output_comparison.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <ATen/ATen.h>

namespace drk::evaluator {
namespace {

std::string format_index(int64_t flat, const kernels::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return kernels::format_shape(index);
}

// The same bytes under an integer type of the element's width, for bitwise comparisons.
at::Tensor as_bits(const at::Tensor& t) {
  switch (t.element_size()) {
    case 1: return t.view(at::kByte);
    case 2: return t.view(at::kShort);
    case 4: return t.view(at::kInt);
    default: return t.view(at::kLong);
  }
}

// Calls `step(start, length)` over [0, elements) in chunks.
template <typename Step>
void for_each_chunk(int64_t elements, int64_t chunk, Step step) {
  chunk = std::max<int64_t>(chunk, 1);
  for (int64_t start = 0; start < elements; start += chunk) step(start, std::min(chunk, elements - start));
}

// |out - ref| <= atol + rtol * |ref| (diff = |out - ref|, both float64); false for NaN.
at::Tensor within_tolerance(const at::Tensor& diff, const at::Tensor& ref64, const kernels::Tolerance& tolerance) {
  return diff.le(ref64.abs() * tolerance.rtol + tolerance.atol);
}

// The poison's bits at the width of `t`'s elements (float16 or float32).
int64_t poison_bits(const at::Tensor& t) {
  return t.element_size() == 2 ? static_cast<int16_t>(kPoisonBits16) : static_cast<int32_t>(kPoisonBits);
}

}  // namespace

void poison(const at::Tensor& output) { as_bits(output).fill_(poison_bits(output)); }

Comparison compare_outputs(const at::Tensor& output, const at::Tensor& reference, const kernels::Shape& shape,
                           const std::string& name, const kernels::Tolerance& tolerance, int64_t chunk) {
  Comparison c;
  const at::Tensor out = output.reshape({-1});
  const at::Tensor ref = reference.reshape({-1});
  for_each_chunk(out.numel(), chunk, [&](int64_t start, int64_t length) {
    const at::Tensor o = out.narrow(0, start, length);
    const at::Tensor r64 = ref.narrow(0, start, length).to(at::kDouble);
    const at::Tensor poisoned = as_bits(o).eq(poison_bits(o));
    const at::Tensor finite = at::isfinite(o);
    const at::Tensor o64 = o.to(at::kDouble);
    const at::Tensor diff = (o64 - r64).abs();
    if (poisoned.any().item<bool>()) c.left_poisoned = true;
    if (finite.logical_not().logical_and(poisoned.logical_not()).any().item<bool>()) c.non_finite = true;
    c.max_abs = std::max(c.max_abs, diff.masked_fill(finite.logical_not(), 0.0).max().item<double>());
    const at::Tensor has_relative = finite.logical_and(r64.ne(0.0));
    c.max_rel = std::max(c.max_rel, (diff / r64.abs()).masked_fill(has_relative.logical_not(), 0.0).max().item<double>());
    const at::Tensor failing = within_tolerance(diff, r64, tolerance).logical_not();
    if (!c.passed || !failing.any().item<bool>()) return;
    c.passed = false;
    const int64_t at_chunk = failing.to(at::kInt).argmax().item<int64_t>();  // the first failing element
    const float o_value = o[at_chunk].item<float>();
    const double r_value = r64[at_chunk].item<double>();
    const std::string where = "output " + name + format_index(start + at_chunk, shape);
    std::ostringstream why;
    if (poisoned[at_chunk].item<bool>()) {
      why << where << " still holds the poison (NaN): it was never written";
    } else if (!std::isfinite(o_value)) {
      why << where << " is " << o_value << " but the reference is " << r_value;
    } else {
      why << where << " is " << o_value << " but the reference is " << r_value << " (|diff| "
          << std::fabs(static_cast<double>(o_value) - r_value) << " > atol " << tolerance.atol << " + rtol "
          << tolerance.rtol << " * |ref|)";
    }
    c.first_failure = why.str();
  });
  return c;
}

void poison_finite(const at::Tensor& output, float magnitude) {
  const at::Tensor flat = output.view({-1});
  flat.fill_(magnitude);
  if (flat.numel() > 1) flat.slice(0, 1, flat.numel(), 2).fill_(-magnitude);
}

int64_t count_differing_bits(const at::Tensor& a, const at::Tensor& b) {
  return at::ne(as_bits(a.contiguous()).reshape({-1}), as_bits(b.contiguous()).reshape({-1})).sum().item<int64_t>();
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  return a.numel() == b.numel() && a.element_size() == b.element_size() &&
         at::equal(as_bits(a.contiguous()).reshape({-1}), as_bits(b.contiguous()).reshape({-1}));
}

StaleCount count_stale(const at::Tensor& now, const at::Tensor& previous, const at::Tensor& reference,
                       const kernels::Tolerance& tolerance, int64_t chunk) {
  StaleCount count;
  const at::Tensor n = now.reshape({-1}), p = previous.reshape({-1}), r = reference.reshape({-1});
  for_each_chunk(n.numel(), chunk, [&](int64_t start, int64_t length) {
    const at::Tensor nc = n.narrow(0, start, length);
    const at::Tensor r64 = r.narrow(0, start, length).to(at::kDouble);
    const at::Tensor missing = within_tolerance((nc.to(at::kDouble) - r64).abs(), r64, tolerance).logical_not();
    const at::Tensor unchanged = as_bits(nc).eq(as_bits(p.narrow(0, start, length)));
    count.missing += missing.sum().item<int64_t>();
    count.stale += missing.logical_and(unchanged).sum().item<int64_t>();
  });
  return count;
}

PrecisionErrors precision_errors(const at::Tensor& candidate, const at::Tensor& reference32,
                                 const at::Tensor& exact64, int64_t chunk) {
  double scale = 0, candidate_error = 0, reference_error = 0;
  const at::Tensor c = candidate.reshape({-1}), r = reference32.reshape({-1}), e = exact64.reshape({-1});
  for_each_chunk(c.numel(), chunk, [&](int64_t start, int64_t length) {
    const at::Tensor want = e.narrow(0, start, length).to(at::kDouble);
    scale = std::max(scale, want.abs().max().item<double>());
    candidate_error =
        std::max(candidate_error, (c.narrow(0, start, length).to(at::kDouble) - want).abs().max().item<double>());
    reference_error =
        std::max(reference_error, (r.narrow(0, start, length).to(at::kDouble) - want).abs().max().item<double>());
  });
  if (scale == 0) scale = 1;
  return {candidate_error / scale, reference_error / scale};
}

}  // namespace drk::evaluator
