#include "workers/files/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace trainyard::files {
namespace fs = std::filesystem;

int OpenRegularForReading(const fs::path& path) { return OpenRegularForReadingAt(AT_FDCWD, path); }

int OpenRegularForReadingAt(int dir, const fs::path& path) {
  const int fd = openat(dir, path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

std::string ReadFile(const fs::path& path, size_t max_bytes) {
  const int fd = OpenRegularForReading(path);
  if (fd < 0) return "";
  std::string text = ReadUpTo(fd, max_bytes);
  close(fd);
  return text;
}

std::string ReadUpTo(int fd, size_t max_bytes) {
  std::string text;
  char buf[4096];
  while (text.size() < max_bytes) {
    const ssize_t n = read(fd, buf, std::min(sizeof(buf), max_bytes - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

bool WriteAll(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool WriteFileAtomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  // A fresh file, never one that is there already: whoever can write the folder could have left a
  // link at the temporary name to make us write elsewhere.
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, text);
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(tmp.c_str());
    return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace trainyard::files
