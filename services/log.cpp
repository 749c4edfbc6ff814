#include "services/log.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "services/json_text.h"

namespace trainyard {
namespace {

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

namespace {
thread_local bool muted = false;
}  // namespace

ScopedLogMute::ScopedLogMute() : was_(muted) { muted = true; }
ScopedLogMute::~ScopedLogMute() { muted = was_; }

void LogJson(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  LogJson(level, event, std::span<const LogField>(fields.begin(), fields.size()));
}

void LogJson(LogLevel level, std::string_view event, std::span<const LogField> fields) {
  auto spd_level = level == LogLevel::kDebug   ? spdlog::level::debug
                   : level == LogLevel::kWarn  ? spdlog::level::warn
                   : level == LogLevel::kError ? spdlog::level::err
                                               : spdlog::level::info;
  if (muted || !spdlog::should_log(spd_level)) return;
  auto now = std::chrono::system_clock::now();
  std::string line = "{\"ts\":";
  line += std::to_string(std::chrono::duration<double>(now.time_since_epoch()).count());
  line += ",\"level\":\"";
  line += LevelName(level);
  line += "\",\"event\":";
  AppendJsonString(line, event);
  for (const LogField& f : fields) {
    line.push_back(',');
    AppendJsonString(line, f.key);
    line.push_back(':');
    if (f.raw) {
      line += f.value;
    } else {
      AppendJsonString(line, f.value);
    }
  }
  line.push_back('}');
  spdlog::log(spd_level, "{}", line);
}

}  // namespace trainyard
