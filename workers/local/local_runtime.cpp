#include "workers/local/local_runtime.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "services/log.h"
#include "services/runtime/replica_plan.h"
#include "workers/files/output_tailer.h"
#include "workers/files/text_file.h"
#include "workers/local/bwrap.h"

namespace trainyard::local {
namespace fs = std::filesystem;
using files::ParseNumber;
using files::ReadFile;

namespace {

constexpr const char* kPidFile = "pid";
constexpr const char* kExitFile = "exit_code";
constexpr const char* kOutputFile = "output.log";
constexpr const char* kOffsetFile = "output.offset";
constexpr const char* kLaunchFile = "launch.json";
constexpr const char* kWorkDir = "work";  // the replica's working directory, its only writable one
// A launch record holds the replica's argv and environment, the job spec included (a request
// body is at most 1 MiB).
constexpr size_t kMaxLaunchFile = 4 << 20;

// The variables a replica inherits from the server; everything else comes from its spec.
constexpr const char* kInherited[] = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER"};

// RLIMIT_CPU for a replica: its job's timeout on every core of this host (the most CPU it could
// use in that time), plus a minute for the stop's grace.
uint64_t CpuSecondsFor(const CustomJobSpec& spec) {
  const int64_t timeout =
      std::chrono::duration_cast<std::chrono::seconds>(JobTimeout(spec)).count();
  const uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<uint64_t>(std::max<int64_t>(timeout, 1)) * cores + 60;
}

// The cgroup limits of a replica of worker pool `pool` (CgroupLimitsFor its machine).
CgroupLimits CgroupLimitsOf(const CustomJobSpec& spec, int pool) {
  if (pool < 0 || static_cast<size_t>(pool) >= spec.worker_pool_specs.size()) return {};
  const std::optional<MachineSpec>& machine = spec.worker_pool_specs[pool].machine_spec;
  return machine ? CgroupLimitsFor(*machine) : CgroupLimits{};
}

// State letter, session and start time (clock ticks since boot) of a process, from
// /proc/<pid>/stat: the start time tells a recycled pid from the process we started.
struct ProcStat {
  char state = '?';
  int session = 0;
  uint64_t start_ticks = 0;
};

std::optional<ProcStat> ReadProcStat(int pid) {
  std::string text = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 2));
  std::vector<std::string> tokens;
  std::string token;
  while (fields >> token) tokens.push_back(token);
  if (tokens.size() < 20) return std::nullopt;
  auto session = ParseNumber<int>(tokens[3]);
  auto start = ParseNumber<uint64_t>(tokens[19]);
  if (!session || !start) return std::nullopt;
  return ProcStat{tokens[0].empty() ? '?' : tokens[0][0], *session, *start};
}

std::string Handle(int pid, uint64_t start_ticks) {
  return std::to_string(pid) + ":" + std::to_string(start_ticks);
}

std::optional<std::pair<int, uint64_t>> ParseHandle(std::string_view handle) {
  size_t colon = handle.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto pid = ParseNumber<int>(handle.substr(0, colon));
  auto start = ParseNumber<uint64_t>(handle.substr(colon + 1));
  if (!pid || !start || *pid <= 1) return std::nullopt;
  return std::make_pair(*pid, *start);
}

