#pragma once
// The server's log sink: request threads append their line to a buffer (a short lock, no system
// call) and one writer thread writes the buffer to the file descriptor every 100 ms, or at once
// when it passes 64 KiB or holds an error line. One write(2) carries hundreds of lines under load,
// where writing each line from its request thread cost a system call per request and a thread
// hand-off per line (spdlog's async logger wakes its worker for every message) cost a context
// switch per request on two cores. A crash loses at most the last 100 ms of lines; a stop writes
// everything (flush, then the destructor).
#include <spdlog/sinks/base_sink.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace trainyard {

class BufferedLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit BufferedLogSink(int fd);
  ~BufferedLogSink() override;

 protected:
  // The payload is the whole JSON line already (services/log.cpp builds it): no formatter.
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  void WriterLoop();
  void WriteAll(const std::string& bytes);

  const int fd_;
  std::mutex buffer_mu_;  // not base_sink's mutex_: the writer must not hold that while writing
  std::condition_variable wake_;
  std::string buffer_;   // guarded by buffer_mu_
  bool urgent_ = false;  // guarded by buffer_mu_
  bool stop_ = false;    // guarded by buffer_mu_
  std::mutex write_mu_;  // one writer at a time: the thread, or a flush
  std::thread writer_;
};

}  // namespace trainyard
