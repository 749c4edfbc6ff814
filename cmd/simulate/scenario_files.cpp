#include "cmd/simulate/scenario_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "workers/files/text_file.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;

Status Bad(const std::string& source, const std::string& field, const std::string& why) {
  return InvalidArgument(source + ": " + field + ": " + why);
}

}  // namespace

bool ValidScenarioName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

StatusOr<std::string> ResolveScenarioPath(const std::string& source, const std::string& field,
                                          const std::string& dir, const std::string& relative,
                                          const FileRules& rules) {
  if (relative.empty()) return Bad(source, field, "must name a file");
  const fs::path given(relative);
  if (!rules.confined) return (fs::path(dir) / given).lexically_normal().string();
  if (given.is_absolute()) {
    return Bad(source, field, "\"" + relative + "\" must be a path relative to the scenario");
  }
  for (const fs::path& part : given) {
    if (part == "..") {
      return Bad(source, field, "\"" + relative + "\" must stay below the scenario's folder");
    }
  }
  // No link on the way: a folder of the upload that points elsewhere would read outside it.
  fs::path at(dir);
  for (const fs::path& part : given.lexically_normal()) {
    at /= part;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Bad(source, field, "\"" + relative + "\" passes through a symbolic link");
    }
  }
  return at.string();
}

StatusOr<std::string> ReadScenarioFile(const std::string& path, const FileRules& rules) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return InvalidArgument(path + ": cannot be read");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > rules.max_bytes) {
    ::close(fd);
    return InvalidArgument(path + ": is larger than " + std::to_string(rules.max_bytes) + " bytes");
  }
  // A file that shrank while read is read as it now is.
  std::string text = files::ReadUpTo(fd, static_cast<size_t>(st.st_size));
  ::close(fd);
  return text;
}

Status WriteNewFile(const std::string& path, std::string_view text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Internal(path + ": cannot be written: " + std::strerror(errno));
  const bool written = files::WriteAll(fd, text);
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) return Internal(path + ": cannot be written");
  return Status::Ok();
}

}  // namespace trainyard::simulate
