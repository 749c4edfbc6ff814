#include "workers/local/replica_sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "services/jobs/catalog.h"
#include "services/log.h"
#include "workers/local/bwrap.h"

namespace trainyard::local {
namespace fs = std::filesystem;
namespace {

// Where this process's cgroup v2 hierarchy is mounted, and its own path in it; empty when there
// is no cgroup v2 (a v1-only host).
fs::path OwnCgroup() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  fs::path mount;
  while (std::getline(mountinfo, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
      if (i == 4) mount = field;
    }
    break;
  }
  if (mount.empty()) return {};
  std::ifstream self("/proc/self/cgroup");
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const fs::path own = fs::path(line.substr(3)).relative_path();
    return own.empty() ? mount : mount / own;
  }
  return {};
}

// 0, or the errno of the open or write that failed (a cgroup file refuses a write with one).
int WriteText(const fs::path& file, const std::string& text) {
  const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text.data(), text.size());
  const int wrote = n < 0 ? errno : (static_cast<size_t>(n) == text.size() ? 0 : EIO);
  close(fd);
  return wrote;
}

// Whether a cgroup's controller list (cgroup.controllers, cgroup.subtree_control) names both of
// the controllers whose limits replicas get.
bool HasLimitControllers(const fs::path& list) {
  std::ifstream in(list);
  bool memory = false;
  bool pids = false;
  for (std::string word; in >> word;) {
    memory = memory || word == "memory";
    pids = pids || word == "pids";
  }
  return memory && pids;
}

// Hands the memory and pids controllers down from `own` through `root` to the replicas' cgroups:
// cgroup v2 has memory.max and pids.max only where the parent's cgroup.subtree_control enables
// them. "" or why not.
std::string EnableLimitControllers(const fs::path& own, const fs::path& root) {
  for (const fs::path& parent : {own, root}) {
    if (HasLimitControllers(parent / "cgroup.subtree_control")) continue;
    if (!HasLimitControllers(parent / "cgroup.controllers")) {
      return parent.string() + " is not given the memory and pids controllers by its parent";
    }
    const int err = WriteText(parent / "cgroup.subtree_control", "+memory +pids");
    if (err == EBUSY) {
      return parent.string() +
             " holds processes (this server among them), and cgroup v2 hands controllers down "
             "only from a cgroup that holds none, or from the root";
    }
    if (err != 0) return "cannot enable them in " + parent.string() + ": " + std::strerror(err);
  }
  return "";
}

std::vector<pid_t> CgroupProcesses(const fs::path& cgroup) {
  std::vector<pid_t> pids;
  std::ifstream procs(cgroup / "cgroup.procs");
  pid_t pid = 0;
  while (procs >> pid) pids.push_back(pid);
  return pids;
}

// Lowers one limit to `value` (never raises a hard limit this process does not have).
bool Limit(int resource, uint64_t value) {
  struct rlimit now {};
  if (getrlimit(resource, &now) != 0) return false;
  rlim_t want = static_cast<rlim_t>(value);
  if (now.rlim_max != RLIM_INFINITY && want > now.rlim_max) want = now.rlim_max;
  struct rlimit next {
    want, want
  };
  return setrlimit(resource, &next) == 0;
}

// A cgroup of our own under this process's where one can be made (see DetectSandbox), with the
// controllers of the replicas' limits where they can be handed down; said once when not.
void DetectCgroups(SandboxOptions& options) {
  const fs::path own = OwnCgroup();
  std::error_code ec;
  if (!own.empty()) {
    const fs::path root = own / "trainyard-replicas";
    fs::create_directory(root, ec);
    // Left by a server of another user, it may be there but not ours to make cgroups in.
    if (!ec && fs::exists(root / "cgroup.kill", ec) && access(root.c_str(), W_OK) == 0) {
      options.cgroup_root = root;
    }
  }
  if (options.cgroup_root.empty()) {
    LogJson(LogLevel::kWarn, "replica_cgroups_unavailable",
            {{"why", own.empty() ? "no cgroup v2 hierarchy"
                                 : "cannot make a cgroup under " + own.string()},
             {"so",
              "a replica's process group is signalled on stop (and its bubblewrap, where it runs "
              "in one, ends whatever it left); replicas get no memory.max nor pids.max"}});
    return;
  }
  const std::string why = EnableLimitControllers(own, options.cgroup_root);
  options.cgroup_limits = why.empty();
  if (!options.cgroup_limits) {
    LogJson(LogLevel::kWarn, "replica_limits_unavailable",
            {{"why", why},
             {"so",
              "replicas run without memory.max and pids.max: one may take the host's memory or "
              "its pid space (RLIMIT_NPROC still bounds the replicas' user as a whole)"}});
  }
}

