// Submit a job file and wait for it with the Trainyard SDK:
//   build/sdk_submit_and_wait payloads/jobs/lora-single-node.json
// Endpoint and project come from TRAINYARD_ENDPOINT / TRAINYARD_PROJECT (default
// http://127.0.0.1:8080 and demo-project). Exits 0 when the job SUCCEEDED.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "api/wire/enums.h"
#include "sdk/client.h"

namespace sdk = trainyard::sdk;

static std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " CUSTOM_JOB.json\n";
    return 2;
  }
  std::ifstream file(argv[1]);
  nlohmann::json body = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    std::cerr << argv[1] << ": not readable JSON\n";
    return 2;
  }

  sdk::ClientOptions options;
  options.endpoint = EnvOr("TRAINYARD_ENDPOINT", "http://127.0.0.1:8080");
  options.project = EnvOr("TRAINYARD_PROJECT", "demo-project");
  auto client = sdk::Client::Create(options);
  if (!client.ok()) {
    std::cerr << client.status().message() << "\n";
    return 2;
  }

  auto job = (*client)->CreateJob(body);  // sent once: a create is never retried blindly
  if (!job.ok()) {
    std::cerr << trainyard::CodeName(job.status().code()) << ": " << job.status().message() << "\n";
    return 1;
  }
  std::cout << "created " << job->name() << "\n";

  sdk::WaitOptions wait;
  wait.timeout = std::chrono::minutes(30);
  wait.on_change = [](const sdk::Job& j) {
    std::cout << trainyard::JobStateName(j.state());
    if (j.job.trainyard && !j.job.trainyard->reason_code.empty()) {
      std::cout << " (" << j.job.trainyard->reason_code << ")";
    }
    std::cout << std::endl;
  };
  auto done = (*client)->WaitJob(job->name(), wait);
  if (!done.ok()) {
    std::cerr << trainyard::CodeName(done.status().code()) << ": " << done.status().message()
              << "\n";
    return 1;
  }
  return done->state() == trainyard::JobState::kSucceeded ? 0 : 1;
}
