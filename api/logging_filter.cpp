#include "api/logging_filter.h"

#include <cctype>
#include <optional>

#include "api/wire/json_reader.h"

namespace trainyard::api {
namespace {

using Node = LoggingFilterNode;
using Kind = LoggingFilterNode::Kind;

constexpr int kMaxDepth = 32;  // parentheses; gcloud sends two levels

Status FilterError(const std::string& what) { return InvalidField("filter", what); }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  StatusOr<Node> Parse() {
    SkipSpace();
    if (pos_ == text_.size()) return FilterError("is empty; it must name resource.labels.job_id");
    TY_ASSIGN_OR_RETURN(Node root, Conjunction(0));
    SkipSpace();
    if (pos_ != text_.size()) return Unexpected();
    return root;
  }

 private:
  // disj (["AND"] disj)*
  StatusOr<Node> Conjunction(int depth) {
    TY_ASSIGN_OR_RETURN(Node first, Disjunction(depth));
    Node all{Kind::kAnd, "", "", "", {}};
    all.children.push_back(std::move(first));
    for (;;) {
      SkipSpace();
      if (pos_ == text_.size() || Peek() == ')') break;
      Keyword("AND");  // optional: juxtaposition is AND as well
      TY_ASSIGN_OR_RETURN(Node next, Disjunction(depth));
      all.children.push_back(std::move(next));
    }
    if (all.children.size() == 1) return std::move(all.children[0]);
    return all;
  }

  // primary ("OR" primary)*
  StatusOr<Node> Disjunction(int depth) {
    TY_ASSIGN_OR_RETURN(Node first, Primary(depth));
    Node any{Kind::kOr, "", "", "", {}};
    any.children.push_back(std::move(first));
    while (Keyword("OR")) {
      TY_ASSIGN_OR_RETURN(Node next, Primary(depth));
      any.children.push_back(std::move(next));
    }
    if (any.children.size() == 1) return std::move(any.children[0]);
    return any;
  }

  StatusOr<Node> Primary(int depth) {
    SkipSpace();
    if (pos_ == text_.size()) return FilterError("ends early at position " + Pos());
    if (Peek() == '(') {
      if (depth >= kMaxDepth) return FilterError("nests parentheses too deeply");
      ++pos_;
      TY_ASSIGN_OR_RETURN(Node inner, Conjunction(depth + 1));
      SkipSpace();
      if (pos_ == text_.size() || Peek() != ')') return FilterError("misses a ')' at " + Pos());
      ++pos_;
      return inner;
    }
    if (Keyword("NOT") || Peek() == '-') {
      return FilterError("NOT is not supported (position " + Pos() + ")");
    }
    return Comparison();
  }

  StatusOr<Node> Comparison() {
    size_t start = pos_;
    while (pos_ < text_.size() && IsFieldChar(Peek())) ++pos_;
    if (pos_ == start) return Unexpected();
    Node node{Kind::kCompare, std::string(text_.substr(start, pos_ - start)), "", "", {}};
    SkipSpace();
    for (const char* op : {">=", "<=", "!=", "=~", "!~", "=", ">", "<", ":"}) {
      std::string_view o(op);
      if (text_.substr(pos_, o.size()) == o) {
        node.op = o;
        break;
      }
    }
    if (node.op.empty()) return FilterError("expects an operator after " + node.field);
    if (node.op == "!=" || node.op == "=~" || node.op == "!~" || node.op == ":") {
      return FilterError("operator " + node.op + " is not supported (position " + Pos() +
                         "); use =, >, >=, < or <=");
    }
    pos_ += node.op.size();
    SkipSpace();
    TY_ASSIGN_OR_RETURN(node.value, Value());
    return node;
  }

