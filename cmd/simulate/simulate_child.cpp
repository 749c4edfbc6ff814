#include "cmd/simulate/simulate_child.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainyard::simulate {
namespace {

void SetLimit(int resource, uint64_t value) {
  const rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  setrlimit(resource, &limit);
}

// In the forked child: async-signal-safe calls only (the server has threads). Never returns.
[[noreturn]] void BecomeChild(int program, char* const* argv, const char* work_dir,
                              const std::optional<ChildUser>& user, const ChildLimits& limits,
                              int stderr_write) {
  setpgid(0, 0);
  // The server's death (even kill -9) ends the replay with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int null_fd = open("/dev/null", O_RDWR);
  dup2(null_fd, STDIN_FILENO);
  dup2(null_fd, STDOUT_FILENO);
  dup2(stderr_write, STDERR_FILENO);
  // The program by descriptor, opened by the server: the what-if user need not be able to reach
  // its path (a clone in root's home is not theirs to enter). Closed as the program starts.
  dup2(program, 3);
  fcntl(3, F_SETFD, FD_CLOEXEC);
  close_range(4, ~0U, 0);  // the server's sockets and database connections stay with the server
#if !defined(__SANITIZE_ADDRESS__)
  SetLimit(RLIMIT_AS, limits.memory_bytes);
#endif
  // CPU: SIGXCPU at the soft limit; the hard one a second later ends it for sure.
  const rlimit cpu{static_cast<rlim_t>(limits.cpu_seconds),
                   static_cast<rlim_t>(limits.cpu_seconds + 1)};
  setrlimit(RLIMIT_CPU, &cpu);
  SetLimit(RLIMIT_CORE, 0);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (user) {
    if (setgroups(0, nullptr) != 0 || setgid(user->gid) != 0 || setuid(user->uid) != 0 ||
        setuid(0) == 0) {
      static const char kMessage[] = "trainyard simulate: cannot drop to the what-if user\n";
      (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
      _exit(126);
    }
  }
  if (chdir(work_dir) != 0) _exit(126);
  fexecve(3, argv, environ);
  _exit(127);
}

}  // namespace

StatusOr<std::unique_ptr<SimulateChild>> SimulateChild::Start(const std::string& program,
                                                              const std::vector<std::string>& args,
                                                              const std::string& work_dir,
                                                              const std::optional<ChildUser>& user,
                                                              const ChildLimits& limits) {
  // Everything the child needs is made before the fork.
  std::vector<std::string> owned{program};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int program_fd = open(program.c_str(), O_PATH | O_CLOEXEC);
  if (program_fd < 0) return Unavailable("cannot open " + program + " for a what-if run");
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(program_fd);
    return Unavailable("no pipe for a what-if run");
  }
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(program_fd);
    close(out[0]);
    close(out[1]);
    return Unavailable("no pipe for a what-if run");
  }
  const pid_t pid = fork();
  if (pid == 0) BecomeChild(program_fd, argv.data(), work_dir.c_str(), user, limits, out[1]);
  close(program_fd);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    close(wake[0]);
    close(wake[1]);
    return Unavailable("fork failed: cannot start a what-if run");
  }
  setpgid(pid, pid);  // also here, so a Cancel right away finds the group
  return std::unique_ptr<SimulateChild>(
      new SimulateChild(pid, out[0], wake[0], wake[1], limits.wall));
}

SimulateChild::SimulateChild(pid_t pid, int stderr_fd, int wake_read, int wake_write,
                             std::chrono::milliseconds wall)
    : pid_(pid),
      stderr_fd_(stderr_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      wall_(wall) {}

SimulateChild::~SimulateChild() {
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  close(stderr_fd_);
  close(wake_read_);
  close(wake_write_);
}

void SimulateChild::Cancel() {
  cancelled_ = true;
  const char byte = 1;
  (void)!write(wake_write_, &byte, 1);
}

ChildOutcome SimulateChild::Wait(const std::function<void(const std::string&)>& line) {
  ChildOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + wall_;
  std::string pending;
  bool open = true;
  while (open) {
    if (cancelled_) {
      outcome.kind = ChildOutcome::Kind::kCancelled;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.kind = ChildOutcome::Kind::kTimedOut;
      break;
    }
    pollfd fds[2] = {{stderr_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1'000'000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buf[4096];
    const ssize_t n = read(stderr_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    pending.append(buf, static_cast<size_t>(n));
    for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
      outcome.last_line = pending.substr(0, end);
      pending.erase(0, end + 1);
      if (line) line(outcome.last_line);
    }
    // A line longer than any the replay writes is cut rather than held without bound.
    if (pending.size() > 64 * 1024) pending.clear();
  }
  if (open) kill(-pid_, SIGKILL);  // cancelled or past its wall time
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  if (outcome.kind == ChildOutcome::Kind::kExited) {
    if (WIFSIGNALED(status)) {
      outcome.kind = ChildOutcome::Kind::kSignalled;
      outcome.code = WTERMSIG(status);
    } else {
      outcome.code = WEXITSTATUS(status);
    }
  }
  return outcome;
}

StatusOr<std::optional<ChildUser>> WhatIfUser(const std::string& name) {
  if (geteuid() != 0) return std::optional<ChildUser>();
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return FailedPrecondition("the server runs as root and there is no user " + name +
                              " to run what-if replays as (scripts/setup creates it)");
  }
  return std::optional<ChildUser>(ChildUser{pw.pw_uid, pw.pw_gid});
}

}  // namespace trainyard::simulate
