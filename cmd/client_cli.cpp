#include "cmd/client_cli.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace trainyard::cmd {
namespace {

// The deepest verb the user named: its usage is the one worth printing.
const CLI::App* DeepestParsed(const CLI::App* app) {
  for (const CLI::App* sub : app->get_subcommands()) {
    if (sub->parsed()) return DeepestParsed(sub);
  }
  return app;
}

std::string UsageOf(const CLI::App& verb) {
  std::string path = verb.get_name();
  for (const CLI::App* p = verb.get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return CLI::Formatter().make_usage(&verb, path);
}

}  // namespace

void AddClientFlags(CLI::App& group, ClientFlags& flags) {
  group.fallthrough();
  group.add_option("--endpoint", flags.endpoint, "server URL")
      ->envname("TRAINYARD_ENDPOINT")
      ->capture_default_str();
  group.add_option("--project", flags.project, "project id or number")
      ->envname("TRAINYARD_PROJECT");
  group.add_option("--location", flags.location, "location")
      ->envname("TRAINYARD_LOCATION")
      ->capture_default_str();
  group.add_option("--token", flags.token, "bearer token sent as Authorization")
      ->envname("TRAINYARD_TOKEN");
  group
      .add_option("--ca-file", flags.ca_file,
                  "https: PEM CA certificates to trust besides the system's")
      ->envname("TRAINYARD_CA_FILE");
  group.add_option("--request-timeout", flags.request_timeout_seconds, "seconds per HTTP request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  group.add_flag("--json", flags.json, "print the raw resource as JSON, for scripts");
}

StatusOr<std::unique_ptr<sdk::Client>> MakeClient(const ClientFlags& flags) {
  if (flags.project.empty()) {
    return InvalidArgument("no project: pass --project or set TRAINYARD_PROJECT");
  }
  sdk::ClientOptions options;
  options.endpoint = flags.endpoint;
  options.project = flags.project;
  options.location = flags.location;
  options.bearer_token = flags.token;
  options.ca_file = flags.ca_file;
  options.request_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.request_timeout_seconds * 1000));
  return sdk::Client::Create(std::move(options));
}

CLI::App* AddClientVerb(CLI::App& group, CommandRun* run, std::shared_ptr<const ClientFlags> flags,
                        const std::string& name, const std::string& help, ClientVerbBody body) {
  CLI::App* verb = group.add_subcommand(name, help);
  verb->callback([run, flags, verb, body] {
    *run = [flags, verb, body]() -> int {
      auto client = MakeClient(*flags);
      if (!client.ok()) return PrintUsageError(*verb, client.status().message());
      return body(**client, *verb);
    };
  });
  return verb;
}

std::optional<std::chrono::milliseconds> WaitTimeout(double seconds) {
  if (seconds <= 0) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

int PrintWaitError(const Status& status) {
  PrintError(status);
  return status.code() == Code::kDeadlineExceeded ? kExitTimeout : kExitError;
}

int PrintError(const Status& status) {
  std::cerr << "trainyard: " << CodeName(status.code()) << ": " << status.message() << "\n";
  for (const FieldViolation& v : status.violations()) {
    std::cerr << "  " << v.field << ": " << v.description << "\n";
  }
  return kExitError;
}

int PrintUsageError(const CLI::App& verb, const std::string& message) {
  std::cerr << "trainyard: " << message << "\n" << UsageOf(verb);
  return kExitUsage;
}

std::string FailureWithUsage(const CLI::App* app, const CLI::Error& error) {
  const CLI::App* verb = DeepestParsed(app);
  return "trainyard: " + std::string(error.what()) + "\n" + UsageOf(*verb) +
         "Run with --help for more information.\n";
}

int ExitCodeFor(JobState state) {
  switch (state) {
    case JobState::kSucceeded:
      return kExitOk;
    case JobState::kCancelled:
      return kExitJobCancelled;
    default:
      return kExitJobFailed;
  }
}

std::optional<nlohmann::json> ReadJsonFile(const CLI::App& verb, const std::string& path,
                                           const std::string& what, int* exit_code) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) {
      *exit_code = PrintUsageError(verb, "cannot read " + path + ": " + std::strerror(errno));
      return std::nullopt;
    }
    text << in.rdbuf();
  }
  nlohmann::json body = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    *exit_code = PrintUsageError(verb, path + " is not a JSON object (" + what + ")");
    return std::nullopt;
  }
  return body;
}

}  // namespace trainyard::cmd
