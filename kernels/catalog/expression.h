// Expression: the reference language of tasks, parsed once into an AST (torch-free).
//
// Grammar (whitespace is free):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := NUMBER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
// NAMEs are the task's inputs; calls are the functions of function_signatures() (relu, gelu,
// sigmoid, tanh, exp, log, sqrt, abs, softplus, hardswish, leaky_relu(x, slope), elu(x, alpha),
// softmax(x, dim), log_softmax(x, dim), rms_norm(x, dim, eps), layer_norm(x, w, b, ndims, eps),
// matmul(a, b), linear(x, w[, b]), conv2d(x, w[, b]), sum/mean/max(x, dim[, keepdim]),
// clamp(x, lo, hi), cross_entropy(logits, targets), scaled_dot_product_attention(q, k, v)).
// Arguments named "number" in a signature must be numeric literals (a leading minus is
// allowed).
//
// infer_shape() gives the output shape for given input shapes without computing anything, so
// that a catalog checks GPU-sized tasks on any machine; estimate_flops() counts by the
// convention of docs/tasks.md (one flop per element per elementwise operation, 2*M*N*K per
// matrix product, ...). Inputs named in `integer_inputs` hold class indices: only the target of
// cross_entropy may use them.
// kernels/catalog/reference.h evaluates an Expression with LibTorch.
//
// Thread-safety: an Expression is an immutable value.
// Errors: parse_error naming the 1-based column; invalid_argument for shapes that do not fit.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::kernels {

struct Expression {
  enum class Kind { number, input, call, add, subtract, multiply, divide, negate };
  Kind kind = Kind::number;
  double number = 0.0;          // Kind::number
  std::string name;             // Kind::input (the input's name) and Kind::call (the function)
  std::vector<Expression> args;  // operands of calls and operators
  size_t column = 1;            // 1-based column in the source text, for error messages
};

enum class ArgKind { tensor, number, optional_tensor, optional_number };

struct FunctionSignature {
  std::string name;
  std::vector<ArgKind> args;
};

// Every function the reference language knows.
const std::vector<FunctionSignature>& function_signatures();

// Parses `text`; `input_names` are the names an expression may use.
Result<Expression> parse_expression(std::string_view text,
                                    const std::vector<std::string>& input_names);

using Shape = std::vector<int64_t>;
using ShapeMap = std::map<std::string, Shape>;

// The shape of the expression's value for the given input shapes (a scalar is []).
Result<Shape> infer_shape(const Expression& expression, const ShapeMap& inputs,
                          const std::set<std::string>& integer_inputs = {});

// Floating-point operations of one evaluation for the given input shapes.
Result<double> estimate_flops(const Expression& expression, const ShapeMap& inputs,
                              const std::set<std::string>& integer_inputs = {});

std::string format_shape(const Shape& shape);  // "[128, 4096]"

}  // namespace drk::kernels
