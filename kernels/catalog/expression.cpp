#include "kernels/catalog/expression.h"

#include <optional>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

namespace drk::kernels {
namespace {

using enum ArgKind;

class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& input_names)
      : text_(text), input_names_(input_names) {}

  Result<Expression> parse() {
    auto expression = parse_sum();
    if (!expression) return expression;
    skip_space();
    if (position_ != text_.size()) return fail("unexpected '" + std::string(1, text_[position_]) + "'");
    return expression;
  }

 private:
  Error fail(const std::string& what) const { return fail_at(position_ + 1, what); }
  Error fail_at(size_t column, const std::string& what) const {
    return make_error(Errc::parse_error,
                      "at column " + std::to_string(column) + ": " + what + " in '" + std::string(text_) + "'");
  }

  void skip_space() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) ++position_;
  }
  bool accept(char c) {
    skip_space();
    if (position_ < text_.size() && text_[position_] == c) {
      ++position_;
      return true;
    }
    return false;
  }

  static Expression binary(Expression::Kind kind, Expression lhs, Expression rhs, size_t column) {
    Expression node;
    node.kind = kind;
    node.column = column;
    node.args.push_back(std::move(lhs));
    node.args.push_back(std::move(rhs));
    return node;
  }

  Result<Expression> parse_sum() {
    return parse_left_associative(&Parser::parse_product,
                                  {{'+', Expression::Kind::add}, {'-', Expression::Kind::subtract}});
  }

  Result<Expression> parse_product() {
    return parse_left_associative(&Parser::parse_unary,
                                  {{'*', Expression::Kind::multiply}, {'/', Expression::Kind::divide}});
  }

  // One precedence level: operand (operator operand)*, grouped from the left.
  Result<Expression> parse_left_associative(
      Result<Expression> (Parser::*operand)(),
      std::initializer_list<std::pair<char, Expression::Kind>> operators) {
    auto lhs = (this->*operand)();
    if (!lhs) return lhs;
    Expression node = std::move(*lhs);
    for (;;) {
      skip_space();
      const size_t column = position_ + 1;
      std::optional<Expression::Kind> kind;
      for (const auto& [symbol, symbol_kind] : operators) {
        if (!kind && accept(symbol)) kind = symbol_kind;
      }
      if (!kind) return node;
      auto rhs = (this->*operand)();
      if (!rhs) return rhs;
      node = binary(*kind, std::move(node), std::move(*rhs), column);
    }
  }

  Result<Expression> parse_unary() {
    skip_space();
    size_t column = position_ + 1;
    if (accept('-')) {
      auto operand = parse_unary();
      if (!operand) return operand;
      if (operand->kind == Expression::Kind::number) {
        operand->number = -operand->number;
        operand->column = column;
        return operand;
      }
      Expression node;
      node.kind = Expression::Kind::negate;
      node.column = column;
      node.args.push_back(std::move(*operand));
      return node;
    }
    return parse_primary();
  }

  Result<Expression> parse_primary() {
    skip_space();
    if (position_ >= text_.size()) return fail("expected a number, a name or '(' but the text ended");
    size_t column = position_ + 1;
    char c = text_[position_];
    if (accept('(')) {
      auto inner = parse_sum();
      if (!inner) return inner;
      if (!accept(')')) return fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t begin = position_;
      while (position_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[position_])) || text_[position_] == '_'))
        ++position_;
      std::string name(text_.substr(begin, position_ - begin));
      skip_space();
      if (position_ < text_.size() && text_[position_] == '(') return parse_call(name, column);
      if (std::find(input_names_.begin(), input_names_.end(), name) == input_names_.end())
        return fail_at(column, "'" + name + "' is not an input of the task");
      Expression node;
      node.kind = Expression::Kind::input;
      node.name = name;
      node.column = column;
      return node;
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  Result<Expression> parse_number() {
    size_t begin = position_;
    while (position_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[position_])) || text_[position_] == '.'))
      ++position_;
    if (position_ < text_.size() && (text_[position_] == 'e' || text_[position_] == 'E')) {
      ++position_;
      if (position_ < text_.size() && (text_[position_] == '-' || text_[position_] == '+')) ++position_;
      while (position_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[position_]))) ++position_;
    }
    std::string literal(text_.substr(begin, position_ - begin));
    char* end = nullptr;
    double value = std::strtod(literal.c_str(), &end);
    if (end != literal.c_str() + literal.size()) return fail_at(begin + 1, "'" + literal + "' is not a number");
    Expression node;
    node.kind = Expression::Kind::number;
    node.number = value;
    node.column = begin + 1;
    return node;
  }

  Result<Expression> parse_call(const std::string& name, size_t column) {
    const auto& signatures = function_signatures();
    auto signature = std::find_if(signatures.begin(), signatures.end(),
                                  [&](const FunctionSignature& s) { return s.name == name; });
    if (signature == signatures.end()) return fail_at(column, "unknown function '" + name + "'");
    accept('(');
    Expression node;
    node.kind = Expression::Kind::call;
    node.name = name;
    node.column = column;
    if (!accept(')')) {
      do {
        skip_space();
        size_t arg_column = position_ + 1;
        auto arg = parse_sum();
        if (!arg) return arg;
        size_t index = node.args.size();
        if (index >= signature->args.size())
          return fail_at(arg_column, name + "() takes at most " + std::to_string(signature->args.size()) + " arguments");
        ArgKind kind = signature->args[index];
        bool is_number = arg->kind == Expression::Kind::number;
        if ((kind == number || kind == optional_number) && !is_number)
          return fail_at(arg_column, "argument " + std::to_string(index + 1) + " of " + name + "() must be a number");
        if ((kind == tensor || kind == optional_tensor) && is_number)
          return fail_at(arg_column, "argument " + std::to_string(index + 1) + " of " + name + "() must be a tensor");
        node.args.push_back(std::move(*arg));
      } while (accept(','));
      if (!accept(')')) return fail("expected ',' or ')' in the call of " + name + "()");
    }
    size_t required = std::count_if(signature->args.begin(), signature->args.end(),
                                     [](ArgKind k) { return k == tensor || k == number; });
    if (node.args.size() < required)
      return fail_at(column, name + "() needs " + std::to_string(required) + " arguments, got " +
                                 std::to_string(node.args.size()));
    return node;
  }

  std::string_view text_;
  const std::vector<std::string>& input_names_;
  size_t position_ = 0;
};

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct Value {
  bool is_number = false;
  Shape shape;
  bool integer = false;  // class indices (an int64 input)
};

