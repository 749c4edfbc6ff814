#pragma once
// Status and StatusOr: the error currency of every layer. Codes are google.rpc codes, so the edge
// can render them as the Vertex error body without translation tables scattered around.
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trainyard {

enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Canonical name as google.rpc.Code spells it ("NOT_FOUND").
const char* CodeName(Code code);

// One offending field, rendered as a google.rpc.BadRequest field violation.
struct FieldViolation {
  std::string field;        // camelCase path, e.g. jobSpec.workerPoolSpecs[1].replicaCount
  std::string description;  // what is wrong and what is allowed
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<FieldViolation>& violations() const { return violations_; }

  Status& WithViolation(std::string field, std::string description) {
    violations_.push_back({std::move(field), std::move(description)});
    return *this;
  }

  // Other google.rpc.Status details, each the JSON text of an Any with its @type (e.g. the
  // ErrorInfo with the request id that the SDK reads from a server's error body).
  const std::vector<std::string>& details() const { return details_; }
  Status& WithDetail(std::string any_json) {
    details_.push_back(std::move(any_json));
    return *this;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<FieldViolation> violations_;
  std::vector<std::string> details_;
};

inline Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
inline Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
inline Status FailedPrecondition(std::string msg) {
  return {Code::kFailedPrecondition, std::move(msg)};
}
inline Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
inline Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
inline Status Aborted(std::string msg) { return {Code::kAborted, std::move(msg)}; }
inline Status AlreadyExists(std::string msg) { return {Code::kAlreadyExists, std::move(msg)}; }
inline Status Unimplemented(std::string msg) { return {Code::kUnimplemented, std::move(msg)}; }

// A field-level INVALID_ARGUMENT: the message names the path, the violation carries it for clients.
inline Status InvalidField(const std::string& path, const std::string& description) {
  Status s(Code::kInvalidArgument, path + ": " + description);
  s.WithViolation(path, description);
  return s;
}

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace trainyard

#define TY_RETURN_IF_ERROR(expr)      \
  do {                                \
    ::trainyard::Status _st = (expr); \
    if (!_st.ok()) return _st;        \
  } while (0)

#define TY_CONCAT_INNER(a, b) a##b
#define TY_CONCAT(a, b) TY_CONCAT_INNER(a, b)
#define TY_ASSIGN_OR_RETURN(lhs, expr) \
  TY_ASSIGN_OR_RETURN_IMPL(TY_CONCAT(_sor_, __LINE__), lhs, expr)
#define TY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
