#include "services/thread_name.h"

#include <pthread.h>

namespace trainyard {

namespace {
constexpr size_t kMaxName = 15;  // TASK_COMM_LEN less its terminating NUL
}  // namespace

void NameThisThread(std::string_view name) {
  const std::string cut(name.substr(0, kMaxName));
  pthread_setname_np(pthread_self(), cut.c_str());
}

std::string ThisThreadsName() {
  char name[kMaxName + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return {};
  return name;
}

}  // namespace trainyard
