#include "workers/files/output_tailer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "services/log.h"
#include "workers/files/text_file.h"

namespace trainyard::files {
namespace fs = std::filesystem;
namespace {

// Reads up to `size` bytes at `offset`; fewer when the file ends first.
std::string ReadAt(int fd, uint64_t offset, size_t size) {
  std::string chunk(size, '\0');
  size_t got = 0;
  while (got < size) {
    const ssize_t n = pread(fd, chunk.data() + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  chunk.resize(got);
  return chunk;
}

void Warn(const char* event, const fs::path& file, int64_t job_id, const std::string& task,
          const std::string& why) {
  LogJson(LogLevel::kWarn, event,
          {{"job", std::to_string(job_id)}, {"task", task}, {"file", file.string()}, {"why", why}});
}

}  // namespace

OutputTailer::OutputTailer(TailerLimits limits, OutputOpener opener)
    : limits_(limits), open_(opener ? std::move(opener) : OutputOpener(OpenRegularForReading)) {}

void OutputTailer::Follow(const fs::path& file, const fs::path& offset_file, int64_t job_id,
                          std::string task) {
  if (files_.count(file) > 0) return;  // runtimes say so on every look: no file read for it
  // From where the last stored lines ended (the offset survives the server), never the start.
  const uint64_t offset = ParseNumber<uint64_t>(ReadFile(offset_file)).value_or(0);
  files_.try_emplace(file, Followed{offset_file, job_id, std::move(task), offset, offset, false});
}

std::vector<LogLine> OutputTailer::Read(const fs::path& file, Followed& f, Timestamp now,
                                        bool finished) {
  f.pending = f.offset;
  f.done = false;
  std::vector<LogLine> lines;
  auto note = [&](std::string text) {
    lines.push_back(LogLine{f.job_id, now, LogSeverity::kWarning, f.task, std::move(text)});
  };
  if (f.offset >= limits_.per_file) {  // capped before a restart: said then
    f.done = true;
    return lines;
  }
  const int fd = open_(file);
  if (fd < 0) {
    if (errno == ENOENT) {  // not written yet, or never will be
      f.done = finished;
      return lines;
    }
    const std::string why = errno == ELOOP ? "a symbolic link" : "not a regular file";
    Warn("replica_output_refused", file, f.job_id, f.task, why);
    note("trainyard: the output of " + f.task + " is " + why + ", so it is not read");
    f.done = true;
    return lines;
  }
  struct stat st {};
  const uint64_t size = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  // A writer that truncated its file writes again from its start.
  const uint64_t base = size < f.offset ? 0 : f.offset;
  const uint64_t left = std::min(size - base, limits_.per_file - std::min(base, limits_.per_file));
  std::string chunk =
      ReadAt(fd, base, static_cast<size_t>(std::min<uint64_t>(left, limits_.per_pass)));
  close(fd);
  const bool capped = base + chunk.size() >= limits_.per_file;
  const bool whole = capped || (finished && base + chunk.size() >= size);

  size_t start = 0;
  while (start < chunk.size()) {
    size_t end = chunk.find('\n', start);
    // An unfinished last line waits for its newline, unless the writer is gone or it is long.
    if (end == std::string::npos) {
      if (!whole && chunk.size() - start < kMaxLine) break;
      end = std::min(chunk.size(), start + kMaxLine);
    } else if (end - start > kMaxLine) {
      end = start + kMaxLine;
    }
    std::string text = chunk.substr(start, end - start);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    lines.push_back(LogLine{f.job_id, now, LogSeverity::kInfo, f.task, std::move(text)});
    start = end < chunk.size() && chunk[end] == '\n' ? end + 1 : end;
  }
  f.pending = base + start;
  if (capped) {
    const std::string cap = std::to_string(limits_.per_file >> 20) + " MiB";
    Warn("replica_output_capped", file, f.job_id, f.task, "more than " + cap);
    note("trainyard: " + f.task + " wrote more than " + cap +
         " of output; the rest is not read (the server's cap per replica)");
  }
  f.done = whole && start >= chunk.size();
  return lines;
}

std::vector<LogLine> OutputTailer::Collect(Timestamp now,
                                           const std::function<bool(const fs::path&)>& finished) {
  std::vector<LogLine> lines;
  for (auto& [file, f] : files_) {
    std::vector<LogLine> read = Read(file, f, now, finished(file));
    std::move(read.begin(), read.end(), std::back_inserter(lines));
  }
  return lines;
}

void OutputTailer::Stored() {
  for (auto it = files_.begin(); it != files_.end();) {
    Followed& f = it->second;
    if (f.pending != f.offset) {
      f.offset = f.pending;
      WriteFileAtomically(f.offset_file, std::to_string(f.offset));
    }
    it = f.done ? files_.erase(it) : std::next(it);
  }
}

}  // namespace trainyard::files
