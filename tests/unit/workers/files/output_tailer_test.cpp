#include "workers/files/output_tailer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>

#include "workers/files/text_file.h"

namespace trainyard::files {
namespace {
namespace fs = std::filesystem;

std::string Texts(const std::vector<LogLine>& lines) {
  std::string out;
  for (const LogLine& l : lines) out += l.task_name + ":" + l.message + "|";
  return out;
}

const auto never = [](const fs::path&) { return false; };
const auto always = [](const fs::path&) { return true; };

class OutputTailerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("ty-tailer-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "replica");
    fs::create_directories(dir_ / "server");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Output() const { return dir_ / "replica" / "output.log"; }
  fs::path Offset() const { return dir_ / "server" / "output.offset"; }
  void Write(const std::string& text) const { std::ofstream(Output(), std::ios::app) << text; }

  fs::path dir_;
};

TEST_F(OutputTailerTest, WholeLinesOnceEachAndAReaderGoesOnWhereTheLastStopped) {
  OutputTailer tailer;
  tailer.Follow(Output(), Offset(), 7, "workerpool0-0");
  EXPECT_TRUE(tailer.Collect({}, never).empty()) << "not written yet";
  Write("one\ntw");
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "workerpool0-0:one|") << "half a line waits";
  tailer.Stored();
  Write("o\r\nthree");
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "workerpool0-0:two|");
  tailer.Stored();
  EXPECT_EQ(ReadFile(Offset()), "9") << "the offset is kept where the server said, not beside";
  EXPECT_FALSE(fs::exists(dir_ / "replica" / "output.offset"));
  // A new reader (a restarted server) goes on from the stored offset.
  OutputTailer next;
  next.Follow(Output(), Offset(), 7, "workerpool0-0");
  EXPECT_EQ(Texts(next.Collect({}, always)), "workerpool0-0:three|")
      << "a finished writer's last line needs no newline";
  EXPECT_TRUE(next.Following(Output())) << "until the lines are stored";
  next.Stored();
  EXPECT_FALSE(next.Following(Output()));
}

TEST_F(OutputTailerTest, LinesNotStoredAreHandedOverAgainAndNeverTwiceOnceStored) {
  OutputTailer tailer;
  tailer.Follow(Output(), Offset(), 7, "w");
  Write("1\n2\n");
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "w:1|w:2|");
  // The append failed (PostgreSQL restarting): nothing stored, nothing lost.
  Write("3\n");
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "w:1|w:2|w:3|");
  // A server killed now starts over from the last stored offset, which is none.
  OutputTailer restarted;
  restarted.Follow(Output(), Offset(), 7, "w");
  EXPECT_EQ(Texts(restarted.Collect({}, never)), "w:1|w:2|w:3|");
  restarted.Stored();
  Write("4\n");
  EXPECT_EQ(Texts(restarted.Collect({}, never)), "w:4|");
}

TEST_F(OutputTailerTest, AnOutputSwappedForALinkToAFileTheReplicaCannotReadIsNotRead) {
  const fs::path secret = dir_ / "server" / "secret";
  std::ofstream(secret) << "root:$6$hash:19000:0:99999:7:::\n";
  fs::create_symlink(secret, Output());
  OutputTailer tailer;
  tailer.Follow(Output(), Offset(), 7, "w");
  const std::string texts = Texts(tailer.Collect({}, never));
  EXPECT_EQ(texts.find("root:"), std::string::npos) << texts;
  EXPECT_NE(texts.find("symbolic link"), std::string::npos) << texts;
  tailer.Stored();
  EXPECT_FALSE(tailer.Following(Output())) << "and it is read no more";
}

// A runtime whose folders on the way a replica can swap gives the tailer its own way to open.
TEST_F(OutputTailerTest, AnOpenerGivenIsWhatOpensEveryFile) {
  Write("one\n");
  std::vector<fs::path> asked;
  OutputTailer tailer({}, [&](const fs::path& file) {
    asked.push_back(file);
    errno = ELOOP;  // as a walk that met a link on the way says
    return -1;
  });
  tailer.Follow(Output(), Offset(), 7, "w");
  const std::string texts = Texts(tailer.Collect({}, never));
  EXPECT_EQ(asked, std::vector<fs::path>{Output()});
  EXPECT_EQ(texts.find("w:one|"), std::string::npos) << texts;
  EXPECT_NE(texts.find("symbolic link"), std::string::npos) << texts;
}

TEST_F(OutputTailerTest, AFifoDoesNotBlockTheServerAndIsNotRead) {
  ASSERT_EQ(mkfifo(Output().c_str(), 0600), 0);
  OutputTailer tailer;
  tailer.Follow(Output(), Offset(), 7, "w");
  const std::string texts = Texts(tailer.Collect({}, never));  // would hang on a blocking open
  EXPECT_NE(texts.find("not a regular file"), std::string::npos) << texts;
}

TEST_F(OutputTailerTest, APassReadsAtMostItsShareAndAFileAtMostItsCap) {
  OutputTailer tailer(TailerLimits{/*per_pass=*/8, /*per_file=*/20});
  tailer.Follow(Output(), Offset(), 7, "w");
  Write("aaa\nbbb\nccc\nddd\neee\nfff\n");  // 24 bytes
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "w:aaa|w:bbb|");
  tailer.Stored();
  EXPECT_EQ(Texts(tailer.Collect({}, never)), "w:ccc|w:ddd|");
  tailer.Stored();
  const std::vector<LogLine> last = tailer.Collect({}, never);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].message, "eee");
  EXPECT_EQ(last[1].severity, LogSeverity::kWarning);
  EXPECT_NE(last[1].message.find("the rest is not read"), std::string::npos) << last[1].message;
  tailer.Stored();
  EXPECT_FALSE(tailer.Following(Output())) << "a capped file is let go, its writer or not";
}

}  // namespace
}  // namespace trainyard::files
