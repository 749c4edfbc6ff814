// The runtimes by name: what each entry brings, and a name no entry has refused naming the known.
#include "cmd/app/runtime_registry.h"

#include <gtest/gtest.h>

#include "cmd/app/runtimes.h"
#include "workers/sim/sim_runtime.h"

namespace trainyard::app {
namespace {

// Counts what it holds by the number of bundles alive (the capacity's lifetime is the bundle's).
class CountedCapacity : public ExternalCapacity {
 public:
  explicit CountedCapacity(int& alive) : alive_(alive) { ++alive_; }
  ~CountedCapacity() override { --alive_; }
  std::map<std::string, int64_t> UnitsDown() const override { return {{"pool-a", 2}}; }

 private:
  int& alive_;
};

TEST(RuntimeRegistryTest, AnUnknownNameIsRefusedNamingTheKnownOnes) {
  ServeOptions options;
  RuntimeRegistry registry = ServeRuntimes(options);
  auto made = registry.Make("kubernetes", Fleet{});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(made.status().message(), "unknown runtime \"kubernetes\" (known: local, sim, slurm)");
  EXPECT_FALSE(registry.Find("kubernetes").ok());
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"local", "sim", "slurm"}));
}

TEST(RuntimeRegistryTest, EachServeRuntimeSaysWhatItBrings) {
  ServeOptions options;
  RuntimeRegistry registry = ServeRuntimes(options);
  const RuntimeEntry* sim = *registry.Find("sim");
  EXPECT_TRUE(sim->simulated_startup);
  EXPECT_TRUE(sim->capacity == nullptr);
  EXPECT_FALSE(sim->runs_commands_on_host);
  const RuntimeEntry* local = *registry.Find("local");
  EXPECT_FALSE(local->simulated_startup);
  EXPECT_TRUE(local->capacity == nullptr);
  EXPECT_TRUE(local->runs_commands_on_host);
  const RuntimeEntry* slurm = *registry.Find("slurm");
  EXPECT_FALSE(slurm->simulated_startup);
  EXPECT_TRUE(slurm->capacity != nullptr) << "Slurm's reader of the cluster's nodes";
  EXPECT_FALSE(slurm->runs_commands_on_host);
}

TEST(RuntimeRegistryTest, TheSimulatorIsMadeWithSimulatedStartupAndNoCapacityReader) {
  auto made = SimulateRuntimes().Make("sim", Fleet{});
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_NE(dynamic_cast<sim::SimRuntime*>(made->runtime.get()), nullptr);
  EXPECT_EQ(made->capacity.get(), nullptr);
  EXPECT_TRUE(made->simulated_startup);
  EXPECT_EQ(SimulateRuntimes().names(), std::vector<std::string>{"sim"});
}

TEST(RuntimeRegistryTest, SlurmWithoutItsFlagsIsRefusedBeforeAnythingIsMade) {
  ServeOptions options;
  options.runtime = "slurm";
  auto made = ServeRuntimes(options).Make("slurm", Fleet{});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), "--runtime=slurm needs --slurm-url");
  options.slurm_url = "http://127.0.0.1:6820";
  made = ServeRuntimes(options).Make("slurm", Fleet{});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(),
            "--runtime=slurm needs --slurm-user: the Slurm user the jobs run as");
}

TEST(RuntimeRegistryTest, TheCapacityReaderComesWithTheRuntimeAndGoesWithTheBundle) {
  int alive = 0;
  RuntimeRegistry registry;
  RuntimeEntry entry = SimulatorEntry();
  entry.simulated_startup = false;
  entry.capacity = [&alive](const Fleet&) -> StatusOr<std::unique_ptr<ExternalCapacity>> {
    return std::unique_ptr<ExternalCapacity>(std::make_unique<CountedCapacity>(alive));
  };
  registry.Register("cluster", std::move(entry));
  {
    auto made = registry.Make("cluster", Fleet{});
    ASSERT_TRUE(made.ok()) << made.status().message();
    ASSERT_NE(made->capacity.get(), nullptr);
    EXPECT_EQ(made->capacity->UnitsDown().at("pool-a"), 2);
    EXPECT_FALSE(made->simulated_startup);
    EXPECT_EQ(alive, 1);
  }
  EXPECT_EQ(alive, 0);
}

TEST(RuntimeRegistryTest, AFailedRuntimeMakesNoCapacityReader) {
  int asked = 0;
  RuntimeRegistry registry;
  RuntimeEntry entry;
  entry.make = [](const Fleet&) -> StatusOr<std::unique_ptr<Runtime>> {
    return FailedPrecondition("no cluster");
  };
  entry.capacity = [&asked](const Fleet&) -> StatusOr<std::unique_ptr<ExternalCapacity>> {
    ++asked;
    return FailedPrecondition("not reached");
  };
  registry.Register("broken", std::move(entry));
  auto made = registry.Make("broken", Fleet{});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), "no cluster");
  EXPECT_EQ(asked, 0);
}

}  // namespace
}  // namespace trainyard::app
