// serve's flags checked before anything listens: each refusal with the line `trainyard: …` prints
// and exit code 2; the flags it starts with, resolved.
#include "cmd/app/serve_flags.h"

#include <gtest/gtest.h>

#include "cmd/app/runtimes.h"

namespace trainyard::app {
namespace {

// The refusal's message, or "" when the flags pass.
std::string Refusal(const ServeOptions& options) {
  const RuntimeRegistry runtimes = ServeRuntimes(options);
  auto checked = CheckServeFlags(options, runtimes);
  const auto* error = std::get_if<FlagError>(&checked);
  return error == nullptr ? "" : error->message;
}

ServeFlags Passed(const ServeOptions& options) {
  const RuntimeRegistry runtimes = ServeRuntimes(options);
  auto checked = CheckServeFlags(options, runtimes);
  EXPECT_TRUE(std::holds_alternative<ServeFlags>(checked)) << Refusal(options);
  return std::holds_alternative<ServeFlags>(checked) ? std::get<ServeFlags>(checked) : ServeFlags{};
}

TEST(ServeFlagsTest, ARefusalIsAUsageError) { EXPECT_EQ(FlagError::kExitCode, 2); }

TEST(ServeFlagsTest, ListenMustBeHostColonPort) {
  for (const char* bad :
       {"8080", "127.0.0.1", ":8080", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:http"}) {
    ServeOptions options;
    options.listen = bad;
    EXPECT_EQ(Refusal(options), std::string("--listen must be host:port, got \"") + bad + "\"");
  }
}

TEST(ServeFlagsTest, ListenSplitsAtTheLastColon) {
  auto address = ParseListen("[::1]:8443");
  ASSERT_TRUE(address.has_value());
  EXPECT_EQ(address->host, "[::1]");
  EXPECT_EQ(address->port, 8443);
  EXPECT_TRUE(IsLoopbackHost(address->host));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.1.2.3"));
}

TEST(ServeFlagsTest, AuthIsOffOnLoopbackAndTokensElsewhereUnlessTheFlagSays) {
  ServeOptions options;
  ServeFlags flags = Passed(options);
  EXPECT_FALSE(flags.tokens);
  EXPECT_STREQ(flags.auth(), "off");
  EXPECT_EQ(flags.api.host, "127.0.0.1");
  EXPECT_EQ(flags.api.port, 8080);
  EXPECT_FALSE(flags.metrics.has_value());

  options.listen = "0.0.0.0:9000";
  flags = Passed(options);
  EXPECT_TRUE(flags.tokens);
  EXPECT_STREQ(flags.auth(), "tokens");
  EXPECT_TRUE(ApiTakesTokens(options));

  options.listen = "127.0.0.1:9000";
  options.auth = "tokens";
  EXPECT_TRUE(Passed(options).tokens);
}

TEST(ServeFlagsTest, AuthOffIsRefusedOffLoopback) {
  ServeOptions options;
  options.listen = "0.0.0.0:9000";
  options.auth = "off";
  EXPECT_EQ(Refusal(options),
            "--auth=off is only allowed on a loopback --listen address (127.0.0.1, ::1, "
            "localhost): on 0.0.0.0 anyone who reaches the port could read and cancel every "
            "project's jobs. Mint a token with `trainyard tokens create` and serve with "
            "--auth=tokens.");
}

TEST(ServeFlagsTest, MetricsListenMustBeHostColonPortAndLoopbackWithoutTokens) {
  ServeOptions options;
  options.metrics_listen = "9100";
  EXPECT_EQ(Refusal(options), "--metrics-listen must be host:port, got \"9100\"");

  options.metrics_listen = "0.0.0.0:9100";
  EXPECT_EQ(Refusal(options),
            "--metrics-listen on 0.0.0.0 needs --auth=tokens (a fleet-admin token reads it); "
            "without auth only a loopback address is allowed");

  options.auth = "tokens";
  ServeFlags flags = Passed(options);
  ASSERT_TRUE(flags.metrics.has_value());
  EXPECT_EQ(flags.metrics->host, "0.0.0.0");
  EXPECT_EQ(flags.metrics->port, 9100);
}

TEST(ServeFlagsTest, TheLocalRuntimeOffLoopbackNeedsTheOperatorsWord) {
  ServeOptions options;
  options.listen = "0.0.0.0:9000";
  options.runtime = "local";
  EXPECT_EQ(Refusal(options),
            "--runtime=local on 0.0.0.0 would let every holder of an editor token run any command "
            "on this host. Listen on a loopback address, or say you mean it with "
            "--allow-remote-command-execution.");
  options.allow_remote_commands = true;
  EXPECT_EQ(Refusal(options), "");

  options.allow_remote_commands = false;
  options.listen = "127.0.0.1:9000";
  EXPECT_EQ(Refusal(options), "") << "on loopback it needs no word";
  options.listen = "0.0.0.0:9000";
  for (const char* runtime : {"sim", "slurm"}) {
    options.runtime = runtime;
    EXPECT_EQ(Refusal(options), "") << runtime << " runs no command of a job on this host";
  }
}

TEST(ServeFlagsTest, AnAllowedHostIsABareLowercaseName) {
  ServeOptions options;
  options.allowed_hosts = {"trainyard.internal"};
  EXPECT_EQ(Refusal(options), "");
  for (const char* bad : {"trainyard.internal:8080", "Trainyard.internal"}) {
    options.allowed_hosts = {bad};
    EXPECT_EQ(Refusal(options),
              std::string("--allowed-host takes a lowercase host name without a port, got \"") +
                  bad + "\"");
  }
}

// --scheduler sets the knobs a scenario's "scheduler" object sets, by the same names; the server
// runs its scheduler with them (ServingPlane gives ServeFlags::scheduler to the control plane).
TEST(ServeFlagsTest, SchedulerKnobsAreSetByNameAndABadOneIsRefusedNamingIt) {
  ServeOptions options;
  EXPECT_EQ(Passed(options).scheduler.max_reservations, SchedulerConfig{}.max_reservations);
  options.scheduler_knobs = {"holdAfter=0s", "holdsPerCycle=1", "requeueTimestamp=Eviction"};
  const ServeFlags flags = Passed(options);
  EXPECT_EQ(flags.scheduler.reserve_min_wait, Duration::zero());
  EXPECT_EQ(flags.scheduler.max_reservations, 1);
  EXPECT_EQ(flags.scheduler.requeue_timestamp, RequeueTimestamp::kEviction);
  options.scheduler_knobs = {"holdsPerCycle=0"};
  EXPECT_EQ(Refusal(options), "--scheduler holdsPerCycle must be a whole number from 1 to 1000");
  options.scheduler_knobs = {"lookback=5"};
  EXPECT_EQ(Refusal(options).rfind("--scheduler lookback is not a scheduler knob", 0), 0u)
      << Refusal(options);
  options.scheduler_knobs = {"holdAfter"};
  EXPECT_EQ(Refusal(options).rfind("--scheduler takes NAME=VALUE", 0), 0u) << Refusal(options);
}

TEST(ServeFlagsTest, TheFirstRefusalIsTheOneGiven) {
  ServeOptions options;
  options.listen = "0.0.0.0:9000";
  options.auth = "off";
  options.runtime = "local";
  options.allowed_hosts = {"Bad:1"};
  EXPECT_EQ(Refusal(options).rfind("--auth=off", 0), 0u) << Refusal(options);
}

}  // namespace
}  // namespace trainyard::app
