#include "workers/local/bwrap.h"

namespace trainyard::local {

std::vector<std::string> BwrapArgv(const std::string& bwrap, const SandboxView& view,
                                   const std::vector<std::string>& command) {
  std::vector<std::string> argv = {bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc"};
  argv.insert(argv.end(), {"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"});
  argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  // Hidden first, so the work folder bound next is the one thing of theirs left in view.
  for (const std::filesystem::path& hidden : view.hidden) {
    argv.insert(argv.end(), {"--tmpfs", hidden.string()});
  }
  const std::string work = view.work_dir.string();
  if (!work.empty()) argv.insert(argv.end(), {"--bind", work, work});
  // Read-only once the work folder is in: the folders bwrap made on the way to it (where the
  // server's files are, outside) take nothing.
  for (const std::filesystem::path& hidden : view.hidden) {
    argv.insert(argv.end(), {"--remount-ro", hidden.string()});
  }
  if (!work.empty()) argv.insert(argv.end(), {"--chdir", work});
  // (env would take a command whose first word holds '=' for an assignment: none is named so.)
  argv.insert(argv.end(), {"--", "/usr/bin/env", "--default-signal=TERM,INT,HUP", "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace trainyard::local
