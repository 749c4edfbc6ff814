#include "services/logs/log_entry.h"

#include <array>
#include <charconv>
#include <utility>

namespace trainyard {
namespace {

constexpr std::array<std::pair<LogSeverity, std::string_view>, 9> kNames{{
    {LogSeverity::kDefault, "DEFAULT"},
    {LogSeverity::kDebug, "DEBUG"},
    {LogSeverity::kInfo, "INFO"},
    {LogSeverity::kNotice, "NOTICE"},
    {LogSeverity::kWarning, "WARNING"},
    {LogSeverity::kError, "ERROR"},
    {LogSeverity::kCritical, "CRITICAL"},
    {LogSeverity::kAlert, "ALERT"},
    {LogSeverity::kEmergency, "EMERGENCY"},
}};

}  // namespace

std::string_view SeverityName(LogSeverity severity) {
  for (const auto& [value, name] : kNames) {
    if (value == severity) return name;
  }
  return "DEFAULT";
}

std::optional<LogSeverity> ParseSeverity(std::string_view text) {
  for (const auto& [value, name] : kNames) {
    if (name == text) return value;
  }
  int number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  for (const auto& [value, name] : kNames) {
    if (static_cast<int>(value) == number) return value;
  }
  return std::nullopt;
}

LogSeverity SeverityFromNumber(int64_t number) {
  for (const auto& [value, name] : kNames) {
    if (static_cast<int64_t>(value) == number) return value;
  }
  return LogSeverity::kDefault;
}

}  // namespace trainyard
