#include "cmd/verb_help.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainyard::cmd {
namespace {

struct VerbExample {
  std::string_view verb;
  std::string_view example;
};

// One example per verb, run as written from the repository's root against a running server with
// TRAINYARD_ENDPOINT, TRAINYARD_PROJECT and TRAINYARD_LOCATION set (the top-level help says so).
// One that needs a name gets it from another verb on the same line. tests/e2e/cli_help_test.sh
// runs them all in an order where each finds what an earlier one left, the order docs/cli.md
// shows them in.
constexpr VerbExample kExamples[] = {
    {"serve",
     "build/trainyard serve --listen 127.0.0.1:8090 --data-dir .trainyard/8090 --sim-speed 30"},
    {"migrate", "build/trainyard migrate --data-dir .trainyard"},
    {"jobs create", "build/trainyard jobs create -f payloads/jobs/lora-single-node.json --wait"},
    {"jobs list", "build/trainyard jobs list --filter 'state=JOB_STATE_SUCCEEDED'"},
    {"jobs get",
     R"x(build/trainyard jobs get "$(build/trainyard jobs list --json | jq -r '.customJobs[0].name')")x"},
    {"jobs wait",
     R"x(build/trainyard jobs wait "$(build/trainyard jobs create -f payloads/jobs/lora-single-node.json --json | jq -r .name)" --timeout 600)x"},
    {"jobs logs",
     R"x(build/trainyard jobs logs "$(build/trainyard jobs list --json | jq -r '.customJobs[0].name')")x"},
    {"jobs cancel",
     R"x(build/trainyard jobs cancel "$(build/trainyard jobs create -f payloads/jobs/lora-single-node.json --json | jq -r .name)")x"},
    {"jobs delete",
     R"x(build/trainyard jobs delete "$(build/trainyard jobs list --filter state=JOB_STATE_SUCCEEDED --json | jq -r '.customJobs[0].name')")x"},
    {"ops list", "build/trainyard ops list --filter done=true"},
    {"ops get",
     R"x(build/trainyard ops get "$(build/trainyard ops list --json | jq -r '.operations[0].name')")x"},
    {"ops wait",
     R"x(build/trainyard ops wait "$(build/trainyard ops list --json | jq -r '.operations[0].name')" --timeout 600)x"},
    {"ops cancel",
     R"x(build/trainyard ops cancel "$(build/trainyard resources create -f payloads/resources/a3-high-warm-pool.json --id short-lived --json | jq -r .name)")x"},
    {"ops delete",
     R"x(build/trainyard ops delete "$(build/trainyard ops list --filter done=true --json | jq -r '.operations[0].name')")x"},
    {"resources create",
     R"x(build/trainyard resources create -f payloads/resources/a3-high-warm-pool.json --id warm --wait)x"},
    {"resources get", "build/trainyard resources get warm"},
    {"resources list", "build/trainyard resources list"},
    {"resources update",
     R"x(echo '{"resourcePools": [{"id": "h100", "replicaCount": "3"}]}' | build/trainyard resources update warm -f - --update-mask resourcePools.replicaCount --wait)x"},
    {"resources reboot", "build/trainyard resources reboot warm --wait"},
    {"resources delete", "build/trainyard resources delete warm --wait"},
    {"tokens create",
     R"x(build/trainyard tokens create --data-dir .trainyard --project "$TRAINYARD_PROJECT" --role editor)x"},
    {"tokens list", "build/trainyard tokens list --data-dir .trainyard"},
    {"tokens revoke",
     R"x(build/trainyard tokens revoke --data-dir .trainyard "$(build/trainyard tokens create --data-dir .trainyard --project "$TRAINYARD_PROJECT" | cut -d_ -f2)")x"},
    {"simulate",
     R"x(build/trainyard simulate payloads/simulate/on-demand.json payloads/simulate/spot-fallback.json --out sim-spot)x"},
};

constexpr const char* kTopFooter =
    "Run `trainyard VERB --help` for a verb's flags; it ends with an example. The examples run as\n"
    "written from the repository's root (README.md) with a server running, e.g. `make run`, and\n"
    "TRAINYARD_ENDPOINT, TRAINYARD_PROJECT and TRAINYARD_LOCATION set for it:\n"
    "  export TRAINYARD_ENDPOINT=http://127.0.0.1:8080 TRAINYARD_PROJECT=my-project \\\n"
    "    TRAINYARD_LOCATION=us-central1\n"
    "migrate and tokens work on that server's --data-dir (.trainyard under `make run`).";

struct Verb {
  std::string path;  // "jobs create"
  CLI::App* app;
};

// The verbs below `app` in the order they were added: a subcommand without subcommands of its own
// is a verb; one with them (jobs, ops, …) is a group. Hidden subcommands (no group) are left out.
void CollectVerbs(CLI::App& app, const std::string& prefix, std::vector<Verb>* verbs) {
  const std::function<bool(CLI::App*)> shown = [](CLI::App* sub) {
    return !sub->get_name().empty() && !sub->get_group().empty() && !sub->get_disabled();
  };
  for (CLI::App* sub : app.get_subcommands(shown)) {
    std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    if (sub->get_subcommands(shown).empty()) {
      verbs->push_back({std::move(path), sub});
    } else {
      CollectVerbs(*sub, path, verbs);
    }
  }
}

// The top-level --help: the verbs, one line each, in place of CLI11's list of groups. --help-all
// keeps CLI11's own expanded tree.
class VerbListFormatter : public CLI::Formatter {
 public:
  explicit VerbListFormatter(std::vector<std::pair<std::string, std::string>> lines)
      : lines_(std::move(lines)) {}

  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    if (mode != CLI::AppFormatMode::Normal) return CLI::Formatter::make_subcommands(app, mode);
    size_t width = 0;
    for (const auto& [path, description] : lines_) width = std::max(width, path.size());
    std::ostringstream out;
    out << "\nVerbs:\n";
    for (const auto& [path, description] : lines_) {
      out << "  " << path << std::string(width - path.size() + 2, ' ') << description << "\n";
    }
    return out.str();
  }

 private:
  std::vector<std::pair<std::string, std::string>> lines_;
};

}  // namespace

void AddVerbHelp(CLI::App& app) {
  std::vector<Verb> verbs;
  CollectVerbs(app, "", &verbs);
  std::vector<std::pair<std::string, std::string>> lines;
  for (const Verb& verb : verbs) {
    lines.emplace_back(verb.path, verb.app->get_description());
    auto example = std::find_if(std::begin(kExamples), std::end(kExamples),
                                [&](const VerbExample& e) { return e.verb == verb.path; });
    // A verb without one is left as it is; tests/e2e/cli_help_test.sh fails on it.
    if (example == std::end(kExamples)) continue;
    std::string footer = verb.app->get_footer();
    if (!footer.empty()) footer += "\n\n";
    verb.app->footer(footer + "Example:\n  " + std::string(example->example));
  }
  // Set on the top-level app alone: the verbs keep the formatter they were created with.
  app.formatter(std::make_shared<VerbListFormatter>(std::move(lines)));
  app.set_help_all_flag("--help-all",
                        "Print each top-level command's flags and each group's verbs, then exit");
  app.footer(kTopFooter);
}

}  // namespace trainyard::cmd
