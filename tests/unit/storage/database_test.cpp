// serve --database-url-file: the URL kept off the command line, in a file only its owner reads.
#include "storage/database.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainyard::storage {
namespace {
namespace fs = std::filesystem;

class DatabaseUrlFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A file holding `text` with `mode`; its path.
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ / name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }

  const fs::path dir_ = fs::temp_directory_path() / ("ty-dburl-" + std::to_string(getpid()));
};

TEST_F(DatabaseUrlFileTest, ReadsTheUrlWithoutTheLineEndAnEditorLeaves) {
  const std::string url = "postgresql://trainyard:s3cret@db.internal:5432/trainyard";
  auto read = ReadDatabaseUrlFile(Write("url", "  " + url + "\r\n\n", 0600));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, url);
  auto owner_only = ReadDatabaseUrlFile(Write("read-only", url, 0400));
  ASSERT_TRUE(owner_only.ok()) << owner_only.status().message();
  EXPECT_EQ(*owner_only, url);
}

TEST_F(DatabaseUrlFileTest, RefusesAFileOthersMayReadOrWriteSayingHowToFixIt) {
  for (mode_t mode : {0644, 0640, 0604, 0620}) {
    const std::string path = Write("open-" + std::to_string(mode), "postgresql://u:p@h/d", mode);
    auto read = ReadDatabaseUrlFile(path);
    ASSERT_FALSE(read.ok()) << "mode " << std::oct << mode;
    EXPECT_EQ(read.status().code(), Code::kFailedPrecondition);
    const std::string& message = read.status().message();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("chmod 600"), std::string::npos) << message;
    EXPECT_EQ(message.find("p@h"), std::string::npos) << "the password leaked: " << message;
  }
}

TEST_F(DatabaseUrlFileTest, AMissingOrEmptyFileStopsStartUpNamingIt) {
  const std::string missing = (dir_ / "nowhere").string();
  auto read = ReadDatabaseUrlFile(missing);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Code::kNotFound);
  EXPECT_NE(read.status().message().find(missing), std::string::npos) << read.status().message();

  auto blank = ReadDatabaseUrlFile(Write("blank", " \n", 0600));
  ASSERT_FALSE(blank.ok());
  EXPECT_EQ(blank.status().code(), Code::kInvalidArgument);
  EXPECT_NE(blank.status().message().find("is empty"), std::string::npos);

  auto directory = ReadDatabaseUrlFile(dir_.string());
  ASSERT_FALSE(directory.ok()) << "a directory is no URL";
}

}  // namespace
}  // namespace trainyard::storage
