#include "storage/memory/unkept_ports.h"

namespace trainyard::storage::memory {

Status NotKept(const char* what) {
  return Unimplemented(std::string(what) +
                       ": not kept in memory (simulate keeps what the control plane needs)");
}

}  // namespace trainyard::storage::memory
