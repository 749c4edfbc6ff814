#include "workers/slurm/shared_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "workers/files/text_file.h"

namespace trainyard::slurm {
namespace fs = std::filesystem;
using files::UniqueFd;

namespace {

// One step of a walk: a name that stays in its folder.
bool IsPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

bool IsLinkAt(int dir, const char* name) {
  struct stat st {};
  return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

// The folder a moment ago made or checked is still the server's (not one swapped in since).
bool OwnedByServer(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && st.st_uid == geteuid();
}

// `name` in the folder `dir`, opened as a folder without following a link: -1 with errno ELOOP
// for a link (openat says ENOTDIR for one), ENOENT when missing.
int OpenFolderFd(int dir, const std::string& name) {
  if (!IsPlainName(name)) {
    errno = EINVAL;
    return -1;
  }
  const int fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOTDIR) errno = IsLinkAt(dir, name.c_str()) ? ELOOP : ENOTDIR;
  return fd;
}

// The root as OpenTreeRoot checks it: -1 with errno (EPERM: another user's).
int OpenRootFd(const fs::path& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOTDIR) errno = IsLinkAt(AT_FDCWD, dir.c_str()) ? ELOOP : ENOTDIR;
    return -1;
  }
  if (!OwnedByServer(fd.get())) {
    errno = EPERM;
    return -1;
  }
  return fd.Release();
}

// The folder down `names` from `dir`; on failure invalid, with errno, and `*reached` the number
// of names opened before the one that failed.
UniqueFd WalkFolders(int dir, const std::vector<std::string>& names, size_t* reached) {
  UniqueFd at(fcntl(dir, F_DUPFD_CLOEXEC, 0));
  for (*reached = 0; at.valid() && *reached < names.size(); ++*reached) {
    UniqueFd next(OpenFolderFd(at.get(), names[*reached]));
    if (!next.valid()) return next;
    at = std::move(next);
  }
  return at;
}

std::string Joined(const std::vector<std::string>& names, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < names.size(); ++i) out += (i == 0 ? "" : "/") + names[i];
  return out;
}

Status WalkError(const std::string& shown, int err) {
  switch (err) {
    case ENOENT:
      return NotFound(shown + " does not exist");
    case ELOOP:
      return FailedPrecondition(shown + " is a symbolic link: refused");
    case ENOTDIR:
      return FailedPrecondition(shown + " is not a folder: refused");
    case EPERM:
      return FailedPrecondition(shown + " is not owned by the server's user: refused");
    default:
      return Internal("cannot open " + shown + ": " + std::strerror(err));
  }
}

// `name` in `dir`, made when missing (`mode`) and opened either way.
StatusOr<UniqueFd> OpenOrMakeFolder(int dir, const std::string& name, const std::string& shown,
                                    mode_t mode) {
  if (mkdirat(dir, name.c_str(), mode) != 0 && errno != EEXIST) {
    return Internal("cannot make " + shown + ": " + std::strerror(errno));
  }
  UniqueFd fd(OpenFolderFd(dir, name));
  if (!fd.valid()) return WalkError(shown, errno);
  return fd;
}

StatusOr<UniqueFd> MakeNewFolder(int dir, const std::string& name, const std::string& shown) {
  if (!IsPlainName(name)) return InvalidArgument("not a folder name: " + shown);
  if (mkdirat(dir, name.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return AlreadyExists(shown + " is there already: refused, not reused (whoever can write " +
                           "its folder may have left it there, or a link in its place)");
    }
    return Internal("cannot make " + shown + ": " + std::strerror(errno));
  }
  UniqueFd fd(OpenFolderFd(dir, name));
  if (!fd.valid()) return WalkError(shown, errno);
  if (!OwnedByServer(fd.get())) {
    return FailedPrecondition(shown + " was swapped for another's right after it was made");
  }
  return fd;
}

std::string AttemptName(int attempt) { return "attempt-" + std::to_string(attempt); }

}  // namespace

StatusOr<UniqueFd> OpenTreeRoot(const fs::path& dir) {
  UniqueFd fd(OpenRootFd(dir));
  if (!fd.valid()) return WalkError(dir.string(), errno);
  return fd;
}

StatusOr<UniqueFd> OpenFolderUnder(int dir, const std::vector<std::string>& names) {
  size_t reached = 0;
  UniqueFd fd = WalkFolders(dir, names, &reached);
  if (!fd.valid()) return WalkError(Joined(names, reached + 1), errno);
  return fd;
}

