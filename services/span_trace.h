#pragma once
// A trace of every PostgreSQL round trip and every write request, for finding what a slow request
// waited behind (bench/create-tail reads it). Off unless TRAINYARD_SPAN_TRACE names a file; then
// each span appends one line: start and end (µs since the epoch), who (a backend's pid; 0 a
// create's group commit, -1 a request from parsed to replied, -2 its handler), a count
// (statements), and what (the first statement's opening words).
#include <chrono>
#include <string>
#include <string_view>

namespace trainyard {

// True when TRAINYARD_SPAN_TRACE was set at the first call.
bool SpanTraceOn();

// One line of the trace: "start_us end_us who statements words\n", the words folded to one line
// and cut at 60 characters.
std::string SpanLine(std::chrono::system_clock::time_point start,
                     std::chrono::system_clock::time_point end, int who, size_t statements,
                     std::string_view what);

void TraceSpan(std::chrono::system_clock::time_point start,
               std::chrono::system_clock::time_point end, int who, size_t statements,
               std::string_view what);

// Times a scope and traces it when the trace is on.
class SpanTimer {
 public:
  SpanTimer(int who, size_t statements, std::string_view what)
      : on_(SpanTraceOn()),
        pid_(who),
        statements_(statements),
        what_(what),
        start_(on_ ? std::chrono::system_clock::now() : std::chrono::system_clock::time_point{}) {}
  SpanTimer(const SpanTimer&) = delete;
  SpanTimer& operator=(const SpanTimer&) = delete;
  ~SpanTimer() {
    if (on_) TraceSpan(start_, std::chrono::system_clock::now(), pid_, statements_, what_);
  }

 private:
  bool on_;
  int pid_;
  size_t statements_;
  std::string_view what_;
  std::chrono::system_clock::time_point start_;
};

}  // namespace trainyard
