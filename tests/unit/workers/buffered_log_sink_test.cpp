// The server's log sink: every line reaches the file whole and in order, by a flush or at the
// latest when the sink goes away; nothing is written between a line's parts.
#include "workers/buffered_log_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace trainyard {
namespace {

class BufferedLogSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/trainyard-log-XXXXXX";
    fd_ = mkstemp(name);
    ASSERT_GE(fd_, 0);
    path_ = name;
  }
  void TearDown() override {
    close(fd_);
    std::remove(path_.c_str());
  }
  std::vector<std::string> Lines() const {
    std::ifstream in(path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  int fd_ = -1;
  std::string path_;
};

TEST_F(BufferedLogSinkTest, AFlushWritesEveryLineInOrder) {
  auto sink = std::make_shared<BufferedLogSink>(fd_);
  spdlog::logger logger("test", sink);
  for (int i = 0; i < 1000; ++i) logger.info("{{\"n\":{}}}", i);
  logger.flush();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(lines[i], "{\"n\":" + std::to_string(i) + "}");
}

TEST_F(BufferedLogSinkTest, LinesFromManyThreadsStayWholeAndNoneIsLostAtTheEnd) {
  {
    auto sink = std::make_shared<BufferedLogSink>(fd_);
    spdlog::logger logger("test", sink);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&logger, t] {
        for (int i = 0; i < 5000; ++i) logger.info("{{\"thread\":{},\"n\":{}}}", t, i);
      });
    }
    for (std::thread& th : threads) th.join();
  }  // no flush: the sink's end writes what it holds
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 20000u);
  std::vector<int> next(4, 0);
  for (const std::string& line : lines) {
    int t = -1, n = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "{\"thread\":%d,\"n\":%d}", &t, &n), 2) << line;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 4);
    EXPECT_EQ(n, next[t]++) << "each thread's lines in its order";
  }
}

}  // namespace
}  // namespace trainyard