double product(const Shape& shape, size_t begin, size_t end) {
  double n = 1;
  for (size_t i = begin; i < end; ++i) n *= static_cast<double>(shape[i]);
  return n;
}

class ShapeWalker {
 public:
  ShapeWalker(const ShapeMap& inputs, const std::set<std::string>& integer_inputs)
      : inputs_(inputs), integer_inputs_(integer_inputs) {}
  double flops = 0.0;

  Result<Value> walk(const Expression& e) {
    using K = Expression::Kind;
    switch (e.kind) {
      case K::number: return Value{true, {}};
      case K::input: {
        auto it = inputs_.find(e.name);
        if (it == inputs_.end()) return fail(e, "no shape is given for input '" + e.name + "'");
        return Value{false, it->second, integer_inputs_.count(e.name) > 0};
      }
      case K::negate: {
        auto operand = walk(e.args[0]);
        if (!operand) return operand;
        if (operand->integer) return integer_misuse(e);
        if (!operand->is_number) flops += numel(operand->shape);
        return operand;
      }
      case K::add:
      case K::subtract:
      case K::multiply:
      case K::divide: {
        auto lhs = walk(e.args[0]);
        if (!lhs) return lhs;
        auto rhs = walk(e.args[1]);
        if (!rhs) return rhs;
        if (lhs->integer || rhs->integer) return integer_misuse(e);
        if (lhs->is_number && rhs->is_number) return Value{true, {}};
        if (lhs->is_number) { flops += numel(rhs->shape); return rhs; }
        if (rhs->is_number) { flops += numel(lhs->shape); return lhs; }
        auto shape = broadcast(e, lhs->shape, rhs->shape);
        if (!shape) return shape.error();
        flops += numel(*shape);
        return Value{false, *shape};
      }
      case K::call: return walk_call(e);
    }
    return fail(e, "unknown expression kind");
  }

 private:
  Error fail(const Expression& e, const std::string& what) const {
    return make_error(Errc::invalid_argument, "at column " + std::to_string(e.column) + ": " + what);
  }

  Error integer_misuse(const Expression& e) const {
    return fail(e, "an int64 input holds class indices: only the targets of cross_entropy() may use it");
  }