  StatusOr<std::string> Value() {
    if (pos_ < text_.size() && Peek() == '"') {
      std::string out;
      for (++pos_; pos_ < text_.size(); ++pos_) {
        char c = Peek();
        if (c == '"') {
          ++pos_;
          return out;
        }
        if (c == '\\' && pos_ + 1 < text_.size()) c = text_[++pos_];
        out.push_back(c);
      }
      return FilterError("has an unterminated string");
    }
    size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(Peek())) &&
           Peek() != '(' && Peek() != ')' && Peek() != '"') {
      ++pos_;
    }
    if (pos_ == start) return FilterError("expects a value at position " + Pos());
    return std::string(text_.substr(start, pos_ - start));
  }

  // Consumes `word` when it stands alone at the cursor (after spaces).
  bool Keyword(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    size_t end = pos_ + word.size();
    if (end < text_.size() && !std::isspace(static_cast<unsigned char>(text_[end])) &&
        text_[end] != '(') {
      return false;
    }
    pos_ = end;
    return true;
  }

  static bool IsFieldChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/';
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  char Peek() const { return text_[pos_]; }
  std::string Pos() const { return std::to_string(pos_); }
  Status Unexpected() const {
    return FilterError("cannot be parsed at position " + Pos() + " (\"" +
                       std::string(text_.substr(pos_, 20)) + "\")");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

StatusOr<Timestamp> FilterTime(const Node& n) {
  auto t = ParseTimestamp(n.value);
  if (!t.ok()) return FilterError(n.field + n.op + "\"" + n.value + "\": " + t.status().message());
  return *t;
}

bool IsCompare(const Node& n, std::string_view field, std::string_view op) {
  return n.kind == Kind::kCompare && n.field == field && n.op == op;
}

// (timestamp="T" AND insertId>"I") OR timestamp>"T", operands in either order.
std::optional<std::pair<const Node*, const Node*>> PositionBound(const Node& n) {
  if (n.kind != Kind::kOr || n.children.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Node& pair = n.children[i];
    const Node& later = n.children[1 - i];
    if (pair.kind != Kind::kAnd || pair.children.size() != 2 || !IsCompare(later, "timestamp", ">"))
      continue;
    for (int k = 0; k < 2; ++k) {
      const Node& at = pair.children[k];
      const Node& id = pair.children[1 - k];
      if (IsCompare(at, "timestamp", "=") && IsCompare(id, "insertId", ">") &&
          at.value == later.value) {
        return std::make_pair(&at, &id);
      }
    }
  }
  return std::nullopt;
}

void RaiseFrom(JobLogFilter& f, Timestamp t) {
  if (!f.from || t > *f.from) f.from = t;
}

// Two equalities on one label: the second must agree or nothing matches.
void SetLabel(JobLogFilter& f, std::optional<std::string>& slot, const std::string& value) {
  if (slot && *slot != value) f.matches_nothing = true;
  slot = value;
}

Status AddConjunct(const Node& n, JobLogFilter& f, std::optional<std::string>& job_id) {
  constexpr auto kMicro = std::chrono::microseconds(1);
  if (n.kind == Kind::kAnd) {
    for (const Node& c : n.children) TY_RETURN_IF_ERROR(AddConjunct(c, f, job_id));
    return Status::Ok();
  }
  if (n.kind == Kind::kOr) {
    auto bound = PositionBound(n);
    if (!bound) {
      return FilterError(
          "OR is supported only as ((timestamp=\"T\" AND insertId>\"I\") OR timestamp>\"T\")");
    }
    TY_ASSIGN_OR_RETURN(Timestamp t, FilterTime(*bound->first));
    std::optional<InsertId> id = ParseInsertId(bound->second->value);
    if (!id) {
      return FilterError("insertId \"" + bound->second->value +
                         "\" is not one this server returned");
    }
    // Our insertIds carry their entry's time, so for entries at T "insertId > I" is "after I" when
    // I is from T, every entry when I is older, none when I is newer.
    if (id->time == t) {
      if (!f.after || *id > *f.after) f.after = id;
    } else {
      RaiseFrom(f, id->time < t ? t : t + kMicro);
    }
    return Status::Ok();
  }
  if (n.field == "resource.type" && n.op == "=") {
    if (n.value != "ml_job") f.matches_nothing = true;
    return Status::Ok();
  }
  if (n.field == "resource.labels.job_id" && n.op == "=") {
    SetLabel(f, job_id, n.value);
    return Status::Ok();
  }
  if ((n.field == "resource.labels.task_name" || n.field == "labels.task_name") && n.op == "=") {
    SetLabel(f, f.task_name, n.value);
    return Status::Ok();
  }
  if (n.field == "timestamp" && n.op != "=") {
    TY_ASSIGN_OR_RETURN(Timestamp t, FilterTime(n));
    if (n.op == ">=" || n.op == ">") {
      RaiseFrom(f, n.op == ">" ? t + kMicro : t);
    } else {
      Timestamp until = n.op == "<=" ? t + kMicro : t;
      if (!f.until_wall || until < *f.until_wall) f.until_wall = until;
    }
    return Status::Ok();
  }
  return FilterError("cannot filter on " + n.field + n.op + "\"" + n.value +
                     "\"; supported: resource.type=, resource.labels.job_id=, "
                     "resource.labels.task_name= (or labels.task_name=), timestamp >, >=, <, <= "
                     "and the insertId bound gcloud sends");
}

}  // namespace

StatusOr<LoggingFilterNode> ParseLoggingFilter(std::string_view text) {
  return Parser(text).Parse();
}

StatusOr<JobLogFilter> ToJobLogFilter(const LoggingFilterNode& root) {
  JobLogFilter f;
  std::optional<std::string> job_id;
  TY_RETURN_IF_ERROR(AddConjunct(root, f, job_id));
  if (!job_id) {
    return FilterError(
        "must name one job: resource.labels.job_id=\"<id>\" (this server keeps "
        "custom job logs only)");
  }
  f.job_id = *job_id;
  return f;
}

}  // namespace trainyard::api
