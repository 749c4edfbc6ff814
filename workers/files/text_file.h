#pragma once
// Small files a runtime keeps beside a replica (pid, exit code, output offsets): read whole, and
// written so that a reader never sees half of one, even after a kill -9 mid-write.
#include <charconv>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::files {

// The file's bytes; empty when it is missing or unreadable.
std::string ReadFile(const std::filesystem::path& path);
// Writes a sibling temporary file and renames it over `path`.
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
