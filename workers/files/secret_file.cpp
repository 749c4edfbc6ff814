#include "workers/files/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "services/auth/api_token.h"
#include "workers/files/text_file.h"

namespace trainyard::files {

StatusOr<std::string> LoadOrCreateSecret(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return Internal("cannot create " + path.parent_path().string() + ": " + ec.message());
  TY_ASSIGN_OR_RETURN(std::string fresh, NewTokenHashKey());
  // Written whole to a file of our own, then published with link(), which never replaces: a
  // reader sees the whole secret or none, and of two servers starting at once, one secret wins.
  const std::string tmp = path.string() + "." + std::to_string(getpid()) + ".tmp";
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot create " + tmp);
  const bool written = write(fd, fresh.data(), fresh.size()) == static_cast<ssize_t>(fresh.size());
  const bool closed = close(fd) == 0;
  const bool published = written && closed && link(tmp.c_str(), path.c_str()) == 0;
  const int link_error = errno;
  unlink(tmp.c_str());
  if (published) return fresh;
  if (!written || !closed || link_error != EEXIST) return Internal("cannot write " + path.string());
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
    return FailedPrecondition(path.string() + " must be a regular file only its owner can read");
  }
  std::string secret = ReadFile(path);
  if (secret.size() != fresh.size()) return Internal(path.string() + " is not a whole secret");
  return secret;
}

}  // namespace trainyard::files
