#pragma once
// Feeds a JobRecordCache with what changed in custom_jobs, from any process on the database:
// LISTEN on a connection of its own for the notifications migrations/0015 sends after each commit.
// While that connection is down the cache serves nothing; when it is back, the cache starts empty
// (whatever was missed meanwhile cannot be served stale). A connection silent for a second is
// probed, and one that does not answer within two more is taken for down, so a partition or a
// hung server stops the cache within ~3 s instead of TCP keepalive's hours.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "services/status.h"
#include "storage/job_change_notify.h"
#include "storage/job_record_cache.h"
#include "storage/pg.h"

namespace trainyard::storage {

class JobChangeListener {
 public:
  static constexpr const char* kChannel = TY_JOB_CHANGES_CHANNEL;
  // The feed's connection's application_name (pg_stat_activity tells it apart).
  static constexpr const char* kApplicationName = "trainyard-job-changes";

  JobChangeListener(std::string conninfo, JobRecordCache& cache);
  ~JobChangeListener();
  JobChangeListener(const JobChangeListener&) = delete;
  JobChangeListener& operator=(const JobChangeListener&) = delete;

  // Returns once every change committed before the call has reached the cache (a notification
  // of our own goes through the same queue, which keeps commit order), or the deadline passed.
  Status Sync(pg::Pool& pool, std::chrono::milliseconds deadline);

 private:
  void Run();
  // Listens on one connection until it breaks or Stop; false when stopping.
  bool ListenOnce();
  void Deliver(const std::string& payload);

  const std::string conninfo_;
  JobRecordCache& cache_;
  const std::string sync_prefix_;  // "sync:<random>:": this listener's Sync notifications
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;  // eventfd: wakes the poll to stop
  std::mutex mu_;
  std::condition_variable synced_;
  uint64_t next_sync_ = 0;  // under mu_
  uint64_t seen_sync_ = 0;  // under mu_
  std::thread thread_;
};

}  // namespace trainyard::storage
