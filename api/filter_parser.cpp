#include "api/filter_parser.h"

#include <array>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "api/wire/enums.h"

namespace trainyard {
namespace {

// Parentheses and negations may nest this deep. The parser recurses once per level, so the bound
// keeps hostile input ("((((…" or "NOT NOT NOT …") from exhausting the stack.
constexpr int kMaxDepth = 64;
// Error messages echo the filter; a cap keeps a megabyte of junk out of logs and responses.
constexpr size_t kMaxEchoBytes = 120;

constexpr std::string_view kSupportedFields = "display_name, state, create_time, labels.<key>";

// ---------------------------------------------------------------------------------------------
// Error messages

// Length of the valid UTF-8 sequence starting at s[i], or 0. Messages end up in JSON, whose encoder
// rejects invalid UTF-8, so echoed user text must not carry stray bytes.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) len = 2;
  if (lead >= 0xE0 && lead <= 0xEF) len = 3;
  if (lead >= 0xF0 && lead <= 0xF4) len = 4;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

// User text made safe to embed in a message: truncated, control characters and invalid UTF-8
// replaced by '?'.
std::string Printable(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size() && i < kMaxEchoBytes) {
    const size_t len = Utf8SequenceLength(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (len == 0 || c < 0x20 || c == 0x7F) {
      out += '?';
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string Quote(std::string_view s) { return "\"" + Printable(s) + "\""; }

// "invalid filter "<text>": <detail> at position <pos><suffix>" — the position comes right after
// the problem it locates; hints such as the list of supported fields follow it.
Status FilterError(std::string_view text, std::string_view detail, size_t pos,
                   std::string_view suffix = {}) {
  std::string msg = "invalid filter " + Quote(text) + ": ";
  msg.append(detail);
  msg += " at position " + std::to_string(pos);
  msg.append(suffix);
  Status status = InvalidArgument(msg);
  status.WithViolation("filter", std::move(msg));  // so clients see which parameter it was
  return status;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

enum class TokenKind {
  kEnd,
  kLParen,
  kRParen,
  kMinus,
  kComparator,
  kString,
  kWord,
  kAnd,
  kOr,
  kNot
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // the spelling; for kString the unescaped contents
  size_t pos = 0;
};

std::string Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of filter";
    case TokenKind::kString:
      return "string " + Quote(token.text);
    default:
      return Quote(token.text);
  }
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool StartsComparator(char c) { return c == '=' || c == '!' || c == '<' || c == '>' || c == ':'; }

// Where the lexer stands decides what a bare word may contain: a field name stops at ':' (the has
// operator), a value keeps it so that unquoted timestamps like 2024-05-01T10:00:00Z work.
enum class LexMode { kTerm, kValue };

bool EndsWord(char c, LexMode mode) {
  if (IsSpace(c) || c == '(' || c == ')' || c == '"') return true;
  if (c == ':') return mode == LexMode::kTerm;
  return StartsComparator(c);
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  StatusOr<Token> Next(LexMode mode) {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
    if (pos_ == text_.size()) return Token{TokenKind::kEnd, "", pos_};
    const char c = text_[pos_];
    if (c == '(') return Single(TokenKind::kLParen);
    if (c == ')') return Single(TokenKind::kRParen);
    if (c == '"') return LexString();
    if (StartsComparator(c)) return LexComparator();
    if (c == '-' && mode == LexMode::kTerm) return LexMinus();
    return LexWord(mode);
  }

 private:
  Token Single(TokenKind kind) {
    Token token{kind, std::string(1, text_[pos_]), pos_};
    ++pos_;
    return token;
  }

  StatusOr<Token> LexComparator() {
    const size_t start = pos_;
    const char c = text_[pos_];
    const bool has_eq = pos_ + 1 < text_.size() && text_[pos_ + 1] == '=';
    if (has_eq && (c == '!' || c == '<' || c == '>')) {
      pos_ += 2;
      return Token{TokenKind::kComparator, std::string(text_.substr(start, 2)), start};
    }
    if (c == '!') return FilterError(text_, "unexpected \"!\" (did you mean \"!=\"?)", start);
    return Single(TokenKind::kComparator);
  }

  // AIP-160 writes negation as "-term" with nothing in between; "- x" is more likely a typo.
  StatusOr<Token> LexMinus() {
    if (pos_ + 1 == text_.size() || IsSpace(text_[pos_ + 1])) {
      return FilterError(text_, "\"-\" must be directly followed by what it negates", pos_);
    }
    return Single(TokenKind::kMinus);
  }

  StatusOr<Token> LexString() {
    const size_t start = pos_++;
    std::string value;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return Token{TokenKind::kString, std::move(value), start};
      }
      if (c == '\\' && pos_ + 1 < text_.size()) {
        const char escaped = text_[pos_ + 1];
        if (escaped != '"' && escaped != '\\') {
          return FilterError(text_,
                             "unsupported escape " + Quote(text_.substr(pos_, 2)) +
                                 " (only \\\" and \\\\ are allowed)",
                             pos_);
        }
        value += escaped;
        pos_ += 2;
        continue;
      }
      value += c;
      ++pos_;
    }
    return FilterError(text_, "unterminated string", start);
  }

  Token LexWord(LexMode mode) {
    const size_t start = pos_;
    while (pos_ < text_.size() && !EndsWord(text_[pos_], mode)) ++pos_;
    Token token{TokenKind::kWord, std::string(text_.substr(start, pos_ - start)), start};
    // Keywords are upper case in AIP-160; "and" is an (unknown) field name, not a conjunction.
    if (mode == LexMode::kTerm) {
      if (token.text == "AND") token.kind = TokenKind::kAnd;
      if (token.text == "OR") token.kind = TokenKind::kOr;
      if (token.text == "NOT") token.kind = TokenKind::kNot;
    }
    return token;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Values

// Reads exactly `count` decimal digits at s[i] into *out and advances i.
bool ReadDigits(std::string_view s, size_t& i, size_t count, int* out) {
  if (i + count > s.size()) return false;
  int value = 0;
  for (size_t k = 0; k < count; ++k) {
    const char c = s[i + k];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = value;
  i += count;
  return true;
}

bool ReadChar(std::string_view s, size_t& i, char expected) {
  if (i >= s.size() || s[i] != expected) return false;
  ++i;
  return true;
}

// ".F{1,9}" after the seconds, as microseconds. Digits past the sixth are dropped: stored times
// have microsecond precision.
bool ReadFraction(std::string_view s, size_t& i, int* micros) {
  *micros = 0;
  if (i >= s.size() || s[i] != '.') return true;
  ++i;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && digits < 9) {
    if (digits < 6) *micros = *micros * 10 + (s[i] - '0');
    ++digits;
    ++i;
  }
  for (size_t k = digits; k < 6; ++k) *micros *= 10;
  return digits > 0;
}

// "Z" or "±hh:mm", as the offset to subtract from local time to get UTC.
bool ReadOffset(std::string_view s, size_t& i, std::chrono::minutes* offset) {
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
    *offset = std::chrono::minutes(0);
    return true;
  }
  if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
  const int sign = s[i++] == '-' ? -1 : 1;
  int hours = 0;
  int minutes = 0;
  if (!ReadDigits(s, i, 2, &hours) || !ReadChar(s, i, ':') || !ReadDigits(s, i, 2, &minutes)) {
    return false;
  }
  if (hours > 23 || minutes > 59) return false;
  *offset = std::chrono::minutes(sign * (hours * 60 + minutes));
  return true;
}

// RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.F{1,9}](Z|±hh:mm). The result must land in years
// 0001-9999 UTC, the range PostgreSQL and the wire format agree on.
std::optional<Timestamp> ParseRfc3339(std::string_view s) {
  namespace chr = std::chrono;
  size_t i = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
  const bool date_ok = ReadDigits(s, i, 4, &year) && ReadChar(s, i, '-') &&
                       ReadDigits(s, i, 2, &month) && ReadChar(s, i, '-') &&
                       ReadDigits(s, i, 2, &day);
  if (!date_ok || i >= s.size() || (s[i] != 'T' && s[i] != 't')) return std::nullopt;
  ++i;
  chr::minutes offset{0};
  const bool time_ok = ReadDigits(s, i, 2, &hour) && ReadChar(s, i, ':') &&
                       ReadDigits(s, i, 2, &minute) && ReadChar(s, i, ':') &&
                       ReadDigits(s, i, 2, &second) && ReadFraction(s, i, &micros) &&
                       ReadOffset(s, i, &offset);
  if (!time_ok || i != s.size()) return std::nullopt;
  const chr::year_month_day date{chr::year(year), chr::month(static_cast<unsigned>(month)),
                                 chr::day(static_cast<unsigned>(day))};
  if (!date.ok() || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  const Timestamp t = chr::sys_days(date) + chr::hours(hour) + chr::minutes(minute) +
                      chr::seconds(second) + chr::microseconds(micros) - offset;
  const chr::year utc_year = chr::year_month_day(chr::floor<chr::days>(t)).year();
  if (utc_year < chr::year(1) || utc_year > chr::year(9999)) return std::nullopt;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Parser

struct FieldRef {
  FilterField field = FilterField::kDisplayName;
  std::string label_key;
};

std::optional<FilterOp> ParseOp(std::string_view spelling) {
  if (spelling == "=") return FilterOp::kEq;
  if (spelling == "!=") return FilterOp::kNe;
  if (spelling == "<") return FilterOp::kLt;
  if (spelling == "<=") return FilterOp::kLe;
  if (spelling == ">") return FilterOp::kGt;
  if (spelling == ">=") return FilterOp::kGe;
  if (spelling == ":") return FilterOp::kHas;
  return std::nullopt;
}

std::string_view SupportedOps(FilterField field) {
  switch (field) {
    case FilterField::kDisplayName:
    case FilterField::kLabel:
      return "=, !=, :";
    case FilterField::kState:
      return "=, !=";
    case FilterField::kCreateTime:
      return "=, !=, <, <=, >, >=";
  }
  return "";
}

bool IsSupported(FilterField field, FilterOp op) {
  switch (field) {
    case FilterField::kDisplayName:
    case FilterField::kLabel:
      return op == FilterOp::kEq || op == FilterOp::kNe || op == FilterOp::kHas;
    case FilterField::kState:
      return op == FilterOp::kEq || op == FilterOp::kNe;
    case FilterField::kCreateTime:
      return op != FilterOp::kHas;
  }
  return false;
}

FilterExpr Combine(FilterExpr::Kind kind, std::vector<FilterExpr> children) {
  if (children.size() == 1) return std::move(children.front());
  FilterExpr node;
  node.kind = kind;
  node.children = std::move(children);
  return node;
}

FilterExpr Negate(FilterExpr child) {
  FilterExpr node;
  node.kind = FilterExpr::Kind::kNot;
  node.children.push_back(std::move(child));
  return node;
}

// Recursive descent over AIP-160's grammar, where OR binds tighter than AND:
//   expression := factor ((AND)? factor)*     juxtaposition is an implicit AND
//   factor     := term (OR term)*
//   term       := (NOT | '-') term | simple
//   simple     := '(' expression ')' | field comparator value
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  StatusOr<FilterExpr> Parse() {
    TY_RETURN_IF_ERROR(Advance());
    TY_ASSIGN_OR_RETURN(FilterExpr expr, ParseExpression());
    if (token_.kind != TokenKind::kEnd) return Unexpected();
    return expr;
  }

 private:
  Status Advance() {
    TY_ASSIGN_OR_RETURN(token_, lexer_.Next(LexMode::kTerm));
    return Status::Ok();
  }

  Status Error(std::string_view detail, size_t pos, std::string_view suffix = {}) const {
    return FilterError(text_, detail, pos, suffix);
  }

  Status Unexpected() const { return Error("unexpected " + Describe(token_), token_.pos); }

  Status EnterNesting(size_t pos) {
    if (++depth_ > kMaxDepth) {
      return Error("parentheses and negations nest deeper than " + std::to_string(kMaxDepth), pos);
    }
    return Status::Ok();
  }

  bool AtTermStart() const {
    switch (token_.kind) {
      case TokenKind::kWord:
      case TokenKind::kString:
      case TokenKind::kLParen:
      case TokenKind::kMinus:
      case TokenKind::kNot:
        return true;
      default:
        return false;
    }
  }

  StatusOr<FilterExpr> ParseExpression() {
    std::vector<FilterExpr> factors;
    TY_ASSIGN_OR_RETURN(FilterExpr first, ParseFactor());
    factors.push_back(std::move(first));
    while (token_.kind == TokenKind::kAnd || AtTermStart()) {
      if (token_.kind == TokenKind::kAnd) {
        TY_RETURN_IF_ERROR(Advance());
      }
      TY_ASSIGN_OR_RETURN(FilterExpr factor, ParseFactor());
      factors.push_back(std::move(factor));
    }
    return Combine(FilterExpr::Kind::kAnd, std::move(factors));
  }

  StatusOr<FilterExpr> ParseFactor() {
    std::vector<FilterExpr> terms;
    TY_ASSIGN_OR_RETURN(FilterExpr first, ParseTerm());
    terms.push_back(std::move(first));
    while (token_.kind == TokenKind::kOr) {
      TY_RETURN_IF_ERROR(Advance());
      TY_ASSIGN_OR_RETURN(FilterExpr term, ParseTerm());
      terms.push_back(std::move(term));
    }
    return Combine(FilterExpr::Kind::kOr, std::move(terms));
  }

  StatusOr<FilterExpr> ParseTerm() {
    if (token_.kind != TokenKind::kNot && token_.kind != TokenKind::kMinus) return ParseSimple();
    TY_RETURN_IF_ERROR(EnterNesting(token_.pos));
    TY_RETURN_IF_ERROR(Advance());
    TY_ASSIGN_OR_RETURN(FilterExpr child, ParseTerm());
    --depth_;
    return Negate(std::move(child));
  }

  StatusOr<FilterExpr> ParseSimple() {
    if (token_.kind == TokenKind::kLParen) return ParseParenthesized();
    if (token_.kind == TokenKind::kWord) return ParseRestriction();
    if (token_.kind == TokenKind::kString) {
      return Error("expected a field name, found " + Describe(token_), token_.pos);
    }
    return Unexpected();
  }

  StatusOr<FilterExpr> ParseParenthesized() {
    const size_t open = token_.pos;
    TY_RETURN_IF_ERROR(EnterNesting(open));
    TY_RETURN_IF_ERROR(Advance());
    TY_ASSIGN_OR_RETURN(FilterExpr inner, ParseExpression());
    if (token_.kind != TokenKind::kRParen) {
      return Error("expected \")\" to close the \"(\" at position " + std::to_string(open) +
                       ", found " + Describe(token_),
                   token_.pos);
    }
    --depth_;
    TY_RETURN_IF_ERROR(Advance());
    return inner;
  }

  StatusOr<FieldRef> ResolveField(const Token& name) const {
    const std::string& s = name.text;
    if (s == "display_name" || s == "displayName") return FieldRef{FilterField::kDisplayName, ""};
    if (s == "state") return FieldRef{FilterField::kState, ""};
    if (s == "create_time" || s == "createTime") return FieldRef{FilterField::kCreateTime, ""};
    constexpr std::string_view kLabelsPrefix = "labels.";
    if (s.starts_with(kLabelsPrefix)) {
      if (s.size() == kLabelsPrefix.size()) {
        return Error("missing label key after \"labels.\"", name.pos + s.size());
      }
      return FieldRef{FilterField::kLabel, s.substr(kLabelsPrefix.size())};
    }
    return Error("unknown field " + Quote(s), name.pos,
                 std::string("; supported: ").append(kSupportedFields));
  }

  StatusOr<FilterOp> ReadOperator(const Token& name, FilterField field) {
    TY_RETURN_IF_ERROR(Advance());
    const std::optional<FilterOp> op =
        token_.kind == TokenKind::kComparator ? ParseOp(token_.text) : std::nullopt;
    if (!op) {
      return Error("expected an operator (=, !=, <, <=, >, >=, :) after " + Quote(name.text) +
                       ", found " + Describe(token_),
                   token_.pos);
    }
    if (!IsSupported(field, *op)) {
      return Error("operator " + Quote(token_.text) + " is not supported on " + name.text,
                   token_.pos, std::string("; supported: ").append(SupportedOps(field)));
    }
    return *op;
  }

  StatusOr<Token> ReadValue() {
    const std::string op = token_.text;
    TY_ASSIGN_OR_RETURN(Token value, lexer_.Next(LexMode::kValue));
    if (value.kind != TokenKind::kString && value.kind != TokenKind::kWord) {
      return Error("expected a value after " + Quote(op) + ", found " + Describe(value), value.pos);
    }
    return value;
  }

  StatusOr<FilterExpr> ParseRestriction() {
    const Token name = token_;
    TY_ASSIGN_OR_RETURN(FieldRef field, ResolveField(name));
    TY_ASSIGN_OR_RETURN(FilterOp op, ReadOperator(name, field.field));
    TY_ASSIGN_OR_RETURN(Token value, ReadValue());
    FilterExpr node;
    node.comparison.field = field.field;
    node.comparison.label_key = std::move(field.label_key);
    node.comparison.op = op;
    TY_RETURN_IF_ERROR(SetValue(value, node.comparison));
    TY_RETURN_IF_ERROR(Advance());
    return node;
  }

  // Fills the typed value of `cmp` from the value token. A ':' pattern without '*' is plain
  // equality, so it is stored as kEq and consumers only ever see kHas with a real wildcard (or the
  // "labels.k:*" presence test).
  Status SetValue(const Token& value, FilterComparison& cmp) const {
    switch (cmp.field) {
      case FilterField::kState: {
        const std::optional<JobState> state = ParseJobStateName(value.text);
        if (!state) {
          return Error("unknown state " + Quote(value.text), value.pos,
                       "; expected one of " + JobStateTable().ValidNames());
        }
        cmp.state = *state;
        return Status::Ok();
      }
      case FilterField::kCreateTime: {
        const std::optional<Timestamp> time = ParseRfc3339(value.text);
        if (!time) {
          return Error("invalid timestamp " + Quote(value.text), value.pos,
                       "; expected RFC 3339 such as 2024-05-01T12:00:00Z or "
                       "2024-05-01T14:00:00.5+02:00");
        }
        cmp.time = *time;
        return Status::Ok();
      }
      case FilterField::kDisplayName:
      case FilterField::kLabel:
        cmp.text = value.text;
        if (cmp.op == FilterOp::kHas && cmp.text.find('*') == std::string::npos) {
          cmp.op = FilterOp::kEq;
        }
        return Status::Ok();
    }
    return Status::Ok();
  }

  std::string_view text_;
  Lexer lexer_;
  Token token_;
  int depth_ = 0;
};

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::optional<FilterExpr>> ParseJobFilter(std::string_view text) {
  if (IsBlank(text)) return std::optional<FilterExpr>();
  Parser parser(text);
  TY_ASSIGN_OR_RETURN(FilterExpr expr, parser.Parse());
  return std::optional<FilterExpr>(std::move(expr));
}

}  // namespace trainyard
