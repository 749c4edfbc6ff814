#include "cmd/app/runtime_registry.h"

namespace trainyard::app {

void RuntimeRegistry::Register(std::string name, Factory factory) {
  factories_[std::move(name)] = std::move(factory);
}

StatusOr<std::unique_ptr<Runtime>> RuntimeRegistry::Make(const std::string& name,
                                                         const Fleet& fleet) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [n, _] : factories_) known += (known.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown runtime \"" + name + "\" (known: " + known + ")");
  }
  return it->second(fleet);
}

std::vector<std::string> RuntimeRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : factories_) out.push_back(n);
  return out;
}

}  // namespace trainyard::app
