#include "storage/job_filter_sql.h"

#include <string_view>

#include "services/time.h"

namespace trainyard {
namespace {

// The user's '*' becomes LIKE's '%'; LIKE's own metacharacters in the text match only themselves.
std::string LikePattern(std::string_view text) {
  std::string pattern;
  for (char c : text) {
    if (c == '*') {
      pattern += '%';
      continue;
    }
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern;
}

bool HasWildcard(const FilterComparison& cmp) {
  return cmp.op == FilterOp::kHas && cmp.text.find('*') != std::string::npos;
}

const char* SqlOperator(FilterOp op) {
  switch (op) {
    case FilterOp::kEq:
    case FilterOp::kHas:  // ':' without a wildcard is equality
      return "=";
    case FilterOp::kNe:
      return "<>";
    case FilterOp::kLt:
      return "<";
    case FilterOp::kLe:
      return "<=";
    case FilterOp::kGt:
      return ">";
    case FilterOp::kGe:
      return ">=";
  }
  return "=";
}

class Compiler {
 public:
  Compiler(int first_param, std::vector<std::string>& params)
      : next_param_(first_param), params_(params) {}

  // The expression as one parenthesized unit, safe to drop next to any other SQL.
  std::string Wrapped(const FilterExpr& expr) {
    const bool self_parenthesized =
        (expr.kind == FilterExpr::Kind::kAnd || expr.kind == FilterExpr::Kind::kOr) &&
        !expr.children.empty();
    std::string sql = Render(expr);
    return self_parenthesized ? sql : "(" + sql + ")";
  }

 private:
  std::string Render(const FilterExpr& expr) {
    switch (expr.kind) {
      case FilterExpr::Kind::kAnd:
        return Join(expr, " AND ", "TRUE");
      case FilterExpr::Kind::kOr:
        return Join(expr, " OR ", "FALSE");
      case FilterExpr::Kind::kNot:
        return Negation(expr);
      case FilterExpr::Kind::kCompare:
        return Comparison(expr.comparison);
    }
    return "FALSE";
  }

  // Children are rendered bare: each is a single comparison, a NOT (which binds tighter than AND
  // and OR) or an already parenthesized AND/OR.
  std::string Join(const FilterExpr& expr, std::string_view separator, const char* if_empty) {
    if (expr.children.empty()) return if_empty;
    std::string sql = "(";
    for (size_t i = 0; i < expr.children.size(); ++i) {
      if (i > 0) sql.append(separator);
      sql += Render(expr.children[i]);
    }
    sql += ")";
    return sql;
  }

  // Labels make comparisons three-valued: labels->>'k' is NULL for a job without the label, and
  // NOT NULL is NULL, which WHERE drops. Users read "NOT labels.team=ml" as "team is not ml", which
  // includes jobs without a team, so NOT maps NULL to true; AND and OR already treat NULL like
  // false as far as WHERE is concerned.
  std::string Negation(const FilterExpr& expr) {
    if (expr.children.empty()) return "FALSE";
    return Wrapped(expr.children.front()) + " IS NOT TRUE";
  }

  std::string Comparison(const FilterComparison& cmp) {
    switch (cmp.field) {
      case FilterField::kDisplayName:
        return DisplayName(cmp);
      case FilterField::kState: {
        const std::string p = Param(std::to_string(static_cast<int>(cmp.state)));
        return std::string("state ") + SqlOperator(cmp.op) + " " + p + "::smallint";
      }
      case FilterField::kCreateTime: {
        const std::string p = Param(FormatUtcMicros(cmp.time));
        return std::string("create_time ") + SqlOperator(cmp.op) + " " + p + "::timestamptz";
      }
      case FilterField::kLabel:
        return Label(cmp);
    }
    return "FALSE";
  }

  std::string DisplayName(const FilterComparison& cmp) {
    if (HasWildcard(cmp))
      return "display_name LIKE " + Param(LikePattern(cmp.text)) + " ESCAPE '\\'";
    return std::string("display_name ") + SqlOperator(cmp.op) + " " + Param(cmp.text);
  }

  // Parameters are taken one statement at a time: the operands of '+' are unsequenced, and the
  // numbering must follow the order of params.
  std::string Label(const FilterComparison& cmp) {
    const std::string key = Param(cmp.label_key);
    if (cmp.op == FilterOp::kHas && cmp.text == "*") return "labels ? " + key;
    const std::string lhs = "labels->>" + key;
    if (HasWildcard(cmp)) {
      const std::string pattern = Param(LikePattern(cmp.text));
      return lhs + " LIKE " + pattern + " ESCAPE '\\'";
    }
    const std::string value = Param(cmp.text);
    // A job without the label has a NULL lhs; IS DISTINCT FROM makes "labels.k!=v" match it.
    if (cmp.op == FilterOp::kNe) return lhs + " IS DISTINCT FROM " + value;
    return lhs + " " + SqlOperator(cmp.op) + " " + value;
  }

  std::string Param(std::string value) {
    params_.push_back(std::move(value));
    return "$" + std::to_string(next_param_++);
  }

  int next_param_;
  std::vector<std::string>& params_;
};

}  // namespace

void AppendFilterSql(const FilterExpr& expr, int first_param, SqlFragment& out) {
  Compiler compiler(first_param, out.params);
  out.sql += compiler.Wrapped(expr);
}

}  // namespace trainyard
