#include "storage/job_change_listener.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <charconv>
#include <random>

#include "services/log.h"
#include "services/thread_name.h"

namespace trainyard::storage {
namespace {

constexpr const char* kSyncTag = "sync:";
constexpr std::chrono::milliseconds kFirstRetry{100};
constexpr std::chrono::milliseconds kProbeAfter{1000};
constexpr std::chrono::milliseconds kProbeTimeout{2000};
constexpr std::chrono::milliseconds kLastRetry{2000};

}  // namespace

JobChangeListener::JobChangeListener(std::string conninfo, JobRecordCache& cache)
    : conninfo_(std::move(conninfo)),
      cache_(cache),
      // Random, not this object's address: listeners of other processes hear these too.
      sync_prefix_(std::string(kSyncTag) + std::to_string(std::random_device{}()) +
                   std::to_string(std::random_device{}()) + ":") {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { Run(); });
}

JobChangeListener::~JobChangeListener() {
  stop_.store(true);
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof one) < 0) {
    // The poll also wakes every 100 ms to look at stop_.
  }
  thread_.join();
  close(wake_fd_);
  cache_.SetLive(false);
}

void JobChangeListener::Run() {
  NameThisThread("ty-changes");
  std::chrono::milliseconds retry = kFirstRetry;
  while (!stop_.load()) {
    auto started = std::chrono::steady_clock::now();
    if (!ListenOnce()) return;
    // Broke: serve nothing until listening again, and retry with backoff (reset after a good run).
    if (std::chrono::steady_clock::now() - started > kLastRetry) retry = kFirstRetry;
    pollfd wake{wake_fd_, POLLIN, 0};
    poll(&wake, 1, static_cast<int>(retry.count()));
    retry = std::min(retry * 2, kLastRetry);
  }
}

bool JobChangeListener::ListenOnce() {
  pg::SessionOptions session;
  session.application_name = kApplicationName;
  auto conn = pg::Connection::Connect(conninfo_, session);
  if (!conn.ok()) {
    LogJson(LogLevel::kWarn, "job_cache_listener_down", {{"error", conn.status().message()}});
    return !stop_.load();
  }
  auto listening = (*conn)->ExecScript(std::string("LISTEN ") + kChannel);
  if (!listening.ok()) {
    LogJson(LogLevel::kWarn, "job_cache_listener_down", {{"error", listening.status().message()}});
    return !stop_.load();
  }
  // Listening from here on: anything committed from now is heard, anything before is not kept.
  cache_.SetLive(true);
  PGconn* raw = (*conn)->raw();
  // A silent connection may be a dead one (a partition, a hung server): after kProbeAfter without
  // a byte, ask the server something; no answer within kProbeTimeout and the feed is down.
  auto last_heard = std::chrono::steady_clock::now();
  bool probing = false;
  auto probe_sent = last_heard;
  const char* down = nullptr;
  while (!stop_.load()) {
    pollfd fds[2] = {{PQsocket(raw), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, 100) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    auto now = std::chrono::steady_clock::now();
    if (fds[0].revents == 0) {
      if (probing && now - probe_sent > kProbeTimeout) {
        down = "the database did not answer the feed's probe";
        break;
      }
      if (!probing && now - last_heard > kProbeAfter) {
        if (PQsendQuery(raw, "SELECT 1") == 0) break;
        probing = true;
        probe_sent = now;
      }
      continue;
    }
    if (PQconsumeInput(raw) == 0) break;
    last_heard = now;
    while (PGnotify* note = PQnotifies(raw)) {
      Deliver(note->extra);
      PQfreemem(note);
    }
    // The probe's answer: read it whole (the result, then the end of the query).
    while (probing && PQisBusy(raw) == 0) {
      PGresult* result = PQgetResult(raw);
      if (result == nullptr) {
        probing = false;
        break;
      }
      PQclear(result);
    }
  }
  cache_.SetLive(false);
  if (stop_.load()) return false;
  LogJson(LogLevel::kWarn, "job_cache_listener_down",
          {{"error", down != nullptr ? down : PQerrorMessage(raw)}});
  return true;
}

void JobChangeListener::Deliver(const std::string& payload) {
  if (payload.rfind(kSyncTag, 0) == 0) {
    // Ours ("sync:<listener>:<n>") tells Sync that everything committed before it was heard;
    // another listener's (any process's) says nothing here.
    if (payload.rfind(sync_prefix_, 0) != 0) return;
    uint64_t n = std::strtoull(payload.c_str() + sync_prefix_.size(), nullptr, 10);
    std::lock_guard lock(mu_);
    seen_sync_ = std::max(seen_sync_, n);
    synced_.notify_all();
    return;
  }
  const char* p = payload.data();
  const char* end = p + payload.size();
  while (p < end) {
    int64_t id = 0;
    auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc()) {
      // Not ours to read: drop everything rather than keep what it may have meant to change.
      cache_.InvalidateAll();
      return;
    }
    cache_.Invalidate(id);
    p = next < end && *next == ',' ? next + 1 : next;
  }
}

Status JobChangeListener::Sync(pg::Pool& pool, std::chrono::milliseconds deadline) {
  uint64_t n;
  {
    std::lock_guard lock(mu_);
    n = ++next_sync_;
  }
  auto conn = pool.Acquire();
  if (!conn.ok()) return conn.status();
  std::string payload = sync_prefix_ + std::to_string(n);
  auto sent = (*conn)->Exec("SELECT pg_notify($1, $2)", {std::string(kChannel), payload});
  if (!sent.ok()) return sent.status();
  std::unique_lock lock(mu_);
  if (!synced_.wait_for(lock, deadline, [&] { return seen_sync_ >= n; })) {
    return Unavailable("the job change feed did not catch up in time");
  }
  return Status::Ok();
}

}  // namespace trainyard::storage
