// `trainyard resources …`: persistent resources from the command line, through the SDK.
#include <iostream>
#include <memory>

#include "api/wire/enums.h"
#include "cmd/client_commands.h"
#include "cmd/job_output.h"

namespace trainyard::cmd {
namespace {

struct ResourcesFlags {
  ClientFlags client;
  std::string file;
  std::string id;
  std::string name;
  std::string update_mask;
  bool wait = false;
  double timeout_seconds = 0;
};

// The operation a change returned; with --wait, waited for. Exits like `trainyard ops wait`.
int Finish(sdk::Client& client, const ResourcesFlags& flags, StatusOr<sdk::Operation> op) {
  if (!op.ok()) return PrintError(op.status());
  if (flags.wait && !op->done) {
    sdk::OperationWaitOptions options;
    options.timeout = WaitTimeout(flags.timeout_seconds);
    op = client.WaitOperation(op->name, options);
    if (!op.ok()) return PrintWaitError(op.status());
  }
  if (flags.client.json) {
    std::cout << op->raw.dump(2) << "\n";
  } else {
    PrintOperation(std::cout, *op);
  }
  if (!op->done) return kExitOk;
  auto result = sdk::OperationResult(*op);
  return result.ok() ? kExitOk : PrintError(result.status());
}

void PrintResource(const sdk::PersistentResource& r) {
  std::cout << r.name() << "  " << ResourceStateName(r.state()) << "\n";
  for (const ResourcePool& pool : r.resource.resource_pools) {
    std::cout << "  pool " << pool.id << ": " << pool.machine_spec.machine_type << " × "
              << pool.replica_count << " (" << pool.used_replica_count << " in use)\n";
  }
  if (r.resource.trainyard && !r.resource.trainyard->reason_code.empty()) {
    std::cout << "  waiting: " << r.resource.trainyard->reason_code << ": "
              << r.resource.trainyard->reason_message << "\n";
  }
  if (r.resource.error) std::cout << "  error: " << r.resource.error->message << "\n";
}

using Body = std::function<int(sdk::Client&, const ResourcesFlags&, const CLI::App&)>;

CLI::App* AddVerb(CLI::App& group, CommandRun* run, std::shared_ptr<ResourcesFlags> flags,
                  const std::string& name, const std::string& help, Body body) {
  std::shared_ptr<const ClientFlags> client_flags(flags, &flags->client);
  return AddClientVerb(group, run, client_flags, name, help,
                       [flags, body](sdk::Client& client, const CLI::App& verb) {
                         return body(client, *flags, verb);
                       });
}

}  // namespace

void AddResourcesCommand(CLI::App& app, CommandRun* run) {
  auto flags = std::make_shared<ResourcesFlags>();
  CLI::App* group = app.add_subcommand(
      "resources", "Create, inspect, resize, reboot and delete persistent resources");
  group->require_subcommand(1);
  group->footer(
      "Changes return an operation; --wait waits for it. Exit codes: 0 success, 1 error from the "
      "server, the connection or the operation, 2 bad usage, 5 --timeout passed first.");
  AddClientFlags(*group, flags->client);
  auto add_name = [&](CLI::App* verb) {
    verb->add_option("NAME", flags->name, "resource name (projects/…/persistentResources/ID) or ID")
        ->required();
  };
  auto add_wait = [&](CLI::App* verb) {
    verb->add_flag("--wait", flags->wait, "wait until the fleet has done the work");
    verb->add_option("--timeout", flags->timeout_seconds,
                     "give up waiting after this many seconds (exit 5)")
        ->check(CLI::PositiveNumber);
  };

  CLI::App* create =
      AddVerb(*group, run, flags, "create", "Create a resource from a PersistentResource JSON file",
              [](sdk::Client& c, const ResourcesFlags& f, const CLI::App& v) {
                int exit_code = kExitOk;
                auto body = ReadJsonFile(v, f.file, "a PersistentResource", &exit_code);
                if (!body) return exit_code;
                return Finish(c, f, c.CreateResource(f.id, *body));
              });
  create->add_option("-f,--file", flags->file, "PersistentResource JSON file (- for stdin)")
      ->required();
  create->add_option("--id", flags->id, "the resource id ([a-z][a-z0-9-]{0,62})")->required();
  add_wait(create);

  add_name(AddVerb(*group, run, flags, "get", "Show one resource",
                   [](sdk::Client& c, const ResourcesFlags& f, const CLI::App&) {
                     auto r = c.GetResource(f.name);
                     if (!r.ok()) return PrintError(r.status());
                     if (f.client.json) {
                       std::cout << r->raw.dump(2) << "\n";
                     } else {
                       PrintResource(*r);
                     }
                     return static_cast<int>(kExitOk);
                   }));

  AddVerb(*group, run, flags, "list", "List resources (all pages)",
          [](sdk::Client& c, const ResourcesFlags& f, const CLI::App&) {
            auto all = c.ListResources();
            if (!all.ok()) return PrintError(all.status());
            nlohmann::json raw = nlohmann::json::array();
            for (const auto& r : *all) {
              if (f.client.json) {
                raw.push_back(r.raw);
              } else {
                PrintResource(r);
              }
            }
            if (f.client.json)
              std::cout << nlohmann::json{{"persistentResources", raw}}.dump(2) << "\n";
            return static_cast<int>(kExitOk);
          });

  CLI::App* update =
      AddVerb(*group, run, flags, "update",
              "Resize pools (replicaCount, autoscalingSpec) or change displayName, labels",
              [](sdk::Client& c, const ResourcesFlags& f, const CLI::App& v) {
                int exit_code = kExitOk;
                auto body = ReadJsonFile(v, f.file, "a PersistentResource", &exit_code);
                if (!body) return exit_code;
                return Finish(c, f, c.UpdateResource(f.name, *body, f.update_mask));
              });
  add_name(update);
  update->add_option("-f,--file", flags->file, "PersistentResource JSON with the new values")
      ->required();
  update
      ->add_option("--update-mask", flags->update_mask,
                   "fields to change, e.g. displayName,labels or resourcePools.replicaCount")
      ->required();
  add_wait(update);

  CLI::App* reboot = AddVerb(*group, run, flags, "reboot", "Reboot a resource's nodes",
                             [](sdk::Client& c, const ResourcesFlags& f, const CLI::App&) {
                               return Finish(c, f, c.RebootResource(f.name));
                             });
  add_name(reboot);
  add_wait(reboot);

  CLI::App* del = AddVerb(*group, run, flags, "delete",
                          "Delete a resource (its jobs are cancelled, its nodes given back)",
                          [](sdk::Client& c, const ResourcesFlags& f, const CLI::App&) {
                            return Finish(c, f, c.DeleteResource(f.name));
                          });
  add_name(del);
  add_wait(del);
}

}  // namespace trainyard::cmd
