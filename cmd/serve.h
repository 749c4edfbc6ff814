#pragma once
#include <string>

#include "cmd/app/serve_options.h"

namespace CLI {
class App;
}

namespace trainyard::cmd {

using ServeOptions = app::ServeOptions;

// serve's flags for the drain, the connection cap and the database URL's file.
void AddServeLifecycleFlags(CLI::App& serve_cmd, ServeOptions& serve);

struct MigrateOptions {
  std::string data_dir = ".trainyard";
  std::string database_url;
};

// JSON lines on stderr, so stdout carries only a command's output.
void InitJsonLogging(bool debug);

int RunServe(const ServeOptions& options);
int RunMigrate(const MigrateOptions& options);

}  // namespace trainyard::cmd