StatusOr<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal("socket: cannot find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  if (port <= 0) return Internal("cannot find a free port on 127.0.0.1");
  return port;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

bool WriteAll(int fd, const char* text, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, text, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// WriteFileAtomically, but 0600 from the start: the replicas' group may pass through the folder
// (MakeServerFolder), and a launch record holds the job's secrets.
bool WritePrivateFile(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, text.data(), text.size());
  ok = close(fd) == 0 && ok;
  if (ok && rename(tmp.c_str(), path.c_str()) == 0) return true;
  unlink(tmp.c_str());
  return false;
}

// Runs in the forked keeper: only async-signal-safe calls from here on (the server has threads).
// The command starts only once the server has recorded the keeper (its pid file) and says so on
// `gate`: a server killed in between closes the gate unsaid, and the keeper leaves without running
// anything, so the next launch, finding no pid file, starts the only copy.
// The files it writes are named by absolute paths made before the fork.
struct KeeperFiles {
  std::string dir;  // the server's folder of the replica
  std::string output;
  std::string exit_tmp;
  std::string exit_code;
};

[[noreturn]] void RunKeeper(const KeeperFiles& files, char* const argv[], char* const envp[],
                            const int gate[2], const PreparedSandbox& sandbox) {
  close(gate[1]);  // only the server's copy may keep the gate open
  // A session of its own, not only a process group: no replica gets the server's terminal (a
  // TIOCSTI there types into the operator's shell). The server waits for it (Start).
  if (setsid() < 0) _exit(126);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  // The keeper outlives the group's SIGTERM to record the command's status; SIGKILL ends it.
  sigaction(SIGTERM, &ignore, nullptr);
  sigaction(SIGINT, &ignore, nullptr);
  sigaction(SIGHUP, &ignore, nullptr);
  if (chdir(files.dir.c_str()) != 0) _exit(126);
  int out =
      open(files.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  int in = open("/dev/null", O_RDONLY);
  if (out < 0 || in < 0) _exit(126);
  dup2(in, 0);
  dup2(out, 1);
  dup2(out, 2);
  char go = 0;
  ssize_t said = 0;
  do {
    said = read(gate[0], &go, 1);
  } while (said < 0 && errno == EINTR);
  if (said != 1) _exit(0);
  close_range(3, ~0U, 0);  // the server's sockets and database connections stay with the server
  pid_t child = fork();
  if (child == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    // bwrap keeps the stop signals ignored, so it outlives them to report the command's status;
    // the command gets them back inside (BwrapArgv).
    if (!sandbox.in_bwrap) {
      sigaction(SIGTERM, &dfl, nullptr);
      sigaction(SIGINT, &dfl, nullptr);
      sigaction(SIGHUP, &dfl, nullptr);
    }
    sigaction(SIGPIPE, &dfl, nullptr);  // the server ignores it; shell pipelines rely on it
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the server blocks its shutdown signals
    if (const char* failed = EnterSandbox(sandbox, static_cast<int>(getppid()))) {
      const char message[] = "trainyard: cannot start the replica: cannot ";
      WriteAll(2, message, sizeof(message) - 1);
      size_t n = 0;
      while (failed[n] != '\0') ++n;
      WriteAll(2, failed, n);
      WriteAll(2, "\n", 1);
      _exit(126);
    }
    execvpe(argv[0], argv, envp);
    const char message[] = "trainyard: cannot run the replica's command: ";
    WriteAll(2, message, sizeof(message) - 1);
    size_t n = 0;
    while (argv[0][n] != '\0') ++n;
    WriteAll(2, argv[0], n);
    WriteAll(2, "\n", 1);
    _exit(127);
  }
  if (child < 0) _exit(126);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) _exit(126);
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  char digits[8];
  int len = 0;
  do {
    digits[len++] = static_cast<char>('0' + code % 10);
    code /= 10;
  } while (code > 0 && len < 7);
  char text[9];
  for (int i = 0; i < len; ++i) text[i] = digits[len - 1 - i];
  text[len] = '\n';
  unlink(files.exit_tmp.c_str());
  int fd = open(files.exit_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    WriteAll(fd, text, static_cast<size_t>(len + 1));
    close(fd);
    rename(files.exit_tmp.c_str(), files.exit_code.c_str());
  }
  _exit(0);
}

std::optional<int> ExitCodeIn(const fs::path& dir) {
  std::string text = ReadFile(dir / kExitFile);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return std::nullopt;
  return ParseNumber<int>(text);
}

nlohmann::json LaunchJson(const ReplicaLaunch& launch, const std::string& image) {
  return {{"argv", launch.argv},
          {"env", launch.env},
          {"image", image},
          {"cpuSeconds", launch.cpu_seconds},
          {"memoryMax", launch.cgroup.memory_bytes},
          {"pidsMax", launch.cgroup.pids}};
}

std::optional<std::vector<std::string>> StringList(const nlohmann::json& json) {
  if (!json.is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const nlohmann::json& item : json) {
    if (!item.is_string()) return std::nullopt;
    out.push_back(item.get<std::string>());
  }
  return out;
}

uint64_t CountIn(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  return it != json.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// A launch record as LaunchJson wrote it (an older one has no cgroup limits: none are set).
std::optional<ReplicaLaunch> ParseLaunch(const nlohmann::json& json) {
  if (!json.is_object()) return std::nullopt;
  std::optional<std::vector<std::string>> argv = StringList(json.value("argv", nlohmann::json()));
  std::optional<std::vector<std::string>> env = StringList(json.value("env", nlohmann::json()));
  if (!argv || !env) return std::nullopt;
  return ReplicaLaunch{*std::move(argv), *std::move(env), CountIn(json, "cpuSeconds"),
                       CgroupLimits{CountIn(json, "memoryMax"), CountIn(json, "pidsMax")}};
}

// How long Start waits for a new keeper to have made its session (wall time; the host may be
// busy: a keeper that is not scheduled for seconds is still starting).
constexpr auto kKeeperSessionWait = std::chrono::seconds(5);

// The keeper `pid` once it leads a session of its own (RunKeeper's setsid), so that a signal to
// its process group reaches the replica as soon as Start returns; nullopt if it never does.
std::optional<ProcStat> AwaitKeeperSession(int pid) {
  const auto deadline = std::chrono::steady_clock::now() + kKeeperSessionWait;
  for (;;) {
    std::optional<ProcStat> stat = ReadProcStat(pid);
    if (stat && stat->session == pid) return stat;
    if ((stat && stat->state == 'Z') || std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

LocalRuntime::LocalRuntime(LocalRuntimeOptions options)
    : options_(std::move(options)), hidden_(HiddenFromReplicas(options_.data_dir, options_.root)) {
  Adopt();
}

LocalRuntime::~LocalRuntime() = default;

fs::path LocalRuntime::ReplicaDir(int64_t job_id, int attempt, const std::string& task) const {
  return options_.root / "jobs" / std::to_string(job_id) / ("attempt-" + std::to_string(attempt)) /
         task;
}

void LocalRuntime::Adopt() {
  std::error_code ec;
  fs::path jobs = options_.root / "jobs";
  if (!fs::exists(jobs, ec)) return;
  // Exactly jobs/<job>/attempt-<n>/<task>/pid, never deeper: a replica's work/ is its own, and a
  // "pid" file it leaves there is not ours.
  auto folders = [](const fs::path& in) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(in, ec)) {
      if (e.is_directory(ec) && !e.is_symlink(ec)) out.push_back(e.path());
    }
    return out;
  };
  for (const fs::path& job : folders(jobs)) {
    auto job_id = ParseNumber<int64_t>(job.filename().string());
    if (!job_id) continue;
    for (const fs::path& attempt : folders(job)) {
      for (const fs::path& dir : folders(attempt)) {
        auto handle = ParseHandle(ReadFile(dir / kPidFile));
        if (!handle) continue;
        Process p = Known(*job_id, dir.filename().string(), handle->first, handle->second, dir);
        Tail(dir);
        if (!Alive(p)) continue;
        LogJson(LogLevel::kInfo, "replica_adopted",
                {{"job", std::to_string(*job_id)}, {"task", p.task}, {"pid", p.pid}});
        processes_[Handle(p.pid, p.start_ticks)] = std::move(p);
      }
    }
  }
}

std::string LocalRuntime::CgroupPrefix(const fs::path& dir) const {
  if (options_.sandbox.cgroup_root.empty()) return "";
  // <job>-<attempt-n>-<task>-<keeper pid>: one per start, found again by a restarted server.
  return (options_.sandbox.cgroup_root /
          (dir.parent_path().parent_path().filename().string() + "-" +
           dir.parent_path().filename().string() + "-" + dir.filename().string() + "-"))
      .string();
}

LocalRuntime::Process LocalRuntime::Known(int64_t job_id, const std::string& task, int pid,
                                          uint64_t start_ticks, const fs::path& dir) const {
  return Process{
      job_id, task, pid, start_ticks, dir, std::nullopt, CgroupPath(CgroupPrefix(dir), pid)};
}

void LocalRuntime::Tail(const fs::path& dir) {
  auto job_id = ParseNumber<int64_t>(dir.parent_path().parent_path().filename().string());
  if (job_id) {
    tailer_.Follow(dir / kOutputFile, dir / kOffsetFile, *job_id, dir.filename().string());
  }
}

bool LocalRuntime::Alive(const Process& p) {
  std::optional<ProcStat> stat = ReadProcStat(p.pid);
  if (!stat || stat->start_ticks != p.start_ticks) {
    KillCgroup(p.cgroup);  // the replica has ended: whatever it left running ends with it
    return false;
  }
  if (stat->state == 'Z' || stat->state == 'X') {
    int status = 0;
    waitpid(p.pid, &status, WNOHANG);  // our own keeper: reap it
    KillCgroup(p.cgroup);  // the replica has ended: whatever it left running ends with it
    return false;
  }
  return true;
}

Status LocalRuntime::MakeReplicaDir(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(options_.root.parent_path(), ec);
  if (ec) return Internal("cannot create " + options_.root.parent_path().string());
  fs::path folder = options_.root;
  TY_RETURN_IF_ERROR(MakeServerFolder(folder, options_.sandbox));
  for (const fs::path& step : dir.lexically_relative(options_.root)) {
    folder /= step;
    TY_RETURN_IF_ERROR(MakeServerFolder(folder, options_.sandbox));
  }
  return Status::Ok();
}

std::vector<std::string> LocalRuntime::ExecArgv(const fs::path& work_dir,
                                                const std::vector<std::string>& command) const {
  if (options_.sandbox.bwrap.empty()) return command;
  return BwrapArgv(options_.sandbox.bwrap, SandboxView{hidden_, work_dir}, command);
}

StatusOr<LocalRuntime::Process> LocalRuntime::Start(int64_t job_id, const fs::path& dir,
                                                    const ReplicaLaunch& launch) {
  TY_ASSIGN_OR_RETURN(
      PreparedSandbox sandbox,
      PrepareSandbox(options_.sandbox, dir / kWorkDir, CgroupPrefix(dir), launch.cpu_seconds));
  std::vector<std::string> argv = ExecArgv(dir / kWorkDir, launch.argv);
  std::vector<std::string> env = launch.env;
  std::vector<char*> argv_c = CStrings(argv);
  std::vector<char*> env_c = CStrings(env);
  const KeeperFiles files{dir.string(), (dir / kOutputFile).string(),
                          (dir / (std::string(kExitFile) + ".tmp")).string(),
                          (dir / kExitFile).string()};
  std::error_code ec;
  fs::remove(dir / kExitFile, ec);
  int gate[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return Unavailable("pipe failed: cannot start a replica");
  pid_t pid = fork();
  if (pid < 0) {
    close(gate[0]);
    close(gate[1]);
    return Unavailable("fork failed: cannot start a replica");
  }
  if (pid == 0) RunKeeper(files, argv_c.data(), env_c.data(), gate, sandbox);
  close(gate[0]);
  // The replica's cgroup exists before it is let go (the gate): it joins it first thing.
  const CgroupLimits limits = options_.sandbox.cgroup_limits ? launch.cgroup : CgroupLimits{};
  if (Status made = MakeCgroup(CgroupPath(CgroupPrefix(dir), pid), limits); !made.ok()) {
    close(gate[1]);
    return made;
  }
  // Closing the gate unsaid sends the keeper away without running the command.
  std::optional<ProcStat> stat = AwaitKeeperSession(pid);
  if (!stat) {
    close(gate[1]);
    return Internal("started replica " + std::to_string(pid) +
                    " did not become a session of its own in /proc");
  }
  Process p = Known(job_id, dir.filename().string(), pid, stat->start_ticks, dir);
  if (!WritePrivateFile(dir / kPidFile, Handle(pid, stat->start_ticks))) {
    close(gate[1]);
    return Internal("cannot write the pid file in " + dir.string());
  }
  const char go = 'g';
  WriteAll(gate[1], &go, 1);
  close(gate[1]);
  return p;
}

StatusOr<JobRun> LocalRuntime::Launch(const JobRecord& job, int attempt, Timestamp now,
                                      LeaseDeadline lease_deadline) {
  (void)now;
  // One port per replica: every replica listens on 127.0.0.1, so "2222 everywhere" would clash.
  std::map<std::pair<int, int>, int> ports;
  Status port_error = Status::Ok();
  ReplicaPlanOptions options;
  options.project_number = job.project_number;
  options.job_id = job.id;
  if (options_.encode_job_spec) options.job_spec_json = options_.encode_job_spec(job.job.job_spec);
  options.endpoint = [&](int pool, int index) {
    auto [it, inserted] = ports.try_emplace({pool, index}, 0);
    if (inserted) {
      auto port = FreePort();
      if (!port.ok()) port_error = port.status();
      it->second = port.ok() ? *port : 0;
    }
    return ReplicaEndpoint{"127.0.0.1", it->second};
  };
  TY_ASSIGN_OR_RETURN(int master_port, FreePort());
  options.master_port = master_port;
  TY_ASSIGN_OR_RETURN(std::vector<Replica> replicas, PlanReplicas(job.job, options));
  TY_RETURN_IF_ERROR(port_error);
  TY_RETURN_IF_ERROR(RequireCommands(replicas, "the local runtime runs a command on this host"));

  std::vector<std::string> base_env;
  const std::optional<ReplicaUser>& user = options_.sandbox.user;
  for (const char* name : kInherited) {
    // The replicas' user has a home of its own: its working directory.
    if (user && (std::string_view(name) == "HOME" || std::string_view(name) == "USER")) continue;
    if (const char* value = getenv(name)) base_env.push_back(std::string(name) + "=" + value);
  }
  if (user) base_env.push_back("USER=" + user->name);
  base_env.push_back("PYTHONUNBUFFERED=1");  // print() reaches the log as it happens

  JobRun run;
  run.attempt = attempt;
  std::lock_guard lock(mu_);
  for (const Replica& r : replicas) {
    ReplicaLaunch launch;
    launch.argv = r.command;
    launch.argv.insert(launch.argv.end(), r.args.begin(), r.args.end());
    launch.env = base_env;
    if (user) {
      launch.env.push_back("HOME=" +
                           (ReplicaDir(job.id, attempt, r.task_name) / kWorkDir).string());
    }
    launch.env.push_back("HOSTNAME=" + r.hostname);
    for (const EnvVar& var : r.env) launch.env.push_back(var.name + "=" + var.value);
    launch.cpu_seconds = CpuSecondsFor(job.job.job_spec);
    launch.cgroup = CgroupLimitsOf(job.job.job_spec, r.pool);
    fs::path dir = ReplicaDir(job.id, attempt, r.task_name);
    TY_RETURN_IF_ERROR(MakeReplicaDir(dir));
    // Launched before (a retried pass, or a server that died before storing the run): the same
    // replica is adopted, never started twice.
    if (auto handle = ParseHandle(ReadFile(dir / kPidFile))) {
      run.replicas.push_back(ReplicaRun{r.task_name, ReplicaPhase::kRunning, std::nullopt, 0,
                                        Handle(handle->first, handle->second)});
      Process p = Known(job.id, r.task_name, handle->first, handle->second, dir);
      if (Alive(p)) processes_[Handle(p.pid, p.start_ticks)] = p;
      Tail(dir);
      continue;
    }
    if (!WritePrivateFile(dir / kLaunchFile, LaunchJson(launch, r.image_uri).dump())) {
      return Internal("cannot write " + (dir / kLaunchFile).string());
    }
    if (std::chrono::steady_clock::now() >= lease_deadline) {
      return Unavailable("the lease on job " + std::to_string(job.id) + " ran out before " +
                         r.task_name + " was started");
    }
    TY_ASSIGN_OR_RETURN(Process p, Start(job.id, dir, launch));
    const std::string handle = Handle(p.pid, p.start_ticks);
    Tail(dir);
    processes_[handle] = std::move(p);
    run.replicas.push_back(
        ReplicaRun{r.task_name, ReplicaPhase::kRunning, std::nullopt, 0, handle});
  }
  return run;
}

StatusOr<Observation> LocalRuntime::Observe(const JobRecord& job, Timestamp now) {
  Observation out;
  if (!job.run) return out;
  std::lock_guard lock(mu_);
  for (const ReplicaRun& r : job.run->replicas) {
    ReplicaObservation seen{r.task_name, ReplicaPhase::kLost, std::nullopt, r.handle, std::nullopt};
    fs::path dir = ReplicaDir(job.id, job.run->attempt, r.task_name);
    // The pid file names the replica's latest keeper. It differs from the row's when a process
    // restarted the replica in place and died before recording it: that keeper is the replica
    // now (and the exit code file is its), not a lost replica to retry the whole job for.
    auto handle = ParseHandle(ReadFile(dir / kPidFile));
    if (!handle) handle = ParseHandle(r.handle);
    if (handle) {
      Process p = Known(job.id, r.task_name, handle->first, handle->second, dir);
      seen.handle = Handle(p.pid, p.start_ticks);
      if (Alive(p)) {
        seen.phase = ReplicaPhase::kRunning;
        processes_.try_emplace(seen.handle, p);
      } else if (auto code = ExitCodeIn(dir)) {
        seen.phase = ReplicaPhase::kExited;
        seen.exit_code = *code;
      }
    }
    out.replicas.push_back(std::move(seen));
  }
  out.next_change = now + std::chrono::duration_cast<std::chrono::microseconds>(options_.poll);
  return out;
}

StatusOr<std::string> LocalRuntime::RestartReplica(const JobRecord& job, const ReplicaRun& replica,
                                                   Timestamp now, LeaseDeadline lease_deadline) {
  (void)now;
  if (!job.run) return FailedPrecondition("job " + std::to_string(job.id) + " has no run");
  if (std::chrono::steady_clock::now() >= lease_deadline) {
    return Unavailable("the lease on job " + std::to_string(job.id) + " ran out");
  }
  fs::path dir = ReplicaDir(job.id, job.run->attempt, replica.task_name);
  const std::optional<ReplicaLaunch> launch = ParseLaunch(
      nlohmann::json::parse(ReadFile(dir / kLaunchFile, kMaxLaunchFile), nullptr, false));
  if (!launch) {
    return Internal("replica " + replica.task_name + " has no launch record in " + dir.string());
  }
  std::lock_guard lock(mu_);
  // The same command, environment and working directory: checkpoints written there survive.
  TY_ASSIGN_OR_RETURN(Process p, Start(job.id, dir, *launch));
  const std::string handle = Handle(p.pid, p.start_ticks);
  processes_[handle] = std::move(p);
  Tail(dir);
  return handle;
}

void LocalRuntime::Signal(Process& p) {
  const auto wall = std::chrono::steady_clock::now();
  if (!p.term_sent) {
    kill(-p.pid, SIGTERM);
    TermCgroup(p.cgroup);  // children that left the process group (setsid) too
    p.term_sent = wall;
  } else if (wall - *p.term_sent >= options_.grace) {
    kill(-p.pid, SIGKILL);
    KillCgroup(p.cgroup);
  }
}

void LocalRuntime::AdoptLocked(const JobRecord& job) {
  // What this process started or adopted, and whatever the row names (taken over from another).
  if (job.run) {
    for (const ReplicaRun& r : job.run->replicas) {
      auto handle = ParseHandle(r.handle);
      if (!handle) continue;
      std::string key = Handle(handle->first, handle->second);
      if (processes_.count(key) > 0) continue;
      Process p = Known(job.id, r.task_name, handle->first, handle->second,
                        ReplicaDir(job.id, job.run->attempt, r.task_name));
      if (Alive(p)) processes_[key] = std::move(p);
    }
  }
}

Status LocalRuntime::Notice(const JobRecord& job) {
  std::lock_guard lock(mu_);
  AdoptLocked(job);
  // SIGTERM once, now; the SIGKILL waits for Stop, after the grace counted from here.
  for (auto& [handle, p] : processes_) {
    if (p.job_id == job.id && !p.term_sent && Alive(p)) Signal(p);
  }
  return Status::Ok();
}

Status LocalRuntime::Stop(const JobRecord& job) {
  std::lock_guard lock(mu_);
  AdoptLocked(job);
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = it->second;
    if (p.job_id != job.id) {
      ++it;
      continue;
    }
    if (!Alive(p)) {
      it = processes_.erase(it);
      continue;
    }
    Signal(p);
    ++it;
  }
  return Status::Ok();
}

int LocalRuntime::Process::attempt() const {
  const std::string name = dir.parent_path().filename().string();  // "attempt-<n>"
  return ParseNumber<int>(name.substr(name.find('-') + 1)).value_or(-1);
}

std::vector<ReplicaOwner> LocalRuntime::JobsWithReplicas() {
  std::lock_guard lock(mu_);
  std::set<ReplicaOwner> owners;
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (!Alive(it->second)) {
      it = processes_.erase(it);
      continue;
    }
    owners.insert(ReplicaOwner{it->second.job_id, it->second.attempt()});
    ++it;
  }
  return std::vector<ReplicaOwner>(owners.begin(), owners.end());
}

Status LocalRuntime::StopOtherAttempts(int64_t job_id, int keep) {
  std::lock_guard lock(mu_);
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = it->second;
    if (p.job_id != job_id || p.attempt() == keep) {
      ++it;
    } else if (!Alive(p)) {
      it = processes_.erase(it);
    } else {
      Signal(p);
      ++it;
    }
  }
  return Status::Ok();
}

std::vector<LogLine> LocalRuntime::CollectLogs(Timestamp now) {
  std::lock_guard lock(mu_);
  std::set<fs::path> live;
  for (const auto& [handle, p] : processes_) live.insert(p.dir / kOutputFile);
  return tailer_.Collect(now, [&](const fs::path& file) { return live.count(file) == 0; });
}

void LocalRuntime::LogsStored() {
  std::lock_guard lock(mu_);
  tailer_.Stored();
}

void LocalRuntime::Shutdown(const std::vector<int64_t>& jobs) {
  const std::set<int64_t> ours(jobs.begin(), jobs.end());
  const auto deadline = std::chrono::steady_clock::now() + options_.grace;
  for (;;) {
    bool any = false;
    {
      std::lock_guard lock(mu_);
      for (auto it = processes_.begin(); it != processes_.end();) {
        if (ours.count(it->second.job_id) == 0) {
          ++it;
          continue;
        }
        if (!Alive(it->second)) {
          it = processes_.erase(it);
          continue;
        }
        any = true;
        if (std::chrono::steady_clock::now() >= deadline) {
          kill(-it->second.pid, SIGKILL);
          KillCgroup(it->second.cgroup);
        } else if (!it->second.term_sent) {
          Signal(it->second);
        }
        ++it;
      }
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace trainyard::local
