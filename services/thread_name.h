#pragma once
// Each of the server's threads carries a name (`top -H`, `perf`, /proc/PID/task/*/comm, and
// bench/create-tail's CPU by thread), so a profile says which role a busy thread plays.
#include <string>
#include <string_view>

namespace trainyard {

// Names the calling thread; Linux keeps the first 15 bytes. Best effort: a failure is ignored.
void NameThisThread(std::string_view name);

// The calling thread's name, as the kernel keeps it.
std::string ThisThreadsName();

}  // namespace trainyard
