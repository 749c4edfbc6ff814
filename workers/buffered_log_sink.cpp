#include "workers/buffered_log_sink.h"
#include "services/thread_name.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace trainyard {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;
constexpr auto kFlushEvery = std::chrono::milliseconds(100);

}  // namespace

BufferedLogSink::BufferedLogSink(int fd) : fd_(fd), writer_([this] { WriterLoop(); }) {}

BufferedLogSink::~BufferedLogSink() {
  {
    std::lock_guard lock(buffer_mu_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void BufferedLogSink::sink_it_(const spdlog::details::log_msg& msg) {
  bool wake = false;
  {
    std::lock_guard lock(buffer_mu_);
    buffer_.append(msg.payload.data(), msg.payload.size());
    buffer_.push_back('\n');
    if (msg.level >= spdlog::level::err) urgent_ = true;
    wake = urgent_ || buffer_.size() >= kFlushBytes;
  }
  if (wake) wake_.notify_one();
}

void BufferedLogSink::flush_() {
  std::string bytes;
  std::lock_guard write(write_mu_);
  {
    std::lock_guard lock(buffer_mu_);
    bytes.swap(buffer_);
    urgent_ = false;
  }
  WriteAll(bytes);
}

void BufferedLogSink::WriterLoop() {
  NameThisThread("ty-log-writer");
  std::string bytes;
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock lock(buffer_mu_);
      wake_.wait_for(lock, kFlushEvery,
                     [this] { return stop_ || urgent_ || buffer_.size() >= kFlushBytes; });
      bytes.swap(buffer_);
      urgent_ = false;
      stopping = stop_;
    }
    {
      std::lock_guard write(write_mu_);
      WriteAll(bytes);
    }
    bytes.clear();
    if (stopping) return;
  }
}

void BufferedLogSink::WriteAll(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to write the log: nothing better to do than drop it
    done += static_cast<size_t>(n);
  }
}

}  // namespace trainyard
