#pragma once
// bubblewrap (Debian's package `bubblewrap`), which runs each local replica in namespaces of its
// own: a replica sees the host read-only, its own processes in a fresh /proc, a private /tmp, and
// of the server's data directory nothing but its own working folder. Without it, every replica
// could read every other's /proc/<pid>/environ (API keys included) and the server's files.
#include <filesystem>
#include <string>
#include <vector>

namespace trainyard::local {

inline constexpr const char* kBwrap = "/usr/bin/bwrap";

// What a replica may see and write besides the host's files, which it sees read-only.
struct SandboxView {
  // Covered by an empty, read-only tmpfs: the server's data directory (its database, every job's
  // folders), or the replicas' root when that lies elsewhere.
  std::vector<std::filesystem::path> hidden;
  // Bound back in at the same path, writable, and the command's working directory; empty: none
  // (the start-up probe).
  std::filesystem::path work_dir;
};

// bwrap's argv that runs `command` (searched in the PATH of the environment it is given):
// - its own PID and IPC namespaces (--unshare-pid --unshare-ipc); bwrap also makes a user
//   namespace, as it runs unprivileged;
// - --die-with-parent: bwrap's init and the command end when bwrap does, so nothing of the
//   replica, not even a child that called setsid(), outlives it;
// - the host read-only, a fresh /proc and /dev, a private /tmp, then `view`;
// - no --new-session: that would take the command out of its keeper's process group, which stop
//   signals; the keeper starts a session of its own instead, so no replica has a terminal;
// - the command through `env --default-signal`: bwrap is started with the stop signals ignored,
//   so it outlives them to report the command's status, and the command gets them back.
std::vector<std::string> BwrapArgv(const std::string& bwrap, const SandboxView& view,
                                   const std::vector<std::string>& command);

}  // namespace trainyard::local