  Result<Shape> broadcast(const Expression& e, const Shape& a, const Shape& b) const {
    size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
      int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
      if (da != db && da != 1 && db != 1)
        return fail(e, "shapes " + format_shape(a) + " and " + format_shape(b) + " do not broadcast");
      out[i] = std::max(da, db);
    }
    return out;
  }

  Result<int64_t> dim_arg(const Expression& e, size_t index, const Shape& shape) const {
    int64_t dim = static_cast<int64_t>(e.args[index].number);
    int64_t rank = static_cast<int64_t>(shape.size());
    if (dim < -rank || dim >= rank)
      return fail(e, e.name + "(): dim " + std::to_string(dim) + " is out of range for " + format_shape(shape));
    return dim < 0 ? dim + rank : dim;
  }

  Result<Value> walk_call(const Expression& e) {
    std::vector<Value> args;
    for (const auto& arg : e.args) {
      auto value = walk(arg);
      if (!value) return value;
      args.push_back(std::move(*value));
    }
    const std::string& f = e.name;
    for (size_t i = 0; i < args.size(); ++i) {
      bool target = f == "cross_entropy" && i == 1;
      if (args[i].integer && !target) return integer_misuse(e);
      if (target && !args[i].integer)
        return fail(e, "cross_entropy(): the targets must be an int64 input of class indices (draw kind classes)");
    }
    const Shape& x = args[0].shape;
    double n = static_cast<double>(numel(x));
    if (f == "relu" || f == "gelu" || f == "sigmoid" || f == "tanh" || f == "exp" || f == "log" ||
        f == "sqrt" || f == "abs" || f == "leaky_relu" || f == "clamp" || f == "softplus" ||
        f == "hardswish" || f == "elu") {
      flops += n;
      return args[0];
    }
    if (f == "softmax" || f == "log_softmax" || f == "rms_norm") {
      auto dim = dim_arg(e, 1, x);
      if (!dim) return dim.error();
      flops += (f == "rms_norm" ? 4.0 : 5.0) * n;
      return args[0];
    }
    if (f == "layer_norm") {
      int64_t ndims = static_cast<int64_t>(e.args[3].number);
      if (ndims < 1 || ndims > static_cast<int64_t>(x.size()))
        return fail(e, "layer_norm(): ndims " + std::to_string(ndims) + " does not fit " + format_shape(x));
      Shape normalized(x.end() - ndims, x.end());
      if (args[1].shape != normalized || args[2].shape != normalized)
        return fail(e, "layer_norm(): weight and bias must have the normalized shape " + format_shape(normalized));
      flops += 8.0 * n;
      return args[0];
    }
    if (f == "matmul") {
      const Shape& b = args[1].shape;
      if (x.size() < 2 || b.empty())
        return fail(e, "matmul(): needs a matrix on the left, got " + format_shape(x));
      int64_t k = x.back();
      Shape out(x.begin(), x.end() - 1);
      if (b.size() == 1) {
        if (b[0] != k) return fail(e, "matmul(): " + format_shape(x) + " and " + format_shape(b) + " do not fit");
      } else {
        // A batched product needs equal batch dims (b may also be one matrix for every batch).
        bool batch_fits = b.size() == 2 || (b.size() == x.size() && std::equal(b.begin(), b.end() - 2, x.begin()));
        if (b[b.size() - 2] != k || !batch_fits)
          return fail(e, "matmul(): " + format_shape(x) + " and " + format_shape(b) + " do not fit");
        out.push_back(b.back());
      }
      flops += 2.0 * static_cast<double>(numel(out)) * static_cast<double>(k);
      return Value{false, out};
    }
    if (f == "linear") {
      const Shape& w = args[1].shape;
      if (x.empty() || w.size() != 2 || w[1] != x.back())
        return fail(e, "linear(): input " + format_shape(x) + " and weight " + format_shape(w) +
                           " do not fit (weight is [out_features, in_features])");
      if (args.size() > 2 && args[2].shape != Shape{w[0]})
        return fail(e, "linear(): bias must be [" + std::to_string(w[0]) + "], got " + format_shape(args[2].shape));
      Shape out(x.begin(), x.end() - 1);
      out.push_back(w[0]);
      flops += 2.0 * static_cast<double>(numel(out)) * static_cast<double>(x.back());
      if (args.size() > 2) flops += static_cast<double>(numel(out));
      return Value{false, out};
    }
    if (f == "conv2d") {
      const Shape& w = args[1].shape;
      if (x.size() != 4 || w.size() != 4 || w[1] != x[1] || w[2] > x[2] || w[3] > x[3])
        return fail(e, "conv2d(): input " + format_shape(x) + " [N, C, H, W] and weight " + format_shape(w) +
                           " [O, C, kh, kw] do not fit (stride 1, no padding)");
      if (args.size() > 2 && args[2].shape != Shape{w[0]})
        return fail(e, "conv2d(): bias must be [" + std::to_string(w[0]) + "], got " + format_shape(args[2].shape));
      Shape out{x[0], w[0], x[2] - w[2] + 1, x[3] - w[3] + 1};
      flops += 2.0 * static_cast<double>(numel(out)) * product(w, 1, 4);
      if (args.size() > 2) flops += static_cast<double>(numel(out));
      return Value{false, out};
    }
    if (f == "cross_entropy") {
      const Shape& targets = args[1].shape;
      Shape expected = x;
      if (x.size() >= 2) expected.erase(expected.begin() + 1);
      if (x.size() < 2 || targets != expected)
        return fail(e, "cross_entropy(): logits " + format_shape(x) + " [N, C, ...] need targets " +
                           (x.size() >= 2 ? format_shape(expected) : std::string("[N, ...]")) + ", got " +
                           format_shape(targets));
      flops += 5.0 * n + static_cast<double>(numel(targets));
      return Value{false, {}};
    }
    if (f == "scaled_dot_product_attention") {
      const Shape& k = args[1].shape;
      const Shape& v = args[2].shape;
      size_t rank = x.size();
      bool fits = rank >= 2 && k.size() == rank && v.size() == rank && std::equal(x.begin(), x.end() - 2, k.begin()) &&
                  std::equal(x.begin(), x.end() - 2, v.begin()) && k[rank - 1] == x[rank - 1] &&
                  v[rank - 2] == k[rank - 2];
      if (!fits)
        return fail(e, "scaled_dot_product_attention(): q " + format_shape(x) + " [..., L, E], k " + format_shape(k) +
                           " [..., S, E] and v " + format_shape(v) + " [..., S, Ev] do not fit");
      double batch = product(x, 0, rank - 2);
      double l = static_cast<double>(x[rank - 2]), s = static_cast<double>(k[rank - 2]);
      double scores = batch * l * s;
      flops += 2.0 * scores * static_cast<double>(x[rank - 1]) + 2.0 * scores * static_cast<double>(v[rank - 1]) +
               6.0 * scores;
      Shape out = x;
      out.back() = v.back();
      return Value{false, out};
    }
    if (f == "sum" || f == "mean" || f == "max") {
      auto dim = dim_arg(e, 1, x);
      if (!dim) return dim.error();
      bool keepdim = e.args.size() > 2 && e.args[2].number != 0.0;
      Shape out = x;
      if (keepdim) out[*dim] = 1;
      else out.erase(out.begin() + *dim);
      flops += n;
      return Value{false, out};
    }
    return fail(e, "unknown function '" + f + "'");
  }

  const ShapeMap& inputs_;
  const std::set<std::string>& integer_inputs_;
};

}  // namespace

