#include "cmd/app/serve_flags.h"

#include "api/request_guard.h"
#include "services/scheduler/scheduler_knobs.h"

namespace trainyard::app {

std::optional<ListenAddress> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  ListenAddress address{listen.substr(0, colon), 0};
  try {
    address.port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
    return std::nullopt;
  }
  if (address.port <= 0 || address.port >= 65536 || address.host.empty()) return std::nullopt;
  return address;
}

bool IsLoopbackHost(const std::string& host) {
  // "127.0.0.1", "localhost", "[::1]" as --listen spells them, and a bare "::1".
  return api::IsLoopbackName(host) || api::IsLoopbackName(api::HostOfAuthority(host));
}

bool ApiTakesTokens(const ServeOptions& options) {
  if (!options.auth.empty()) return options.auth == "tokens";
  std::optional<ListenAddress> api = ParseListen(options.listen);
  return !(api && IsLoopbackHost(api->host));
}

std::variant<ServeFlags, FlagError> CheckServeFlags(const ServeOptions& options,
                                                    const RuntimeRegistry& runtimes) {
  ServeFlags flags;
  std::optional<ListenAddress> api = ParseListen(options.listen);
  if (!api) return FlagError{"--listen must be host:port, got \"" + options.listen + "\""};
  flags.api = *std::move(api);
  const bool loopback = IsLoopbackHost(flags.api.host);
  flags.tokens = ApiTakesTokens(options);
  if (!options.metrics_listen.empty()) {
    flags.metrics = ParseListen(options.metrics_listen);
    if (!flags.metrics) {
      return FlagError{"--metrics-listen must be host:port, got \"" + options.metrics_listen +
                       "\""};
    }
    if (!flags.tokens && !IsLoopbackHost(flags.metrics->host)) {
      return FlagError{"--metrics-listen on " + flags.metrics->host +
                       " needs --auth=tokens (a fleet-admin token reads it); without auth only a "
                       "loopback address is allowed"};
    }
  }
  if (!flags.tokens && !loopback) {
    return FlagError{
        "--auth=off is only allowed on a loopback --listen address (127.0.0.1, ::1, "
        "localhost): on " +
        flags.api.host +
        " anyone who reaches the port could read and cancel every project's jobs. "
        "Mint a token with `trainyard tokens create` and serve with --auth=tokens."};
  }
  // A name no entry has is the registry's to refuse when the runtime is made.
  auto runtime = runtimes.Find(options.runtime);
  if (runtime.ok() && (*runtime)->runs_commands_on_host && !loopback &&
      !options.allow_remote_commands) {
    return FlagError{"--runtime=" + options.runtime + " on " + flags.api.host +
                     " would let every holder of an editor token run any command on this host. "
                     "Listen on a loopback address, or say you mean it with "
                     "--allow-remote-command-execution."};
  }
  for (const std::string& name : options.allowed_hosts) {
    if (api::HostOfAuthority(name) != name) {
      return FlagError{"--allowed-host takes a lowercase host name without a port, got \"" + name +
                       "\""};
    }
  }
  for (const std::string& knob : options.scheduler_knobs) {
    const size_t eq = knob.find('=');
    if (eq == std::string::npos) {
      return FlagError{"--scheduler takes NAME=VALUE (" + std::string(kSchedulerKnobNames) +
                       "), got \"" + knob + "\""};
    }
    const std::string name = knob.substr(0, eq);
    if (auto wrong = SetSchedulerKnob(flags.scheduler, name, knob.substr(eq + 1))) {
      return FlagError{"--scheduler " + name + " " + *wrong};
    }
  }
  return flags;
}

}  // namespace trainyard::app
