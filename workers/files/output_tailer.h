#pragma once
// Follows the output files replicas write (a local process's output.log, a Slurm task's output on
// a shared filesystem) and turns what they add into log lines of their jobs.
//
// Nothing is lost: Collect reads from where the last stored lines ended, and only Stored (called
// once those lines are committed) moves that point on and writes it to the file's offset file, so
// a pass whose append failed (PostgreSQL restarting) reads the same lines again, and a restarted
// server goes on from the offset, never logging a line twice or skipping one.
//
// Nothing is trusted: a replica can write its output file, and may swap it for a link to a file
// it cannot read itself, a FIFO or a device. Files are opened without following a link and without
// blocking, only regular ones are read, at most `per_pass` bytes a pass and `per_file` bytes in
// all (each cap, once hit, is said in the job's log and the server's). The offset files are the
// server's and belong where replicas cannot write.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "services/logs/log_entry.h"

namespace trainyard::files {

struct TailerLimits {
  // Chosen: a pass of the executor stays short (a second's worth of a chatty replica is far less),
  // and a replica that writes without end cannot make the server read without end.
  size_t per_pass = 1 << 20;
  uint64_t per_file = uint64_t{256} << 20;
};

// Opens a followed file for reading as OpenRegularForReading does (text_file.h): a descriptor, or
// -1 with errno ENOENT (not there yet), ELOOP (a link) or another (not a regular file). A runtime
// whose folders on the way a replica can swap for links gives one that follows none of them.
using OutputOpener = std::function<int(const std::filesystem::path&)>;

class OutputTailer {
 public:
  explicit OutputTailer(TailerLimits limits = {}, OutputOpener opener = nullptr);

  // Starts (or goes on) following `file` for `task` of job `job_id`; the file need not exist yet.
  // `offset_file` keeps how far it was read and stored.
  void Follow(const std::filesystem::path& file, const std::filesystem::path& offset_file,
              int64_t job_id, std::string task);
  bool Following(const std::filesystem::path& file) const { return files_.count(file) > 0; }
  // The complete lines added to every followed file since the last stored ones. A file whose
  // writer `finished` says is done is read to its end (its last line needs no newline).
  std::vector<LogLine> Collect(Timestamp now,
                               const std::function<bool(const std::filesystem::path&)>& finished);
  // The lines of the last Collect are committed: their offsets are kept, and finished files are
  // no longer followed.
  void Stored();

  // A line longer than this is cut into pieces: one replica cannot hold the tailer's memory.
  static constexpr size_t kMaxLine = 64 * 1024;

 private:
  struct Followed {
    std::filesystem::path offset_file;
    int64_t job_id = 0;
    std::string task;
    uint64_t offset = 0;   // stored
    uint64_t pending = 0;  // read by the last Collect, not yet stored
    bool done = false;     // the last Collect read it to its end, or will read it no more
  };
  // Reads what `f` has past its stored offset, within the caps. Sets `f.pending` and `f.done`.
  std::vector<LogLine> Read(const std::filesystem::path& file, Followed& f, Timestamp now,
                            bool finished);

  const TailerLimits limits_;
  const OutputOpener open_;
  std::map<std::filesystem::path, Followed> files_;
};

}  // namespace trainyard::files
