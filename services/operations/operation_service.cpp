#include "services/operations/operation_service.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "services/jobs/job_service.h"

namespace trainyard {
namespace {

Status OperationNotFound(const OperationRef& ref) {
  return NotFound("Operation " + ref.operation_id + " not found.");
}

std::optional<int64_t> ParseNumericId(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

std::string NestedParent(const std::string& collection, const std::string& resource_id) {
  return collection.empty() ? "" : collection + "/" + resource_id;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

StatusOr<std::optional<bool>> ParseOperationFilter(const std::string& filter) {
  std::string text = Trim(filter);
  if (text.empty()) return std::optional<bool>();
  if (text == "done" || text == "done=true" || text == "done:true") return std::optional(true);
  if (text == "NOT done" || text == "-done" || text == "done=false" || text == "done:false") {
    return std::optional(false);
  }
  // "done = true", "done: false": the comparator with spaces around it.
  for (const char* op : {"=", ":"}) {
    auto at = text.find(op);
    if (at == std::string::npos || Trim(text.substr(0, at)) != "done") continue;
    std::string value = Trim(text.substr(at + 1));
    if (value == "true") return std::optional(true);
    if (value == "false") return std::optional(false);
  }
  return InvalidArgument("invalid filter \"" + filter +
                         "\": operations filter only on done (\"done=true\" or \"done=false\")")
      .WithViolation("filter", "only done=true and done=false are supported");
}

StatusOr<OperationService::Key> OperationService::Resolve(const OperationRef& ref) {
  std::optional<int64_t> id = ParseNumericId(ref.operation_id);
  if (!id) return OperationNotFound(ref);
  TY_RETURN_IF_ERROR(ValidateLocation(ref.parent.location));
  auto project = projects_.Resolve(ref.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    if (project.status().code() == Code::kNotFound) return OperationNotFound(ref);
    return project.status();
  }
  return Key{project->number, *id};
}

StatusOr<Operation> OperationService::Get(const OperationRef& ref) {
  TY_ASSIGN_OR_RETURN(Key key, Resolve(ref));
  auto op = operations_.Get(key.project_number, ref.parent.location, key.id);
  if (!op.ok()) {
    if (op.status().code() == Code::kNotFound) return OperationNotFound(ref);
    return op.status();
  }
  // A nested name must be the operation's own: another resource's operation is not found there.
  // The flat name serves every operation (gcloud reads PR operations only by it).
  if (!ref.collection.empty() && op->parent != NestedParent(ref.collection, ref.resource_id)) {
    return OperationNotFound(ref);
  }
  return op;
}

StatusOr<ListOperationsResult> OperationService::List(const ListOperationsRequest& request) {
  TY_RETURN_IF_ERROR(ValidateLocation(request.parent.location));
  TY_ASSIGN_OR_RETURN(std::optional<bool> done, ParseOperationFilter(request.filter));
  ListOperationsResult result;
  auto project = projects_.Resolve(request.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    if (project.status().code() == Code::kNotFound) return result;  // nothing there yet
    return project.status();
  }
  ListOperationsQuery query;
  query.project_number = project->number;
  query.location = request.parent.location;
  if (!request.collection.empty()) {
    query.parent = NestedParent(request.collection, request.resource_id);
  }
  query.done = done;
  query.limit = request.page_size;
  query.after = request.after;
  TY_ASSIGN_OR_RETURN(std::vector<Operation> rows, operations_.List(query));
  if (static_cast<int>(rows.size()) > request.page_size) {
    rows.resize(request.page_size);
    result.next = JobCursor{rows.back().create_time, rows.back().id};
  }
  result.operations = std::move(rows);
  return result;
}

Status OperationService::Cancel(const OperationRef& ref) {
  TY_ASSIGN_OR_RETURN(Operation op, Get(ref));
  if (op.done) return Status::Ok();  // nothing left to cancel; Google's LROs answer OK too
  Status s = operations_.RequestCancel(op.project_number, op.location, op.id, clock_.Now());
  if (s.code() == Code::kNotFound) return OperationNotFound(ref);
  return s;
}

Status OperationService::Delete(const OperationRef& ref) {
  TY_ASSIGN_OR_RETURN(Operation op, Get(ref));
  Status s = operations_.Delete(op.project_number, op.location, op.id);
  if (s.code() == Code::kNotFound) return OperationNotFound(ref);
  return s;
}

StatusOr<Operation> OperationService::Wait(const OperationRef& ref,
                                           std::chrono::milliseconds timeout) {
  using Steady = std::chrono::steady_clock;
  timeout = std::clamp<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(0),
                                                  kMaxOperationWait);
  const auto deadline = Steady::now() + timeout;
  TY_ASSIGN_OR_RETURN(Operation first, Get(ref));
  if (first.done || timeout.count() == 0) return first;
  if (waiting_.fetch_add(1, std::memory_order_relaxed) >= max_waiters_) {
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    return first;  // every wait slot is taken: best effort, as Vertex's WaitOperation
  }
  struct Slot {
    std::atomic<int>& waiting;
    ~Slot() { waiting.fetch_sub(1, std::memory_order_relaxed); }
  } slot{waiting_};
  // Polls the row: short at first (most operations finish within a scheduler pass or two), then
  // every 250 ms, so a minute of waiting costs 240 primary-key reads.
  std::chrono::milliseconds interval(20);
  for (;;) {
    const auto now = Steady::now();
    if (now >= deadline) return Get(ref);
    std::this_thread::sleep_for(std::min<Steady::duration>(interval, deadline - now));
    interval = std::min(interval * 2, std::chrono::milliseconds(250));
    TY_ASSIGN_OR_RETURN(Operation op, Get(ref));
    if (op.done) return op;
  }
}

}  // namespace trainyard
