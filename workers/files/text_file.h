#pragma once
// Small files a runtime keeps beside a replica (pid, exit code, output offsets): read whole, and
// written so that a reader never sees half of one, even after a kill -9 mid-write. A replica may
// be able to write where these live, so nothing here follows a symbolic link or blocks on a FIFO,
// and a read is capped.
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::files {

// A descriptor of `path` opened for reading, or -1 when it is missing, a symbolic link, or not a
// regular file (a FIFO, a device, a directory): O_NOFOLLOW | O_NONBLOCK, then fstat.
int OpenRegularForReading(const std::filesystem::path& path);
// The same, `path` taken from the folder open at `dir` (AT_FDCWD: the working directory). Only
// the last step is not followed: a walk that must follow no link at all passes one name.
int OpenRegularForReadingAt(int dir, const std::filesystem::path& path);
// Up to `max_bytes` of the file; empty when it is missing, unreadable or not a regular file.
std::string ReadFile(const std::filesystem::path& path, size_t max_bytes = 64 * 1024);
// Up to `max_bytes` read from the open `fd`, from where it stands.
std::string ReadUpTo(int fd, size_t max_bytes);
// Writes all of `text` to the open `fd`; false when a write fails.
bool WriteAll(int fd, std::string_view text);
// Writes a new sibling temporary file (never one left there, never through a link) and renames it
// over `path`.
bool WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

// A whole decimal number, or nullopt (no sign games, no trailing text).
template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace trainyard::files
