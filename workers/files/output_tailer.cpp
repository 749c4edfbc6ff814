#include "workers/files/output_tailer.h"

#include <fstream>
#include <iterator>

#include "workers/files/text_file.h"

namespace trainyard::files {
namespace fs = std::filesystem;
namespace {

fs::path OffsetFile(const fs::path& file) {
  fs::path offset = file;
  offset.replace_extension(".offset");
  return offset;
}

}  // namespace

void OutputTailer::Follow(const fs::path& file, int64_t job_id, std::string task) {
  if (files_.count(file) > 0) return;  // runtimes say so on every look: no file read for it
  // From where the last reader stopped (the offset survives the server), never from the start.
  uint64_t offset = ParseNumber<uint64_t>(ReadFile(OffsetFile(file))).value_or(0);
  files_.try_emplace(file, Followed{job_id, std::move(task), offset});
}

std::vector<LogLine> OutputTailer::Collect(Timestamp now,
                                           const std::function<bool(const fs::path&)>& finished) {
  std::vector<LogLine> lines;
  for (auto it = files_.begin(); it != files_.end();) {
    const fs::path& file = it->first;
    Followed& f = it->second;
    std::ifstream in(file, std::ios::binary);
    std::string chunk;
    if (in) {
      in.seekg(static_cast<std::streamoff>(f.offset));
      chunk.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const bool done = finished(file);
    size_t start = 0;
    while (start < chunk.size()) {
      size_t end = chunk.find('\n', start);
      // An unfinished last line waits for its newline, unless the writer is gone or it is long.
      if (end == std::string::npos) {
        if (!done && chunk.size() - start < kMaxLine) break;
        end = std::min(chunk.size(), start + kMaxLine);
      } else if (end - start > kMaxLine) {
        end = start + kMaxLine;
      }
      std::string text = chunk.substr(start, end - start);
      if (!text.empty() && text.back() == '\r') text.pop_back();
      lines.push_back(LogLine{f.job_id, now, LogSeverity::kInfo, f.task, std::move(text)});
      start = end < chunk.size() && chunk[end] == '\n' ? end + 1 : end;
    }
    if (start > 0) {
      f.offset += start;
      WriteFileAtomically(OffsetFile(file), std::to_string(f.offset));
    }
    if (done && start >= chunk.size()) {
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  return lines;
}

}  // namespace trainyard::files
