// The embedded PostgreSQL's secret: a password file only the server reads, and a pg_hba.conf that
// no longer trusts local connections.
#include "storage/embedded_pg_secret.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainyard::embedded_pg {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ty-pg-secret.XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(EmbeddedPgSecretTest, APasswordFileIsMadeOnceAsAPrivateFileAndReadBack) {
  TempDir dir;
  const std::string path = (dir.path / "server.pgpass").string();
  auto made = EnsurePassFile(path);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->size(), 64u) << "32 random bytes in hex";
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = EnsurePassFile(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *made) << "the same secret on every start";
}

TEST(EmbeddedPgSecretTest, AFileOthersCanReadOrALinkIsRefused) {
  TempDir dir;
  const std::string path = (dir.path / "server.pgpass").string();
  ASSERT_TRUE(EnsurePassFile(path).ok());
  chmod(path.c_str(), 0644);
  EXPECT_EQ(EnsurePassFile(path).status().code(), Code::kFailedPrecondition);
  const std::string link = (dir.path / "link.pgpass").string();
  fs::create_symlink(path, link);
  EXPECT_FALSE(EnsurePassFile(link).ok());
}

TEST(EmbeddedPgSecretTest, TrustIsTurnedIntoScramAndNothingElseChanges) {
  const std::string hba =
      "# TYPE  DATABASE        USER            ADDRESS                 METHOD\n"
      "local   all             all                                     trust\n"
      "host    all             all             127.0.0.1/32            trust\n"
      "host    all             all             10.0.0.0 255.0.0.0      trust\n"
      "local   replication     all                                     peer\n"
      "# a comment that says trust\n";
  EXPECT_TRUE(HbaTrusts(hba));
  const std::string fixed = HbaWithoutTrust(hba);
  EXPECT_FALSE(HbaTrusts(fixed)) << fixed;
  EXPECT_NE(fixed.find("local all all scram-sha-256\n"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("host all all 127.0.0.1/32 scram-sha-256\n"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("host all all 10.0.0.0 255.0.0.0 scram-sha-256\n"), std::string::npos)
      << fixed;
  EXPECT_NE(fixed.find("local   replication     all                                     peer\n"),
            std::string::npos);
  EXPECT_NE(fixed.find("# a comment that says trust\n"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::embedded_pg
