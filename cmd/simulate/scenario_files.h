#pragma once
// What a scenario may name and read. A scenario can come from a caller (the server's what-if
// uploads), so its name becomes a folder only when it is a plain name, the files it names are read
// only when they are regular files (a FIFO or /dev/zero would hang a replay), and a caller's
// scenario may name only files below its own folder.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "services/status.h"

namespace trainyard::simulate {

// Letters, digits, '.', '_' and '-', at most 64, not starting with '.': a folder name that cannot
// climb out of the report's folder or hide there.
bool ValidScenarioName(std::string_view name);
inline constexpr const char* kScenarioNameRule =
    "must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'";

// How a scenario's files are read.
struct FileRules {
  // A caller's scenario: every file it names is a relative path below its folder, with no ".."
  // and no symbolic link on the way.
  bool confined = false;
  // Chosen: far above the largest published trace we replay (HPC2N's log is about 20 MB), low
  // enough that a mistaken path to a disk image fails at once.
  uint64_t max_bytes = uint64_t{2} << 30;
};

// `relative` as the scenario at `source` names it in `field`, resolved against `dir`: refused when
// confined and it is absolute, climbs with "..", or passes through a symbolic link.
StatusOr<std::string> ResolveScenarioPath(const std::string& source, const std::string& field,
                                          const std::string& dir, const std::string& relative,
                                          const FileRules& rules);

// The whole of a regular file, never through a final symbolic link, at most rules.max_bytes.
StatusOr<std::string> ReadScenarioFile(const std::string& path, const FileRules& rules);

// A new file (O_CREAT | O_EXCL | O_NOFOLLOW): never written through a link, never over a file.
Status WriteNewFile(const std::string& path, std::string_view text, mode_t mode);

}  // namespace trainyard::simulate