const std::vector<FunctionSignature>& function_signatures() {
  static const std::vector<FunctionSignature> signatures = {
      {"relu", {tensor}},
      {"gelu", {tensor}},
      {"sigmoid", {tensor}},
      {"tanh", {tensor}},
      {"exp", {tensor}},
      {"log", {tensor}},
      {"sqrt", {tensor}},
      {"abs", {tensor}},
      {"softplus", {tensor}},
      {"hardswish", {tensor}},
      {"leaky_relu", {tensor, number}},
      {"elu", {tensor, number}},
      {"softmax", {tensor, number}},
      {"log_softmax", {tensor, number}},
      {"rms_norm", {tensor, number, number}},
      {"layer_norm", {tensor, tensor, tensor, number, number}},
      {"matmul", {tensor, tensor}},
      {"linear", {tensor, tensor, optional_tensor}},
      {"conv2d", {tensor, tensor, optional_tensor}},
      {"sum", {tensor, number, optional_number}},
      {"mean", {tensor, number, optional_number}},
      {"max", {tensor, number, optional_number}},
      {"clamp", {tensor, number, number}},
      {"cross_entropy", {tensor, tensor}},
      {"scaled_dot_product_attention", {tensor, tensor, tensor}},
  };
  return signatures;
}

Result<Expression> parse_expression(std::string_view text, const std::vector<std::string>& input_names) {
  return Parser(text, input_names).parse();
}

Result<Shape> infer_shape(const Expression& expression, const ShapeMap& inputs,
                          const std::set<std::string>& integer_inputs) {
  ShapeWalker walker(inputs, integer_inputs);
  auto value = walker.walk(expression);
  if (!value) return value.error();
  if (value->is_number) return make_error(Errc::invalid_argument, "the expression is a constant, not a tensor");
  return value->shape;
}

Result<double> estimate_flops(const Expression& expression, const ShapeMap& inputs,
                              const std::set<std::string>& integer_inputs) {
  ShapeWalker walker(inputs, integer_inputs);
  auto value = walker.walk(expression);
  if (!value) return value.error();
  return walker.flops;
}

std::string format_shape(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

}  // namespace drk::kernels
