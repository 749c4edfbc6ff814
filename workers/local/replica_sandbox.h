#pragma once
// What keeps a local replica from acting as the server, or as another project's replica. Any
// editor token runs a command through the local runtime, and the server is often root, so each
// replica:
// - runs in bubblewrap (workers/local/bwrap.h) where it can start: its own PID and IPC
//   namespaces, the host read-only, of the server's data directory only its own working folder,
//   so it sees no other replica's processes (/proc/<pid>/environ) nor files;
// - runs as an unprivileged user when the server is root (scripts/setup creates `trainyard-run`);
//   the server's files beside its working folder (launch record, output, pid, exit code) are the
//   server's, 0600 in folders only the server may read, and it reads nothing of them but its
//   stdout;
// - has no_new_privs (no setuid binary gives root back) and resource limits: open files,
//   processes, file size, no core files, and CPU time from the job's timeout;
// - lives in a cgroup of its own where cgroup v2 is writable, so a child that calls setsid() still
//   ends on cancel (cgroup.kill), with memory.max and pids.max from its machine type where the
//   server's cgroup can hand those controllers down. What is missing is said once at start.
// Where bwrap cannot start, `serve` refuses API tokens (ReviewIsolation): the replicas of different
// projects would not be kept apart; so it does on a server that is not root (every replica would
// run as its user) unless --allow-unsandboxed-replicas says so. Otherwise it warns loudly.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "services/model/custom_job.h"
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
  bool cgroup_limits = false;         // memory.max and pids.max exist in the replicas' cgroups
  std::string bwrap;                  // bubblewrap, where it can start a sandbox; empty: none
  std::string no_bwrap;               // why not, when `bwrap` is empty
  ReplicaLimits limits;
};

// What the server can give its replicas here: the user named `user_name` when this process is
// root (an error when it is root and the user is missing: running replicas as root is what this
// prevents), bubblewrap where it starts a sandbox as that user, and a cgroup v2 directory of this
// process's where one can be made.
StatusOr<SandboxOptions> DetectSandbox(const std::string& user_name);

// "" when `bwrap` starts a sandbox as BwrapArgv makes them, run as `user` (or as this process's
// user); otherwise why not, for the operator: bwrap missing, or bwrap's own message (a kernel that
// refuses unprivileged user namespaces, a /proc it may not mount). Waits a few seconds at most.
std::string ProbeBwrap(const std::string& bwrap, const std::optional<ReplicaUser>& user);

// Whether `serve --runtime=local` may run replicas as `options` allow. With API tokens
// (`tokens`), projects must be kept apart: refused without bubblewrap, and, unless
// `allow_unsandboxed` (--allow-unsandboxed-replicas), when the server is not root (every replica
// would run as the server's own user).
Status CheckIsolation(const SandboxOptions& options, bool tokens, bool allow_unsandboxed);
struct IsolationWarning {
  std::string event;
  std::string text;
};
// What the replicas are not kept from, said loudly at start (empty: nothing).
std::vector<IsolationWarning> IsolationWarnings(const SandboxOptions& options);
// CheckIsolation, then the warnings logged (and written plainly on stderr).
Status ReviewIsolation(const SandboxOptions& options, bool tokens, bool allow_unsandboxed);

// Where the replicas' folders go: `wanted`, unless the replicas' user could not reach it (a folder
// on the way that others may not enter, like root's 0700 home); then a folder of its own under
// /var/lib/trainyard/replicas, named by a hash of `wanted`, so the same data directory finds it
// again.
std::filesystem::path ReachableReplicaRoot(const std::filesystem::path& wanted,
                                           const SandboxOptions& options);

// What a replica must not see of the server: its data directory, or `root` (the replicas'
// folders) alone when that lies outside it (ReachableReplicaRoot moved it; the data directory is
// then out of the replicas' user's reach anyway). `data_dir` empty: `root`.
std::vector<std::filesystem::path> HiddenFromReplicas(const std::filesystem::path& data_dir,
                                                      const std::filesystem::path& root);

// One of the server's folders of replicas (the root, jobs/, a job's, an attempt's, a replica's):
// made if missing, owned by the server and closed to everyone else (0700). With a replicas' user,
// its group may pass through (0710, no listing), the only way bwrap, running as that user, reaches
// the working folder it binds; everything the server keeps in them is 0600.
Status MakeServerFolder(const std::filesystem::path& folder, const SandboxOptions& options);

// The replica's cgroup v2 limits; 0: not set.
struct CgroupLimits {
  uint64_t memory_bytes = 0;
  uint64_t pids = 0;
};
// memory.max: its machine type's memory (for each node a replica spans). pids.max: 64 per vCPU,
// at least 1024. Chosen: pids.max counts threads, and a training process sizes its thread pools
// (OpenMP and BLAS, data-loader workers, NCCL) by the cores it has, a few per core; 64 leaves
// room for all of them, while a fork bomb stops there instead of filling the host's pid space.
// Zero for a machine type the catalog does not know.
CgroupLimits CgroupLimitsFor(const MachineSpec& machine);

// Everything the forked child needs, as plain values made before the fork: after it, in a
// process whose parent has threads, only async-signal-safe calls are allowed.
struct PreparedSandbox {
  bool drop_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string work_dir;  // chdir here (before dropping the user: the folders on the way are ours)
  // The command is bwrap: it ends with its keeper (PR_SET_PDEATHSIG), and keeps the stop signals
  // ignored (BwrapArgv gives them back to the command).
  bool in_bwrap = false;
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
// Makes it, with `limits` written to memory.max and pids.max (those that are not 0).
Status MakeCgroup(const std::filesystem::path& cgroup, const CgroupLimits& limits = {});

// In the forked replica, before exec: async-signal-safe. `keeper` is its keeper's pid. Returns
// the step that failed, or nullptr.
const char* EnterSandbox(const PreparedSandbox& sandbox, int keeper);

// The replica's cgroup (under `cgroup_root`): SIGTERM to every process in it, or end them all at
// once (cgroup.kill) and remove it when empty. No-ops without a cgroup.
void TermCgroup(const std::filesystem::path& cgroup);
void KillCgroup(const std::filesystem::path& cgroup);

}  // namespace trainyard::local
