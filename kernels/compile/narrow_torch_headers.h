// The narrower torch headers that the units of a load_inline extension are compiled with first.
//
// torch/extension.h is torch/all.h, the whole C++ frontend (nn, optim, data, jit, serialize...),
// and torch/python.h. Precompiled, it is not parsed again, but the template instantiations its
// inline functions leave pending are made again at the end of every unit that includes it: 6-7 s
// of g++ for a five-line main.cpp or host unit on the 2-core CPU machine, against 2.2 s for a
// host unit with torch/types.h (tensors, ATen's operators, TORCH_CHECK, AT_DISPATCH) and 3.7 s
// for a main.cpp with torch/types.h and the pybind11 casters of tensors (docs/kernelbench.md,
// "Narrow torch headers").
//
// A unit is compiled first with its whole-API includes blanked and its narrow headers
// precompiled ahead of it; if that does not compile (the candidate uses torch::nn, say), it is
// compiled as torch compiles it. The narrow attempt only saves time: the verdict is the whole
// build's, and the code is the same (the narrow headers are a subset, read first, as
// torch/extension.h is).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drk::compile {

// What a module's main.cpp needs of torch: tensors, pybind11's casters for them, and
// torch::wrap_pybind_function.
const std::vector<std::string>& narrow_module_headers();
// What a split cuda.cu's host unit needs of torch: tensors.
const std::vector<std::string>& narrow_host_headers();

// `source` with each #include of torch's whole API (torch/extension.h, torch/torch.h,
// torch/all.h, torch/python.h) outside comments and literals blanked, every line kept.
std::string without_whole_api_includes(std::string_view source);

}  // namespace drk::compile
