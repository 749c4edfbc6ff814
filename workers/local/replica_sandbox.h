#pragma once
// What keeps a local replica from acting as the server. Any editor token runs a command through
// the local runtime, and the server is often root, so each replica:
// - runs as an unprivileged user when the server is root (scripts/setup creates `trainyard-run`),
//   in a working directory only that user can write, apart from the server's own files (pid, exit
//   code, launch record, output and its offset), which it can read through nothing but its stdout;
// - has no_new_privs (no setuid binary gives root back) and resource limits: open files,
//   processes, file size, no core files, and CPU time from the job's timeout;
// - lives in a cgroup of its own where cgroup v2 is writable, so a child that calls setsid() still
//   ends on cancel (cgroup.kill). Without one, only the process group is signalled, and a child
//   that left it outlives the replica: said once in the log at start.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "services/status.h"

namespace trainyard::local {

// The user scripts/setup creates for replicas.
inline constexpr const char* kReplicaUser = "trainyard-run";

struct ReplicaUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ReplicaLimits {
  // Chosen: far above what a training process opens (data loaders, NCCL sockets) or starts, low
  // enough that one replica cannot exhaust the host's tables. NPROC counts every process of the
  // replicas' user, all replicas together.
  uint64_t open_files = 65536;
  uint64_t processes = 16384;
  // Chosen: a large model's checkpoint shard fits; a runaway writer stops before the disk fills.
  uint64_t file_bytes = uint64_t{256} << 30;
};

struct SandboxOptions {
  std::optional<ReplicaUser> user;    // set: replicas run as this user (the server is root)
  std::filesystem::path cgroup_root;  // a cgroup v2 directory of ours; empty: none
  ReplicaLimits limits;
};

// What the server can give its replicas here: the user named `user_name` when this process is
// root (an error when it is root and the user is missing: running replicas as root is what this
// prevents), and a cgroup v2 directory of this process's where one can be made.
StatusOr<SandboxOptions> DetectSandbox(const std::string& user_name);

// Where the replicas' folders go: `wanted`, unless the replicas' user could not reach it (a folder
// on the way that others may not enter, like root's 0700 home); then a folder of its own under
// /var/lib/trainyard/replicas, named by a hash of `wanted`, so the same data directory finds it
// again.
std::filesystem::path ReachableReplicaRoot(const std::filesystem::path& wanted,
                                           const SandboxOptions& options);

// Everything the forked child needs, as plain values made before the fork: after it, in a
// process whose parent has threads, only async-signal-safe calls are allowed.
struct PreparedSandbox {
  bool drop_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string work_dir;  // chdir here
  // The replica joins the cgroup <prefix><its keeper's pid> (one per start, so a restarted replica
  // never shares one with its predecessor); empty: none.
  std::string cgroup_prefix;
  ReplicaLimits limits;
  uint64_t cpu_seconds = 0;  // RLIMIT_CPU; 0: none
};

// Makes the replica's working directory (owned by the user, 0700). `cgroup_prefix` names its
// cgroups (see PreparedSandbox); the caller makes the one of each start (MakeCgroup).
StatusOr<PreparedSandbox> PrepareSandbox(const SandboxOptions& options,
                                         const std::filesystem::path& work_dir,
                                         const std::string& cgroup_prefix, uint64_t cpu_seconds);
// The cgroup of the replica whose keeper is `keeper`; empty without cgroups.
std::filesystem::path CgroupPath(const std::string& cgroup_prefix, int keeper);
Status MakeCgroup(const std::filesystem::path& cgroup);

// In the forked replica, before exec: async-signal-safe. `keeper` is its keeper's pid. Returns
// the step that failed, or nullptr.
const char* EnterSandbox(const PreparedSandbox& sandbox, int keeper);

// The replica's cgroup (under `cgroup_root`): SIGTERM to every process in it, or end them all at
// once (cgroup.kill) and remove it when empty. No-ops without a cgroup.
void TermCgroup(const std::filesystem::path& cgroup);
void KillCgroup(const std::filesystem::path& cgroup);

}  // namespace trainyard::local
