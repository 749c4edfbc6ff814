// `trainyard ops …`: long-running operations (what delete returns), through the SDK.
#include <iostream>
#include <memory>

#include "cmd/client_commands.h"
#include "cmd/job_output.h"

namespace trainyard::cmd {
namespace {

struct OpsFlags {
  ClientFlags client;
  std::string name;
  double timeout_seconds = 0;
  std::string filter;
};

// A done operation exits like its outcome: 0 for a response, 1 (printed) for an error.
int Report(const OpsFlags& flags, const sdk::Operation& op) {
  if (flags.client.json) {
    std::cout << op.raw.dump(2) << "\n";
  } else {
    PrintOperation(std::cout, op);
  }
  if (!op.done) return kExitOk;
  auto result = sdk::OperationResult(op);
  return result.ok() ? kExitOk : PrintError(result.status());
}

CLI::App* AddVerb(CLI::App& ops, CommandRun* run, std::shared_ptr<OpsFlags> flags,
                  const std::string& name, const std::string& help, bool wait) {
  std::shared_ptr<const ClientFlags> client_flags(flags, &flags->client);
  CLI::App* verb = AddClientVerb(
      ops, run, client_flags, name, help, [flags, wait](sdk::Client& client, const CLI::App&) {
        if (!wait) {
          auto op = client.GetOperation(flags->name);
          return op.ok() ? Report(*flags, *op) : PrintError(op.status());
        }
        sdk::OperationWaitOptions options;
        options.timeout = WaitTimeout(flags->timeout_seconds);
        auto op = client.WaitOperation(flags->name, options);
        return op.ok() ? Report(*flags, *op) : PrintWaitError(op.status());
      });
  verb->add_option("NAME", flags->name, "operation name (projects/…/operations/ID) or ID")
      ->required();
  return verb;
}

}  // namespace

void AddOpsCommand(CLI::App& app, CommandRun* run) {
  auto flags = std::make_shared<OpsFlags>();
  CLI::App* ops = app.add_subcommand("ops", "Read and wait for long-running operations");
  ops->require_subcommand(1);
  ops->footer(
      "Exit codes: 0 success (a done operation with a response), 1 error from the server, the "
      "connection or the operation, 2 bad usage, 5 --timeout passed first.");
  AddClientFlags(*ops, flags->client);
  AddVerb(*ops, run, flags, "get", "Show one operation", /*wait=*/false);
  CLI::App* wait = AddVerb(*ops, run, flags, "wait", "Wait until an operation is done",
                           /*wait=*/true);
  wait->add_option("--timeout", flags->timeout_seconds,
                   "give up after this many seconds (exit 5); default: no limit")
      ->check(CLI::PositiveNumber);

  std::shared_ptr<const ClientFlags> client_flags(flags, &flags->client);
  CLI::App* list = AddClientVerb(
      *ops, run, client_flags, "list", "List operations (all pages)",
      [flags](sdk::Client& client, const CLI::App&) {
        auto all = client.ListOperations(flags->filter);
        if (!all.ok()) return PrintError(all.status());
        nlohmann::json raw = nlohmann::json::array();
        for (const sdk::Operation& op : *all) {
          if (flags->client.json) {
            raw.push_back(op.raw);
          } else {
            std::cout << op.name << "  " << (op.done ? (op.error ? "FAILED" : "DONE") : "RUNNING")
                      << "  " << (op.metadata.is_object() ? op.metadata.value("@type", "") : "")
                      << "\n";
          }
        }
        if (flags->client.json) std::cout << nlohmann::json{{"operations", raw}}.dump(2) << "\n";
        return static_cast<int>(kExitOk);
      });
  list->add_option("--filter", flags->filter, "done=true or done=false");

  auto simple = [&](const std::string& name, const std::string& help,
                    Status (sdk::Client::*call)(const std::string&), const std::string& said) {
    CLI::App* verb = AddClientVerb(
        *ops, run, client_flags, name, help,
        [flags, call, said](sdk::Client& client, const CLI::App&) {
          Status s = (client.*call)(flags->name);
          if (!s.ok()) return PrintError(s);
          std::cout << said << " " << client.ResourceName(flags->name, "operations") << "\n";
          return static_cast<int>(kExitOk);
        });
    verb->add_option("NAME", flags->name, "operation name (projects/…/operations/ID) or ID")
        ->required();
  };
  simple("cancel", "Ask for an operation to be cancelled (a provisioning resource stops)",
         &sdk::Client::CancelOperation, "Cancellation requested for");
  simple("delete", "Forget a finished operation", &sdk::Client::DeleteOperation, "Deleted");
}

}  // namespace trainyard::cmd