// Why user namespaces may be refused here, from the settings that refuse them; "" when none does.
std::string UsernsSettings() {
  auto value = [](const char* file) {
    std::ifstream in(file);
    std::string text;
    in >> text;
    return text;
  };
  std::string out;
  if (value("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
    out += " kernel.unprivileged_userns_clone is 0;";
  }
  if (value("/proc/sys/user/max_user_namespaces") == "0") out += " user.max_user_namespaces is 0;";
  if (value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1") {
    out += " kernel.apparmor_restrict_unprivileged_userns is 1;";
  }
  return out;
}

struct ProbeRun {
  bool started = false;
  bool finished = false;  // within the deadline
  int status = 0;         // waitpid's
  std::string output;     // stdout and stderr, the first 4 KiB
};

// Reads `fd` until its writers close it or `deadline` passes.
bool ReadUntilClosed(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buf[512];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (out.size() < 4096) out.append(buf, static_cast<size_t>(n));
  }
}

// Runs `args` (args[0] an absolute path) as `user`, with no_new_privs as replicas have, stdout
// and stderr caught; killed after `limit`. Only async-signal-safe calls after the fork.
ProbeRun RunProbe(std::vector<std::string> args, const std::optional<ReplicaUser>& user,
                  std::chrono::milliseconds limit) {
  ProbeRun run;
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  char path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
  char* envp[] = {path, nullptr};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return run;
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (chdir("/") != 0) _exit(126);
    if (user && (setgroups(0, nullptr) != 0 || setgid(user->gid) != 0 || setuid(user->uid) != 0)) {
      _exit(126);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
    execve(argv[0], argv.data(), envp);
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return run;
  }
  run.started = true;
  run.finished = ReadUntilClosed(out[0], std::chrono::steady_clock::now() + limit, run.output);
  close(out[0]);
  if (!run.finished) kill(pid, SIGKILL);
  while (waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

std::string ProbeBwrap(const std::string& bwrap, const std::optional<ReplicaUser>& user) {
  if (access(bwrap.c_str(), X_OK) != 0) {
    return "bubblewrap is not installed (no " + bwrap + "; scripts/setup installs it)";
  }
  const std::string as = user ? "as " + user->name : "as this server's user";
  const ProbeRun run =
      RunProbe(BwrapArgv(bwrap, SandboxView{}, {"true"}), user, std::chrono::seconds(10));
  if (!run.started) return "cannot start " + bwrap + " " + as + " (fork failed)";
  if (!run.finished) return bwrap + " did not finish a sandbox " + as + " within 10 s";
  if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) return "";
  std::string why = bwrap + " cannot start a sandbox " + as;
  if (!run.output.empty()) why += ": " + Trimmed(run.output);
  if (const std::string settings = UsernsSettings(); !settings.empty()) {
    why += " (this host refuses unprivileged user namespaces:" +
           settings.substr(0, settings.size() - 1) + ")";
  }
  return why;
}

StatusOr<SandboxOptions> DetectSandbox(const std::string& user_name) {
  SandboxOptions options;
  if (geteuid() == 0) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(user_name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 ||
        found == nullptr) {
      return FailedPrecondition(
          "the server runs as root, so the local runtime's replicas run as the user " + user_name +
          ", which does not exist: scripts/setup creates it (useradd --system)");
    }
    if (pw.pw_uid == 0) return FailedPrecondition("the replicas' user " + user_name + " is root");
    options.user = ReplicaUser{user_name, pw.pw_uid, pw.pw_gid};
  }
  options.no_bwrap = ProbeBwrap(kBwrap, options.user);
  if (options.no_bwrap.empty()) options.bwrap = kBwrap;
  DetectCgroups(options);
  return options;
}

Status CheckIsolation(const SandboxOptions& options, bool tokens, bool allow_unsandboxed) {
  if (!tokens) return Status::Ok();
  if (options.bwrap.empty()) {
    return FailedPrecondition(
        "--runtime=local with --auth=tokens runs the replicas of every project on this host, and "
        "without bubblewrap nothing keeps one project's replicas from reading another's "
        "environment (/proc/<pid>/environ, API keys included) and files: " +
        options.no_bwrap +
        ". Install bubblewrap (scripts/setup) where unprivileged user namespaces are allowed, or "
        "serve without tokens on a loopback address");
  }
  if (!options.user && !allow_unsandboxed) {
    return FailedPrecondition(
        "the server is not root, so --runtime=local would run the replicas of every project as "
        "the server's own user (uid " +
        std::to_string(geteuid()) +
        "), each able to read whatever that user may read outside the data directory. Run the "
        "server as root (replicas then run as " +
        std::string(kReplicaUser) + "), or accept this with --allow-unsandboxed-replicas");
  }
  return Status::Ok();
}

