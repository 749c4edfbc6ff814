#include "workers/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace trainyard {

void LowerThisThreadsPriority() {
  // On Linux nice is per thread: setpriority on the thread's own id leaves the others as they are.
  // Ten steps below the thread's own (a server started under `nice` keeps the difference).
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, tid);
  if (base == -1 && errno != 0) return;
  (void)setpriority(PRIO_PROCESS, tid, std::min(19, base + 10));
}

}  // namespace trainyard
