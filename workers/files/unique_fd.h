#pragma once
// A file descriptor that is closed when its owner goes: a walk through folders a job can write
// holds one descriptor per step, and every early return must let each one go.
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace trainyard::files {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // The descriptor, no longer closed here.
  int Release() { return std::exchange(fd_, -1); }
  // Keeps errno: an error path closes what it opened, then says why it failed.
  void Reset(int fd = -1) {
    if (fd_ >= 0) {
      const int saved = errno;
      close(fd_);
      errno = saved;
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace trainyard::files
