#pragma once
// Follows the output files replicas write (a local process's output.log, a Slurm task's output on
// a shared filesystem) and turns what they add into log lines of their jobs. Where a reader
// stopped is kept beside each file (<name>.offset), so a restarted server goes on from there and
// never logs a line twice or skips one.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "services/logs/log_entry.h"

namespace trainyard::files {

class OutputTailer {
 public:
  // Starts (or goes on) following `file` for `task` of job `job_id`; the file need not exist yet.
  void Follow(const std::filesystem::path& file, int64_t job_id, std::string task);
  bool Following(const std::filesystem::path& file) const { return files_.count(file) > 0; }
  // The complete lines added to every followed file since the last call. A file whose writer
  // `finished` says is done is read to its end (its last line needs no newline) and no longer
  // followed.
  std::vector<LogLine> Collect(Timestamp now,
                               const std::function<bool(const std::filesystem::path&)>& finished);

  // A line longer than this is cut into pieces: one replica cannot hold the tailer's memory.
  static constexpr size_t kMaxLine = 64 * 1024;

 private:
  struct Followed {
    int64_t job_id = 0;
    std::string task;
    uint64_t offset = 0;
  };
  std::map<std::filesystem::path, Followed> files_;
};

}  // namespace trainyard::files
