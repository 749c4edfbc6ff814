#include "workers/files/secret_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace trainyard::files {
namespace {
namespace fs = std::filesystem;

TEST(SecretFileTest, MadeOnceOwnerOnlyAndTheSameEverAfter) {
  const fs::path dir = fs::temp_directory_path() / ("ty-secret-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const fs::path path = dir / "state" / "tag.key";
  auto made = LoadOrCreateSecret(path);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->size(), 32u);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto again = LoadOrCreateSecret(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *made) << "a restarted server tags its jobs as before";
  chmod(path.c_str(), 0644);
  EXPECT_EQ(LoadOrCreateSecret(path).status().code(), Code::kFailedPrecondition)
      << "a secret others can read is no secret";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::files
