#include "storage/backend_priority.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "services/log.h"

namespace trainyard::storage {
namespace {

// The parent of process `pid`, from /proc (0 when it cannot be read). The fourth field of
// /proc/PID/stat, after the command name in parentheses (which may hold spaces).
int ParentOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  int parent = 0;
  rest >> state >> parent;
  return parent;
}

}  // namespace

Status LowerBackendPriority(pg::Connection& conn, int postmaster_pid, int nice) {
  const int backend = conn.backend_pid();
  if (postmaster_pid <= 0 || backend <= 0) return FailedPrecondition("no local backend known");
  if (ParentOf(backend) != postmaster_pid) {
    return FailedPrecondition("backend " + std::to_string(backend) +
                              " is not the embedded cluster's");
  }
  // Below the cluster's own priority, not at an absolute one: a server started under `nice 10`
  // would otherwise give its background sessions no lower a priority than its requests'.
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(postmaster_pid));
  if (base == -1 && errno != 0) {
    return Status(Code::kPermissionDenied,
                  std::string("cannot read the cluster's priority: ") + std::strerror(errno));
  }
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(backend), std::min(19, base + nice)) != 0) {
    return Status(Code::kPermissionDenied,
                  std::string("cannot lower backend priority: ") + std::strerror(errno));
  }
  return Status::Ok();
}

pg::SessionOptions BackgroundSession(int postmaster_pid, int nice) {
  pg::SessionOptions options;
  options.parallel_query = false;
  if (postmaster_pid <= 0) return options;
  options.on_connect = [postmaster_pid, nice](pg::Connection& conn) {
    static std::atomic<bool> told{false};
    Status s = LowerBackendPriority(conn, postmaster_pid, nice);
    if (!s.ok() && !told.exchange(true)) {
      LogJson(LogLevel::kWarn, "backend_priority_unchanged", {{"error", s.message()}});
    }
  };
  return options;
}

}  // namespace trainyard::storage
