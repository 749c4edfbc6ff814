#pragma once
// A secret of this installation kept in a file only the server may read (0600): read when it is
// there, made (random, with O_EXCL, so two servers starting at once agree on one) when it is not.
#include <filesystem>
#include <string>

#include "services/status.h"

namespace trainyard::files {

StatusOr<std::string> LoadOrCreateSecret(const std::filesystem::path& path);

}  // namespace trainyard::files
