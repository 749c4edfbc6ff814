#pragma once
// Human output of the client verbs: a job as key/value lines, lists as a table, and the one line
// per change that `--wait` prints. `--json` output does not come through here: it is the raw JSON.
#include <chrono>
#include <ostream>
#include <vector>

#include "sdk/resources.h"
#include "services/logs/log_entry.h"

namespace trainyard::cmd {

void PrintJob(std::ostream& out, const sdk::Job& job);
// ID, DISPLAY NAME, STATE, CREATED, REASON; columns as wide as their widest cell.
void PrintJobTable(std::ostream& out, const std::vector<sdk::Job>& jobs);
// "  12.3s  JOB_STATE_QUEUED  queue position 2 · NO_CAPACITY: no free capacity …"
void PrintWaitLine(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job);
// The last line of a wait: the terminal state, and the job's error if it has one.
void PrintJobOutcome(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job);
void PrintOperation(std::ostream& out, const sdk::Operation& op);
// "2026-01-02T03:04:05.120Z INFO workerpool0-0 step 100 loss=1.93"; a multi-line message keeps
// its line breaks, each continuation indented so it is not read as an entry of its own.
void PrintLogEntry(std::ostream& out, const LogEntry& entry);

}  // namespace trainyard::cmd
