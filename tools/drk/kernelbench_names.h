// KernelBench's names of levels and problems, as its checkouts and run directories spell them:
// a level's folder is `level<N>`, a problem's file `<ID>_<Name>.py` (`19_ReLU.py`).
//
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <optional>

namespace drk::tools {

// `level<N>` -> N; nullopt for any other name.
std::optional<int> kernelbench_level_of_folder(const std::filesystem::path& folder);

// `<ID>_<Name>.py` -> ID; nullopt for any other name.
std::optional<int> kernelbench_problem_id_of_file(const std::filesystem::path& file);

}  // namespace drk::tools