std::vector<IsolationWarning> IsolationWarnings(const SandboxOptions& options) {
  std::vector<IsolationWarning> out;
  if (options.bwrap.empty()) {
    out.push_back({"replicas_unsandboxed",
                   "replicas run WITHOUT a sandbox (" + options.no_bwrap +
                       "): each can read every other replica's environment (/proc/<pid>/environ, "
                       "API keys included)" +
                       (options.user ? std::string(" and working folder")
                                     : std::string(", and the server's data directory")) +
                       ". Install bubblewrap (scripts/setup) before running jobs you do not "
                       "trust"});
  }
  if (!options.user) {
    out.push_back(
        {"replicas_run_as_server_user",
         "the server is not root, so replicas run as its own user (uid " +
             std::to_string(geteuid()) + "), not as " + kReplicaUser + ": " +
             (options.bwrap.empty()
                  ? std::string("they can read and write whatever it can, its database included")
                  : std::string("in bubblewrap they write only their working folder, but read "
                                "whatever that user may read outside the data directory"))});
  }
  return out;
}

Status ReviewIsolation(const SandboxOptions& options, bool tokens, bool allow_unsandboxed) {
  TY_RETURN_IF_ERROR(CheckIsolation(options, tokens, allow_unsandboxed));
  for (const IsolationWarning& warning : IsolationWarnings(options)) {
    LogJson(LogLevel::kWarn, warning.event, {{"warning", warning.text}});
    std::cerr << "trainyard: WARNING: " << warning.text << "\n";
  }
  return Status::Ok();
}

fs::path ReachableReplicaRoot(const fs::path& wanted, const SandboxOptions& options) {
  if (!options.user) return wanted;
  bool reachable = true;
  for (fs::path p = wanted.parent_path(); reachable && !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0) reachable = (st.st_mode & S_IXOTH) != 0;
    if (p == p.root_path()) break;
  }
  if (reachable) return wanted;
  // FNV-1a: stable across builds and runs, unlike std::hash.
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : wanted.string()) hash = (hash ^ c) * 1099511628211ull;
  char name[17];
  std::snprintf(name, sizeof(name), "%016llx", static_cast<unsigned long long>(hash));
  const fs::path moved = fs::path("/var/lib/trainyard/replicas") / name;
  LogJson(LogLevel::kInfo, "replicas_relocated",
          {{"wanted", wanted.string()},
           {"root", moved.string()},
           {"why", "the replicas' user cannot enter a folder on the way"}});
  return moved;
}

std::vector<fs::path> HiddenFromReplicas(const fs::path& data_dir, const fs::path& root) {
  if (data_dir.empty()) return {root};
  const fs::path relative = root.lexically_normal().lexically_relative(data_dir.lexically_normal());
  const bool inside = !relative.empty() && *relative.begin() != "..";
  return {inside ? data_dir : root};
}

Status MakeServerFolder(const fs::path& folder, const SandboxOptions& options) {
  std::error_code ec;
  fs::create_directory(folder, ec);
  if (ec) return Internal("cannot create " + folder.string() + ": " + ec.message());
  if (options.user && chown(folder.c_str(), geteuid(), options.user->gid) != 0) {
    return Internal("cannot give " + folder.string() + " to the group of " + options.user->name);
  }
  if (chmod(folder.c_str(), options.user ? 0710 : 0700) != 0) {
    return Internal("cannot chmod " + folder.string());
  }
  return Status::Ok();
}

CgroupLimits CgroupLimitsFor(const MachineSpec& machine) {
  const MachineType* type = FindMachineType(machine.machine_type);
  if (type == nullptr) return {};
  const auto nodes = static_cast<uint64_t>(machine.NodesPerReplica());
  return CgroupLimits{static_cast<uint64_t>(type->memory_gb) * nodes << 30,
                      std::max<uint64_t>(1024, 64 * static_cast<uint64_t>(type->vcpus) * nodes)};
}

StatusOr<PreparedSandbox> PrepareSandbox(const SandboxOptions& options, const fs::path& work_dir,
                                         const std::string& cgroup_prefix, uint64_t cpu_seconds) {
  PreparedSandbox out;
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return Internal("cannot create " + work_dir.string() + ": " + ec.message());
  if (options.user) {
    if (chown(work_dir.c_str(), options.user->uid, options.user->gid) != 0) {
      return Internal("cannot give " + work_dir.string() + " to " + options.user->name);
    }
    out.drop_user = true;
    out.uid = options.user->uid;
    out.gid = options.user->gid;
  }
  if (chmod(work_dir.c_str(), 0700) != 0) return Internal("cannot chmod " + work_dir.string());
  out.work_dir = work_dir.string();
  out.in_bwrap = !options.bwrap.empty();
  out.cgroup_prefix = cgroup_prefix;
  out.limits = options.limits;
  out.cpu_seconds = cpu_seconds;
  return out;
}

