#include "workers/local/replica_sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "services/log.h"

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
    if (line.rfind("0::", 0) == 0) return mount / fs::path(line.substr(3)).relative_path();
  }
  return {};
}

bool WriteText(const fs::path& file, const std::string& text) {
  const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return close(fd) == 0 && ok;
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

}  // namespace

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
  const fs::path own = OwnCgroup();
  std::error_code ec;
  if (!own.empty()) {
    const fs::path root = own / "trainyard-replicas";
    fs::create_directory(root, ec);
    if (!ec && fs::exists(root / "cgroup.kill", ec)) options.cgroup_root = root;
  }
  if (options.cgroup_root.empty()) {
    LogJson(LogLevel::kWarn, "replica_cgroups_unavailable",
            {{"why", own.empty() ? "no cgroup v2 hierarchy"
                                 : "cannot make a cgroup under " + own.string()},
             {"so",
              "a replica's process group is signalled on stop; a child that called "
              "setsid() outlives it"}});
  }
  return options;
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
  out.cgroup_prefix = cgroup_prefix;
  out.limits = options.limits;
  out.cpu_seconds = cpu_seconds;
  return out;
}

fs::path CgroupPath(const std::string& cgroup_prefix, int keeper) {
  if (cgroup_prefix.empty()) return {};
  return cgroup_prefix + std::to_string(keeper);
}

Status MakeCgroup(const fs::path& cgroup) {
  if (cgroup.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directory(cgroup, ec);
  if (ec) return Internal("cannot create the cgroup " + cgroup.string() + ": " + ec.message());
  return Status::Ok();
}

const char* EnterSandbox(const PreparedSandbox& sandbox, int keeper) {
  if (!sandbox.cgroup_prefix.empty()) {
    // <prefix><keeper>/cgroup.procs, built without allocating (we are in a forked child).
    char path[4096];
    size_t n = 0;
    for (char c : sandbox.cgroup_prefix) {
      if (n + 32 >= sizeof(path)) return "join its cgroup";
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
    if (fd < 0) return "join its cgroup";
    const bool joined = write(fd, "0", 1) == 1;
    close(fd);
    if (!joined) return "join its cgroup";
  }
  if (!Limit(RLIMIT_NOFILE, sandbox.limits.open_files)) return "limit open files";
  if (!Limit(RLIMIT_NPROC, sandbox.limits.processes)) return "limit processes";
  if (!Limit(RLIMIT_FSIZE, sandbox.limits.file_bytes)) return "limit file size";
  if (!Limit(RLIMIT_CORE, 0)) return "limit core files";
  if (sandbox.cpu_seconds > 0 && !Limit(RLIMIT_CPU, sandbox.cpu_seconds)) return "limit CPU time";
  if (sandbox.drop_user) {
    if (setgroups(0, nullptr) != 0) return "drop supplementary groups";
    if (setgid(sandbox.gid) != 0) return "set its group";
    if (setuid(sandbox.uid) != 0) return "set its user";
    if (setuid(0) == 0) return "drop root for good";
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "set no_new_privs";
  if (chdir(sandbox.work_dir.c_str()) != 0) return "enter its working directory";
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
  if (!WriteText(cgroup / "cgroup.kill", "1")) {
    for (pid_t pid : CgroupProcesses(cgroup)) kill(pid, SIGKILL);
  }
  rmdir(cgroup.c_str());  // fails while its processes are still dying: removed on a later look
}

}  // namespace trainyard::local
