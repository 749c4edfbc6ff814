#include "services/span_trace.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace trainyard {
namespace {

struct TraceFile {
  std::mutex mu;
  std::FILE* file = nullptr;
};

TraceFile& Trace() {
  static TraceFile* trace = [] {
    auto* t = new TraceFile;  // never destroyed: threads may trace during exit
    if (const char* path = std::getenv("TRAINYARD_SPAN_TRACE"); path != nullptr && *path != '\0') {
      t->file = std::fopen(path, "a");
    }
    return t;
  }();
  return *trace;
}

long long Micros(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

bool SpanTraceOn() { return Trace().file != nullptr; }

std::string SpanLine(std::chrono::system_clock::time_point start,
                     std::chrono::system_clock::time_point end, int who, size_t statements,
                     std::string_view what) {
  // The opening words name the statement; whitespace is folded so a line stays one line.
  std::string words;
  for (char c : what.substr(0, 200)) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (words.empty() || words.back() == ' ')) continue;
    words.push_back(space ? ' ' : c);
    if (words.size() >= 60) break;
  }
  return std::to_string(Micros(start)) + " " + std::to_string(Micros(end)) + " " +
         std::to_string(who) + " " + std::to_string(statements) + " " + words + "\n";
}

void TraceSpan(std::chrono::system_clock::time_point start,
               std::chrono::system_clock::time_point end, int who, size_t statements,
               std::string_view what) {
  TraceFile& trace = Trace();
  if (trace.file == nullptr) return;
  std::string line = SpanLine(start, end, who, statements, what);
  std::lock_guard lock(trace.mu);
  std::fputs(line.c_str(), trace.file);
  std::fflush(trace.file);
}

}  // namespace trainyard