fs::path CgroupPath(const std::string& cgroup_prefix, int keeper) {
  if (cgroup_prefix.empty()) return {};
  return cgroup_prefix + std::to_string(keeper);
}

Status MakeCgroup(const fs::path& cgroup, const CgroupLimits& limits) {
  if (cgroup.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directory(cgroup, ec);
  if (ec) return Internal("cannot create the cgroup " + cgroup.string() + ": " + ec.message());
  for (const auto& [file, value] :
       {std::pair{"memory.max", limits.memory_bytes}, std::pair{"pids.max", limits.pids}}) {
    if (value == 0) continue;
    if (const int err = WriteText(cgroup / file, std::to_string(value)); err != 0) {
      return Internal("cannot set " + (cgroup / file).string() + ": " + std::strerror(err));
    }
  }
  return Status::Ok();
}

namespace {

// Moves this process into the cgroup <prefix><keeper>, its path built without allocating.
bool JoinCgroup(const std::string& prefix, int keeper) {
  char path[4096];
  size_t n = 0;
  for (char c : prefix) {
    if (n + 32 >= sizeof(path)) return false;
    path[n++] = c;
  }
  char digits[16];
  int len = 0;
  do {
    digits[len++] = static_cast<char>('0' + keeper % 10);
    keeper /= 10;
  } while (keeper > 0 && len < 15);
  while (len > 0) path[n++] = digits[--len];
  for (const char* tail = "/cgroup.procs"; *tail != '\0'; ++tail) path[n++] = *tail;
  path[n] = '\0';
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool joined = write(fd, "0", 1) == 1;
  close(fd);
  return joined;
}

const char* LimitResources(const PreparedSandbox& sandbox) {
  if (!Limit(RLIMIT_NOFILE, sandbox.limits.open_files)) return "limit open files";
  if (!Limit(RLIMIT_NPROC, sandbox.limits.processes)) return "limit processes";
  if (!Limit(RLIMIT_FSIZE, sandbox.limits.file_bytes)) return "limit file size";
  if (!Limit(RLIMIT_CORE, 0)) return "limit core files";
  if (sandbox.cpu_seconds > 0 && !Limit(RLIMIT_CPU, sandbox.cpu_seconds)) return "limit CPU time";
  return nullptr;
}

const char* DropUser(const PreparedSandbox& sandbox) {
  if (setgroups(0, nullptr) != 0) return "drop supplementary groups";
  if (setgid(sandbox.gid) != 0) return "set its group";
  if (setuid(sandbox.uid) != 0) return "set its user";
  if (setuid(0) == 0) return "drop root for good";
  return nullptr;
}

}  // namespace

const char* EnterSandbox(const PreparedSandbox& sandbox, int keeper) {
  if (!sandbox.cgroup_prefix.empty() && !JoinCgroup(sandbox.cgroup_prefix, keeper)) {
    return "join its cgroup";
  }
  if (const char* failed = LimitResources(sandbox)) return failed;
  // Still as the server: the replica's user may not pass through the server's folders above it.
  if (chdir(sandbox.work_dir.c_str()) != 0) return "enter its working directory";
  if (sandbox.drop_user) {
    if (const char* failed = DropUser(sandbox)) return failed;
  }
  // After the user is set, which clears it. A keeper that ended before this (getppid() no longer
  // names it) would leave the sandbox running with no one to record its end.
  if (sandbox.in_bwrap && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != keeper)) {
    return "tie its sandbox to its keeper";
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "set no_new_privs";
  return nullptr;
}

void TermCgroup(const fs::path& cgroup) {
  if (cgroup.empty()) return;
  for (pid_t pid : CgroupProcesses(cgroup)) kill(pid, SIGTERM);
}

void KillCgroup(const fs::path& cgroup) {
  if (cgroup.empty()) return;
  std::error_code ec;
  if (!fs::exists(cgroup, ec)) return;
  if (WriteText(cgroup / "cgroup.kill", "1") != 0) {
    for (pid_t pid : CgroupProcesses(cgroup)) kill(pid, SIGKILL);
  }
  rmdir(cgroup.c_str());  // fails while its processes are still dying: removed on a later look
}

}  // namespace trainyard::local