StatusOr<UniqueFd> MakeNewFolderAt(int dir, const std::string& name) {
  return MakeNewFolder(dir, name, name);
}

Status MakePrivate(int fd, const std::optional<FolderOwner>& owner, const std::string& shown) {
  if (owner && fchown(fd, owner->first, owner->second) != 0) {
    return Internal("cannot give " + shown + " to uid " + std::to_string(owner->first) + ": " +
                    std::strerror(errno));
  }
  if (fchmod(fd, 0700) != 0) return Internal("cannot chmod " + shown + ": " + std::strerror(errno));
  return Status::Ok();
}

std::vector<std::string> AttemptPath(int64_t job_id, int attempt) {
  return {"jobs", std::to_string(job_id), AttemptName(attempt)};
}

StatusOr<AttemptFolders> MakeAttemptFolders(int root, int64_t job_id, int attempt) {
  const std::vector<std::string> path = AttemptPath(job_id, attempt);
  TY_ASSIGN_OR_RETURN(UniqueFd jobs, OpenOrMakeFolder(root, path[0], Joined(path, 1), 0755));
  // Only the server writes jobs/ (every job's folder is made there): nobody else could have left a
  // job's folder or a link in its place.
  if (!OwnedByServer(jobs.get())) return WalkError(Joined(path, 1), EPERM);
  TY_ASSIGN_OR_RETURN(UniqueFd job, OpenOrMakeFolder(jobs.get(), path[1], Joined(path, 2), 0700));
  TY_ASSIGN_OR_RETURN(UniqueFd made, MakeNewFolder(job.get(), path[2], Joined(path, 3)));
  return AttemptFolders{std::move(job), std::move(made)};
}

void RemoveAttemptFolder(const AttemptFolders& folders, int attempt,
                         const std::vector<std::string>& file_names) {
  for (const std::string& name : file_names) {
    if (IsPlainName(name)) unlinkat(folders.attempt.get(), name.c_str(), 0);
  }
  unlinkat(folders.job.get(), AttemptName(attempt).c_str(), AT_REMOVEDIR);
}

int OpenRegularInTree(const fs::path& root_dir, const fs::path& file) {
  std::vector<std::string> names;
  for (const fs::path& part : file.lexically_relative(root_dir)) names.push_back(part.string());
  if (names.empty() || !std::all_of(names.begin(), names.end(), IsPlainName)) {
    errno = EINVAL;  // not below the root
    return -1;
  }
  const std::string name = names.back();
  names.pop_back();
  UniqueFd root(OpenRootFd(root_dir));
  if (!root.valid()) return -1;
  size_t reached = 0;
  UniqueFd folder = WalkFolders(root.get(), names, &reached);
  if (!folder.valid()) return -1;
  return files::OpenRegularForReadingAt(folder.get(), name);
}

std::string ReadRegularAt(int dir, const std::string& name, size_t max_bytes) {
  if (!IsPlainName(name)) return "";
  UniqueFd fd(files::OpenRegularForReadingAt(dir, name));
  return fd.valid() ? files::ReadUpTo(fd.get(), max_bytes) : "";
}

bool IsRegularAt(int dir, const std::string& name) {
  struct stat st {};
  return IsPlainName(name) && fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(st.st_mode);
}

Status WriteNewFileAt(int dir, const std::string& name, std::string_view text) {
  if (!IsPlainName(name)) return InvalidArgument("not a file name: " + name);
  UniqueFd fd(
      openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    if (errno == EEXIST) return AlreadyExists(name + " is there already: refused");
    return Internal("cannot write " + name + ": " + std::strerror(errno));
  }
  if (!files::WriteAll(fd.get(), text) || close(fd.Release()) != 0) {
    const Status failed = Internal("cannot write " + name + ": " + std::strerror(errno));
    unlinkat(dir, name.c_str(), 0);
    return failed;
  }
  return Status::Ok();
}

Status MarkAt(int dir, const std::string& name) {
  if (!IsPlainName(name)) return InvalidArgument("not a file name: " + name);
  UniqueFd fd(
      openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.valid()) return Status::Ok();
  const int err = errno;
  // Asked for before (a restart tried again): the marker is there, which is all it says.
  if (err == EEXIST && IsRegularAt(dir, name)) return Status::Ok();
  if (err == EEXIST) {
    return FailedPrecondition(name + " is there and is not a regular file: refused");
  }
  return Internal("cannot make " + name + ": " + std::strerror(err));
}

}  // namespace trainyard::slurm
