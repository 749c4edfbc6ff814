#include "storage/memory/unkept_ports.h"

namespace trainyard::storage::memory {

Status NotKept(const char* what) {
  return Unimplemented(std::string(what) + ": not kept in memory (simulate replays jobs only)");
}

}  // namespace trainyard::storage::memory
