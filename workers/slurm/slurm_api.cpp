#include "workers/slurm/slurm_api.h"

#include <cctype>

namespace trainyard::slurm {

bool SlurmJobEnded(const std::string& state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
         state == "NODE_FAIL" || state == "PREEMPTED" || state == "OUT_OF_MEMORY" ||
         state == "BOOT_FAIL" || state == "DEADLINE";
}

bool SlurmNodeUsable(const SlurmNode& node) {
  std::string state;
  for (char c : node.state) state += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // 22.05 may also fold flags into the state ("idle+drain").
  if (state.find("drain") != std::string::npos) return false;
  const std::string base = state.substr(0, state.find('+'));
  if (base != "idle" && base != "mixed" && base != "allocated" && base != "completing") {
    return false;
  }
  for (const std::string& flag : node.state_flags) {
    if (flag.rfind("DRAIN", 0) == 0 || flag == "NOT_RESPONDING" || flag == "FAIL" ||
        flag == "MAINTENANCE" || flag == "REBOOT_REQUESTED" || flag == "POWERED_DOWN") {
      return false;
    }
  }
  return true;
}

}  // namespace trainyard::slurm
