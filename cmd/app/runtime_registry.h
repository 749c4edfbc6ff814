#pragma once
// The runtimes a server can run jobs on, by the name `--runtime` gives: each a factory, so the
// composition root never reaches into a concrete runtime and a command offers only the ones it
// registers (`simulate` offers the simulator alone).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/runtime/runtime.h"
#include "services/status.h"

namespace trainyard::app {

class RuntimeRegistry {
 public:
  using Factory = std::function<StatusOr<std::unique_ptr<Runtime>>(const Fleet& fleet)>;

  void Register(std::string name, Factory factory);
  // The runtime `name` names, made for `fleet`; INVALID_ARGUMENT naming the known ones otherwise.
  StatusOr<std::unique_ptr<Runtime>> Make(const std::string& name, const Fleet& fleet) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace trainyard::app
