#include "workers/files/output_tailer.h"

#include <gtest/gtest.h>

#include <fstream>

namespace trainyard::files {
namespace {
namespace fs = std::filesystem;

std::string Texts(const std::vector<LogLine>& lines) {
  std::string out;
  for (const LogLine& l : lines) out += l.task_name + ":" + l.message + "|";
  return out;
}

TEST(OutputTailerTest, WholeLinesOnceEachAndAReaderGoesOnWhereTheLastStopped) {
  const fs::path dir = fs::temp_directory_path() / "ty-tailer-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "output.log";
  const auto never = [](const fs::path&) { return false; };
  const auto always = [](const fs::path&) { return true; };
  OutputTailer tailer;
  tailer.Follow(file, 7, "workerpool0-0");
  EXPECT_TRUE(tailer.Collect({}, never).empty()) << "not written yet";
  std::ofstream(file, std::ios::app) << "one\ntw";
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "workerpool0-0:one|") << "half a line waits";
  std::ofstream(file, std::ios::app) << "o\r\nthree";
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "workerpool0-0:two|");
  // A new reader (a restarted server) goes on from the stored offset.
  OutputTailer next;
  next.Follow(file, 7, "workerpool0-0");
  EXPECT_EQ(Texts(next.Collect({}, always)), "workerpool0-0:three|")
      << "a finished writer's last line needs no newline";
  EXPECT_FALSE(next.Following(file));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::files
