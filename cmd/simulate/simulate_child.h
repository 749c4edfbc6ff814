#pragma once
// A what-if replay as a process of its own: the server runs `trainyard simulate` on what a caller
// chose or sent, so the replay runs apart from the server's memory and threads, as an unprivileged
// user when the server is root, under limits on memory, CPU and wall time, and can be ended at
// any moment (a cancel, a shutdown) by killing its process group.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/status.h"

namespace trainyard::simulate {

struct ChildLimits {
  // Chosen: a replay of a 200k-job log holds well under 1 GiB; twice that leaves room, and a
  // hostile scenario cannot take the host's memory. (Not applied under AddressSanitizer, which
  // reserves terabytes of address space.)
  uint64_t memory_bytes = uint64_t{2} << 30;
  // Chosen: the shipped comparisons take seconds; a what-if run that needs a quarter of an hour
  // of CPU belongs to `trainyard simulate` on the operator's own machine.
  uint64_t cpu_seconds = 900;
  std::chrono::milliseconds wall{std::chrono::minutes(20)};
};

struct ChildUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ChildOutcome {
  enum class Kind { kExited, kSignalled, kTimedOut, kCancelled };
  Kind kind = Kind::kExited;
  int code = 0;           // the exit code, or the signal
  std::string last_line;  // its last line on stderr
};

class SimulateChild {
 public:
  // Starts `program` with `args` (argv[1..]) in `work_dir`, as `user` when set.
  static StatusOr<std::unique_ptr<SimulateChild>> Start(const std::string& program,
                                                        const std::vector<std::string>& args,
                                                        const std::string& work_dir,
                                                        const std::optional<ChildUser>& user,
                                                        const ChildLimits& limits);
  ~SimulateChild();
  SimulateChild(const SimulateChild&) = delete;
  SimulateChild& operator=(const SimulateChild&) = delete;

  // Hands each line it writes on stderr to `line` until it ends, or ends it (SIGKILL to its
  // group) on Cancel or at the wall limit; then reaps it.
  ChildOutcome Wait(const std::function<void(const std::string&)>& line);
  // From any thread, before or during Wait.
  void Cancel();

 private:
  SimulateChild(pid_t pid, int stderr_fd, int wake_read, int wake_write,
                std::chrono::milliseconds wall);

  pid_t pid_;
  int stderr_fd_;
  int wake_read_, wake_write_;  // Cancel wakes Wait's poll through this pipe
  std::chrono::milliseconds wall_;
  std::atomic<bool> cancelled_{false};
  bool reaped_ = false;
};

// The user a root server runs what-if replays as (the local runtime's replica user); nullopt when
// this process is not root. FAILED_PRECONDITION when it is root and the user is missing.
StatusOr<std::optional<ChildUser>> WhatIfUser(const std::string& name);

}  // namespace trainyard::simulate
