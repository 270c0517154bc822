#include "kernels/compile/narrow_torch_headers.h"

#include "tests/doctest_drk.h"

using drk::compile::without_whole_api_includes;

DRK_TEST_CASE("the whole API's includes are blanked, every line and every other include kept") {
  const std::string kept = "#include <ATen/cuda/CUDAContext.h>\n", types = "#include <torch/types.h>\n",
                    code = "torch::Tensor f(torch::Tensor x);\n";
  const std::vector<std::string> whole = {"#include <torch/extension.h>", "  #  include \"torch/torch.h\"",
                                          "#include <torch/all.h>  // the frontend", "#include <torch/python.h>"};
  const std::string source = whole[0] + "\n" + kept + whole[1] + "\n" + types + whole[2] + "\n" + whole[3] + "\n" + code;
  const auto blank = [](const std::string& line) { return std::string(line.size(), ' ') + "\n"; };
  DRK_CHECK(without_whole_api_includes(source) ==
            blank(whole[0]) + kept + blank(whole[1]) + types + blank(whole[2]) + blank(whole[3]) + code);
}

DRK_TEST_CASE("an include in a comment or a string, or of another torch header, stays") {
  const std::string source =
      "// #include <torch/extension.h>\n"
      "const char* s = \"#include <torch/extension.h>\";\n"
      "#include <torch/extension_helpers.h>\n"
      "#include <torch/csrc/api/include/torch/nn.h>\n";
  DRK_CHECK(without_whole_api_includes(source) == source);
}
