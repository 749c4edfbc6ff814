#pragma once
// Structured logs: one JSON object per line. spdlog 1.10 does not escape %v, so the line is built
// here with proper escaping and handed to spdlog whole (pattern "%v"). Never log secrets.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace trainyard {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  LogField(std::string_view k, int64_t v) : key(k), value(std::to_string(v)), raw(true) {}
  LogField(std::string_view k, int v) : key(k), value(std::to_string(v)), raw(true) {}
  LogField(std::string_view k, double v) : key(k), value(std::to_string(v)), raw(true) {}
  std::string_view key;
  std::string value;
  bool raw = false;  // a number: written without quotes
};

// While one lives, LogJson writes nothing from this thread: a what-if replay that the server runs
// drives a whole control plane of its own, whose admissions are not the server's to log.
class ScopedLogMute {
 public:
  ScopedLogMute();
  ~ScopedLogMute();
  ScopedLogMute(const ScopedLogMute&) = delete;
  ScopedLogMute& operator=(const ScopedLogMute&) = delete;

 private:
  bool was_;
};

void LogJson(LogLevel level, std::string_view event, std::initializer_list<LogField> fields);
// Fields chosen at run time (a field that only some events have).
void LogJson(LogLevel level, std::string_view event, std::span<const LogField> fields);

}  // namespace trainyard
