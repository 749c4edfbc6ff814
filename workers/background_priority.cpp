#include "workers/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace trainyard {

void LowerThisThreadsPriority() {
  // On Linux nice is per thread: setpriority on the thread's own id leaves the others as they are.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, 10);
}

}  // namespace trainyard
