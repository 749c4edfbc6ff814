// What a scenario may name, read and write: a plain name (its report folder), regular files only,
// a caller's scenario confined to its folder, bounds on its size, and reports that never write
// through a link planted where they go.
#include "cmd/simulate/scenario_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cmd/simulate/compare.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/scenario_bounds.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;

// A folder of the test's own, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ty-scenario-files.XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kTrace = "submit,duration,gpus\n0,3600,8\n60,7200,16\n";
const std::string kFleet = R"({"zones": [{"zone": "us-central1-a", "pools": [
  {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 4}]}]})";

std::string ScenarioText(const std::string& name, const std::string& fleet,
                         const std::string& trace) {
  return R"({"name": ")" + name + R"(", "fleet": ")" + fleet + R"(", "workload": {"path": ")" +
         trace +
         R"(", "format": "csv", "columns": {"submit": "submit", "duration": "duration",
         "gpus": "gpus"}}, "placement": [{"model": "ON_DEMAND"}]})";
}

TEST(ScenarioFilesTest, ANameIsAPlainFolderName) {
  EXPECT_TRUE(ValidScenarioName("spot-fallback"));
  EXPECT_TRUE(ValidScenarioName("a3_mega.1y"));
  EXPECT_FALSE(ValidScenarioName(""));
  EXPECT_FALSE(ValidScenarioName("/etc"));
  EXPECT_FALSE(ValidScenarioName("../../x"));
  EXPECT_FALSE(ValidScenarioName(".hidden"));
  EXPECT_FALSE(ValidScenarioName("a/b"));
  EXPECT_FALSE(ValidScenarioName(std::string(65, 'a')));
  EXPECT_TRUE(ValidScenarioName(std::string(64, 'a')));
}

TEST(ScenarioFilesTest, AScenarioNamedByAPathIsRefusedNamingItsNameField) {
  TempDir dir;
  dir.Write("fleet.json", kFleet);
  dir.Write("t.csv", kTrace);
  for (const std::string name : {"/tmp/planted", "../../x", ".x"}) {
    auto s = LoadScenario(dir.Write("s.json", ScenarioText(name, "fleet.json", "t.csv")), 1);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
    EXPECT_NE(s.status().message().find(": name: "), std::string::npos) << s.status().message();
  }
  EXPECT_TRUE(LoadScenario(dir.Write("s.json", ScenarioText("ok", "fleet.json", "t.csv")), 1).ok());
}

TEST(ScenarioFilesTest, AConfinedScenarioNamesOnlyFilesBelowItsFolder) {
  TempDir dir;
  dir.Write("up/fleet.json", kFleet);
  dir.Write("up/t.csv", kTrace);
  dir.Write("outside.json", kFleet);
  const FileRules confined{.confined = true};
  struct Case {
    std::string fleet, trace, field;
  };
  for (const Case& c : {Case{(dir.path / "outside.json").string(), "t.csv", "fleet"},
                        Case{"../outside.json", "t.csv", "fleet"},
                        Case{"fleet.json", (dir.path / "up/t.csv").string(), "workload.path"},
                        Case{"fleet.json", "../up/t.csv", "workload.path"}}) {
    const std::string path = dir.Write("up/s.json", ScenarioText("mine", c.fleet, c.trace));
    auto s = LoadScenario(path, 1, confined);
    ASSERT_FALSE(s.ok()) << c.fleet << " " << c.trace;
    EXPECT_NE(s.status().message().find(": " + c.field + ": "), std::string::npos)
        << s.status().message();
    EXPECT_TRUE(LoadScenario(path, 1).ok()) << "the operator's own scenario may: " << c.fleet;
  }
  // A link inside the folder that points out of it is refused too.
  fs::create_directory_symlink(dir.path, dir.path / "up/link");
  auto linked = LoadScenario(
      dir.Write("up/s.json", ScenarioText("mine", "link/outside.json", "t.csv")), 1, confined);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find("symbolic link"), std::string::npos);
}

TEST(ScenarioFilesTest, OnlyRegularFilesAreReadNeverThroughALinkAndNotPastTheCap) {
  TempDir dir;
  const std::string victim = dir.Write("victim.json", kFleet);
  fs::create_symlink(victim, dir.path / "link.json");
  EXPECT_FALSE(ReadScenarioFile((dir.path / "link.json").string(), {}).ok());
  ASSERT_EQ(mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  auto fifo = ReadScenarioFile((dir.path / "fifo").string(), {});  // returns: never waits
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(ReadScenarioFile("/dev/zero", {}).ok());
  EXPECT_FALSE(ReadScenarioFile(victim, FileRules{.max_bytes = 10}).ok());
  auto whole = ReadScenarioFile(victim, {});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole, kFleet);
}

TEST(ScenarioFilesTest, BoundsRefuseABigFleetALongTraceAndTooManyJobsNamingTheBound) {
  TempDir dir;
  dir.Write("fleet.json", kFleet);
  dir.Write("t.csv", kTrace);
  auto s = LoadScenario(dir.Write("s.json", ScenarioText("b", "fleet.json", "t.csv")), 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  Trace trace;
  trace.jobs.resize(3);
  trace.jobs[2].submit = std::chrono::hours(24 * 10);
  EXPECT_TRUE(CheckScenarioBounds(*s, trace, {4, 3, std::chrono::hours(24 * 11)}).ok());
  auto nodes = CheckScenarioBounds(*s, trace, {3, 0, {}});
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.message().find("fleet: holds 4 nodes"), std::string::npos) << nodes.message();
  auto jobs = CheckScenarioBounds(*s, trace, {0, 2, {}});
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.message().find("at most 2"), std::string::npos) << jobs.message();
  auto span = CheckScenarioBounds(*s, trace, {0, 0, std::chrono::hours(24 * 5)});
  ASSERT_FALSE(span.ok());
  EXPECT_NE(span.message().find("spans 10 days"), std::string::npos) << span.message();
}

TEST(ScenarioFilesTest, ReportsNeverWriteThroughALinkPlantedWhereTheyGo) {
  TempDir dir;
  dir.Write("in/fleet.json", kFleet);
  dir.Write("in/t.csv", kTrace);
  const std::string path = dir.Write("in/s.json", ScenarioText("mine", "fleet.json", "t.csv"));
  const std::string victim = dir.Write("victim.txt", "keep me");
  fs::create_directories(dir.path / "out/mine");
  fs::create_symlink(victim, dir.path / "out/mine/summary.json");
  ASSERT_TRUE(CompareScenarios({path}, 1, (dir.path / "out").string(), nullptr).ok());
  EXPECT_EQ(Slurp(victim), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir.path / "out/mine/summary.json"));
  EXPECT_NE(Slurp(dir.path / "out/mine/summary.json").find("\"scenario\""), std::string::npos);

  // A link in place of the scenario's folder is refused, and its target stays empty.
  fs::create_directories(dir.path / "elsewhere");
  fs::create_directories(dir.path / "out2");
  fs::create_directory_symlink(dir.path / "elsewhere", dir.path / "out2/mine");
  EXPECT_FALSE(CompareScenarios({path}, 1, (dir.path / "out2").string(), nullptr).ok());
  EXPECT_TRUE(fs::is_empty(dir.path / "elsewhere"));
}

}  // namespace
}  // namespace trainyard::simulate
