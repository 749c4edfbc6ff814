#include "services/log.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

namespace trainyard {
namespace {

void AppendEscaped(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

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

void LogJson(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  auto spd_level = level == LogLevel::kDebug   ? spdlog::level::debug
                   : level == LogLevel::kWarn  ? spdlog::level::warn
                   : level == LogLevel::kError ? spdlog::level::err
                                               : spdlog::level::info;
  if (!spdlog::should_log(spd_level)) return;
  auto now = std::chrono::system_clock::now();
  std::string line = "{\"ts\":";
  line += std::to_string(std::chrono::duration<double>(now.time_since_epoch()).count());
  line += ",\"level\":\"";
  line += LevelName(level);
  line += "\",\"event\":";
  AppendEscaped(line, event);
  for (const LogField& f : fields) {
    line.push_back(',');
    AppendEscaped(line, f.key);
    line.push_back(':');
    if (f.raw) {
      line += f.value;
    } else {
      AppendEscaped(line, f.value);
    }
  }
  line.push_back('}');
  spdlog::log(spd_level, "{}", line);
}

}  // namespace trainyard
