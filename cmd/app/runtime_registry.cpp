#include "cmd/app/runtime_registry.h"

namespace trainyard::app {

void RuntimeRegistry::Register(std::string name, RuntimeEntry entry) {
  entries_[std::move(name)] = std::move(entry);
}

StatusOr<const RuntimeEntry*> RuntimeRegistry::Find(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& [n, _] : entries_) known += (known.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown runtime \"" + name + "\" (known: " + known + ")");
  }
  return &it->second;
}

StatusOr<RuntimeBundle> RuntimeRegistry::Make(const std::string& name, const Fleet& fleet) const {
  TY_ASSIGN_OR_RETURN(const RuntimeEntry* entry, Find(name));
  RuntimeBundle made;
  made.simulated_startup = entry->simulated_startup;
  TY_ASSIGN_OR_RETURN(made.runtime, entry->make(fleet));
  if (entry->capacity) {
    TY_ASSIGN_OR_RETURN(made.capacity, entry->capacity(fleet));
  }
  return made;
}

std::vector<std::string> RuntimeRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : entries_) out.push_back(n);
  return out;
}

}  // namespace trainyard::app
