#pragma once
// What the client verbs (`trainyard jobs|ops …`) share: connection flags with their environment
// fallbacks, exit codes, and how errors are printed (one line, plus usage for a bad invocation).
#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sdk/client.h"
#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard::cmd {

// Exit codes of the client verbs, documented in `trainyard jobs --help`.
enum ExitCode : int {
  kExitOk = 0,         // success; for a wait, the job SUCCEEDED
  kExitError = 1,      // the server or the connection reported an error
  kExitUsage = 2,      // bad flags, unreadable or invalid input file
  kExitJobFailed = 3,  // the job ended FAILED, EXPIRED or PARTIALLY_SUCCEEDED
  kExitJobCancelled = 4,
  kExitTimeout = 5,  // --timeout passed before the job (or operation) was done
};

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 success (for create --wait and wait: the job SUCCEEDED), 1 error from the "
    "server or the connection, 2 bad usage or unreadable file, 3 job FAILED (or EXPIRED, "
    "PARTIALLY_SUCCEEDED), 4 job CANCELLED, 5 --timeout passed first.";

// The command chosen on the command line; it runs after parsing, and returns the exit code.
using CommandRun = std::function<int()>;

struct ClientFlags {
  std::string endpoint = "http://127.0.0.1:8080";
  std::string project;
  std::string location = "us-central1";
  std::string token;
  std::string ca_file;
  double request_timeout_seconds = 30;
  bool json = false;
};

// Adds --endpoint/--project/--location/--token (env TRAINYARD_ENDPOINT, TRAINYARD_PROJECT,
// TRAINYARD_LOCATION, TRAINYARD_TOKEN), --request-timeout and --json to a verb group; they may
// also be given after the verb (`trainyard jobs get ID --project p`).
void AddClientFlags(CLI::App& group, ClientFlags& flags);

StatusOr<std::unique_ptr<sdk::Client>> MakeClient(const ClientFlags& flags);

// Adds a verb to `group`. When it is chosen, *run connects with *flags (read after parsing) and
// calls `body`; a missing project or a bad endpoint is a usage error of that verb.
using ClientVerbBody = std::function<int(sdk::Client& client, const CLI::App& verb)>;
CLI::App* AddClientVerb(CLI::App& group, CommandRun* run, std::shared_ptr<const ClientFlags> flags,
                        const std::string& name, const std::string& help, ClientVerbBody body);

// --timeout SECONDS as a wait deadline; 0 (the default) is none.
std::optional<std::chrono::milliseconds> WaitTimeout(double seconds);
// A wait that ended in an error: printed; kExitTimeout for DEADLINE_EXCEEDED, else kExitError.
int PrintWaitError(const Status& status);

// "trainyard: NOT_FOUND: …" on stderr, one line per field violation below it; returns kExitError.
int PrintError(const Status& status);
// "trainyard: <message>" and the verb's usage line on stderr; returns kExitUsage.
int PrintUsageError(const CLI::App& verb, const std::string& message);
// The CLI11 failure hook: the error on one line and the usage of the verb that failed.
std::string FailureWithUsage(const CLI::App* app, const CLI::Error& error);

// The JSON object in -f FILE ("-" reads stdin), `what` naming it in the usage error (exit code in
// *exit_code) when it is unreadable or not an object.
std::optional<nlohmann::json> ReadJsonFile(const CLI::App& verb, const std::string& path,
                                           const std::string& what, int* exit_code);

// The exit code for a job that reached a terminal state.
int ExitCodeFor(JobState state);

}  // namespace trainyard::cmd
